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
