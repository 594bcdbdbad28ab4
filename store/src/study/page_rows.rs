//! A scope's rows of the study pages for the report and the exports: questionnaire answers,
//! attention checks and consent decisions (accepted with the text's hash, or refused).

use super::Study;
use crate::catalog::corrupt;
use crate::error::Error;
use domain::ids::{AssignmentId, StudyId};
use domain::platform::Platform;
use domain::report::PageRecord;
use domain::study_pages::{Replies, Stage};
use serde::Serialize;
use sqlx::AnyPool;
use std::collections::HashMap;

/// One questionnaire a worker answered (or was shown).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuestionnaireRow {
    pub study_id: StudyId,
    pub assignment_id: AssignmentId,
    pub worker: String,
    pub k: u32,
    pub stage: Stage,
    pub shown_at: i64,
    pub submitted_at: Option<i64>,
    pub answers: Replies,
}

/// One attention check a worker was shown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckRow {
    pub study_id: StudyId,
    pub assignment_id: AssignmentId,
    pub worker: String,
    pub k: u32,
    /// 1-based, in the study's list.
    pub check: u32,
    pub after: u32,
    pub expected: String,
    pub answer: String,
    pub skipped: bool,
    pub passed: Option<bool>,
    pub shown_at: i64,
    pub submitted_at: Option<i64>,
}

/// A consent decision: accepted (with the worker's place) or refused (nobody named).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConsentRow {
    pub study_id: StudyId,
    pub config_id: i64,
    pub decision: &'static str,
    pub assignment_id: Option<AssignmentId>,
    pub worker: Option<String>,
    pub platform: Option<Platform>,
    pub consent_hash: String,
    pub at: i64,
}

/// The rows of a scope's pages.
#[derive(Clone, Debug, Default)]
pub struct PageRows {
    pub questionnaires: Vec<QuestionnaireRow>,
    pub checks: Vec<CheckRow>,
    pub consents: Vec<ConsentRow>,
}

/// The rows `sql` reads with the study's id as `$1`.
async fn rows_of<T>(pool: &AnyPool, sql: &str, study: StudyId) -> Result<Vec<T>, Error>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    Ok(sqlx::query_as(sql).bind(study).fetch_all(pool).await?)
}

/// A worker's stored answers to a questionnaire, as read.
#[derive(sqlx::FromRow)]
struct AnswerRow {
    assignment_id: AssignmentId,
    worker: String,
    k: i64,
    stage: String,
    shown_at: i64,
    submitted_at: Option<i64>,
    answer_json: Option<String>,
}

/// A worker's answer to an attention check, as read.
#[derive(sqlx::FromRow)]
struct CheckAnswer {
    assignment_id: AssignmentId,
    worker: String,
    k: i64,
    check_index: i64,
    shown_at: i64,
    submitted_at: Option<i64>,
    answer_json: Option<String>,
    skipped: i64,
    passed: Option<i64>,
}

/// Reads the pages' rows of `studies` (a few per worker; none for a study without pages).
pub async fn page_rows(pool: &AnyPool, studies: &[Study]) -> Result<PageRows, Error> {
    let mut out = PageRows::default();
    // What workers answer cannot change once one started, so a study without pages now never
    // had workers on any.
    for s in studies.iter().filter(|s| !s.config.pages.is_empty()) {
        out.questionnaires.extend(questionnaires(pool, s).await?);
        out.checks.extend(checks(pool, s).await?);
        out.consents.extend(consents(pool, s).await?);
    }
    Ok(out)
}

/// A study's questionnaire answers, a row per worker and stage.
async fn questionnaires(pool: &AnyPool, s: &Study) -> Result<Vec<QuestionnaireRow>, Error> {
    let mut out = Vec::new();
    let rows: Vec<AnswerRow> = rows_of(
        pool,
        "SELECT a.id AS assignment_id, u.name AS worker, a.k, q.stage, q.shown_at,
                q.submitted_at, q.answers_json AS answer_json
             FROM questionnaire_answers q JOIN assignments a ON a.id = q.assignment_id
             JOIN users u ON u.id = a.worker_id
             WHERE a.study_id = $1 ORDER BY a.id, q.stage DESC",
        s.id,
    )
    .await?;
    for r in rows {
        out.push(QuestionnaireRow {
            study_id: s.id,
            assignment_id: r.assignment_id,
            worker: r.worker,
            k: r.k as u32,
            stage: Stage::parse(&r.stage)
                .ok_or_else(|| corrupt("questionnaire stage", &r.stage))?,
            shown_at: r.shown_at,
            submitted_at: r.submitted_at,
            answers: match r.answer_json {
                Some(j) => {
                    serde_json::from_str(&j).map_err(|e| corrupt("questionnaire answers", e))?
                }
                None => Replies::new(),
            },
        });
    }
    Ok(out)
}

/// A study's attention-check answers, a row per worker and check.
async fn checks(pool: &AnyPool, s: &Study) -> Result<Vec<CheckRow>, Error> {
    let mut out = Vec::new();
    let rows: Vec<CheckAnswer> = rows_of(
        pool,
        "SELECT a.id AS assignment_id, u.name AS worker, a.k, c.check_index, c.shown_at,
                c.submitted_at, c.answer_json, c.skipped, c.passed
             FROM attention_answers c JOIN assignments a ON a.id = c.assignment_id
             JOIN users u ON u.id = a.worker_id
             WHERE a.study_id = $1 ORDER BY a.id, c.check_index",
        s.id,
    )
    .await?;
    let checks = &s.config.pages.attention_checks;
    for r in rows {
        let index = r.check_index;
        let check = checks
            .get(index as usize)
            .ok_or_else(|| corrupt("attention check", index))?;
        let answer: Vec<String> = match r.answer_json {
            Some(j) => serde_json::from_str(&j).map_err(|e| corrupt("check answer", e))?,
            None => Vec::new(),
        };
        out.push(CheckRow {
            study_id: s.id,
            assignment_id: r.assignment_id,
            worker: r.worker,
            k: r.k as u32,
            check: index as u32 + 1,
            after: check.after,
            expected: check.answer.join("|"),
            answer: answer.join("|"),
            skipped: r.skipped != 0,
            passed: r.passed.map(|p| p != 0),
            shown_at: r.shown_at,
            submitted_at: r.submitted_at,
        });
    }
    Ok(out)
}

/// A worker who accepted the consent text, as read.
#[derive(sqlx::FromRow)]
struct Acceptance {
    assignment_id: AssignmentId,
    worker: String,
    config_id: i64,
    crowd_json: String,
    consent_hash: String,
    consented_at: i64,
}

/// A refusal of the consent text (nothing of the worker is kept).
#[derive(sqlx::FromRow)]
struct Refusal {
    config_id: i64,
    platform: Option<Platform>,
    consent_hash: String,
    refused_at: i64,
}

/// A study's consent decisions: each acceptance with its worker, each refusal (no one kept).
async fn consents(pool: &AnyPool, s: &Study) -> Result<Vec<ConsentRow>, Error> {
    let mut out = Vec::new();
    let accepted: Vec<Acceptance> = rows_of(
        pool,
        "SELECT a.id AS assignment_id, u.name AS worker, a.config_id, a.crowd_json, a.consent_hash,
                a.consented_at
         FROM assignments a JOIN users u ON u.id = a.worker_id
         WHERE a.study_id = $1 AND a.consented_at IS NOT NULL ORDER BY a.id",
        s.id,
    )
    .await?;
    for a in accepted {
        let crowd: super::CrowdInfo =
            serde_json::from_str(&a.crowd_json).map_err(|e| corrupt("crowd ids", e))?;
        out.push(ConsentRow {
            study_id: s.id,
            config_id: a.config_id,
            decision: "accepted",
            assignment_id: Some(a.assignment_id),
            worker: Some(a.worker),
            platform: crowd.platform,
            consent_hash: a.consent_hash,
            at: a.consented_at,
        });
    }
    let refused: Vec<Refusal> = rows_of(
        pool,
        "SELECT config_id, platform, consent_hash, refused_at FROM consent_refusals
         WHERE study_id = $1 ORDER BY id",
        s.id,
    )
    .await?;
    for r in refused {
        out.push(ConsentRow {
            study_id: s.id,
            config_id: r.config_id,
            decision: "declined",
            assignment_id: None,
            worker: None,
            platform: r.platform,
            consent_hash: r.consent_hash,
            at: r.refused_at,
        });
    }
    Ok(out)
}

impl PageRows {
    /// Each assignment's page record, for the report.
    pub fn records(&self) -> HashMap<AssignmentId, PageRecord> {
        let mut out: HashMap<AssignmentId, PageRecord> = HashMap::new();
        for q in &self.questionnaires {
            let r = out.entry(q.assignment_id).or_default();
            if let Some(at) = q.submitted_at {
                r.questionnaire_ms += at - q.shown_at;
                r.replies.push((q.stage, q.answers.clone()));
                if q.stage == Stage::After {
                    r.after_at = Some(at);
                }
            }
        }
        for c in &self.checks {
            if let Some(p) = c.passed {
                out.entry(c.assignment_id).or_default().attention.push(p);
            }
        }
        out
    }
}
