//! Humans and machines on one table: a human row per k and a row per system (the paper's
//! Tables 6 and 7), and the same layout for other cells (intervals).

use super::table::Table;
use super::text::{group_header, spread_text};
use crate::report::machine::{systems, MachineCell};
use crate::report::reference::Reference;
use crate::report::{Cell, Report, Which};

/// Humans and machines on one table: for each k a human row (the `which` annotators) and a
/// row per system; each cell `mean ± std (n)` in percent, n annotators or splits.
pub fn versus_table(r: &Report, which: Which, any_of: bool) -> Table {
    let scoring = if any_of { "any-of" } else { "official" };
    let (id, title) = match which {
        Which::All => (
            format!("human-vs-machine-{scoring}"),
            format!("Humans and machines, test S1 ({scoring} scoring)"),
        ),
        _ => (
            format!("human-vs-machine-{}-{scoring}", which.id()),
            format!(
                "Humans and machines, test S1 ({scoring} scoring), humans {}",
                which.describe()
            ),
        ),
    };
    who_table(
        r,
        which,
        id,
        title,
        &versus_note(r),
        |cell| {
            Some(spread_text(if any_of {
                &cell.any_of
            } else {
                &cell.official
            }))
        },
        |m| Some(spread_text(if any_of { &m.any_of } else { &m.official })),
    )
}

/// The reference answers alone: a row per k and reference, a column per task (what
/// `clues-lab references` prints).
pub fn reference_table(r: &Report, any_of: bool) -> Table {
    let scoring = if any_of { "any-of" } else { "official" };
    let (mut groups, mut header) = group_header(r);
    header.insert(1, "Reference".into());
    groups[0].1 += 1;
    Table {
        id: format!("references-{scoring}"),
        title: format!("Reference answers, test S1 ({scoring} scoring)"),
        note: reference_note(r).unwrap_or_default(),
        groups,
        header,
        rows: r
            .shots
            .iter()
            .flat_map(|&k| {
                reference_rows(r, k, |m| {
                    Some(spread_text(if any_of { &m.any_of } else { &m.official }))
                })
            })
            .collect(),
    }
}

/// The versus table's note, with the definition of each reference answer it shows.
fn versus_note(r: &Report) -> String {
    let mut note = "Mean ± standard deviation in percent: humans over their annotators (n), machines over the training splits they were evaluated on (n); the layout of the paper's Tables 6 and 7.".to_string();
    if let Some(more) = reference_note(r) {
        note.push(' ');
        note.push_str(&more);
    }
    note
}

/// The definition of each reference answer a report shows; `None` when it shows none.
fn reference_note(r: &Report) -> Option<String> {
    let shown: Vec<&str> = Reference::ALL
        .into_iter()
        .filter(|x| r.references.iter().any(|c| c.system == x.name()))
        .map(Reference::describe)
        .collect();
    (!shown.is_empty()).then(|| format!(
        "Reference answers are computed from the data, never drawn: {}. One that needs no shots is scored once (n=1) and shown at every k; one built from the k shots over the same training splits as the machines.",
        shown.join("; ")
    ))
}

/// A table of shots by tasks with a human row per k (the `which` annotators) and, for all
/// annotators and the authentic ones, a row per system that has a cell at that k; `human` and
/// `machine` write cells.
/// A reference answer's row follows the systems' where `machine` writes one of its cells.
pub fn who_table(
    r: &Report,
    which: Which,
    id: String,
    title: String,
    note: &str,
    human: impl Fn(&Cell) -> Option<String>,
    machine: impl Fn(&MachineCell) -> Option<String>,
) -> Table {
    let (mut groups, mut header) = group_header(r);
    header.insert(1, "Who".into());
    groups[0].1 += 1;
    let mut rows = Vec::new();
    let systems = if which != Which::Filtered {
        systems(r)
    } else {
        Vec::new()
    };
    for &k in &r.shots {
        let mut row = vec![k.to_string(), "Human".to_string()];
        row.extend(r.tasks.iter().map(|c| {
            which
                .of(r)
                .main
                .iter()
                .find(|cell| cell.task == c.name && cell.k == k)
                .and_then(&human)
                .unwrap_or_else(|| "–".to_string())
        }));
        rows.push(row);
        for system in &systems {
            let mut row = vec![k.to_string(), system.clone()];
            let mut any = false;
            row.extend(r.tasks.iter().map(|c| {
                r.machines
                    .iter()
                    .find(|m| &m.system == system && m.task == c.name && m.k == k)
                    .map_or("–".to_string(), |m| {
                        any = true;
                        machine(m).unwrap_or_else(|| "–".to_string())
                    })
            }));
            if any {
                rows.push(row);
            }
        }
        if which != Which::Filtered {
            rows.extend(reference_rows(r, k, &machine));
        }
    }
    Table {
        id,
        title,
        note: note.into(),
        groups,
        header,
        rows,
    }
}

/// The rows of the reference answers at `k` that have a cell `machine` writes (in
/// `Reference` order).
fn reference_rows(
    r: &Report,
    k: u32,
    machine: impl Fn(&MachineCell) -> Option<String>,
) -> Vec<Vec<String>> {
    Reference::ALL
        .into_iter()
        .filter_map(|reference| {
            let cells: Vec<Option<String>> = r
                .tasks
                .iter()
                .map(|c| {
                    r.references
                        .iter()
                        .find(|m| m.system == reference.name() && m.task == c.name && m.k == k)
                        .and_then(&machine)
                })
                .collect();
            cells.iter().any(Option::is_some).then(|| {
                [k.to_string(), reference.name().to_string()]
                    .into_iter()
                    .chain(cells.into_iter().map(|c| c.unwrap_or_else(|| "–".into())))
                    .collect()
            })
        })
        .collect()
}

/// Each system's run per task, k and split with where it ran (the execution provider and the
/// CPU's or GPU's model), so that every machine number can be traced to its hardware.
pub fn runs_table(r: &Report) -> Table {
    let rows = r
        .machines
        .iter()
        .flat_map(|m| {
            m.splits.iter().enumerate().map(move |(i, split)| {
                vec![
                    m.system.clone(),
                    m.task.clone(),
                    m.k.to_string(),
                    split.to_string(),
                    m.devices
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| "not recorded".into()),
                ]
            })
        })
        .collect();
    Table::plain(
        "machine-runs",
        "Where each system's runs ran",
        "One row per finished run a machine cell or comparison uses: its system, task, shots and training split (0 for zero-shot), and where it ran as the run recorded it: the execution provider with the CPU's model and threads or the GPU's name and memory; \"imported\" for predictions imported from a file, whose hardware the file does not say.",
        &["System", "Task", "Shots", "Split", "Where it ran"],
        rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::draw::chart::machine_series;
    use crate::report::machine::{attach, MachineRun};
    use crate::task::Family;

    fn run(system: &str, task: &str, k: u32, split: u32, s: f64) -> MachineRun {
        MachineRun {
            system: system.into(),
            task: task.into(),
            family: if task == "SQuAD" {
                Family::ReadingComprehension
            } else {
                Family::Classification
            },
            k,
            split,
            official: s,
            any_of: s + 0.1,
            device: "cpu".into(),
            items: Vec::new(),
        }
    }

    #[test]
    fn cells_spread_over_splits_and_machine_only_tasks_become_columns() {
        let mut r = Report::default();
        attach(
            &mut r,
            &[
                run("m", "SQuAD", 10, 2, 0.6),
                run("m", "SQuAD", 10, 1, 0.4),
                run("m", "SST", 10, 1, 0.5),
                run("b", "SST", 0, 0, 0.25),
            ],
        );
        assert_eq!(
            r.tasks.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            vec!["SST", "SQuAD"]
        );
        assert_eq!(r.shots, vec![0, 10]);
        let c = r.machines.iter().find(|c| c.task == "SQuAD").unwrap();
        assert_eq!(c.splits, vec![1, 2]);
        assert!((c.official.mean - 0.5).abs() < 1e-12 && (c.official.std_pop - 0.1).abs() < 1e-12);
        assert!((c.any_of.mean - 0.6).abs() < 1e-12);
        let t = versus_table(&r, Which::All, false);
        assert_eq!(t.header[..2], ["Shots".to_string(), "Who".to_string()]);
        // k=0: human, b; k=10: human, m (b has nothing at 10).
        let who: Vec<(&str, &str)> = t
            .rows
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str()))
            .collect();
        assert_eq!(
            who,
            vec![("0", "Human"), ("0", "b"), ("10", "Human"), ("10", "m")]
        );
        assert_eq!(t.rows[3][3], "50.0 ± 10.0 (n=2)");
        assert_eq!(t.rows[2][2], "–");
        let s = machine_series(&r, "SQuAD");
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].name.as_str(), s[0].points[0].k), ("m", 10));
    }

    #[test]
    fn reference_answers_follow_the_systems_in_the_table_the_chart_and_the_csv() {
        use crate::report::draw::chart::task_curve;
        use crate::report::draw::scores_csv::scores_csv;
        use crate::report::reference::{self, Reference};
        use crate::report::Which;
        let mut r = Report::default();
        attach(&mut r, &[run("m", "SQuAD", 10, 1, 0.4)]);
        let mut no_answer = run(Reference::NoAnswer.name(), "SQuAD", 10, 0, 0.495);
        no_answer.any_of = 0.495;
        let elsewhere = run(Reference::NoAnswer.name(), "SQuAD", 20, 0, 0.495);
        reference::attach(&mut r, &[no_answer, elsewhere]);
        assert_eq!(r.shots, vec![10], "a reference adds no row");
        let t = versus_table(&r, Which::All, false);
        let who: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(who, vec!["Human", "m", "Reference: always no answer"]);
        assert_eq!(t.rows[2][2], "49.5 ± 0.0 (n=1)");
        assert!(
            t.note
                .contains("always no answer: the empty set on every item"),
            "{}",
            t.note
        );
        // The interval table has no row for it (a reference has no interval).
        let i = crate::report::draw::inference_tables::interval_table(&r, Which::All);
        assert!(i.rows.iter().all(|r| !r[1].starts_with("Reference")));
        let svg = task_curve(&r, "SQuAD", Which::All);
        assert!(svg.contains("data-name=\"Reference: always no answer\""));
        assert_eq!(
            svg.matches("stroke-dasharray").count(),
            2,
            "line and legend"
        );
        // Wide enough for the legend: text at x 434 + 14, 27 characters at 7 px, 10 px margin.
        assert!(svg.contains("width=\"647\" height=\"320\" viewBox=\"0 0 647 320\""));
        let csv = scores_csv(&r);
        let line = csv
            .lines()
            .find(|l| l.starts_with("reference,reference:Reference: always no answer,,official"))
            .expect(&csv);
        assert!(
            line.contains(",SQuAD,") && line.contains("splits 0"),
            "{line}"
        );
    }
}
