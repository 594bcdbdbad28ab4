//! A study's own pages on the database: the consent a worker accepts (the text's hash kept) or
//! declines (the place freed, only the refusal kept), the questionnaires before and after, and
//! the attention checks of the test phase (answered once, like test items, never scored).

use super::items::{own_assignment, touch, Place};
use super::submit::{locked, no_place};
use super::worker::{next_step, record, step_now};
use super::{load, CrowdInfo, Study};
use crate::domain::answer::{check_answer, Answer};
use crate::domain::ids::{AssignmentId, StudyId, UserId};
use crate::domain::place::{Phase, PlaceStatus};
use crate::domain::study_pages::consent::{declined_hand_back, declined_message};
use crate::domain::study_pages::markdown::to_html;
use crate::domain::study_pages::questionnaire::check_replies;
use crate::domain::study_pages::{attention, Consent, Replies, Stage};
use crate::domain::task::Context;
use crate::error::AppError;
use crate::ssr::auth::now_ms;
use crate::ssr::catalog::corrupt;
use crate::wire::study::{
    ConsentPage, Declined, QuestionnairePage, SubmitAck, WorkerItem, WorkerStep,
};
use sqlx::{AnyConnection, AnyPool};

/// What a place has seen of its study's questionnaires and attention checks.
#[derive(Default)]
pub(super) struct Seen {
    /// Per stage: (shown, answered).
    before: (bool, bool),
    after: (bool, bool),
    /// Checks shown, and checks answered (indices into the study's checks).
    pub(super) shown_checks: Vec<u32>,
    pub(super) answered_checks: Vec<u32>,
}

impl Seen {
    fn of(&self, stage: Stage) -> (bool, bool) {
        match stage {
            Stage::Before => self.before,
            Stage::After => self.after,
        }
    }
}

/// Reads what the place has seen (nothing to read for a study without questionnaires and
/// checks).
pub(super) async fn seen(
    conn: &mut AnyConnection,
    study: &Study,
    place: AssignmentId,
) -> Result<Seen, AppError> {
    let pages = &study.config.pages;
    let mut seen = Seen::default();
    if !pages.questionnaire.is_empty() {
        let rows: Vec<(String, Option<i64>)> = sqlx::query_as(
            "SELECT stage, submitted_at FROM questionnaire_answers WHERE assignment_id = $1",
        )
        .bind(place)
        .fetch_all(&mut *conn)
        .await?;
        for (stage, submitted) in rows {
            let state = (true, submitted.is_some());
            match Stage::parse(&stage) {
                Some(Stage::Before) => seen.before = state,
                Some(Stage::After) => seen.after = state,
                None => return Err(corrupt("questionnaire stage", stage)),
            }
        }
    }
    if !pages.attention_checks.is_empty() {
        let rows: Vec<(i64, Option<i64>)> = sqlx::query_as(
            "SELECT check_index, submitted_at FROM attention_answers WHERE assignment_id = $1",
        )
        .bind(place)
        .fetch_all(&mut *conn)
        .await?;
        for (i, submitted) in rows {
            seen.shown_checks.push(i as u32);
            if submitted.is_some() {
                seen.answered_checks.push(i as u32);
            }
        }
    }
    Ok(seen)
}

/// The consent step of a study.
pub(super) fn consent_step(consent: &Consent) -> WorkerStep {
    WorkerStep::Consent(ConsentPage {
        html: to_html(&consent.text),
        contact: consent.contact.trim().to_string(),
    })
}

/// The questionnaire of `stage` if it is still to be answered, and whether showing it is its
/// first showing (which is recorded).
pub(super) fn questionnaire_step(
    study: &Study,
    seen: &Seen,
    stage: Stage,
) -> Option<(WorkerStep, bool)> {
    let questions = study.config.pages.questionnaire.of(stage);
    let (shown, answered) = seen.of(stage);
    (!questions.is_empty() && !answered).then(|| {
        let step = WorkerStep::Questionnaire(QuestionnairePage {
            stage,
            questions: questions.to_vec(),
        });
        (step, !shown)
    })
}

/// Attention check `index` as the worker sees it: a test item like the others, at the
/// position after the place's `items` items.
pub(super) fn check_item(study: &Study, items: i64, index: u32, shown: i64, of: i64) -> WorkerItem {
    let c = &study.config.pages.attention_checks[index as usize];
    WorkerItem {
        position: items + i64::from(index),
        phase: Phase::Test,
        index: shown,
        of,
        context: Context::Single {
            text: c.text.clone(),
        },
        question: c.question.clone(),
        reveal: None,
    }
}

/// The debriefing's HTML (empty without one).
pub(super) fn debriefing_html(study: &Study) -> String {
    let text = &study.config.pages.debriefing;
    if text.trim().is_empty() {
        String::new()
    } else {
        to_html(text)
    }
}

/// Records the first showing of a questionnaire or an attention check (a row with its time;
/// a second showing changes nothing).
pub(super) async fn record_shown(
    conn: &mut AnyConnection,
    place: AssignmentId,
    questionnaire: Option<Stage>,
    check: Option<u32>,
    now: i64,
) -> Result<(), AppError> {
    if let Some(stage) = questionnaire {
        sqlx::query(
            "INSERT INTO questionnaire_answers (assignment_id, stage, shown_at) VALUES ($1, $2, $3)
             ON CONFLICT (assignment_id, stage) DO NOTHING",
        )
        .bind(place)
        .bind(stage.as_str())
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    if let Some(i) = check {
        sqlx::query(
            "INSERT INTO attention_answers (assignment_id, check_index, shown_at) VALUES ($1, $2, $3)
             ON CONFLICT (assignment_id, check_index) DO NOTHING",
        )
        .bind(place)
        .bind(i64::from(i))
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Why the place's items cannot be answered yet: consent not given, or the questionnaire
/// before not answered (`None`: they can). Reads nothing for a study without these pages.
pub(super) async fn items_closed(
    pool: &AnyPool,
    study: &Study,
    place: &Place,
) -> Result<Option<&'static str>, AppError> {
    let pages = &study.config.pages;
    if pages.consent.is_some() && place.consented_at.is_none() {
        return Ok(Some("Please answer the consent page first."));
    }
    if pages.questionnaire.before.is_empty() {
        return Ok(None);
    }
    let answered: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT submitted_at FROM questionnaire_answers WHERE assignment_id = $1 AND stage = 'before'",
    )
    .bind(place.id)
    .fetch_optional(pool)
    .await?;
    Ok(answered
        .flatten()
        .is_none()
        .then_some("Please answer the questions before the task first."))
}

/// The worker's place and the study, for a step of the pages.
async fn place_of(
    pool: &AnyPool,
    study_id: StudyId,
    worker: UserId,
) -> Result<(Study, Place), AppError> {
    let study = load(pool, study_id).await?;
    let place = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    if place.status == PlaceStatus::Abandoned {
        return Err(AppError::Refused(
            "Your place in this study was released after the time-out; your earlier answers are kept.".into(),
        ));
    }
    Ok((study, place))
}

/// The worker accepts or declines the study's consent. Accepting keeps the text's hash with
/// the place and answers the next step (accepting again changes nothing). Declining frees the
/// place and removes everything of it, and the crowd worker's account when it has no other
/// place; only the refusal is kept. A worker who already accepted cannot decline here.
pub async fn consent(
    pool: &AnyPool,
    study_id: StudyId,
    worker: UserId,
    accept: bool,
) -> Result<WorkerStep, AppError> {
    let (study, mut place) = place_of(pool, study_id, worker).await?;
    let Some(consent) = study.config.pages.consent.clone() else {
        return Err(AppError::Invalid("this study has no consent page".into()));
    };
    if !accept && place.consented_at.is_some() {
        return Err(AppError::Refused(format!(
            "You already consented and your answers are being kept. To withdraw, contact {}.",
            consent.contact.trim()
        )));
    }
    let now = now_ms();
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let step = async {
        if !accept {
            return decline(&mut tx, &study, &consent, &place, worker, now).await;
        }
        sqlx::query(
            "UPDATE assignments SET consent_hash = $1, consented_at = $2, last_activity = $2
             WHERE id = $3 AND consented_at IS NULL",
        )
        .bind(consent.hash())
        .bind(now)
        .bind(place.id)
        .execute(&mut *tx)
        .await?;
        place.consented_at = Some(place.consented_at.unwrap_or(now));
        let next = next_step(&mut tx, &study, &place).await?;
        record(&mut tx, place.id, &next.records, now, true).await?;
        Ok(next.step)
    }
    .await;
    crate::ssr::tx::finish(tx, step).await
}

async fn decline(
    conn: &mut AnyConnection,
    study: &Study,
    consent: &Consent,
    place: &Place,
    worker: UserId,
    now: i64,
) -> Result<WorkerStep, AppError> {
    let (config_id, crowd): (i64, String) =
        sqlx::query_as("SELECT config_id, crowd_json FROM assignments WHERE id = $1")
            .bind(place.id)
            .fetch_one(&mut *conn)
            .await?;
    let crowd: CrowdInfo = serde_json::from_str(&crowd).map_err(|e| corrupt("crowd ids", e))?;
    sqlx::query(
        "INSERT INTO consent_refusals (study_id, config_id, consent_hash, platform, refused_at)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(study.id)
    .bind(config_id)
    .bind(consent.hash())
    .bind(crowd.platform.clone())
    .bind(now)
    .execute(&mut *conn)
    .await?;
    for sql in [
        "DELETE FROM attention_answers WHERE assignment_id = $1",
        "DELETE FROM questionnaire_answers WHERE assignment_id = $1",
        "DELETE FROM assignment_items WHERE assignment_id = $1",
        "DELETE FROM assignments WHERE id = $1",
    ] {
        sqlx::query(sql).bind(place.id).execute(&mut *conn).await?;
    }
    // A crowd worker's account exists for this place alone unless they hold another.
    let others: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM assignments WHERE worker_id = $1")
        .bind(worker)
        .fetch_one(&mut *conn)
        .await?;
    let crowd_account: Option<i64> =
        sqlx::query_scalar("SELECT user_id FROM crowd_ids WHERE user_id = $1")
            .bind(worker)
            .fetch_optional(&mut *conn)
            .await?;
    if others == 0 && crowd_account.is_some() {
        for sql in [
            "DELETE FROM sessions WHERE user_id = $1",
            "DELETE FROM crowd_ids WHERE user_id = $1",
            "DELETE FROM users WHERE id = $1",
        ] {
            sqlx::query(sql).bind(worker).execute(&mut *conn).await?;
        }
    }
    let platform = crowd.platform.as_deref();
    let hand_back = declined_hand_back(platform, consent);
    Ok(WorkerStep::Declined(Declined {
        message: declined_message(platform, hand_back.is_some()).into(),
        hand_back,
    }))
}

/// Stores the worker's answers to the questionnaire of `stage` (checked on the server) and
/// answers the next step. A resend of the same answers is answered again; different answers
/// to a questionnaire already answered are refused.
pub async fn questionnaire(
    pool: &AnyPool,
    study_id: StudyId,
    worker: UserId,
    stage: Stage,
    replies: Replies,
) -> Result<WorkerStep, AppError> {
    let (study, place) = place_of(pool, study_id, worker).await?;
    let questions = study.config.pages.questionnaire.of(stage);
    if questions.is_empty() {
        return Err(AppError::Invalid(format!(
            "this study has no questionnaire {}",
            stage.as_str()
        )));
    }
    let replies = check_replies(questions, &replies)
        .map_err(|errs| AppError::Invalid(format!("{}.", errs.join("; "))))?;
    let json = serde_json::to_string(&replies).map_err(AppError::internal)?;
    let stored: Option<Option<String>> = sqlx::query_scalar(
        "SELECT answers_json FROM questionnaire_answers WHERE assignment_id = $1 AND stage = $2",
    )
    .bind(place.id)
    .bind(stage.as_str())
    .fetch_optional(pool)
    .await?;
    if let Some(Some(before)) = stored {
        let before: Replies =
            serde_json::from_str(&before).map_err(|e| corrupt("questionnaire answers", e))?;
        return if before == replies {
            Ok(step_now(pool, &study, &place).await?.0)
        } else {
            Err(locked())
        };
    }
    let now = now_ms();
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let step = async {
        let current = next_step(&mut tx, &study, &place).await?;
        if !matches!(&current.step, WorkerStep::Questionnaire(q) if q.stage == stage) {
            return Err(AppError::Refused(
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
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(locked());
        }
        touch(&mut tx, place.id, now).await?;
        let next = next_step(&mut tx, &study, &place).await?;
        record(&mut tx, place.id, &next.records, now, true).await?;
        Ok(next.step)
    }
    .await;
    crate::ssr::tx::finish(tx, step).await
}

/// Stores the answer to an attention check (position `position`, after the place's items),
/// with whether it passed, and answers the next step as a test item's submission does.
pub(super) async fn submit_check(
    pool: &AnyPool,
    study: &Study,
    place: &Place,
    position: i64,
    client_id: &str,
    answer: Answer,
) -> Result<SubmitAck, AppError> {
    let items: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM assignment_items WHERE assignment_id = $1")
            .bind(place.id)
            .fetch_one(pool)
            .await?;
    let checks = &study.config.pages.attention_checks;
    let index = position - items;
    if index < 0 || index >= checks.len() as i64 {
        return Err(AppError::NotFound(format!(
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
            Ok(ack(step_now(pool, study, place).await?.0))
        } else {
            Err(locked())
        };
    }
    if place.status == PlaceStatus::Abandoned {
        return Err(AppError::Refused(
            "Your place in this study was released after the time-out; your earlier answers are kept.".into(),
        ));
    }
    let context = Context::Single {
        text: check.text.clone(),
    };
    check_answer(&study.spec, &context, &answer).map_err(AppError::Invalid)?;
    let passed = attention::passes(check, &answer);
    let strings = serde_json::to_string(&answer.strings()).map_err(AppError::internal)?;
    let now = now_ms();
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let step = async {
        let current = next_step(&mut tx, study, place).await?;
        if !matches!(&current.step, WorkerStep::Item(i) if i.position == position) {
            return Err(AppError::Refused(
                "This is not your current item; reload the page to continue where you are.".into(),
            ));
        }
        let done = sqlx::query(
            "INSERT INTO attention_answers (assignment_id, check_index, shown_at, submitted_at, client_id, answer_json, skipped, passed)
             VALUES ($1, $2, $3, $3, $4, $5, $6, $7)
             ON CONFLICT (assignment_id, check_index) DO UPDATE SET submitted_at = $3, client_id = $4,
                answer_json = $5, skipped = $6, passed = $7
             WHERE attention_answers.submitted_at IS NULL",
        )
        .bind(place.id)
        .bind(index)
        .bind(now)
        .bind(client_id)
        .bind(&strings)
        .bind(i64::from(matches!(answer, Answer::Skip { .. })))
        .bind(i64::from(passed))
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(locked());
        }
        touch(&mut tx, place.id, now).await?;
        let next = next_step(&mut tx, study, place).await?;
        record(&mut tx, place.id, &next.records, now, true).await?;
        Ok(next.step)
    }
    .await;
    match crate::ssr::tx::finish(tx, step).await {
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
                Ok(ack(step_now(pool, study, place).await?.0))
            } else {
                Err(e)
            }
        }
    }
}
