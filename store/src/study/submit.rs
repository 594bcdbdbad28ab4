//! Submitting an answer (checked, scored, locked; a resend of the same submission is
//! acknowledged and stored once) and moving on from a revealed training item.

use super::items::{
    current_position, item_row, own_assignment, reveal, stamp, touch, ItemRow, Place, Stamp,
    StoredSpan,
};
use super::refusals::{locked, no_place, not_current, released};
use super::worker::{next_step, record, step_now};
use super::{load, Study};
use crate::error::{Error, OnUnique, CLIENT_ID};
use crate::writer::Writer;
use domain::answer::{check_answer, Answer};
use domain::authenticity::ItemSignals;
use domain::ids::{StudyId, UserId};
use domain::place::Phase;
use domain::place::PlaceStatus;
use domain::s1::Scoring;
use domain::wire::study::{SubmitAck, WorkerStep};
use sqlx::{AnyConnection, AnyPool};
use std::sync::Arc;

/// One submission as the page sends it: the item, the submission's id, the answer and what
/// the page recorded while the item was shown (optional).
pub struct Sent<'a> {
    pub position: i64,
    pub client_id: &'a str,
    pub answer: Answer,
    pub signals: Option<ItemSignals>,
}

/// Stores the answer to the worker's current item and, after a test item, records the
/// showing of the next step in the same transaction (one commit per answer). A resend with
/// the same `client_id` is acknowledged again without storing anything; any other second
/// submission is refused. `now` is the server's clock: the answer's arrival, against which the
/// page's record of the item is read (`domain::authenticity::clock`).
pub async fn submit(
    pool: &AnyPool,
    writer: &Writer,
    study_id: StudyId,
    worker: UserId,
    sent: Sent<'_>,
    now: i64,
) -> Result<SubmitAck, Error> {
    let Sent {
        position,
        client_id,
        answer,
        signals,
    } = sent;
    domain::people::validate_client_id(client_id).map_err(Error::Invalid)?;
    if let Some(s) = &signals {
        s.check().map_err(Error::Invalid)?;
    }
    // Shared with the group commit's job below without copying it.
    let study = Arc::new(load(pool, study_id).await?);
    let place = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    if let Some(why) = super::pages::items_closed(pool, &study, &place).await? {
        return Err(Error::Refused(why.into()));
    }
    let Some(item) = item_row(pool, study.spec.family, place.id, position).await? else {
        // Attention checks come after the place's items (`pages::check_item`).
        return super::page_answers::submit_check(
            writer, &study, &place, position, client_id, answer, now,
        )
        .await;
    };
    // What was stored for this item before (a resend, or another answer) answers for it.
    let before = Before {
        writer,
        study: &study,
        place: &place,
        position,
        client_id,
        now,
    };
    if item.submitted {
        return before.answer(&item).await;
    }
    if place.status == PlaceStatus::Abandoned {
        return Err(released());
    }
    if current_position(pool, place.id).await? != Some(position) {
        // A concurrent send of this very submission may have stored it (and moved the worker
        // on) since the item was read: that one answers; else this is not the current item.
        return match item_row(pool, study.spec.family, place.id, position).await? {
            Some(again) if again.submitted && before.is_resend(&again) => {
                before.answer(&again).await
            }
            _ => Err(not_current()),
        };
    }
    let mut row = stored_row(&study, &item, &answer, client_id, position, now)?;
    row.signals_json = signals
        .map(|s| serde_json::to_string(&s))
        .transpose()
        .map_err(Error::internal)?;
    // Only a training item waits for the worker to read its gold; the others move on at once.
    let test = item.phase != Phase::Training;
    // The answer, the worker's activity and the next step's showing in one transaction,
    // shared with other workers' answers (group commit).
    let shared = Arc::clone(&study);
    let job_place = place.clone();
    let stored = writer
        .run(move |conn| Box::pin(store(conn, shared, job_place, row, test)))
        .await?;
    let next = match stored {
        Outcome::Test(next) => Some(next),
        Outcome::Training => None,
        // A concurrent send got there first: what it stored answers.
        Outcome::Taken => {
            let again = item_row(pool, study.spec.family, place.id, position)
                .await?
                .ok_or_else(|| Error::internal("item vanished"))?;
            return before.answer(&again).await;
        }
    };
    // What was just stored, without reading it back.
    let saved = ItemRow {
        submitted: true,
        answer: Some(answer),
        client_id: Some(client_id.to_string()),
        ..item
    };
    Ok(SubmitAck {
        position,
        reveal: reveal(&study.spec, &saved),
        next,
    })
}

/// The row an answer is stored as: checked against the item's text, scored both ways, its
/// spans as JSON; a test answer is acknowledged at once (a training one once its gold is read).
fn stored_row(
    study: &Study,
    item: &ItemRow,
    answer: &Answer,
    client_id: &str,
    position: i64,
    now: i64,
) -> Result<Stored, Error> {
    check_answer(&study.spec, &item.context, answer).map_err(Error::Invalid)?;
    let s1 = answer.score(&study.spec, &item.gold, Scoring::Official);
    let s1_any = answer.score(&study.spec, &item.gold, Scoring::AnyOf);
    let spans: Vec<StoredSpan> = answer
        .spans()
        .into_iter()
        .map(|(text, offset, length)| StoredSpan {
            text,
            offset,
            length,
        })
        .collect();
    let test = item.phase != Phase::Training;
    Ok(Stored {
        now,
        ack_at: test.then_some(now),
        client_id: client_id.to_string(),
        spans_json: serde_json::to_string(&spans).map_err(Error::internal)?,
        no_answer: matches!(answer, Answer::NoAnswer),
        skipped: matches!(answer, Answer::Skip { .. }),
        confidence: answer.confidence(),
        s1,
        s1_any,
        position,
        signals_json: None,
    })
}

/// An answer as it is written to its item.
struct Stored {
    now: i64,
    ack_at: Option<i64>,
    client_id: String,
    spans_json: String,
    no_answer: bool,
    skipped: bool,
    confidence: Option<u8>,
    s1: f64,
    s1_any: f64,
    position: i64,
    signals_json: Option<String>,
}

/// What writing an answer did: stored a training answer (its gold is revealed next), stored a
/// test answer and showed the next step, or found the item answered already.
enum Outcome {
    Training,
    Test(WorkerStep),
    Taken,
}

/// Writes the answer unless the item already has one, then the activity and, after a test
/// item, the next step with its first showing.
async fn store(
    conn: &mut AnyConnection,
    study: Arc<Study>,
    place: Place,
    row: Stored,
    test: bool,
) -> Result<Outcome, Error> {
    let stored = sqlx::query(
        "UPDATE assignment_items SET submitted_at = $1, acknowledged_at = $2, client_id = $3, answer_json = $4,
            no_answer = $5, skipped = $6, confidence = $7, s1 = $8, s1_any_of = $9,
            shown_at = COALESCE(shown_at, $10), signals_json = $13
         WHERE assignment_id = $11 AND position = $12 AND submitted_at IS NULL",
    )
    .bind(row.now)
    .bind(row.ack_at)
    .bind(&row.client_id)
    .bind(&row.spans_json)
    // Flags are 0/1 integers in both schemas (a bound bool is typed boolean on PostgreSQL).
    .bind(i64::from(row.no_answer))
    .bind(i64::from(row.skipped))
    .bind(row.confidence.map(i64::from))
    .bind(row.s1)
    .bind(row.s1_any)
    .bind(row.now)
    .bind(place.id)
    .bind(row.position)
    .bind(&row.signals_json)
    .execute(&mut *conn)
    .await;
    // The same client id on another item of this assignment.
    let stored = stored.on_unique(CLIENT_ID, || {
        Error::Invalid("this client id was already used for another item".into())
    })?;
    if stored.rows_affected() == 0 {
        return Ok(Outcome::Taken);
    }
    touch(&mut *conn, place.id, row.now).await?;
    if !test {
        return Ok(Outcome::Training);
    }
    let next = next_step(&mut *conn, &study, &place).await?;
    record(&mut *conn, place.id, &next.records, row.now, true).await?;
    Ok(Outcome::Test(next.step))
}

/// A submission whose item already holds an answer.
struct Before<'a> {
    writer: &'a Writer,
    study: &'a Study,
    place: &'a Place,
    position: i64,
    client_id: &'a str,
    now: i64,
}

impl Before<'_> {
    /// Whether the item holds this very submission (the same client id).
    fn is_resend(&self, item: &ItemRow) -> bool {
        item.client_id.as_deref() == Some(self.client_id)
    }

    /// The answer to a submission of an answered item: its resend (the same client id) is
    /// acknowledged again, after a test item with the worker's step as it stands now; any other
    /// is refused, the answer being locked.
    async fn answer(&self, item: &ItemRow) -> Result<SubmitAck, Error> {
        if !self.is_resend(item) {
            return Err(locked());
        }
        let next = match item.phase {
            Phase::Screening | Phase::Test => Some(
                step_now(self.writer, self.study, self.place, self.now)
                    .await?
                    .0,
            ),
            Phase::Training => None,
        };
        Ok(SubmitAck {
            position: self.position,
            reveal: reveal(&self.study.spec, item),
            next,
        })
    }
}

/// Moves on from a revealed training item and answers the worker's next step, its showing
/// recorded in the same transaction. Idempotent.
pub async fn acknowledge(
    writer: &Writer,
    study_id: StudyId,
    worker: UserId,
    position: i64,
    now: i64,
) -> Result<WorkerStep, Error> {
    let pool = writer.pool();
    // Shared with the group commit's job below without copying it.
    let study = Arc::new(load(pool, study_id).await?);
    let place = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    let submitted: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT submitted_at FROM assignment_items WHERE assignment_id = $1 AND position = $2",
    )
    .bind(place.id)
    .bind(position)
    .fetch_optional(pool)
    .await?;
    match submitted {
        None => {
            return Err(Error::NotFound(format!(
                "your assignment has no item {position}"
            )))
        }
        Some(None) => {
            return Err(Error::Refused(
                "Submit an answer to this item first.".into(),
            ))
        }
        Some(Some(_)) => {}
    }
    writer
        .write(&[], move |conn| {
            Box::pin(async move {
                let touched = stamp(conn, place.id, position, Stamp::Acknowledged, now).await?;
                if touched {
                    touch(conn, place.id, now).await?;
                }
                let next = next_step(conn, &study, &place).await?;
                record(conn, place.id, &next.records, now, touched).await?;
                Ok(next.step)
            })
        })
        .await
}
