//! `system_scores.csv`: each system's score of each test item, for the rerun of the humans
//! against a system in `analysis_systems.R`. One row per finished run and test item, from the
//! runs the report was built from (`Loaded::machines`), of the tasks and k the scope's humans
//! have (a Table 5 cell): those are the runs a comparison with the humans can use.

use crate::report::Loaded;
use domain::report::draw::table::csv_line;
use domain::report::Report;
use std::collections::BTreeSet;

/// The file's name in the bundle.
pub(super) const NAME: &str = "system_scores.csv";

/// The columns: the run (system, task, k, split) and the item's official S1 (`s1`), the score
/// the comparisons with the humans use. `example_id` is `annotations.csv`'s.
const COLUMNS: [&str; 6] = ["task", "system", "k", "split", "example_id", "s1"];

/// The file's text: a header, then the runs in (system, task, k, split) order, each run's items
/// by id. A header alone where no system ran on a task and k of the humans.
pub(super) fn system_scores_csv(l: &Loaded, r: &Report) -> String {
    let cells: BTreeSet<(&str, u32)> = r.all.main.iter().map(|c| (c.task.as_str(), c.k)).collect();
    let mut runs: Vec<_> = l
        .machines
        .iter()
        .filter(|m| cells.contains(&(m.task.as_str(), m.k)))
        .collect();
    runs.sort_by(|a, b| {
        (&a.system, &a.task, a.k, a.split).cmp(&(&b.system, &b.task, b.k, b.split))
    });
    let mut out = csv_line(&COLUMNS);
    for run in runs {
        let mut items = run.items.clone();
        items.sort_by_key(|i| i.0);
        for (id, official, _) in items {
            out.push_str(&csv_line(&[
                run.task.clone(),
                run.system.clone(),
                run.k.to_string(),
                run.split.to_string(),
                id.0.to_string(),
                // Rust's shortest text that reads back as the same f64.
                official.to_string(),
            ]));
        }
    }
    out
}
