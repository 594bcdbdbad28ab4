//! Machine rows of the report: each system's test S1 per task and k, mean and std over its
//! splits (the paper's Tables 6/7), beside the human row, and machine lines on the curve.

use super::chart::{Point, Series};
use super::inference::{self, Comparison, Matrix, Side, Uncertainty, HUMANS};
use super::layout::{group_header, spread_text, Which};
use super::table::Table;
use super::{family_rank, Cell, Report, TaskColumn};
use crate::domain::ids::ExampleId;
use crate::domain::s1::{spread, Spread};
use crate::domain::task::Family;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One finished evaluation of a system on a task's test set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineRun {
    pub system: String,
    pub task: String,
    pub family: Family,
    /// Shots the system was trained on (0: none or unknown).
    pub k: u32,
    pub split: u32,
    pub official: f64,
    pub any_of: f64,
    /// Per test item: its official and any-of S1 (for the intervals and the comparisons).
    #[serde(skip)]
    pub items: Vec<(ExampleId, f64, f64)>,
}

/// A system's scores for one task and k over its splits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineCell {
    pub system: String,
    pub task: String,
    pub k: u32,
    pub splits: Vec<u32>,
    pub official: Spread,
    pub any_of: Spread,
    /// 95% intervals over splits and items (see `inference`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub official_ci: Option<Uncertainty>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of_ci: Option<Uncertainty>,
}

/// Adds the machine cells to a report; tasks and shots that only machines have become
/// columns and rows too.
pub fn attach(r: &mut Report, runs: &[MachineRun]) {
    let mut groups: BTreeMap<(String, String, u32), Vec<&MachineRun>> = BTreeMap::new();
    for run in runs {
        groups
            .entry((run.system.clone(), run.task.clone(), run.k))
            .or_default()
            .push(run);
        if !r.tasks.iter().any(|c| c.name == run.task) {
            r.tasks.push(TaskColumn {
                name: run.task.clone(),
                family: run.family,
            });
        }
        if !r.shots.contains(&run.k) {
            r.shots.push(run.k);
        }
    }
    r.tasks
        .sort_by_key(|c| (family_rank(c.family), c.name.clone()));
    r.shots.sort_unstable();
    let mut comparisons: Vec<(Which, Comparison)> = Vec::new();
    r.machines = groups
        .into_iter()
        .filter_map(|((system, task, k), mut rs)| {
            rs.sort_by_key(|r| r.split);
            let official: Vec<f64> = rs.iter().map(|r| r.official).collect();
            let any_of: Vec<f64> = rs.iter().map(|r| r.any_of).collect();
            let matrix = |pick: fn(&(ExampleId, f64, f64)) -> f64| {
                let units: Vec<Vec<(ExampleId, f64)>> = rs
                    .iter()
                    .map(|r| r.items.iter().map(|i| (i.0, pick(i))).collect())
                    .collect();
                Matrix::of(&units)
            };
            let items = matrix(|i| i.1);
            let known = !items.items.is_empty();
            let name = |scoring: &str| format!("{task}|{system} k={k}|{scoring}");
            for which in [Which::All, Which::Filtered] {
                let Some(human) = which.of(r).items.get(&(task.clone(), k)) else {
                    continue;
                };
                let side = |who: &str, m: &Matrix| Side {
                    who: who.to_string(),
                    k,
                    units: m.rows.len(),
                };
                let found = known.then(|| {
                    inference::compare(
                        &task,
                        (side(HUMANS, human), human),
                        (side(&system, &items), &items),
                    )
                });
                comparisons.extend(found.flatten().map(|c| (which, c)));
            }
            Some(MachineCell {
                splits: rs.iter().map(|r| r.split).collect(),
                official_ci: known
                    .then(|| inference::uncertainty(&official, &items, &name("official"))),
                any_of_ci: known
                    .then(|| inference::uncertainty(&any_of, &matrix(|i| i.2), &name("any-of"))),
                official: spread(&official)?,
                any_of: spread(&any_of)?,
                system,
                task,
                k,
            })
        })
        .collect();
    for (which, c) in comparisons {
        which.of_mut(r).comparisons.push(c);
    }
    for which in [Which::All, Which::Filtered] {
        inference::adjust(&mut which.of_mut(r).comparisons);
    }
}

/// The systems of a report, in name order.
pub fn systems(r: &Report) -> Vec<String> {
    let mut s: Vec<String> = r.machines.iter().map(|c| c.system.clone()).collect();
    s.dedup();
    s
}

/// Humans and machines on one table: for each k a human row (all finished annotators) and a
/// row per system; each cell `mean ± std (n)` in percent, n annotators or splits.
pub fn versus_table(r: &Report, any_of: bool) -> Table {
    let scoring = if any_of { "any-of" } else { "official" };
    who_table(
        r,
        Which::All,
        format!("human-vs-machine-{scoring}"),
        format!("Humans and machines, test S1 ({scoring} scoring)"),
        "Mean ± standard deviation in percent: humans over their annotators (n), machines over the training splits they were evaluated on (n); the layout of the paper's Tables 6 and 7.",
        |cell| Some(spread_text(if any_of { &cell.any_of } else { &cell.official })),
        |m| Some(spread_text(if any_of { &m.any_of } else { &m.official })),
    )
}

/// A table of shots by tasks with a human row per k (the `which` annotators) and, for all
/// annotators, a row per system that has a cell at that k; `human` and `machine` write cells.
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
    let systems = if which == Which::All {
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

const COLORS: [&str; 6] = [
    "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d",
];

/// One line per system on a task's learning curve (official scoring).
pub fn machine_series(r: &Report, task: &str) -> Vec<Series> {
    systems(r)
        .into_iter()
        .enumerate()
        .filter_map(|(i, system)| {
            let points: Vec<Point> = r
                .machines
                .iter()
                .filter(|m| m.system == system && m.task == task)
                .map(|m| Point {
                    k: m.k,
                    mean: m.official.mean,
                    std: m.official.std_pop,
                    n: m.official.n,
                    ci: m.official_ci.and_then(|u| u.bootstrap),
                })
                .collect();
            (!points.is_empty()).then(|| Series {
                name: system,
                color: COLORS[i % COLORS.len()].into(),
                points,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let t = versus_table(&r, false);
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
}
