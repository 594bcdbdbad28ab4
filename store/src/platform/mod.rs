//! The crowd platforms' tables, one home: a study's publication (`platform_studies`), each
//! task's list of workers (`platform_groups`), the submissions read back and the decisions on
//! them (`remote`), the ledger of calls, each a job of its own kind (`ledger`), and the places
//! of a study as a publication sees them (`places`). No credential is ever written here.

use crate::error::{Error, Result};
use crate::tx::Lock;
use domain::ids::{StudyId, TaskId, UserId};
use domain::platform::draft::Draft;
use domain::platform::Platform;
use sqlx::AnyPool;

pub mod calls;
pub mod ledger;
pub mod places;
pub mod remote;

/// A study's publication on a platform.
#[derive(Clone, Debug, PartialEq)]
pub struct Publication {
    pub study: StudyId,
    pub draft: Draft,
    /// Confirmed for publishing: its calls are in the ledger.
    pub published: bool,
    /// What the platform calls it, once created: Prolific's study id, MTurk's HIT id.
    pub remote_id: Option<String>,
    /// MTurk's HIT type (its preview link).
    pub remote_group: Option<String>,
    /// Places asked of the platform so far.
    pub places: u32,
    pub budget_cents: i64,
    pub created_at: i64,
    pub published_at: Option<i64>,
    pub synced_at: Option<i64>,
}

impl Publication {
    pub fn platform(&self) -> Platform {
        self.draft.platform
    }
}

#[derive(sqlx::FromRow)]
struct PublicationRow {
    study_id: StudyId,
    draft_json: String,
    status: String,
    remote_id: Option<String>,
    remote_group: Option<String>,
    places: i64,
    budget_cents: i64,
    created_at: i64,
    published_at: Option<i64>,
    synced_at: Option<i64>,
}

const PUBLICATION_COLUMNS: &str = "study_id, draft_json, status, remote_id, remote_group, places,
    budget_cents, created_at, published_at, synced_at";

impl PublicationRow {
    fn read(self) -> Result<Publication> {
        let draft: Draft = serde_json::from_str(&self.draft_json)
            .map_err(|e| crate::catalog::corrupt("publication draft", e))?;
        Ok(Publication {
            study: self.study_id,
            draft,
            published: self.status == "published",
            remote_id: self.remote_id,
            remote_group: self.remote_group,
            places: self.places.max(0) as u32,
            budget_cents: self.budget_cents,
            created_at: self.created_at,
            published_at: self.published_at,
            synced_at: self.synced_at,
        })
    }
}

/// The study's publication, where it has one.
pub async fn publication(pool: &AnyPool, study: StudyId) -> Result<Option<Publication>> {
    let sql = format!("SELECT {PUBLICATION_COLUMNS} FROM platform_studies WHERE study_id = $1");
    let row: Option<PublicationRow> = sqlx::query_as(&sql)
        .bind(study)
        .fetch_optional(pool)
        .await?;
    row.map(PublicationRow::read).transpose()
}

/// The study's publication, or a refusal saying there is none.
pub async fn published(pool: &AnyPool, study: StudyId) -> Result<Publication> {
    publication(pool, study).await?.ok_or_else(|| {
        Error::Refused(format!(
            "study {study} has no publication on a crowd platform: publish it first"
        ))
    })
}

/// Every publication, the newest first (the ones a sync keeps in step).
pub async fn publications(pool: &AnyPool) -> Result<Vec<Publication>> {
    let sql = format!(
        "SELECT {PUBLICATION_COLUMNS} FROM platform_studies WHERE status = 'published' ORDER BY study_id DESC"
    );
    let rows: Vec<PublicationRow> = sqlx::query_as(&sql).fetch_all(pool).await?;
    rows.into_iter().map(PublicationRow::read).collect()
}

/// Keeps `draft` as the study's publication draft (a new one, or in place of a draft not yet
/// confirmed). Refused once the publication was confirmed: its calls are in the ledger.
pub async fn save_draft(
    pool: &AnyPool,
    study: StudyId,
    draft: &Draft,
    by: Option<UserId>,
    now: i64,
) -> Result<()> {
    let problems = draft.problems();
    if !problems.is_empty() {
        return Err(Error::Invalid(format!(
            "the draft cannot be kept: {}",
            problems.join("; ")
        )));
    }
    let json = serde_json::to_string(draft).map_err(Error::internal)?;
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(study)]).await?;
    let result = async {
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM platform_studies WHERE study_id = $1")
                .bind(study)
                .fetch_optional(&mut *tx)
                .await?;
        if status.as_deref() == Some("published") {
            return Err(Error::Refused(format!(
                "study {study} is published on {} already: its draft can no longer change",
                draft.platform.name()
            )));
        }
        sqlx::query(
            "INSERT INTO platform_studies (study_id, platform, sandbox, draft_json, status,
                places, budget_cents, created_by, created_at)
             VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7, $8)
             ON CONFLICT (study_id) DO UPDATE SET platform = excluded.platform,
                sandbox = excluded.sandbox, draft_json = excluded.draft_json,
                places = excluded.places, budget_cents = excluded.budget_cents,
                created_by = excluded.created_by, created_at = excluded.created_at",
        )
        .bind(study)
        .bind(draft.platform)
        .bind(i64::from(draft.sandbox))
        .bind(&json)
        .bind(i64::from(draft.places))
        .bind(draft.budget_cents)
        .bind(by)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }
    .await;
    crate::tx::finish(tx, result).await
}

/// Raises (or lowers, not below what is committed) the publication's budget.
pub async fn set_budget(pool: &AnyPool, study: StudyId, budget_cents: i64) -> Result<()> {
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(study)]).await?;
    let result = async {
        let committed = ledger::committed(&mut tx, study).await?;
        if budget_cents < committed {
            return Err(Error::Invalid(format!(
                "the budget cannot be below what is committed already ({})",
                domain::report::draw::text::money(committed)
            )));
        }
        sqlx::query("UPDATE platform_studies SET budget_cents = $1 WHERE study_id = $2")
            .bind(budget_cents)
            .bind(study)
            .execute(&mut *tx)
            .await?;
        Ok(())
    }
    .await;
    crate::tx::finish(tx, result).await
}

/// The id of the task's list of workers on a platform and site, once made.
pub async fn group(
    pool: &AnyPool,
    task: TaskId,
    platform: Platform,
    sandbox: bool,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(
        "SELECT remote_id FROM platform_groups WHERE task_id = $1 AND platform = $2 AND sandbox = $3",
    )
    .bind(task)
    .bind(platform)
    .bind(i64::from(sandbox))
    .fetch_optional(pool)
    .await?)
}

/// The task of a study.
pub async fn task_of(pool: &AnyPool, study: StudyId) -> Result<(TaskId, String)> {
    sqlx::query_as(
        "SELECT t.id, t.name FROM studies s JOIN tasks t ON t.id = s.task_id WHERE s.id = $1",
    )
    .bind(study)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("there is no study {study}")))
}
