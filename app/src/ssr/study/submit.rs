//! Submitting an answer (checked, scored, locked; a resend of the same submission is
//! acknowledged and stored once) and moving on from a revealed training item.

use super::items::{
    current_position, item_row, own_assignment, reveal, stamp_once, touch, ItemRow, Stamp,
    StoredSpan,
};
use super::load;
use crate::api::study::{Phase, SubmitAck};
use crate::domain::answer::{check_answer, Answer};
use crate::domain::s1::Scoring;
use crate::error::AppError;
use crate::ssr::auth::now_ms;
use sqlx::SqlitePool;

fn no_place() -> AppError {
    AppError::NotFound(
        "You have no place in this study; open it through your study link first.".into(),
    )
}

fn locked() -> AppError {
    AppError::Refused(
        "This answer was already submitted and is locked; it cannot be changed.".into(),
    )
}

/// Stores the answer to the worker's current item. A resend with the same `client_id` is
/// acknowledged again without storing anything; any other second submission is refused.
pub async fn submit(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
    position: i64,
    client_id: &str,
    answer: Answer,
) -> Result<SubmitAck, AppError> {
    crate::domain::people::validate_client_id(client_id).map_err(AppError::Invalid)?;
    let study = load(pool, study_id).await?;
    let (assignment, _, status, _, _) = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    let item = item_row(pool, study.spec.family, assignment, position)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("your assignment has no item {position}")))?;
    let ack = |item: &ItemRow| SubmitAck {
        position,
        reveal: reveal(&study.spec, item),
    };
    if item.submitted {
        return if item.client_id.as_deref() == Some(client_id) {
            Ok(ack(&item))
        } else {
            Err(locked())
        };
    }
    if status == "abandoned" {
        return Err(AppError::Refused(
            "Your place in this study was released after the time-out; your earlier answers are kept.".into(),
        ));
    }
    if current_position(pool, assignment).await? != Some(position) {
        // A concurrent send of this very submission may have stored it (and moved the worker
        // on) since the item was read: acknowledge that one.
        let again = item_row(pool, study.spec.family, assignment, position).await?;
        if let Some(again) =
            again.filter(|i| i.submitted && i.client_id.as_deref() == Some(client_id))
        {
            return Ok(ack(&again));
        }
        return Err(AppError::Refused(
            "This is not your current item; reload the page to continue where you are.".into(),
        ));
    }
    check_answer(&study.spec, &item.context, &answer).map_err(AppError::Invalid)?;
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
    let now = now_ms();
    let ack_at = (item.phase == Phase::Test).then_some(now);
    // The answer and the worker's activity in one transaction (one commit).
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let stored = sqlx::query(
        "UPDATE assignment_items SET submitted_at = ?, acknowledged_at = ?, client_id = ?, answer_json = ?,
            no_answer = ?, skipped = ?, confidence = ?, s1 = ?, s1_any_of = ?,
            shown_at = COALESCE(shown_at, ?)
         WHERE assignment_id = ? AND position = ? AND submitted_at IS NULL",
    )
    .bind(now)
    .bind(ack_at)
    .bind(client_id)
    .bind(serde_json::to_string(&spans).map_err(AppError::internal)?)
    .bind(matches!(answer, Answer::NoAnswer))
    .bind(matches!(answer, Answer::Skip { .. }))
    .bind(answer.confidence())
    .bind(s1)
    .bind(s1_any)
    .bind(now)
    .bind(assignment)
    .bind(position)
    .execute(&mut *tx)
    .await;
    let stored = match stored {
        Ok(done) if done.rows_affected() > 0 => touch(&mut tx, assignment, now).await.map(|()| 1),
        Ok(_) => Ok(0),
        // The same client id on another item of this assignment.
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(AppError::Invalid(
            "this client id was already used for another item".into(),
        )),
        Err(e) => Err(e.into()),
    };
    let stored = crate::ssr::tx::finish(tx, stored).await?;
    if stored == 0 {
        // A concurrent send got there first: the same submission is acknowledged.
        let again = item_row(pool, study.spec.family, assignment, position)
            .await?
            .ok_or_else(|| AppError::internal("item vanished"))?;
        return if again.client_id.as_deref() == Some(client_id) {
            Ok(ack(&again))
        } else {
            Err(locked())
        };
    }
    // What was just stored, without reading it back.
    let saved = ItemRow {
        submitted: true,
        answer: Some(answer),
        client_id: Some(client_id.to_string()),
        ..item
    };
    Ok(ack(&saved))
}

/// Moves on from a revealed training item. Idempotent.
pub async fn acknowledge(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
    position: i64,
) -> Result<(), AppError> {
    let (assignment, ..) = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    let submitted: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT submitted_at FROM assignment_items WHERE assignment_id = ? AND position = ?",
    )
    .bind(assignment)
    .bind(position)
    .fetch_optional(pool)
    .await?;
    match submitted {
        None => Err(AppError::NotFound(format!(
            "your assignment has no item {position}"
        ))),
        Some(None) => Err(AppError::Refused(
            "Submit an answer to this item first.".into(),
        )),
        Some(Some(_)) => {
            stamp_once(pool, assignment, position, Stamp::Acknowledged, now_ms()).await
        }
    }
}
