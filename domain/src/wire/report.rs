//! What the researcher dashboard shows: studies with their progress, score tables, learning
//! curves and downloads.

use crate::ids::StudyId;
use crate::report::draw::table::Table;
use crate::wire::study::{ScenarioProgress, StudySummary};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyProgress {
    pub summary: StudySummary,
    pub progress: Vec<ScenarioProgress>,
}

/// A task's learning curve as SVG, for all finished annotators and with the filter applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    pub task: String,
    pub svg: String,
    pub svg_filtered: String,
    /// The SVG download of the chart for all finished annotators.
    pub href: String,
    /// The reliability diagram (machine probability and crowd confidence against accuracy)
    /// of a label task with machine answers.
    #[serde(default)]
    pub calibration: Option<String>,
}

/// A download: what it is and where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Download {
    pub label: String,
    pub href: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DashboardData {
    /// The study ids in scope (all studies when the request named none).
    pub scope: Vec<StudyId>,
    pub all_studies: bool,
    pub studies: Vec<StudyProgress>,
    pub tables: Vec<Table>,
    pub charts: Vec<Chart>,
    /// Workers the training filter flags.
    pub flagged: Vec<String>,
    pub exports: Vec<Download>,
    pub predictions: Vec<Download>,
    /// What a reader must know about these numbers (studies whose training sets do not nest).
    pub notes: Vec<String>,
}
