//! The annotation rows: one row per worker x item, joined with its assignment, study, task,
//! worker and example, read from the database a page at a time ([`pages`]) for the exports
//! and the report alike.

use crate::catalog::corrupt;
use crate::error::Error;
use crate::heavy::Kind;
use crate::study::{CrowdInfo, StoredSpan, Study};
use domain::authenticity::{clock, ItemSignals};
use domain::ids::{AssignmentId, ConfigId, ExampleId, StudyId};
use domain::place::{Phase, PlaceStatus};
use domain::platform::{Platform, Presented};
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;

pub mod pages;

/// One worker x item: the export's row and the report's input. Times in unix milliseconds
/// (server clock); offsets and lengths in code points of the item's context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotationRow {
    pub study_id: StudyId,
    pub study: String,
    /// The study configuration the worker started under.
    pub config_id: ConfigId,
    pub task: String,
    pub assignment_id: AssignmentId,
    pub worker: String,
    #[serde(flatten)]
    pub crowd: CrowdIds,
    /// Shots of the worker's scenario (0 = zero-shot).
    pub k: u32,
    pub training_split: Option<u32>,
    /// The study's training files per k-shot scenario, e.g. `10_1,20_5,30_5`.
    pub shot_group: String,
    pub status: PlaceStatus,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub last_activity: i64,
    /// 0-based position in the worker's sequence (training items, then test items).
    pub position: i64,
    pub phase: Phase,
    pub example_id: ExampleId,
    /// The item's id in its data file, with the file and 1-based line.
    pub item_id: String,
    pub file: String,
    pub line: i64,
    pub content_key: String,
    pub submitted: bool,
    pub answer: Vec<StoredSpan>,
    pub no_answer: bool,
    pub skipped: bool,
    pub confidence: Option<u8>,
    pub shown_at: Option<i64>,
    pub submitted_at: Option<i64>,
    pub acknowledged_at: Option<i64>,
    /// Whether the worker was shown this item's gold (training items, once submitted).
    pub gold_revealed: bool,
    pub s1: Option<f64>,
    pub s1_any_of: Option<f64>,
    pub client_id: Option<String>,
    /// A worker `load fill` made (only in a scope that asks for them).
    pub synthetic: bool,
    /// What the worker's page recorded while the item was shown (columns of their own; empty
    /// where the page sent none).
    #[serde(flatten)]
    pub signals: SignalCells,
    /// The server's interval for the item (showing to the answer's arrival, ms), and whether
    /// the page's record fits it (`domain::authenticity::clock`; empty without a record or an
    /// answer): `false` marks an answer inconsistent with the server's clock.
    pub server_ms: Option<i64>,
    pub fits_server_clock: Option<bool>,
    /// Every assignment or session id the worker's links presented for the place, with what
    /// became of it (the pay sheet's and the bundle's `assignments.jsonl`; not a column here).
    #[serde(skip)]
    pub presented: Vec<Presented>,
}

/// An item's signals as columns of the export, every one empty (null) where the page sent
/// none, so that every row has the same columns in the CSV and the JSONL alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignalCells {
    pub away_count: Option<u32>,
    pub away_ms: Option<u64>,
    pub copy_count: Option<u32>,
    pub copy_chars: Option<u32>,
    pub copy_from_item: Option<u32>,
    pub paste_count: Option<u32>,
    pub paste_chars: Option<u32>,
    pub first_input_ms: Option<u64>,
    pub active_ms: Option<u64>,
    pub wall_ms: Option<u64>,
    pub hidden_ms: Option<u64>,
    pub away_after_copy_ms: Option<u64>,
    pub since_return_ms: Option<u64>,
}

impl From<Option<ItemSignals>> for SignalCells {
    fn from(s: Option<ItemSignals>) -> Self {
        let Some(s) = s else {
            return SignalCells::default();
        };
        SignalCells {
            away_count: Some(s.away_count),
            away_ms: Some(s.away_ms),
            copy_count: Some(s.copy_count),
            copy_chars: Some(s.copy_chars),
            copy_from_item: Some(s.copy_from_item),
            paste_count: Some(s.paste_count),
            paste_chars: Some(s.paste_chars),
            first_input_ms: s.first_input_ms,
            active_ms: Some(s.active_ms),
            wall_ms: Some(s.wall_ms),
            hidden_ms: s.hidden_ms,
            away_after_copy_ms: s.away_after_copy_ms,
            since_return_ms: s.since_return_ms,
        }
    }
}

impl SignalCells {
    /// The signals back, where the page sent them.
    pub fn signals(&self) -> Option<ItemSignals> {
        Some(ItemSignals {
            away_count: self.away_count?,
            away_ms: self.away_ms?,
            copy_count: self.copy_count?,
            copy_chars: self.copy_chars?,
            copy_from_item: self.copy_from_item?,
            paste_count: self.paste_count?,
            paste_chars: self.paste_chars?,
            first_input_ms: self.first_input_ms,
            active_ms: self.active_ms?,
            wall_ms: self.wall_ms?,
            hidden_ms: self.hidden_ms,
            away_after_copy_ms: self.away_after_copy_ms,
            since_return_ms: self.since_return_ms,
        })
    }
}

/// The ids a crowd link gave with the worker's arrival (all empty for password accounts).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CrowdIds {
    pub platform: Option<Platform>,
    pub crowd_worker_id: Option<String>,
    pub crowd_study_id: Option<String>,
    pub crowd_session_id: Option<String>,
    pub crowd_assignment_id: Option<String>,
}

impl From<CrowdInfo> for CrowdIds {
    fn from(c: CrowdInfo) -> Self {
        CrowdIds {
            platform: c.platform,
            crowd_worker_id: c.worker,
            crowd_study_id: c.study,
            crowd_session_id: c.session,
            crowd_assignment_id: c.assignment,
        }
    }
}

/// The export's columns, in order (the CSV header).
pub const ANNOTATION_COLUMNS: [&str; 53] = [
    "study_id",
    "study",
    "config_id",
    "task",
    "assignment_id",
    "worker",
    "platform",
    "crowd_worker_id",
    "crowd_study_id",
    "crowd_session_id",
    "crowd_assignment_id",
    "k",
    "training_split",
    "shot_group",
    "status",
    "started_at",
    "finished_at",
    "last_activity",
    "position",
    "phase",
    "example_id",
    "item_id",
    "file",
    "line",
    "content_key",
    "submitted",
    "answer",
    "no_answer",
    "skipped",
    "confidence",
    "shown_at",
    "submitted_at",
    "acknowledged_at",
    "gold_revealed",
    "s1",
    "s1_any_of",
    "client_id",
    "synthetic",
    "away_count",
    "away_ms",
    "copy_count",
    "copy_chars",
    "copy_from_item",
    "paste_count",
    "paste_chars",
    "first_input_ms",
    "active_ms",
    "wall_ms",
    "hidden_ms",
    "away_after_copy_ms",
    "since_return_ms",
    "server_ms",
    "fits_server_clock",
];

/// An assignment item joined with its assignment, study, task, worker and example, as the
/// annotation query selects it: the one decoder of those columns.
#[derive(sqlx::FromRow)]
struct StoredAnnotation {
    study_id: StudyId,
    study: String,
    config_id: ConfigId,
    task: String,
    assignment_id: AssignmentId,
    worker: String,
    crowd_json: String,
    k: i64,
    training_split: Option<i64>,
    status: PlaceStatus,
    started_at: i64,
    finished_at: Option<i64>,
    last_activity: i64,
    position: i64,
    phase: Phase,
    example_id: ExampleId,
    ext_id: String,
    file_name: String,
    line_no: i64,
    content_key: String,
    answer_json: Option<String>,
    no_answer: i64,
    skipped: i64,
    confidence: Option<i64>,
    shown_at: Option<i64>,
    submitted_at: Option<i64>,
    acknowledged_at: Option<i64>,
    s1: Option<f64>,
    s1_any_of: Option<f64>,
    client_id: Option<String>,
    synthetic: i64,
    signals_json: Option<String>,
}

impl StoredAnnotation {
    fn decode(self) -> Result<AnnotationRow, Error> {
        let crowd: CrowdInfo =
            serde_json::from_str(&self.crowd_json).map_err(|e| corrupt("crowd ids", e))?;
        let signals: Option<ItemSignals> = match &self.signals_json {
            Some(j) => Some(serde_json::from_str(j).map_err(|e| corrupt("signals", e))?),
            None => None,
        };
        let answer: Vec<StoredSpan> = match &self.answer_json {
            Some(j) => serde_json::from_str(j).map_err(|e| corrupt("answer", e))?,
            None => Vec::new(),
        };
        let server_ms = clock::server_ms(self.shown_at, self.submitted_at);
        let fits_server_clock = signals
            .as_ref()
            .zip(server_ms)
            .map(|(s, ms)| clock::fits(s, ms));
        Ok(AnnotationRow {
            study_id: self.study_id,
            study: self.study,
            config_id: self.config_id,
            task: self.task,
            assignment_id: self.assignment_id,
            worker: self.worker,
            presented: crowd.presentations(),
            crowd: crowd.into(),
            k: self.k as u32,
            training_split: self.training_split.map(|s| s as u32),
            shot_group: String::new(),
            status: self.status,
            started_at: self.started_at,
            finished_at: self.finished_at,
            last_activity: self.last_activity,
            position: self.position,
            gold_revealed: self.phase == Phase::Training && self.submitted_at.is_some(),
            phase: self.phase,
            example_id: self.example_id,
            item_id: self.ext_id,
            file: self.file_name,
            line: self.line_no,
            content_key: self.content_key,
            submitted: self.submitted_at.is_some(),
            answer,
            no_answer: self.no_answer != 0,
            skipped: self.skipped != 0,
            confidence: self.confidence.map(|c| c as u8),
            shown_at: self.shown_at,
            submitted_at: self.submitted_at,
            acknowledged_at: self.acknowledged_at,
            s1: self.s1,
            s1_any_of: self.s1_any_of,
            client_id: self.client_id,
            synthetic: self.synthetic != 0,
            signals: signals.into(),
            server_ms,
            fits_server_clock,
        })
    }
}

/// Every annotation row of `studies`, ordered by study, assignment and position, read from
/// the database a page at a time ([`pages`]: nothing holds them all, and no read outlasts its
/// page) as heavy work of `kind` (at its priority, on a connection of its own but for an
/// in-memory database); the synthetic workers of `load fill` only where `synthetic` asks for them. A place
/// that still awaits its worker's consent is in none of them (nor in the report, which reads
/// these rows).
pub fn annotation_rows(
    pool: &AnyPool,
    studies: &[Study],
    synthetic: bool,
    kind: Kind,
) -> impl Stream<Item = Result<AnnotationRow, Error>> + Send + Unpin + 'static {
    pages::rows(
        pool,
        pages::Scope::of(studies, synthetic),
        pages::PAGE_ROWS,
        kind,
    )
}

/// The columns of an annotation row, from the tables its query joins.
const ROW_COLUMNS: &str = "a.study_id, s.name AS study, a.config_id, t.name AS task,
    a.id AS assignment_id, u.name AS worker, a.crowd_json, a.k, a.training_split,
    a.status, a.started_at, a.finished_at, a.last_activity, i.position, i.phase,
    i.example_id, e.ext_id, f.file_name, e.line_no, e.content_key, i.answer_json,
    i.no_answer, i.skipped, i.confidence, i.shown_at, i.submitted_at,
    i.acknowledged_at, i.s1, i.s1_any_of, i.client_id, a.synthetic,
    i.signals_json
 FROM assignments a
 JOIN studies s ON s.id = a.study_id
 JOIN tasks t ON t.id = a.task_id
 JOIN users u ON u.id = a.worker_id
 JOIN assignment_items i ON i.assignment_id = a.id
 JOIN examples e ON e.id = i.example_id
 JOIN data_files f ON f.id = e.file_id";
