//! CrossFit's task partitions (`{"train": [...], "dev": [...], "test": [...]}`) and the average
//! relative gain (ARG) of a run over a baseline on a partition's test tasks.

use crate::s1::{spread, Spread};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    pub train: Vec<String>,
    pub dev: Vec<String>,
    pub test: Vec<String>,
}

impl Partition {
    /// Reads CrossFit's JSON format; a task listed twice (in one set or two) is an error.
    pub fn from_json(text: &str) -> Result<Partition, String> {
        let p: Partition = serde_json::from_str(text).map_err(|e| {
            format!("not a partition ({{\"train\": [...], \"dev\": [...], \"test\": [...]}}): {e}")
        })?;
        let mut seen = HashSet::new();
        for (set, tasks) in [("train", &p.train), ("dev", &p.dev), ("test", &p.test)] {
            for t in tasks {
                if t.trim().is_empty() {
                    return Err(format!("an empty task name in {set}"));
                }
                if !seen.insert(t.as_str()) {
                    return Err(format!("task {t:?} is listed twice (again in {set})"));
                }
            }
        }
        if p.test.is_empty() {
            return Err("a partition needs at least one test task".into());
        }
        Ok(p)
    }

    #[expect(
        clippy::expect_used,
        reason = "a partition is plain data: it always serialises"
    )]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a partition always serialises") + "\n"
    }
}

/// One test task's relative gain: (score - baseline) / baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gain {
    pub task: String,
    pub score: f64,
    pub baseline: f64,
    /// `None` when the baseline is 0 (no relative change exists); such tasks are left out of
    /// the average and named.
    pub gain: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arg {
    pub gains: Vec<Gain>,
    /// The average over the tasks with a gain.
    pub arg: Option<f64>,
    /// Test tasks without a score of the run or of the baseline.
    pub missing: Vec<String>,
}

/// ARG over `tasks`: the mean relative gain of `run` over `baseline` (task -> score).
pub fn average_relative_gain(
    tasks: &[String],
    run: &BTreeMap<String, f64>,
    baseline: &BTreeMap<String, f64>,
) -> Arg {
    let mut gains = Vec::new();
    let mut missing = Vec::new();
    for t in tasks {
        match (run.get(t), baseline.get(t)) {
            (Some(&score), Some(&base)) => gains.push(Gain {
                task: t.clone(),
                score,
                baseline: base,
                gain: (base != 0.0).then(|| (score - base) / base),
            }),
            _ => missing.push(t.clone()),
        }
    }
    let defined: Vec<f64> = gains.iter().filter_map(|g| g.gain).collect();
    Arg {
        arg: (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64),
        gains,
        missing,
    }
}

/// A score per task name.
pub type TaskScores = BTreeMap<String, f64>;

/// ARG per seed (run and baseline scores of the same seed), with mean and standard deviation.
pub fn arg_over_seeds(
    tasks: &[String],
    per_seed: &[(TaskScores, TaskScores)],
) -> (Vec<Arg>, Option<Spread>) {
    let args: Vec<Arg> = per_seed
        .iter()
        .map(|(run, base)| average_relative_gain(tasks, run, base))
        .collect();
    let values: Vec<f64> = args.iter().filter_map(|a| a.arg).collect();
    let s = spread(&values);
    (args, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(xs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        xs.iter().map(|(t, s)| (t.to_string(), *s)).collect()
    }

    #[test]
    fn the_papers_example() {
        // +40% on one task and -25% on another average to +7.5%.
        let tasks = vec!["a".to_string(), "b".to_string()];
        let a = average_relative_gain(
            &tasks,
            &scores(&[("a", 0.70), ("b", 0.30)]),
            &scores(&[("a", 0.50), ("b", 0.40)]),
        );
        assert!((a.arg.unwrap() - 0.075).abs() < 1e-12, "{a:?}");
        assert!((a.gains[0].gain.unwrap() - 0.4).abs() < 1e-12);
        assert!((a.gains[1].gain.unwrap() + 0.25).abs() < 1e-12);
    }

    #[test]
    fn zero_baselines_and_missing_tasks_are_named() {
        let tasks = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let a = average_relative_gain(
            &tasks,
            &scores(&[("a", 0.6), ("b", 0.2)]),
            &scores(&[("a", 0.5), ("b", 0.0), ("c", 0.3)]),
        );
        assert_eq!(a.missing, vec!["c"]);
        assert_eq!(a.gains[1].gain, None);
        assert!((a.arg.unwrap() - 0.2).abs() < 1e-12);
    }

    #[test]
    fn seeds_give_mean_and_std() {
        let tasks = vec!["a".to_string()];
        let per_seed = vec![
            (scores(&[("a", 0.6)]), scores(&[("a", 0.5)])),
            (scores(&[("a", 0.4)]), scores(&[("a", 0.5)])),
        ];
        let (args, s) = arg_over_seeds(&tasks, &per_seed);
        assert_eq!(args.len(), 2);
        let s = s.unwrap();
        assert!(s.mean.abs() < 1e-12);
        assert!((s.std_pop - 0.2).abs() < 1e-12);
    }

    #[test]
    fn partitions_parse_and_refuse_bad_ones() {
        let p =
            Partition::from_json(r#"{"train": ["a", "b"], "dev": ["c"], "test": ["d"]}"#).unwrap();
        assert_eq!(p.test, vec!["d"]);
        assert_eq!(Partition::from_json(&p.to_json()).unwrap(), p);
        assert!(
            Partition::from_json(r#"{"train": ["a"], "dev": [], "test": ["a"]}"#)
                .unwrap_err()
                .contains("listed twice")
        );
        assert!(Partition::from_json(r#"{"train": [], "dev": [], "test": []}"#).is_err());
        assert!(
            Partition::from_json(r#"{"train": [], "dev": [], "test": ["x"], "extra": 1}"#).is_err()
        );
        assert!(Partition::from_json("[1, 2]")
            .unwrap_err()
            .contains("not a partition"));
    }
}
