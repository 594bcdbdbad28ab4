//! A study's own pages in the worker's steps: what a place has seen of the questionnaires and
//! checks, the consent, questionnaire and check steps, the debriefing, the first showings, and
//! whether the items are open yet.

use super::items::{own_assignment, Place};
use super::refusals::{no_place, released};
use super::{load, Study};
use crate::catalog::corrupt;
use crate::error::Error;
use domain::ids::{AssignmentId, StudyId, UserId};
use domain::place::{Phase, PlaceStatus};
use domain::study_pages::markdown::to_html;
use domain::study_pages::{Consent, Stage};
use domain::task::Context;
use domain::wire::study::{ConsentPage, QuestionnairePage, WorkerItem, WorkerStep};
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
) -> Result<Seen, Error> {
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
            html: domain::study_pages::form::questions_html(questions),
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
) -> Result<(), Error> {
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
) -> Result<Option<&'static str>, Error> {
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
pub(super) async fn place_of(
    pool: &AnyPool,
    study_id: StudyId,
    worker: UserId,
) -> Result<(Study, Place), Error> {
    let study = load(pool, study_id).await?;
    let place = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    if place.status == PlaceStatus::Abandoned {
        return Err(released());
    }
    Ok((study, place))
}
