//! A run as the machines page lists it.

use crate::ids::RunId;
use crate::run::{RunStatus, SystemKind};

use serde::{Deserialize, Serialize};

/// One evaluation as the machines page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: RunId,
    pub system: String,
    pub kind: SystemKind,
    pub task: String,
    pub k: u32,
    pub split: u32,
    pub status: RunStatus,
    pub done: i64,
    pub total: i64,
    pub provider: String,
    pub error: Option<String>,
    pub s1: Option<f64>,
    pub s1_any_of: Option<f64>,
    pub seconds: Option<f64>,
    /// While running in a shared grid: the worker (host and process id) that runs it.
    pub worker: Option<String>,
    /// While running: the time left at its pace so far (elapsed × left / done).
    pub left_seconds: Option<f64>,
}

/// A shared grid (`clues-lab baseline --finetune` on one or many machines) as the machines page
/// sums it up: its jobs by status and the workers holding jobs now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRow {
    pub system: String,
    pub queued: i64,
    pub claimed: i64,
    pub done: i64,
    pub failed: i64,
    pub workers: Vec<String>,
}

/// A `clues-lab worker` pointed at this database and alive (seen in the last
/// [`WORKER_SEEN_WITHIN_MS`]), as the machines page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerRow {
    /// host:pid, as the jobs it holds name it.
    pub name: String,
    pub host: String,
    /// The kinds of job it takes (those its machine can run), as `--kinds` names them.
    pub kinds: Vec<String>,
    /// Where its models run and why, in words.
    pub device: String,
    /// Seconds since it started, and since it was last seen.
    pub up_seconds: f64,
    pub seen_seconds_ago: f64,
    /// The job it holds now, by the name its queue gives it.
    pub holds: Option<String>,
}

/// How often a worker says it is alive, and how long after its last word the page still
/// lists it (a worker killed outright says nothing as it ends).
pub const WORKER_BEAT_MS: i64 = 5_000;
pub const WORKER_SEEN_WITHIN_MS: i64 = 30_000;
