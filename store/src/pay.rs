//! What each worker is owed: the pay sheet's rows (`pay.csv`), read by the export and by the
//! crowd platforms' pay plan alike. Paid time is the server's, at the study's hourly rate.

use crate::annotations::CrowdIds;
use crate::error::Error;
use crate::export::{csv_of, iso_utc};
use crate::report::Loaded;
use domain::ids::{AssignmentId, StudyId};
use domain::place::PlaceStatus;
use domain::report::draw::text::money;
use domain::report::Report;
use serde::Serialize;

/// One worker's line of the pay sheet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PayRow {
    /// The place (not a column of the sheet: its workers are named by `worker`).
    #[serde(skip)]
    pub assignment: AssignmentId,
    pub worker: String,
    #[serde(flatten)]
    pub crowd: CrowdIds,
    pub study_id: StudyId,
    pub study: String,
    pub task: String,
    pub k: u32,
    pub status: PlaceStatus,
    pub started_at: String,
    pub ended_at: String,
    pub seconds: f64,
    pub hourly_rate_cents: u32,
    pub pay_cents: i64,
    pub pay: String,
    pub completion_code: String,
    /// Every assignment (MTurk) or session (Prolific) id the worker's links presented, with
    /// what became of it: the one handed back with this work, and any told to return.
    pub presented_ids: String,
    /// Attention checks answered and passed, and whether more failed than the study allows
    /// (the report's exclusion a rejection may follow): for the platforms' plan, not the sheet.
    #[serde(skip)]
    pub attention: (usize, usize),
    #[serde(skip)]
    pub failed_attention: bool,
    /// The worker's authenticity level and its reasons: shown, never deducted (the
    /// researcher decides).
    pub authenticity: String,
    pub authenticity_reasons: String,
}

pub const PAY_COLUMNS: [&str; 21] = [
    "worker",
    "platform",
    "crowd_worker_id",
    "crowd_study_id",
    "crowd_session_id",
    "crowd_assignment_id",
    "study_id",
    "study",
    "task",
    "k",
    "status",
    "started_at",
    "ended_at",
    "seconds",
    "hourly_rate_cents",
    "pay_cents",
    "pay",
    "completion_code",
    "presented_ids",
    "authenticity",
    "authenticity_reasons",
];

/// Paid time runs from taking the place to finishing (or to answering the questionnaire after
/// the test), or to the last activity for a worker who has not finished (abandoned places
/// included: the time was worked).
pub fn pay_rows(l: &Loaded, r: &Report) -> Vec<PayRow> {
    r.annotators
        .iter()
        .filter_map(|a| {
            let info = l.assignments.get(&a.assignment)?;
            let study = l.study(a.study)?;
            Some(PayRow {
                assignment: a.assignment,
                worker: a.worker.clone(),
                crowd: info.crowd.clone(),
                study_id: a.study,
                study: study.name.clone(),
                task: a.task.clone(),
                k: a.k,
                status: a.status,
                started_at: iso_utc(info.started_at),
                // The paid time's end: finishing, or answering the questionnaire after it.
                ended_at: iso_utc(info.started_at + (a.seconds * 1000.0).round() as i64),
                seconds: a.seconds,
                hourly_rate_cents: study.config.hourly_rate_cents,
                pay_cents: a.pay_cents,
                pay: money(a.pay_cents),
                completion_code: study.config.completion_code.clone(),
                presented_ids: presented_ids(&info.presented),
                attention: (a.attention_answered, a.attention_passed),
                failed_attention: a.failed_attention,
                authenticity: a
                    .authenticity
                    .as_ref()
                    .map_or(String::new(), |x| x.level.as_str().to_string()),
                authenticity_reasons: a
                    .authenticity
                    .as_ref()
                    .map_or(String::new(), |x| x.reasons.join("; ")),
            })
        })
        .collect()
}

/// The presented ids in one cell: `id: what became of it (when)`, joined by `; `; a visit names
/// its study, and a link without an id says so.
fn presented_ids(all: &[domain::platform::Presented]) -> String {
    use domain::platform::Outcome;
    all.iter()
        .map(|p| {
            let id = if p.id.is_empty() {
                "a link without an id"
            } else {
                &p.id
            };
            let study = p
                .study
                .as_ref()
                .filter(|_| p.outcome == Outcome::Visited)
                .map_or(String::new(), |s| format!(" with study {s}"));
            match p.at {
                Some(at) => format!("{id}{study}: {} ({})", p.outcome.describe(), iso_utc(at)),
                None => format!("{id}{study}: {}", p.outcome.describe()),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn pay_csv(l: &Loaded, r: &Report) -> Result<String, Error> {
    csv_of(&PAY_COLUMNS, &pay_rows(l, r))
}
