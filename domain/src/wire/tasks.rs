//! What the task catalogue sends to the browser: tasks, shot groups, the import's quality
//! report, and test items without their gold.

use crate::task::{Context, Family, TaskSpec};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    pub name: String,
    pub family: Family,
    /// The task's training files `(k, split)`, sorted.
    pub shot_files: Vec<(u32, u32)>,
    /// Its nesting chains (one file per k, each within the next), e.g. 10_1 ⊂ 20_5 ⊂ 30_5.
    pub chains: Vec<Vec<(u32, u32)>>,
    pub source: String,
    pub test_items: i64,
    pub train_files: i64,
    pub quality_issues: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShotGroup {
    pub k: i64,
    pub split: i64,
    /// Stored as `n_rows`.
    pub rows: i64,
    pub file_name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QualityRow {
    pub file_name: Option<String>,
    pub line_no: Option<i64>,
    pub kind: String,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub spec: TaskSpec,
    pub source: String,
    pub test_items: i64,
    pub shot_groups: Vec<ShotGroup>,
    /// (kind, count) over the whole report.
    pub quality_counts: Vec<(String, i64)>,
    /// The first rows of the report (at most `QUALITY_ROWS`).
    pub quality_rows: Vec<QualityRow>,
}

pub const QUALITY_ROWS: i64 = 200;

/// One test item as a worker would see it: no gold answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemPreview {
    pub position: i64,
    pub total: i64,
    pub id: String,
    pub context: Context,
    pub question: String,
}
