//! The crowd protocol on the database: study configuration, taking a place (one transaction
//! per arrival), the worker's current item, locked submissions with idempotent resends.

use crate::catalog::{corrupt, FamilyColumns, TaskRow, TASK_COLUMNS};
use crate::error::Error;
use domain::ids::{ConfigId, StudyId, TaskId, UserId};
use domain::place::PlaceStatus;
pub use domain::platform::CrowdInfo;
use domain::study::StudyConfig;
use domain::task::{Family, TaskSpec};
use sqlx::AnyPool;

/// A study with its task and the configuration in force.
#[derive(Clone)]
pub struct Study {
    pub id: StudyId,
    pub name: String,
    pub task_id: TaskId,
    pub spec: TaskSpec,
    pub config_id: ConfigId,
    pub config: StudyConfig,
}

impl Study {
    /// Whether a place still waits for its worker's consent (the study has a consent page):
    /// held, but kept out of every export, report and table.
    pub(super) fn awaits_consent(&self, status: PlaceStatus, consented_at: Option<i64>) -> bool {
        status == PlaceStatus::Active
            && consented_at.is_none()
            && self.config.pages.consent.is_some()
    }
}

/// A study with its task and the configuration in force, as stored.
#[derive(sqlx::FromRow)]
struct StudyRow {
    study_name: String,
    config_id: ConfigId,
    config_json: String,
    #[sqlx(flatten)]
    task: TaskRow,
}

/// A study with its task and configuration, in one query (every answer reads it).
pub async fn load(pool: &AnyPool, id: StudyId) -> Result<Study, Error> {
    let row: Option<StudyRow> = sqlx::query_as(&format!(
        "SELECT s.name AS study_name, c.id AS config_id, c.config_json, {TASK_COLUMNS}
         FROM studies s JOIN tasks t ON t.id = s.task_id JOIN study_configs c ON c.id = s.config_id
         WHERE s.id = $1"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await?;
    let row = row.ok_or_else(|| Error::NotFound(format!("there is no study {id}")))?;
    let (task_id, spec, _) = row.task.decode()?;
    Ok(Study {
        id,
        name: row.study_name,
        task_id,
        spec,
        config_id: row.config_id,
        config: serde_json::from_str(&row.config_json)
            .map_err(|e| corrupt("study configuration", e))?,
    })
}

/// The family of a study's task, alone (a study page's bundle depends on it).
pub async fn family(pool: &AnyPool, id: StudyId) -> Result<Family, Error> {
    let row: Option<FamilyColumns> = sqlx::query_as(
        "SELECT t.family, t.text_metric FROM studies s JOIN tasks t ON t.id = s.task_id
         WHERE s.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?;
    let row = row.ok_or_else(|| Error::NotFound(format!("there is no study {id}")))?;
    Ok(row.decode()?.0)
}

/// Whether the worker already holds a place in the study (a return through the study link
/// resumes it).
pub async fn has_place(pool: &AnyPool, id: StudyId, worker: UserId) -> Result<bool, Error> {
    Ok(items::own_assignment(pool, id, worker).await?.is_some())
}

mod config;
mod consent;
mod items;
mod page_answers;
mod page_rows;
mod pages;
mod places;
mod plan;
mod refusals;
mod submit;
mod synthetic;
mod worker;

pub use config::{admin_view, admin_view_of, create, list, summary_of, update};
pub use consent::consent;
pub use items::StoredSpan;
pub use page_answers::questionnaire;
pub use page_rows::{page_rows, CheckRow, ConsentRow, PageRows, QuestionnaireRow};
pub use places::{enter, enter_new, has_free_place, present, release, Presence};
pub use plan::{frozen_plans, StoredPlan};
pub use submit::{acknowledge, submit, Sent};
pub use synthetic::fill;
pub use worker::worker_state;
