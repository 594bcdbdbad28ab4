//! What the CrossFit page shows: tasks with their few-shot samples, scores per run and the
//! average relative gain of a partition.

use crate::crossfit::metrics::{Metric, Score};
use crate::crossfit::partition::{Arg, Partition};
use crate::run::JobStatus;
use crate::s1::Spread;
use crate::wire::machine::GridRow;
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

/// A CrossFit job that is not done, as the machines page lists it: a task's seed to fine-tune,
/// or a partition's upstream learning (no seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    pub id: i64,
    /// Its queue (crossfit or upstream), which cancelling or retrying it names.
    pub queue: super::queue::Queue,
    pub method: String,
    pub task: String,
    pub seed: Option<u32>,
    pub status: JobStatus,
    /// While claimed: the worker (host and process id) that runs it.
    pub worker: Option<String>,
    pub attempts: i64,
    /// The worker's last word on it, e.g. "setting 2 of 9, update 300 of 1000".
    pub progress: Option<String>,
    /// Updates made of all the grid's settings together, in the current claim.
    pub done: i64,
    pub total: i64,
    /// While claimed: the time left at its pace so far (elapsed × left / done).
    pub left_seconds: Option<f64>,
    pub error: Option<String>,
}

/// CrossFit's learning shared by workers: each method's jobs by status and the workers
/// holding them, and every job not done yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearningQueue {
    pub methods: Vec<GridRow>,
    pub open: Vec<JobRow>,
}
