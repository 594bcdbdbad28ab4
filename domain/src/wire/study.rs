//! What the crowd protocol sends to the browser: study summaries and overviews for admins, and
//! for workers their step (an item, a reveal of a training gold, or the end) and each acknowledgement.

use crate::answer::Answer;
use crate::ids::{AssignmentId, ConfigId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::spans::Span;
use crate::study::StudyConfig;
use crate::study_pages::Stage;
use crate::task::{Context, Family, Label};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudySummary {
    pub id: StudyId,
    pub name: String,
    pub task: String,
    pub family: Family,
    pub config: StudyConfig,
    pub config_id: ConfigId,
    /// The scenarios' training files, e.g. `10_1 ⊂ 20_5 ⊂ 30_5` (see `StudyConfig::shot_group_text`).
    pub shot_group: String,
    /// Every smaller training set lies within the next larger one.
    pub nested: bool,
    /// Some worker has taken a place: what workers saw can no longer change.
    pub started: bool,
    pub workers: i64,
    pub finished: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioProgress {
    pub k: u32,
    pub slots: u32,
    pub active: i64,
    pub finished: i64,
    pub abandoned: i64,
    pub items_done: i64,
    pub items_total: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerRow {
    pub name: String,
    pub k: u32,
    pub status: PlaceStatus,
    pub items_done: i64,
    pub items_total: i64,
    pub training_s1: Option<f64>,
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyOverview {
    pub summary: StudySummary,
    /// (k, split) shot groups the task has, for the form.
    pub shot_groups: Vec<(u32, u32)>,
    /// The task's nesting chains of training files, for the form.
    pub chains: Vec<Vec<(u32, u32)>>,
    pub progress: Vec<ScenarioProgress>,
    pub workers: Vec<WorkerRow>,
    /// Whether the reader may change the study (an admin): only then is the form offered.
    pub can_edit: bool,
}

/// What the worker answered and, for a submitted training item, the gold beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reveal {
    pub yours: Answer,
    /// Gold answer strings (internal encoding: empty = no answer).
    pub gold: Vec<String>,
    /// Gold spans with their code-point offsets where known.
    pub gold_spans: Vec<Span>,
    pub s1: f64,
}

/// One item as the worker sees it. Never carries a test gold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerItem {
    pub position: i64,
    pub phase: Phase,
    /// 1-based place within its phase, and the phase's size.
    pub index: i64,
    pub of: i64,
    pub context: Context,
    pub question: String,
    /// Present only for a training item that was already submitted.
    pub reveal: Option<Reveal>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub code: String,
    /// How the worker returns to their crowd platform with the code (none for accounts).
    pub hand_back: Option<crate::crowd::HandBack>,
    pub training_s1: Option<f64>,
    pub training_items: i64,
    pub test_items: i64,
    pub skipped: i64,
    /// Sum over items of submit - first show (server clock).
    pub seconds_on_items: f64,
    /// From taking the place to the last submission (the questionnaire after the test
    /// included).
    pub seconds_elapsed: f64,
    /// The study's debriefing as HTML (rendered from its Markdown on the server; empty: none).
    #[serde(default)]
    pub debriefing_html: String,
}

/// The consent page: the study's text (HTML rendered from its Markdown on the server) and
/// the researcher's contact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsentPage {
    pub html: String,
    pub contact: String,
}

/// A questionnaire to answer now: its questions as the HTML of form fields, rendered on the
/// server (`study_pages::form`); the page posts the fields back as they are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionnairePage {
    pub stage: Stage,
    pub html: String,
}

/// The end of a visit whose worker declined consent: what the page says and the way back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Declined {
    pub message: String,
    pub hand_back: Option<crate::crowd::HandBack>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum WorkerStep {
    /// Accept (or decline) the consent text before anything else.
    Consent(ConsentPage),
    Questionnaire(QuestionnairePage),
    Item(WorkerItem),
    Done(Completion),
    /// The place was released after the time-out; the work done is kept.
    Abandoned,
    /// The worker declined consent: the place is freed and nothing but the refusal is kept.
    Declined(Declined),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerStudy {
    pub study_id: StudyId,
    /// The worker's place: the browser keeps unsent drafts under it, so another worker in the
    /// same browser never sees them.
    pub place: AssignmentId,
    pub study_name: String,
    pub description: String,
    pub family: Family,
    pub labels: Vec<Label>,
    pub k: u32,
    /// Screening items answered first, without feedback (a study may have none).
    #[serde(default)]
    pub screening_items: i64,
    pub training_items: i64,
    pub test_items: i64,
    pub step: WorkerStep,
}

/// The server's acknowledgement of a stored submission (or of a resend of it), with what the
/// page shows next: a training item's gold (`reveal`), or for a test item the next step, so
/// that an answer costs one request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubmitAck {
    pub position: i64,
    pub reveal: Option<Reveal>,
    /// The worker's next step after a test item; `None` after a training item (its gold is
    /// shown first, and `continue_study` answers the step after it).
    pub next: Option<WorkerStep>,
}
