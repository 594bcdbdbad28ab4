//! One item of an assignment as the server reads it: the worker's place, the item with its
//! example and answer, the reveal of a submitted training item, the current position, activity.

use crate::catalog::{context_of, corrupt, GoldColumns};
use crate::error::Error;
use domain::answer::{Answer, SpanAnswer};
use domain::ids::{AssignmentId, StudyId, UserId};
use domain::place::Phase;
use domain::place::PlaceStatus;
use domain::s1::Scoring;
use domain::task::{Context, Family, Gold, TaskSpec};
use domain::wire::study::Reveal;
use serde::{Deserialize, Serialize};
use sqlx::AnyExecutor;

/// A worker's place in a study, as `own_assignment` reads it from `assignments`.
#[derive(Clone, sqlx::FromRow)]
pub(super) struct Place {
    pub(super) id: AssignmentId,
    /// The scenario's shots (0: zero-shot).
    pub(super) k: i64,
    pub(super) status: PlaceStatus,
    pub(super) started_at: i64,
    /// When the worker accepted the study's consent text (`None`: not yet, or no consent).
    pub(super) consented_at: Option<i64>,
}

/// The worker's place in this study, if they took one.
pub(super) async fn own_assignment(
    db: impl AnyExecutor<'_>,
    study_id: StudyId,
    worker: UserId,
) -> Result<Option<Place>, Error> {
    Ok(sqlx::query_as(
        "SELECT id, k, status, started_at, consented_at FROM assignments WHERE study_id = $1 AND worker_id = $2",
    )
    .bind(study_id)
    .bind(worker)
    .fetch_optional(db)
    .await?)
}

/// A row of `assignment_items` joined with its example.
pub(super) struct ItemRow {
    pub(super) phase: Phase,
    pub(super) submitted: bool,
    /// Whether the item's first showing is recorded.
    pub(super) shown: bool,
    pub(super) context: Context,
    pub(super) question: String,
    pub(super) gold: Gold,
    pub(super) answer: Option<Answer>,
    pub(super) client_id: Option<String>,
}

/// The stored columns `item_row` decodes.
#[derive(sqlx::FromRow)]
struct StoredItem {
    phase: Phase,
    submitted_at: Option<i64>,
    shown_at: Option<i64>,
    client_id: Option<String>,
    answer_json: Option<String>,
    no_answer: i64,
    skipped: i64,
    confidence: Option<i64>,
    context: String,
    context2: Option<String>,
    question: String,
    #[sqlx(flatten)]
    gold: GoldColumns,
}

pub(super) async fn item_row(
    db: impl AnyExecutor<'_>,
    family: Family,
    assignment: AssignmentId,
    position: i64,
) -> Result<Option<ItemRow>, Error> {
    let row: Option<StoredItem> = sqlx::query_as(
        "SELECT i.phase, i.submitted_at, i.shown_at, i.client_id, i.answer_json, i.no_answer, i.skipped, i.confidence,
                e.context, e.context2, e.question, e.gold_official, e.gold_spans
         FROM assignment_items i JOIN examples e ON e.id = i.example_id
         WHERE i.assignment_id = $1 AND i.position = $2",
    )
    .bind(assignment)
    .bind(position)
    .fetch_optional(db)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let submitted = r.submitted_at.is_some();
    let answer = if submitted {
        let spans: Vec<StoredSpan> = serde_json::from_str(r.answer_json.as_deref().unwrap_or("[]"))
            .map_err(|e| corrupt("answer", e))?;
        let confidence = r.confidence.map(|c| c as u8);
        Some(if r.skipped != 0 {
            Answer::Skip { confidence }
        } else if r.no_answer != 0 {
            Answer::NoAnswer
        } else if let (
            [StoredSpan {
                text, offset: None, ..
            }],
            Family::TextToText,
        ) = (spans.as_slice(), family)
        {
            Answer::Text { text: text.clone() }
        } else if let [StoredSpan {
            text, offset: None, ..
        }] = spans.as_slice()
        {
            Answer::Label {
                label: text.clone(),
                confidence: confidence.unwrap_or(0),
            }
        } else {
            Answer::Spans {
                spans: spans
                    .into_iter()
                    .map(|s| SpanAnswer {
                        text: s.text,
                        offset: s.offset.unwrap_or(0),
                        length: s.length,
                    })
                    .collect(),
            }
        })
    } else {
        None
    };
    Ok(Some(ItemRow {
        phase: r.phase,
        submitted,
        shown: r.shown_at.is_some(),
        context: context_of(r.context, r.context2),
        question: r.question,
        gold: r.gold.decode()?,
        answer,
        client_id: r.client_id,
    }))
}

/// An answer span as stored in `assignment_items.answer_json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredSpan {
    pub text: String,
    /// Code points into the context; `None` for a label.
    pub offset: Option<usize>,
    pub length: usize,
}

/// The gold beside the worker's answer: only ever built for a submitted training item.
pub(super) fn reveal(spec: &TaskSpec, item: &ItemRow) -> Option<Reveal> {
    if item.phase != Phase::Training {
        return None;
    }
    let yours = item.answer.clone()?;
    Some(Reveal {
        s1: yours.score(spec, &item.gold, Scoring::Official),
        gold: spec.from_official(&item.gold.official),
        gold_spans: item.gold.spans.clone(),
        yours,
    })
}

/// The position of the worker's current item: the first not yet moved on from.
pub(super) async fn current_position(
    db: impl AnyExecutor<'_>,
    assignment: AssignmentId,
) -> Result<Option<i64>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(position) FROM assignment_items WHERE assignment_id = $1 AND acknowledged_at IS NULL",
    )
    .bind(assignment)
    .fetch_one(db)
    .await?)
}

/// A moment recorded once per item: when it was first shown, when a training item's gold was
/// acknowledged.
#[derive(Clone, Copy)]
pub(super) enum Stamp {
    Shown,
    Acknowledged,
}

/// Records `stamp` for an item unless it is already set (on a connection in a write
/// transaction); whether it was set now.
pub(super) async fn stamp(
    conn: &mut sqlx::AnyConnection,
    assignment: AssignmentId,
    position: i64,
    stamp: Stamp,
    now: i64,
) -> Result<bool, Error> {
    let sql = match stamp {
        Stamp::Shown => "UPDATE assignment_items SET shown_at = $1 WHERE assignment_id = $2 AND position = $3 AND shown_at IS NULL",
        Stamp::Acknowledged => "UPDATE assignment_items SET acknowledged_at = $1 WHERE assignment_id = $2 AND position = $3 AND acknowledged_at IS NULL",
    };
    let set = sqlx::query(sql)
        .bind(now)
        .bind(assignment)
        .bind(position)
        .execute(conn)
        .await?;
    Ok(set.rows_affected() > 0)
}

/// Records activity on a place (what the time-out of abandoned places looks at).
pub(super) async fn touch(
    conn: &mut sqlx::AnyConnection,
    assignment: AssignmentId,
    now: i64,
) -> Result<(), Error> {
    sqlx::query("UPDATE assignments SET last_activity = $1 WHERE id = $2")
        .bind(now)
        .bind(assignment)
        .execute(conn)
        .await?;
    Ok(())
}
