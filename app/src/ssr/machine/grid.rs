//! The shared grids' jobs (`grid_jobs`): queued, claimed under a lease, renewed, failed, done.
//!
//! A claim is one write transaction: PostgreSQL's `FOR UPDATE SKIP LOCKED` lets workers that
//! claim at the same moment pass over each other's rows (SQLite has one writer anyway). A job
//! whose lease ran out is claimed again and the runs the lost worker had opened are marked
//! failed. A job is marked done only in the transaction that stores its runs, and only while
//! its worker still holds the lease (`complete`), so every group is stored exactly once.

use crate::error::{AppError, Result};
use crate::ssr::auth::now_ms;
use crate::ssr::db::Backend;
use domain::ids::TaskId;
use domain::run::JobStatus;
use sqlx::{Any, AnyPool, Transaction};
use std::time::Duration;

/// A job this worker holds.
#[derive(Clone, Debug)]
pub struct Held {
    pub job: i64,
    pub worker: String,
    pub task_id: TaskId,
    pub k: u32,
    pub split: u32,
    /// Claims of this job so far, this one included.
    pub attempt: i64,
    /// The worker whose lease ran out, when this claim took the job over.
    pub took_over_from: Option<String>,
}

/// Queues the groups of `system`, each to run `source` where given (a group already queued,
/// claimed or done stays as it is; a failed one is queued again, and with `replace` a done one
/// too) and answers the jobs' ids.
pub async fn enqueue(
    pool: &AnyPool,
    system: &str,
    groups: &[(TaskId, u32, u32)],
    source: Option<&str>,
    replace: bool,
) -> Result<Vec<i64>> {
    let again = if replace {
        "grid_jobs.status IN ('failed', 'done')"
    } else {
        "grid_jobs.status = 'failed'"
    };
    let sql = format!(
        "INSERT INTO grid_jobs (system, task_id, k, split, status, queued_at, source)
         VALUES ($1, $2, $3, $4, 'queued', $5, $6)
         ON CONFLICT (system, task_id, k, split) DO UPDATE SET status = 'queued', error = NULL,
             queued_at = $5, source = $6
         WHERE {again}"
    );
    let mut ids = Vec::with_capacity(groups.len());
    for &(task, k, split) in groups {
        sqlx::query(&sql)
            .bind(system)
            .bind(task)
            .bind(i64::from(k))
            .bind(i64::from(split))
            .bind(now_ms())
            .bind(source)
            .execute(pool)
            .await?;
        ids.push(
            sqlx::query_scalar(
                "SELECT id FROM grid_jobs WHERE system = $1 AND task_id = $2 AND k = $3 AND split = $4",
            )
            .bind(system)
            .bind(task)
            .bind(i64::from(k))
            .bind(i64::from(split))
            .fetch_one(pool)
            .await?,
        );
    }
    Ok(ids)
}

/// A claimable job as read for a claim.
#[derive(sqlx::FromRow)]
struct Claimable {
    id: i64,
    task_id: TaskId,
    k: i64,
    split: i64,
    status: JobStatus,
    worker: Option<String>,
    attempts: i64,
}

/// Claims the first of `jobs` that is queued or whose lease ran out, for `lease`.
pub async fn claim(
    pool: &AnyPool,
    jobs: &[i64],
    worker: &str,
    lease: Duration,
) -> Result<Option<Held>> {
    let backend = Backend::of(pool);
    let mut tx = crate::ssr::tx::begin_immediate(pool, &[]).await?;
    let now = now_ms();
    let list = serde_json::to_string(jobs).expect("ids serialise");
    let found: Option<Claimable> = sqlx::query_as(&format!(
        "SELECT id, task_id, k, split, status, worker, attempts FROM grid_jobs
         WHERE id IN (SELECT CAST(value AS BIGINT) FROM {})
           AND (status = 'queued' OR (status = 'claimed' AND lease_until < $2))
         ORDER BY id LIMIT 1{}",
        backend.json_elements("$1"),
        backend.skip_locked()
    ))
    .bind(&list)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(job) = found else {
        tx.commit().await?;
        return Ok(None);
    };
    let took_over_from =
        (job.status == JobStatus::Claimed).then(|| job.worker.clone().unwrap_or_default());
    if let Some(lost) = &took_over_from {
        lost_runs(&mut tx, job.id, lost, worker, now).await?;
    }
    sqlx::query(
        "UPDATE grid_jobs SET status = 'claimed', worker = $1, lease_until = $2, attempts = attempts + 1,
            error = NULL WHERE id = $3",
    )
    .bind(worker)
    .bind(now + lease.as_millis() as i64)
    .bind(job.id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(Held {
        job: job.id,
        worker: worker.to_string(),
        task_id: job.task_id,
        k: job.k as u32,
        split: job.split as u32,
        attempt: job.attempts + 1,
        took_over_from,
    }))
}

/// Marks the runs a worker whose lease ran out had opened for a job failed, saying who took
/// the job over.
async fn lost_runs(
    tx: &mut Transaction<'static, Any>,
    job: i64,
    lost: &str,
    by: &str,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE machine_runs SET status = 'failed', error = $1, finished_at = $2
         WHERE grid_job_id = $3 AND status = 'running'",
    )
    .bind(format!(
        "worker {lost} stopped renewing its lease on this job; {by} took it over"
    ))
    .bind(now)
    .bind(job)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Marks a held job failed (another command queues it again).
pub async fn fail(pool: &AnyPool, held: &Held, error: &str) -> Result<()> {
    sqlx::query(
        "UPDATE grid_jobs SET status = 'failed', error = $1, lease_until = NULL
         WHERE id = $2 AND worker = $3 AND status = 'claimed'",
    )
    .bind(error)
    .bind(held.job)
    .bind(&held.worker)
    .execute(pool)
    .await?;
    Ok(())
}

/// Inside the transaction that stores a held job's runs: marks the job done, or refuses when
/// the lease was lost meanwhile (another worker took the job over and stores it).
pub async fn complete(tx: &mut Transaction<'static, Any>, held: &Held) -> Result<()> {
    let done = sqlx::query(
        "UPDATE grid_jobs SET status = 'done', lease_until = NULL
         WHERE id = $1 AND worker = $2 AND status = 'claimed'",
    )
    .bind(held.job)
    .bind(&held.worker)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(AppError::LeaseLost(format!(
            "this worker ({}) lost its lease on grid job {} (k={} split={}; it stopped renewing it for too long) and another worker took it over; nothing was stored",
            held.worker, held.job, held.k, held.split
        )));
    }
    Ok(())
}

/// How many of `jobs` are not finished (queued, or claimed by some worker), and their shots
/// (the work left is about proportional to them).
pub async fn unfinished(pool: &AnyPool, jobs: &[i64]) -> Result<(i64, i64)> {
    let backend = Backend::of(pool);
    let list = serde_json::to_string(jobs).expect("ids serialise");
    Ok(sqlx::query_as(&format!(
        "SELECT COUNT(*), CAST(COALESCE(SUM(k), 0) AS BIGINT) FROM grid_jobs
         WHERE id IN (SELECT CAST(value AS BIGINT) FROM {}) AND status IN ('queued', 'claimed')",
        backend.json_elements("$1")
    ))
    .bind(&list)
    .fetch_one(pool)
    .await?)
}

/// Renews a held job's lease for `lease` from now; `false` when the job was taken over.
pub async fn renew(pool: &AnyPool, held: &Held, lease: Duration) -> Result<bool> {
    let renewed = sqlx::query(
        "UPDATE grid_jobs SET lease_until = $1 WHERE id = $2 AND worker = $3 AND status = 'claimed'",
    )
    .bind(now_ms() + lease.as_millis() as i64)
    .bind(held.job)
    .bind(&held.worker)
    .execute(pool)
    .await?;
    Ok(renewed.rows_affected() > 0)
}

/// The system, task name and source folder of a job.
pub async fn job_target(pool: &AnyPool, job: i64) -> Result<(String, String, Option<String>)> {
    Ok(sqlx::query_as(
        "SELECT g.system, t.name, g.source FROM grid_jobs g JOIN tasks t ON t.id = g.task_id WHERE g.id = $1",
    )
    .bind(job)
    .fetch_one(pool)
    .await?)
}
