//! The report laid out as tables: the paper's Table 5 (shots x tasks grouped by family),
//! Tables 8 and 9, majority vote and agreement, confidence, annotators; and one long CSV.

use super::authenticity::{authenticity_table, exclusion_table};
use super::inference_tables::{comparison_table, interval_table, order_table, STATISTICS};
use super::plan_tables::{analysis_plan_table, plan_table};
use super::table::Table;
use super::text::{duration, group_header, money, opt_pct, pct, spread_text};
use crate::report::{Cell, Report, Which};

/// A table in the layout of the paper's Table 5: rows of shots, columns of tasks grouped as
/// sentence classification / NER / reading comprehension; `cell` writes each cell.
fn shots_by_tasks(
    r: &Report,
    which: Which,
    id: String,
    title: String,
    note: &str,
    cell: impl Fn(&Cell) -> Option<String>,
) -> Table {
    let t = which.of(r);
    let (groups, header) = group_header(r);
    let rows = r
        .shots
        .iter()
        .map(|&k| {
            let mut row = vec![k.to_string()];
            row.extend(r.tasks.iter().map(|c| {
                t.main
                    .iter()
                    .find(|x| x.task == c.name && x.k == k)
                    .and_then(&cell)
                    .unwrap_or_else(|| "–".to_string())
            }));
            row
        })
        .collect();
    Table {
        id,
        title,
        note: note.into(),
        groups,
        header,
        rows,
    }
}

/// Table 5: each cell `mean ± std (n)` of annotator test S1, a skipped item scoring 0.
pub fn main_table(r: &Report, which: Which, any_of: bool) -> Table {
    let scoring = if any_of { "any-of" } else { "official" };
    shots_by_tasks(
        r,
        which,
        format!("table5-{}-{scoring}", which.id()),
        format!("Human test S1 ({scoring} scoring), {}", which.describe()),
        "Mean ± standard deviation of the annotators' S1 in percent, n annotators; a skipped item is not an answer and scores 0. The layout of the paper's Table 5.",
        |cell| Some(spread_text(if any_of { &cell.any_of } else { &cell.official })),
    )
}

/// The share of test items skipped in each cell of Table 5.
pub fn skip_table(r: &Report, which: Which) -> Table {
    shots_by_tasks(
        r,
        which,
        format!("skips-{}", which.id()),
        format!("Test items skipped, {}", which.describe()),
        "Skipped test items as a share of the submitted ones, over the annotators of each cell of Table 5 (skipped of submitted); then apart for items whose gold is empty (where \"no answer\" is right) and items whose gold is not, where a task has both.",
        |cell| {
            let mut text = format!("{}% ({} of {})", pct(cell.skip_rate()), cell.skipped, cell.test_items);
            let g = &cell.skips_by_gold;
            if g.empty_gold.submitted > 0 && g.with_gold.submitted > 0 {
                let part = |s: &crate::report::Skips| {
                    format!("{}% ({} of {})", opt_pct(s.rate()), s.skipped, s.submitted)
                };
                text.push_str(&format!(
                    "; empty gold {}; with gold {}",
                    part(&g.empty_gold),
                    part(&g.with_gold)
                ));
            }
            Some(text)
        },
    )
}

/// Each group's S1 on the study's screening items, beside Table 5; `None` without any.
pub fn screening_table(r: &Report, which: Which) -> Option<Table> {
    which.of(r).main.iter().any(|c| c.screening.is_some()).then(|| {
        shots_by_tasks(
            r,
            which,
            format!("screening-{}", which.id()),
            format!("Screening S1 of each group, {}", which.describe()),
            "Mean ± standard deviation of the annotators' S1 on the study's screening items (answered by every worker before training, without feedback; not part of the test score): how able each scenario's group was to begin with. The comparisons give each scenario difference adjusted for it.",
            |cell| cell.screening.as_ref().map(spread_text),
        )
    })
}

/// The second view of Table 5: S1 over the test items each annotator answered (skips left out).
pub fn answered_table(r: &Report, which: Which) -> Table {
    shots_by_tasks(
        r,
        which,
        format!("table5-answered-{}", which.id()),
        format!("Human test S1 over answered items only (official scoring), {}", which.describe()),
        "A second view, not the paper's score: each annotator's S1 over the test items they answered, skips left out (an annotator who answered none is left out of n).",
        |cell| cell.answered.as_ref().map(spread_text),
    )
}

fn subset_table(r: &Report, which: Which, nine: bool) -> Table {
    let cells = if nine {
        &which.of(r).table9
    } else {
        &which.of(r).table8
    };
    let n = if nine { 9 } else { 8 };
    Table {
        id: format!("table{n}-{}", which.id()),
        title: format!(
            "Training step: S1 on {} ({})",
            if nine {
                "the new training items"
            } else {
                "the shared training items"
            },
            which.describe()
        ),
        note: if nine {
            "The largest-k group on its training items that are not in the next smaller set (the paper's Table 9: 30-shot group, 30 \\ 20 items).".into()
        } else {
            "The two largest-k groups on the items of the smaller of the two sets (the paper's Table 8: 20- and 30-shot groups on the 20-shot items).".into()
        },
        groups: Vec::new(),
        header: ["Task", "Group (shots)", "Items", "S1"]
            .map(String::from)
            .to_vec(),
        rows: cells
            .iter()
            .map(|c| {
                vec![
                    c.task.clone(),
                    c.group_k.to_string(),
                    format!("{} ({})", c.items_text(), c.subset.describe()),
                    spread_text(&c.spread),
                ]
            })
            .collect(),
    }
}

fn scenario_table(r: &Report, which: Which) -> Table {
    Table {
        id: format!("scenarios-{}", which.id()),
        title: format!("Majority vote and agreement ({})", which.describe()),
        note: "Majority vote: labels by plurality (ties broken by the task's label order), span strings kept when more than half of the non-skipping annotators chose them (a string at exactly half is left out). Agreement: Fleiss' kappa over the items every annotator labelled; mean pairwise S1 for span tasks.".into(),
        groups: Vec::new(),
        header: [
            "Task", "Shots", "Annotators", "Items", "Majority S1", "Majority S1 (any-of)",
            "Ties", "Agreement", "Value", "Agreement items",
        ]
        .map(String::from)
        .to_vec(),
        rows: which
            .of(r)
            .scenarios
            .iter()
            .map(|s| {
                vec![
                    s.task.clone(),
                    s.k.to_string(),
                    s.annotators.to_string(),
                    s.items.to_string(),
                    pct(s.majority_s1),
                    pct(s.majority_s1_any_of),
                    s.ties.to_string(),
                    s.agreement.measure.clone(),
                    s.agreement
                        .value
                        .map_or("–".into(), |v| format!("{v:.3}")),
                    s.agreement.items.to_string(),
                ]
            })
            .collect(),
    }
}

fn confidence_table(r: &Report, which: Which) -> Table {
    Table {
        id: format!("confidence-{}", which.id()),
        title: format!("Confidence against correctness ({})", which.describe()),
        note: "Test answers of label tasks per level of \"I am confident in my answer\" (1 strongly disagree … 5 strongly agree); skips left out.".into(),
        groups: Vec::new(),
        header: ["Task", "Confidence", "Answers", "Correct", "Accuracy"]
            .map(String::from)
            .to_vec(),
        rows: which
            .of(r)
            .confidence
            .iter()
            .map(|c| {
                vec![
                    c.task.clone(),
                    c.level.to_string(),
                    c.answers.to_string(),
                    c.correct.to_string(),
                    opt_pct(c.accuracy),
                ]
            })
            .collect(),
    }
}

fn calibration_table(r: &Report) -> Table {
    use crate::report::calibration::expected_calibration_error;
    let mut rows = Vec::new();
    let mut keys: Vec<(&str, &str)> = r
        .calibration
        .iter()
        .map(|b| (b.task.as_str(), b.system.as_str()))
        .collect();
    keys.dedup();
    for (task, system) in keys {
        let mine: Vec<&crate::report::calibration::BinRow> = r
            .calibration
            .iter()
            .filter(|b| b.task == task && b.system == system)
            .collect();
        for b in mine.iter().filter(|b| b.answers > 0) {
            rows.push(vec![
                task.to_string(),
                system.to_string(),
                format!("{:.1}–{:.1}", b.low, b.high),
                b.answers.to_string(),
                b.correct.to_string(),
                opt_pct(b.accuracy),
                opt_pct(b.mean_probability),
            ]);
        }
        rows.push(vec![
            task.to_string(),
            system.to_string(),
            "expected calibration error".into(),
            mine.iter().map(|b| b.answers).sum::<usize>().to_string(),
            String::new(),
            String::new(),
            opt_pct(expected_calibration_error(&mine)),
        ]);
    }
    Table {
        id: "calibration".into(),
        title: "Model confidence against correctness".into(),
        note: "Each system's test answers on label tasks by the probability it gave them (a softmax over the labels), beside the crowd's confidence levels above; a calibrated model's accuracy equals its mean probability. All splits and k pooled.".into(),
        groups: Vec::new(),
        header: ["Task", "System", "Probability", "Answers", "Correct", "Accuracy", "Mean probability"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

pub fn annotator_table(r: &Report) -> Table {
    Table {
        id: "annotators".into(),
        title: "Annotators".into(),
        note: "Test S1 over the submitted test items, a skip scoring 0 (and over the answered ones only); paid time runs from taking the place to finishing (or the last activity).".into(),
        groups: Vec::new(),
        header: [
            "Worker", "Study", "Task", "Shots", "Status", "Test S1", "Test S1 (any-of)",
            "Test S1 (answered only)", "Training S1", "Items", "Skips", "Time on items",
            "Paid time", "Pay", "Flagged", "Authenticity",
        ]
        .map(String::from)
        .to_vec(),
        rows: r
            .annotators
            .iter()
            .map(|a| {
                vec![
                    a.worker.clone(),
                    a.study.to_string(),
                    a.task.clone(),
                    a.k.to_string(),
                    a.status.as_str().to_string(),
                    opt_pct(a.test_s1),
                    opt_pct(a.test_s1_any_of),
                    opt_pct(a.test_s1_answered),
                    opt_pct(a.training_s1),
                    format!("{}/{}", a.items_done, a.items_total),
                    a.skips.to_string(),
                    duration(a.seconds_on_items),
                    duration(a.seconds),
                    money(a.pay_cents),
                    if a.flagged { "yes" } else { "" }.to_string(),
                    a.authenticity
                        .as_ref()
                        .map_or("", |x| x.level.as_str())
                        .to_string(),
                ]
            })
            .collect(),
    }
}

/// Every table of the report in reading order: for all annotators, then filtered, then
/// without the annotators of low authenticity.
pub fn all_tables(r: &Report) -> Vec<Table> {
    let mut out = Vec::new();
    out.extend(analysis_plan_table(r));
    for which in [Which::All, Which::Filtered] {
        out.push(main_table(r, which, false));
        out.push(main_table(r, which, true));
        out.push(skip_table(r, which));
        out.push(answered_table(r, which));
        out.extend(screening_table(r, which));
        if which == Which::All && !(r.machines.is_empty() && r.references.is_empty()) {
            out.push(super::versus::versus_table(r, which, false));
            out.push(super::versus::versus_table(r, which, true));
        }
        out.push(interval_table(r, which));
        out.extend(comparison_table(r, which));
        out.extend(plan_table(r, which));
        out.push(subset_table(r, which, false));
        out.push(subset_table(r, which, true));
        out.extend(order_table(r, which));
        out.push(scenario_table(r, which));
        out.push(confidence_table(r, which));
        if which == Which::All && !r.calibration.is_empty() {
            out.push(calibration_table(r));
        }
    }
    // The sensitivity analysis without the workers of low authenticity: Table 5 and the
    // humans against the systems.
    let which = Which::Authentic;
    out.push(exclusion_table(r));
    out.push(main_table(r, which, false));
    out.push(main_table(r, which, true));
    if !(r.machines.is_empty() && r.references.is_empty()) {
        out.push(super::versus::versus_table(r, which, false));
        out.push(super::versus::versus_table(r, which, true));
    }
    out.extend(comparison_table(r, which));
    if !r.machines.is_empty() {
        out.push(super::versus::runs_table(r));
    }
    out.push(annotator_table(r));
    out.extend(authenticity_table(r));
    out.extend(super::pages::attention_table(r));
    out.extend(super::pages::questionnaire_table(r));
    out
}

/// How the numbers are computed: shown on the dashboard and at the top of the Markdown report.
pub const RULES: [&str; 6] = [
    "A skipped item is not an answer: it scores 0 in every annotator's S1, for every task family (an explicit \"no answer\" is an answer and scores 1 where the gold is empty). Each cell's skip rate and, as a second view, S1 over the answered items only are given in their own tables. The majority vote treats a skip as an abstention, never as a vote for \"no answer\": an item every annotator skipped has no majority answer and scores 0. Exported predictions write a skip as [\"<skipped>\"] marked skipped, so the official CLUES scorer also scores it 0.",
    "Training filter: a worker is flagged when their training S1 is more than the study's margin below the mean training S1 of the other workers of the same study and scenario. Scores within 1e-9 of each other count as equal, so a worker exactly at the margin (e.g. 7/10 against 10/10 and 8/10 with margin 0.2) is kept.",
    "Shot groups: the training sets of a study's scenarios are one nesting chain of files (e.g. SQuAD v2 10_1 ⊂ 20_5 ⊂ 30_5), so every larger set contains the smaller ones; a study whose sets are not nested says so below. Tables 8 and 9 compare the groups on the files of each study's chain.",
    "Spreads are population standard deviations over the annotators of a cell (n annotators); only finished annotators enter the tables.",
    STATISTICS,
    "Authenticity: each answer carries what the worker's page recorded while the item was shown (time hidden or out of focus, copies and whether they hold item text, time away after them, how soon the answer followed a return, pastes, time to the first input, active time; counts and durations only), read against the server's own times for the item (the server is the clock: a record claiming more time than the server saw is marked, and answers without a record did not come from the study page). Patterns are judged over the whole study, not item by item. With the data's own signals (answers under a reading floor on the server's clock, one label throughout, agreement with a system far above the other humans) they give each worker a high, mixed or low level by the rules stated with the authenticity table. Table 5 and the humans-against-systems tables are given again without the workers of low authenticity, beside the training filter and the attention checks; each exclusion is listed. A level never rejects work or withholds pay by itself.",
];

/// The whole report as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut out = String::from("# Human scores\n\n## How the numbers are computed\n\n");
    for rule in RULES {
        out.push_str(&format!("- {rule}\n"));
    }
    for note in &r.notes {
        out.push_str(&format!("- **Note:** {note}\n"));
    }
    if !r.shot_groups.is_empty() {
        out.push_str("\n## Training sets of each study\n\n");
        for g in &r.shot_groups {
            out.push_str(&format!(
                "- Study {} ({}): {}\n",
                g.study,
                g.task,
                crate::shots::group_text(&g.files, g.nested)
            ));
        }
    }
    out.push('\n');
    for t in all_tables(r) {
        out.push_str(&t.to_markdown());
    }
    out
}
