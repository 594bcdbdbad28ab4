//! What the CrossFit page shows: tasks with their few-shot samples, scores per run and the
//! average relative gain of a partition.

use domain::crossfit::metrics::{Metric, Score};
use domain::crossfit::partition::{Arg, Partition};
use domain::s1::Spread;
use serde::{Deserialize, Serialize};

/// A task as the researcher pages list it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRow {
    pub name: String,
    pub ontology: String,
    pub metric: Metric,
    pub source: String,
    pub seeds: Vec<u32>,
    pub ks: Vec<u32>,
    pub test_items: i64,
}

/// A run with its score under the task's current metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunScore {
    pub method: String,
    pub task: String,
    pub seed: u32,
    pub kind: String,
    pub score: Score,
}

/// ARG of `method` over `baseline` on a partition's test tasks: per seed, and mean ± std.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArgReport {
    pub partition: String,
    pub method: String,
    pub baseline: String,
    pub tasks: Vec<String>,
    pub seeds: Vec<(u32, Arg)>,
    pub spread: Option<Spread>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossfitData {
    pub tasks: Vec<TaskRow>,
    pub runs: Vec<RunScore>,
    pub partitions: Vec<(String, Partition)>,
    pub methods: Vec<String>,
}
