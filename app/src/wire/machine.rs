//! A model run as the models page lists it.

use crate::domain::ids::RunId;
use crate::domain::run::{RunStatus, SystemKind};

use serde::{Deserialize, Serialize};

/// One evaluation as the models page lists it.
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
}
