//! Machine cells of the report: each system's test S1 per task and k, mean and std over its
//! splits (the paper's Tables 6/7), with intervals and comparisons against the humans.

use super::inference::{self, Comparison, Matrix, Side, Uncertainty, HUMANS};
use super::{family_rank, Report, TaskColumn, Which};
use crate::ids::ExampleId;
use crate::s1::{spread, Spread};
use crate::task::Family;
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
    /// Where it ran, in words: the execution provider with the CPU's or GPU's model
    /// ("imported" for predictions imported from a file).
    #[serde(default)]
    pub device: String,
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
    /// Each split's run: where it ran (as `MachineRun::device`), in the order of `splits`.
    #[serde(default)]
    pub devices: Vec<String>,
    pub official: Spread,
    pub any_of: Spread,
    /// 95% intervals: over other splits, and over more items (see `inference`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub official_ci: Option<Uncertainty>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of_ci: Option<Uncertainty>,
}

/// Adds the machine cells to a report; tasks and shots that only machines have become
/// columns and rows too.
pub fn attach(r: &mut Report, runs: &[MachineRun]) {
    let groups = group_runs(runs);
    add_columns(r, runs);
    let mut comparisons: Vec<(Which, Comparison)> = Vec::new();
    r.machines = groups
        .into_iter()
        .filter_map(|((system, task, k), rs)| {
            let official: Vec<f64> = rs.iter().map(|r| r.official).collect();
            let any_of: Vec<f64> = rs.iter().map(|r| r.any_of).collect();
            let matrix = |runs: &[&MachineRun], pick: fn(&(ExampleId, f64, f64)) -> f64| {
                let units: Vec<Vec<(ExampleId, f64)>> = runs
                    .iter()
                    .map(|r| r.items.iter().map(|i| (i.0, pick(i))).collect())
                    .collect();
                Matrix::of(&units)
            };
            let items = matrix(&rs, |i| i.1);
            let known = !items.items.is_empty();
            let name = |scoring: &str| format!("{task}|{system} k={k}|{scoring}");
            for which in Which::VIEWS {
                let tables = which.of(r);
                let Some(human) = tables.items.get(&(task.clone(), k)) else {
                    continue;
                };
                let human_splits = tables
                    .main
                    .iter()
                    .find(|c| c.task == task && c.k == k)
                    .map(|c| c.splits.clone())
                    .unwrap_or_default();
                // On the humans' splits where the system ran on each of them, else on all.
                let on_theirs: Vec<&MachineRun> = rs
                    .iter()
                    .copied()
                    .filter(|run| human_splits.contains(&run.split))
                    .collect();
                let runs = if !human_splits.is_empty() && on_theirs.len() == human_splits.len() {
                    on_theirs
                } else {
                    rs.clone()
                };
                let theirs = matrix(&runs, |i| i.1);
                let humans = Side {
                    who: HUMANS.to_string(),
                    k,
                    units: human.rows.len(),
                    splits: human_splits,
                };
                let machine = Side {
                    who: system.clone(),
                    k,
                    units: theirs.rows.len(),
                    splits: runs.iter().map(|run| run.split).collect(),
                };
                let found = known.then(|| {
                    inference::humans_vs_system(&task, (humans, human), (machine, &theirs))
                });
                comparisons.extend(found.flatten().map(|c| (which, c)));
            }
            Some(MachineCell {
                splits: rs.iter().map(|r| r.split).collect(),
                devices: rs.iter().map(|r| r.device.clone()).collect(),
                official_ci: known
                    .then(|| inference::uncertainty(&official, &items, &name("official"))),
                any_of_ci: known.then(|| {
                    inference::uncertainty(&any_of, &matrix(&rs, |i| i.2), &name("any-of"))
                }),
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
}

/// Makes each run's task a column and its k a row of the report, where they are not yet.
pub(super) fn add_columns(r: &mut Report, runs: &[MachineRun]) {
    for run in runs {
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
}

/// Runs by system, task and k; each group's runs in split order.
pub(super) fn group_runs(runs: &[MachineRun]) -> BTreeMap<(String, String, u32), Vec<&MachineRun>> {
    let mut groups: BTreeMap<(String, String, u32), Vec<&MachineRun>> = BTreeMap::new();
    for run in runs {
        groups
            .entry((run.system.clone(), run.task.clone(), run.k))
            .or_default()
            .push(run);
    }
    for rs in groups.values_mut() {
        rs.sort_by_key(|r| r.split);
    }
    groups
}

/// The systems of a report, in name order.
pub fn systems(r: &Report) -> Vec<String> {
    let mut s: Vec<String> = r.machines.iter().map(|c| c.system.clone()).collect();
    s.dedup();
    s
}
