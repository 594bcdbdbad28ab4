//! What the platforms report and what the researcher decided: the submissions (Prolific) and
//! assignments (MTurk) of a publication as last read back, and the decisions on them, stored
//! when confirmed so that the approve and reject calls are planned from these rows.

use crate::error::{Error, Result};
use crate::tx::Lock;
use domain::ids::{StudyId, UserId};
use domain::platform::ledger::RemoteStatus;
use domain::platform::plan::{check_message, Decision, Proposal, Rule};
use domain::platform::sync::RemoteFacts;
use sqlx::{AnyConnection, AnyPool};

/// A submission as a platform reports it (times in unix ms, as the platform says them).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Remote {
    pub remote_id: String,
    pub worker: String,
    pub status: RemoteStatus,
    pub started_at: Option<i64>,
    pub submitted_at: Option<i64>,
    pub code: Option<String>,
}

/// Stores what a sync read (in the transaction that marks it done): every submission as the
/// platform now says it, and the publication's time of sync.
pub(super) async fn store(
    tx: &mut AnyConnection,
    study: StudyId,
    remotes: &[Remote],
    now: i64,
) -> Result<()> {
    for r in remotes {
        sqlx::query(
            "INSERT INTO platform_submissions (study_id, remote_id, worker, status, started_at,
                submitted_at, code, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (study_id, remote_id) DO UPDATE SET worker = excluded.worker,
                status = excluded.status, started_at = excluded.started_at,
                submitted_at = excluded.submitted_at, code = excluded.code, seen_at = excluded.seen_at",
        )
        .bind(study)
        .bind(&r.remote_id)
        .bind(&r.worker)
        .bind(r.status)
        .bind(r.started_at)
        .bind(r.submitted_at)
        .bind(&r.code)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("UPDATE platform_studies SET synced_at = $1 WHERE study_id = $2")
        .bind(now)
        .bind(study)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// The publication's submissions, in the order they were first read.
pub async fn submissions(pool: &AnyPool, study: StudyId) -> Result<Vec<RemoteFacts>> {
    let rows: Vec<(String, String, RemoteStatus, Option<String>)> = sqlx::query_as(
        "SELECT remote_id, worker, status, code FROM platform_submissions
         WHERE study_id = $1 ORDER BY COALESCE(started_at, seen_at), remote_id",
    )
    .bind(study)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(remote_id, worker, status, code)| RemoteFacts {
            remote_id,
            worker,
            status,
            code,
        })
        .collect())
}

/// A stored decision.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct Decided {
    pub remote_id: String,
    pub decision: Decision,
    pub rule: Option<Rule>,
    pub message: Option<String>,
    pub decided_at: i64,
}

/// The decisions taken on the publication's submissions.
pub async fn decisions(pool: &AnyPool, study: StudyId) -> Result<Vec<Decided>> {
    Ok(sqlx::query_as(
        "SELECT remote_id, decision, rule, message, decided_at FROM platform_decisions
         WHERE study_id = $1 ORDER BY decided_at, remote_id",
    )
    .bind(study)
    .fetch_all(pool)
    .await?)
}

/// Stores the confirmed decisions (each submission decided once: a decision taken already is
/// kept as it was). A rejection must follow a stated rule and carry its message.
pub async fn decide(
    pool: &AnyPool,
    study: StudyId,
    proposals: &[Proposal],
    by: Option<UserId>,
    now: i64,
) -> Result<()> {
    for p in proposals {
        if p.decision == Decision::Reject {
            if p.rule.is_none() {
                return Err(Error::Invalid(format!(
                    "the rejection of {} names no rule: a submission is rejected only by a stated rule",
                    p.remote_id
                )));
            }
            check_message(p.message.as_deref().unwrap_or_default()).map_err(Error::Invalid)?;
        }
    }
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(study)]).await?;
    let result = async {
        for p in proposals {
            sqlx::query(
                "INSERT INTO platform_decisions (study_id, remote_id, decision, rule, message,
                    decided_by, decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (study_id, remote_id) DO NOTHING",
            )
            .bind(study)
            .bind(&p.remote_id)
            .bind(p.decision)
            .bind(p.rule)
            .bind(&p.message)
            .bind(by)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        Ok(())
    }
    .await;
    crate::tx::finish(tx, result).await
}
