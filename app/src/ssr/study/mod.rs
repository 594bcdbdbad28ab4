//! The crowd protocol on the database: study configuration, taking a place (one transaction
//! per arrival), the worker's current item, locked submissions with idempotent resends.

use crate::error::AppError;
use crate::ssr::catalog::{corrupt, load_spec};
use domain::ids::{ConfigId, StudyId, TaskId, UserId};
use domain::study::StudyConfig;
use domain::task::TaskSpec;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;

/// What a crowd link said about the arrival, kept with the assignment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CrowdInfo {
    pub platform: Option<String>,
    pub worker: Option<String>,
    pub study: Option<String>,
    pub session: Option<String>,
    pub assignment: Option<String>,
    /// MTurk's `turkSubmitTo` (one of `crowd::MTURK_HOSTS`), where the end page posts the HIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_to: Option<String>,
}

/// A study with its task and the configuration in force.
pub struct Study {
    pub id: StudyId,
    pub name: String,
    pub task_id: TaskId,
    pub spec: TaskSpec,
    pub config_id: ConfigId,
    pub config: StudyConfig,
}

pub async fn load(pool: &AnyPool, id: StudyId) -> Result<Study, AppError> {
    let row: Option<(String, TaskId, String, ConfigId, String)> = sqlx::query_as(
        "SELECT s.name, s.task_id, t.name, c.id, c.config_json FROM studies s
         JOIN tasks t ON t.id = s.task_id JOIN study_configs c ON c.id = s.config_id WHERE s.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?;
    let (name, task_id, task, config_id, json) =
        row.ok_or_else(|| AppError::NotFound(format!("there is no study {id}")))?;
    let (_, spec, _) = load_spec(pool, &task).await?;
    Ok(Study {
        id,
        name,
        task_id,
        spec,
        config_id,
        config: serde_json::from_str(&json).map_err(|e| corrupt("study configuration", e))?,
    })
}

/// Whether the worker already holds a place in the study (a return through the study link
/// resumes it).
pub async fn has_place(pool: &AnyPool, id: StudyId, worker: UserId) -> Result<bool, AppError> {
    Ok(items::own_assignment(pool, id, worker).await?.is_some())
}

mod config;
mod consent;
mod items;
mod page_answers;
mod page_rows;
mod pages;
mod places;
mod refusals;
mod submit;
mod worker;

pub use config::{admin_view, admin_view_of, create, list, summary_of, update};
pub use consent::consent;
pub use items::StoredSpan;
pub use page_answers::questionnaire;
pub use page_rows::{page_rows, CheckRow, ConsentRow, PageRows, QuestionnaireRow};
pub use places::{enter, has_free_place};
pub use submit::{acknowledge, submit};
pub use worker::worker_state;
