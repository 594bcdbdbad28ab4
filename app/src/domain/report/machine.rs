//! Machine rows of the report: each system's test S1 per task and k, mean and std over its
//! splits (the paper's Tables 6/7), beside the human row, and machine lines on the curve.

use super::chart::{Point, Series};
use super::layout::{group_header, spread_text};
use super::table::Table;
use super::{family_rank, Report, TaskColumn};
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
    r.machines = groups
        .into_iter()
        .filter_map(|((system, task, k), mut rs)| {
            rs.sort_by_key(|r| r.split);
            let official: Vec<f64> = rs.iter().map(|r| r.official).collect();
            let any_of: Vec<f64> = rs.iter().map(|r| r.any_of).collect();
            Some(MachineCell {
                system,
                task,
                k,
                splits: rs.iter().map(|r| r.split).collect(),
                official: spread(&official)?,
                any_of: spread(&any_of)?,
            })
        })
        .collect();
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
    let (mut groups, mut header) = group_header(r);
    header.insert(1, "Who".into());
    groups[0].1 += 1;
    let mut rows = Vec::new();
    for &k in &r.shots {
        let mut human = vec![k.to_string(), "Human".to_string()];
        human.extend(r.tasks.iter().map(|c| {
            r.all
                .main
                .iter()
                .find(|cell| cell.task == c.name && cell.k == k)
                .map_or("–".to_string(), |cell| {
                    spread_text(if any_of { &cell.any_of } else { &cell.official })
                })
        }));
        rows.push(human);
        for system in systems(r) {
            let mut row = vec![k.to_string(), system.clone()];
            let mut any = false;
            row.extend(r.tasks.iter().map(|c| {
                r.machines
                    .iter()
                    .find(|m| m.system == system && m.task == c.name && m.k == k)
                    .map_or("–".to_string(), |m| {
                        any = true;
                        spread_text(if any_of { &m.any_of } else { &m.official })
                    })
            }));
            if any {
                rows.push(row);
            }
        }
    }
    let scoring = if any_of { "any-of" } else { "official" };
    Table {
        id: format!("human-vs-machine-{scoring}"),
        title: format!("Humans and machines, test S1 ({scoring} scoring)"),
        note: "Mean ± standard deviation in percent: humans over their annotators (n), machines over the training splits they were evaluated on (n); the layout of the paper's Tables 6 and 7.".into(),
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
