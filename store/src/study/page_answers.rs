//! Answers on a study's own pages: a questionnaire (checked on the server, answered once) and
//! an attention check (locked like a test item, never scored as one; resends acknowledged).

use super::items::{touch, Place};
use super::pages::place_of;
use super::refusals::{locked, not_current, released};
use super::worker::{next_step, record, step_now};
use super::Study;
use crate::catalog::corrupt;
use crate::error::Error;
use crate::writer::Writer;
use domain::answer::{check_answer, Answer};
use domain::ids::{StudyId, UserId};
use domain::place::PlaceStatus;
use domain::study_pages::form::replies_from_fields;
use domain::study_pages::{attention, Replies, Stage};
use domain::task::Context;
use domain::wire::study::{SubmitAck, WorkerStep};
use sqlx::AnyPool;

/// Stores the worker's answers to the questionnaire of `stage`, the form's fields as the browser
/// sends them (read and checked on the server), and
/// answers the next step. A resend of the same answers is answered again; different answers
/// to a questionnaire already answered are refused.
pub async fn questionnaire(
    writer: &Writer,
    study_id: StudyId,
    worker: UserId,
    stage: Stage,
    fields: Vec<(String, String)>,
    now: i64,
) -> Result<WorkerStep, Error> {
    let pool = writer.pool();
    let (study, place) = place_of(pool, study_id, worker).await?;
    let questions = study.config.pages.questionnaire.of(stage);
    if questions.is_empty() {
        return Err(Error::Invalid(format!(
            "this study has no questionnaire {}",
            stage.as_str()
        )));
    }
    let replies = replies_from_fields(questions, &fields)
        .map_err(|errs| Error::Invalid(format!("{}.", errs.join("; "))))?;
    let json = serde_json::to_string(&replies).map_err(Error::internal)?;
    if let Some(before) = stored_replies(pool, place.id, stage).await? {
        return if before == replies {
            Ok(step_now(writer, &study, &place, now).await?.0)
        } else {
            Err(locked())
        };
    }
    let (s, p) = (study.clone(), place.clone());
    let step = writer.write(&[], move |conn| Box::pin(async move {
        let (study, place) = (s, p);
        let current = next_step(conn, &study, &place).await?;
        if !matches!(&current.step, WorkerStep::Questionnaire(q) if q.stage == stage) {
            return Err(Error::Refused(
                "This questionnaire is not your current step; reload the page to continue where you are.".into(),
            ));
        }
        let done = sqlx::query(
            "INSERT INTO questionnaire_answers (assignment_id, stage, shown_at, submitted_at, answers_json)
             VALUES ($1, $2, $3, $3, $4)
             ON CONFLICT (assignment_id, stage) DO UPDATE SET submitted_at = $3, answers_json = $4
             WHERE questionnaire_answers.submitted_at IS NULL",
        )
        .bind(place.id)
        .bind(stage.as_str())
        .bind(now)
        .bind(&json)
        .execute(&mut *conn)
        .await?;
        if done.rows_affected() == 0 {
            return Err(locked());
        }
        touch(conn, place.id, now).await?;
        let next = next_step(conn, &study, &place).await?;
        record(conn, place.id, &next.records, now, true).await?;
        Ok(next.step)
    })).await;
    match step {
        // The same answers sent twice at once: the other send stored them.
        Err(_) if stored_replies(pool, place.id, stage).await?.as_ref() == Some(&replies) => {
            Ok(step_now(writer, &study, &place, now).await?.0)
        }
        done => done,
    }
}

/// The answers stored for a questionnaire, if it was answered.
async fn stored_replies(
    pool: &AnyPool,
    place: domain::ids::AssignmentId,
    stage: Stage,
) -> Result<Option<Replies>, Error> {
    let stored: Option<Option<String>> = sqlx::query_scalar(
        "SELECT answers_json FROM questionnaire_answers WHERE assignment_id = $1 AND stage = $2",
    )
    .bind(place)
    .bind(stage.as_str())
    .fetch_optional(pool)
    .await?;
    stored
        .flatten()
        .map(|j| serde_json::from_str(&j).map_err(|e| corrupt("questionnaire answers", e)))
        .transpose()
}

/// An attention check's answer as it is stored.
struct CheckAnswer {
    index: i64,
    position: i64,
    client: String,
    strings: String,
    skipped: bool,
    passed: bool,
    now: i64,
}

/// Stores a check's answer if the check is the worker's current step and unanswered, then the
/// activity and the next step's showing; answers that step.
async fn store_check(
    conn: &mut sqlx::AnyConnection,
    study: &Study,
    place: &Place,
    a: CheckAnswer,
) -> Result<WorkerStep, Error> {
    let current = next_step(conn, study, place).await?;
    if !matches!(&current.step, WorkerStep::Item(i) if i.position == a.position) {
        return Err(not_current());
    }
    let done = sqlx::query(
        "INSERT INTO attention_answers (assignment_id, check_index, shown_at, submitted_at, client_id, answer_json, skipped, passed)
         VALUES ($1, $2, $3, $3, $4, $5, $6, $7)
         ON CONFLICT (assignment_id, check_index) DO UPDATE SET submitted_at = $3, client_id = $4,
            answer_json = $5, skipped = $6, passed = $7
         WHERE attention_answers.submitted_at IS NULL",
    )
    .bind(place.id)
    .bind(a.index)
    .bind(a.now)
    .bind(&a.client)
    .bind(&a.strings)
    .bind(i64::from(a.skipped))
    .bind(i64::from(a.passed))
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(locked());
    }
    touch(conn, place.id, a.now).await?;
    let next = next_step(conn, study, place).await?;
    record(conn, place.id, &next.records, a.now, true).await?;
    Ok(next.step)
}

/// Stores the answer to an attention check (position `position`, after the place's items),
/// with whether it passed, and answers the next step as a test item's submission does.
pub(super) async fn submit_check(
    writer: &Writer,
    study: &Study,
    place: &Place,
    position: i64,
    client_id: &str,
    answer: Answer,
    now: i64,
) -> Result<SubmitAck, Error> {
    let pool = writer.pool();
    let items: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM assignment_items WHERE assignment_id = $1")
            .bind(place.id)
            .fetch_one(pool)
            .await?;
    let checks = &study.config.pages.attention_checks;
    let index = position - items;
    if index < 0 || index >= checks.len() as i64 {
        return Err(Error::NotFound(format!(
            "your assignment has no item {position}"
        )));
    }
    let check = &checks[index as usize];
    let ack = |next| SubmitAck {
        position,
        reveal: None,
        next: Some(next),
    };
    let earlier: Option<(Option<i64>, Option<String>)> = sqlx::query_as(
        "SELECT submitted_at, client_id FROM attention_answers WHERE assignment_id = $1 AND check_index = $2",
    )
    .bind(place.id)
    .bind(index)
    .fetch_optional(pool)
    .await?;
    if let Some((Some(_), earlier_client)) = earlier {
        return if earlier_client.as_deref() == Some(client_id) {
            Ok(ack(step_now(writer, study, place, now).await?.0))
        } else {
            Err(locked())
        };
    }
    if place.status == PlaceStatus::Abandoned {
        return Err(released());
    }
    let context = Context::Single {
        text: check.text.clone(),
    };
    check_answer(&study.spec, &context, &answer).map_err(Error::Invalid)?;
    let row = CheckAnswer {
        index,
        position,
        client: client_id.to_string(),
        strings: serde_json::to_string(&answer.strings()).map_err(Error::internal)?,
        skipped: matches!(answer, Answer::Skip { .. }),
        passed: attention::passes(check, &answer),
        now,
    };
    let (s, p) = (study.clone(), place.clone());
    let step = writer
        .write(&[], move |conn| {
            Box::pin(async move { store_check(conn, &s, &p, row).await })
        })
        .await;
    match step {
        Ok(next) => Ok(ack(next)),
        // A concurrent send of this very submission stored it first: acknowledge that one.
        Err(e) => {
            let stored: Option<Option<String>> = sqlx::query_scalar(
                "SELECT client_id FROM attention_answers WHERE assignment_id = $1 AND check_index = $2 AND submitted_at IS NOT NULL",
            )
            .bind(place.id)
            .bind(index)
            .fetch_optional(pool)
            .await?;
            if stored.flatten().as_deref() == Some(client_id) {
                Ok(ack(step_now(writer, study, place, now).await?.0))
            } else {
                Err(e)
            }
        }
    }
}
