//! The one job queue that worker processes on many machines share (`jobs`): claimed,
//! renewed, handed back, cancelled, retried, done, each by one fixed statement. What a kind of
//! job runs on is a key table of its own, whose id is the job's (`machine::grid`: grid_jobs,
//! `crossfit::jobs`: crossfit_jobs, `crossfit::upstream`: upstream_jobs); this is the part every kind shares.
//!
//! A claim is one write transaction: PostgreSQL's `FOR UPDATE SKIP LOCKED` lets workers that
//! claim at the same moment pass over each other's rows (SQLite has one writer anyway). A job
//! whose lease ran out is claimed again. A job is marked done only in the transaction that
//! stores its results, and only while its worker still holds the lease (`complete`), so every
//! job is stored exactly once. Written here rather than taken from apalis or sqlxmq: those
//! mark a job done after their handler returns, in a transaction of their own, so a worker
//! that stored its results and then lost its lease (or crashed before the mark) would have its
//! job run and stored a second time; here the mark and the results commit together or not at
//! all, on SQLite as on PostgreSQL, through the same pool as everything else.
//!
//! Time is read from a [`Clock`] (`store::clock`): the system's, or a test's that moves only
//! when told.

use crate::db::Backend;
use crate::error::{Error, Result};
use domain::run::JobStatus;
use domain::wire::machine::GridRow;
use sqlx::{Any, AnyPool, Transaction};
use std::time::Duration;

pub use crate::clock::Clock;

/// A kind of job, the value of `jobs.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// The CLUES track's model grids (keys in `grid_jobs`).
    Grid,
    /// CrossFit's fine-tuning, one task and seed a job (keys in `crossfit_jobs`).
    Crossfit,
    /// CrossFit's upstream learning of a partition (keys in `upstream_jobs`).
    Upstream,
}

impl Queue {
    /// Its name in `jobs.kind`.
    pub fn kind(self) -> &'static str {
        match self {
            Queue::Grid => "grid",
            Queue::Crossfit => "crossfit",
            Queue::Upstream => "upstream",
        }
    }
}

/// This worker's hold on a job: which job, since which claim, taken over from whom.
#[derive(Clone, Debug)]
pub struct Lease {
    pub queue: Queue,
    pub job: i64,
    pub worker: String,
    /// Claims of this job so far, this one included.
    pub attempt: i64,
    /// The worker whose lease ran out, when this claim took the job over.
    pub took_over_from: Option<String>,
    /// The clock the lease was taken by, and is renewed and handed back by.
    pub clock: Clock,
}

/// A job this worker holds: its lease, and what its queue keeps of it (`key`: what to run),
/// which the holder reads through it (`held.k`, `held.seed`).
#[derive(Clone, Debug)]
pub struct Held<K> {
    pub lease: Lease,
    pub key: K,
}

impl<K> std::ops::Deref for Held<K> {
    type Target = K;
    fn deref(&self) -> &K {
        &self.key
    }
}

/// A claimable job as read for a claim.
#[derive(sqlx::FromRow)]
struct Claimable {
    id: i64,
    status: JobStatus,
    worker: Option<String>,
    attempts: i64,
}

/// The first of a list of jobs (`$1`, a JSON array of ids) of a kind (`$3`) that is queued or
/// whose lease ran out by `$2`: per dialect (how a JSON array becomes rows; PostgreSQL locks
/// the row and passes over rows other claims hold).
const CLAIMABLE: [&str; 2] = [
    "SELECT id, status, worker, attempts FROM jobs
     WHERE id IN (SELECT CAST(value AS BIGINT) FROM json_each($1)) AND kind = $3
       AND (status = 'queued' OR (status = 'claimed' AND lease_until < $2))
     ORDER BY id LIMIT 1",
    "SELECT id, status, worker, attempts FROM jobs
     WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS jsonb)))
       AND kind = $3 AND (status = 'queued' OR (status = 'claimed' AND lease_until < $2))
     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
];

/// Claims the first of `jobs` that is queued or whose lease ran out, for `lease` from now by
/// `clock`; its progress starts again. When the claim takes a job over, `on_takeover` (a
/// statement of the kind's own, with `$1` the words saying who lost it to whom, `$2` now in
/// unix ms and `$3` the job) runs in the same transaction.
pub async fn claim(
    pool: &AnyPool,
    queue: Queue,
    jobs: &[i64],
    worker: &str,
    (lease, clock): (Duration, &Clock),
    on_takeover: Option<&str>,
) -> Result<Option<Lease>> {
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let now = clock.now_ms();
    let list = serde_json::to_string(jobs).expect("ids serialise");
    let found: Option<Claimable> = sqlx::query_as(CLAIMABLE[Backend::of(pool) as usize])
        .bind(&list)
        .bind(now)
        .bind(queue.kind())
        .fetch_optional(&mut *tx)
        .await?;
    let Some(job) = found else {
        tx.commit().await?;
        return Ok(None);
    };
    let took_over_from =
        (job.status == JobStatus::Claimed).then(|| job.worker.clone().unwrap_or_default());
    if let (Some(lost), Some(sql)) = (&took_over_from, on_takeover) {
        sqlx::query(sql)
            .bind(format!(
                "worker {lost} stopped renewing its lease on this job; {worker} took it over"
            ))
            .bind(now)
            .bind(job.id)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "UPDATE jobs SET status = 'claimed', worker = $1, lease_until = $2, attempts = attempts + 1,
            error = NULL, started_at = $3, done_updates = 0, total_updates = 0, progress = NULL
         WHERE id = $4",
    )
    .bind(worker)
    .bind(now + lease.as_millis() as i64)
    .bind(now)
    .bind(job.id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(Lease {
        queue,
        job: job.id,
        worker: worker.to_string(),
        attempt: job.attempts + 1,
        took_over_from,
        clock: clock.clone(),
    }))
}

/// Inside a transaction that serialises the kind's queuing (`tx::Lock::Jobs`): a new job of
/// `queue`, queued now with `recipe`; its key row is the caller's, with this id.
pub async fn add(tx: &mut sqlx::AnyConnection, queue: Queue, recipe: Option<&str>) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, recipe_json, status, queued_at) VALUES ($1, $2, 'queued', $3)
         RETURNING id",
    )
    .bind(queue.kind())
    .bind(recipe)
    .bind(crate::auth::now_ms())
    .fetch_one(&mut *tx)
    .await?)
}

/// A job's status and recipe, as one who queues it again reads them.
pub async fn state(tx: &mut sqlx::AnyConnection, job: i64) -> Result<(JobStatus, Option<String>)> {
    Ok(
        sqlx::query_as("SELECT status, recipe_json FROM jobs WHERE id = $1")
            .bind(job)
            .fetch_one(&mut *tx)
            .await?,
    )
}

/// Queues a finished or failed job again, now, with `recipe`.
pub async fn requeue(tx: &mut sqlx::AnyConnection, job: i64, recipe: Option<&str>) -> Result<()> {
    sqlx::query(
        "UPDATE jobs SET status = 'queued', error = NULL, queued_at = $1, recipe_json = $2,
            progress = NULL WHERE id = $3",
    )
    .bind(crate::auth::now_ms())
    .bind(recipe)
    .bind(job)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Marks a held job failed (another command queues it again).
pub async fn fail(pool: &AnyPool, held: &Lease, error: &str) -> Result<()> {
    leave(pool, held, JobStatus::Failed, error).await?;
    Ok(())
}

/// Leaves a held job in `status` (failed, or queued again) with `why` as its error, where its
/// worker still holds it; whether it did.
async fn leave<'c>(
    db: impl sqlx::Executor<'c, Database = Any>,
    held: &Lease,
    status: JobStatus,
    why: &str,
) -> Result<bool> {
    let left = sqlx::query(
        "UPDATE jobs SET status = $1, error = $2, lease_until = NULL
         WHERE id = $3 AND worker = $4 AND status = 'claimed'",
    )
    .bind(status.as_str())
    .bind(why)
    .bind(held.job)
    .bind(&held.worker)
    .execute(db)
    .await?;
    Ok(left.rows_affected() > 0)
}

/// Hands a held job back to its queue at once, because its worker is stopping (SIGTERM on a
/// preemptible node, `scancel`): queued again for the next claim, `why` kept as its error. A
/// statement of the kind's own (`on_release`, with `$1` why, `$2` now in unix ms and `$3` the
/// job) runs in the same transaction. `false` when the worker no longer held it (another worker
/// took it over, or it was stored meanwhile).
pub async fn release(
    pool: &AnyPool,
    held: &Lease,
    why: &str,
    on_release: Option<&str>,
) -> Result<bool> {
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let released = leave(&mut *tx, held, JobStatus::Queued, why).await?;
    if let (true, Some(sql)) = (released, on_release) {
        sqlx::query(sql)
            .bind(why)
            .bind(held.clock.now_ms())
            .bind(held.job)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(released)
}

/// How a cancelled job's error begins (the person's name follows).
const CANCELLED_BY: &str = "cancelled by ";

/// Cancels a job that is queued or running (from the machines page) for `by` (a person's name):
/// failed, with "cancelled by <by>" as its error. A worker running it finds at its next renewal
/// that it no longer holds it, stores nothing and says why ([`lost_why`]). `on_cancel` as
/// `on_release` of [`release`]. Refused when the job is not open.
pub async fn cancel(
    pool: &AnyPool,
    queue: Queue,
    job: i64,
    by: &str,
    on_cancel: Option<&str>,
) -> Result<()> {
    let why: &str = &format!("{CANCELLED_BY}{by}");
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let cancelled = sqlx::query(
        "UPDATE jobs SET status = 'failed', error = $1, lease_until = NULL
         WHERE id = $2 AND kind = $3 AND status IN ('queued', 'claimed')",
    )
    .bind(why)
    .bind(job)
    .bind(queue.kind())
    .execute(&mut *tx)
    .await?;
    if cancelled.rows_affected() == 0 {
        tx.rollback().await?;
        return Err(not_open(pool, queue, job, "cancel").await);
    }
    if let Some(sql) = on_cancel {
        sqlx::query(sql)
            .bind(why)
            .bind(crate::auth::now_ms())
            .bind(job)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Queues a failed job again (from the machines page), with the recipe it had.
pub async fn retry(pool: &AnyPool, queue: Queue, job: i64) -> Result<()> {
    let retried = sqlx::query(
        "UPDATE jobs SET status = 'queued', error = NULL, queued_at = $1
         WHERE id = $2 AND kind = $3 AND status = 'failed'",
    )
    .bind(crate::auth::now_ms())
    .bind(job)
    .bind(queue.kind())
    .execute(pool)
    .await?;
    if retried.rows_affected() == 0 {
        return Err(not_open(pool, queue, job, "retry").await);
    }
    Ok(())
}

/// Why `job` cannot be cancelled or retried (`what`): there is no such job, or its status.
async fn not_open(pool: &AnyPool, queue: Queue, job: i64, what: &str) -> Error {
    let status: std::result::Result<Option<JobStatus>, _> =
        sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1 AND kind = $2")
            .bind(job)
            .bind(queue.kind())
            .fetch_optional(pool)
            .await;
    match status {
        Ok(None) => Error::NotFound(format!("there is no job {job} in this queue")),
        Ok(Some(s)) => Error::Refused(format!(
            "job {job} is {}: there is nothing to {what}",
            match s {
                JobStatus::Claimed => "running",
                s => s.as_str(),
            }
        )),
        Err(e) => e.into(),
    }
}

/// Inside the transaction that stores a held job's results: marks the job done, or refuses
/// when the lease was lost meanwhile (another worker took the job over and stores it).
/// `what`: the job as a person names it, for that refusal.
pub async fn complete(tx: &mut Transaction<'static, Any>, held: &Lease, what: &str) -> Result<()> {
    let done = sqlx::query(
        "UPDATE jobs SET status = 'done', lease_until = NULL
         WHERE id = $1 AND worker = $2 AND status = 'claimed'",
    )
    .bind(held.job)
    .bind(&held.worker)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::LeaseLost(format!(
            "this worker ({}) lost its lease on {what} (it stopped renewing it for too long) and another worker took it over; nothing was stored",
            held.worker
        )));
    }
    Ok(())
}

/// What a worker says when it finds it no longer holds `held`: `taken_over` (another worker
/// took the job over), or, where the job was cancelled meanwhile, that it was and by whom.
pub async fn lost_why(pool: &AnyPool, held: &Lease, taken_over: String) -> String {
    let error: std::result::Result<Option<Option<String>>, _> =
        sqlx::query_scalar("SELECT error FROM jobs WHERE id = $1 AND status = 'failed'")
            .bind(held.job)
            .fetch_optional(pool)
            .await;
    match error {
        Ok(Some(Some(e))) if e.starts_with(CANCELLED_BY) => format!(
            "this worker ({}) stopped job {}: it was {e}; nothing was stored",
            held.worker, held.job
        ),
        _ => taken_over,
    }
}

/// Renews a held job's lease for `lease` from now; `false` when the job was taken over.
pub async fn renew(pool: &AnyPool, held: &Lease, lease: Duration) -> Result<bool> {
    let renewed = sqlx::query(
        "UPDATE jobs SET lease_until = $1 WHERE id = $2 AND worker = $3 AND status = 'claimed'",
    )
    .bind(held.clock.now_ms() + lease.as_millis() as i64)
    .bind(held.job)
    .bind(&held.worker)
    .execute(pool)
    .await?;
    Ok(renewed.rows_affected() > 0)
}

/// Writes a held job's progress: `done` steps of `total`, and the worker's words.
pub async fn progress(
    pool: &AnyPool,
    held: &Lease,
    done: u64,
    total: u64,
    words: &str,
) -> Result<()> {
    sqlx::query(
        "UPDATE jobs SET done_updates = $1, total_updates = $2, progress = $3
         WHERE id = $4 AND worker = $5 AND status = 'claimed'",
    )
    .bind(done as i64)
    .bind(total as i64)
    .bind(words)
    .bind(held.job)
    .bind(&held.worker)
    .execute(pool)
    .await?;
    Ok(())
}

/// How many of a list of jobs (`$1`, a JSON array of ids) are not finished, per dialect.
const UNFINISHED: [&str; 2] = [
    "SELECT COUNT(*) FROM jobs WHERE id IN (SELECT CAST(value AS BIGINT) FROM json_each($1))
       AND status IN ('queued', 'claimed')",
    "SELECT COUNT(*) FROM jobs
     WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS jsonb)))
       AND status IN ('queued', 'claimed')",
];

/// How many of `jobs` are not finished (queued, or claimed by some worker).
pub async fn unfinished(pool: &AnyPool, jobs: &[i64]) -> Result<i64> {
    let list = serde_json::to_string(jobs).expect("ids serialise");
    Ok(sqlx::query_scalar(UNFINISHED[Backend::of(pool) as usize])
        .bind(&list)
        .fetch_one(pool)
        .await?)
}

/// A kind's jobs by what they are stored under (a system, a method) and status, with their
/// count; and who holds one of them while its lease holds (`$1` now).
fn summary_sql(queue: Queue) -> [&'static str; 2] {
    match queue {
        Queue::Grid => [
            "SELECT g.system, j.status, COUNT(*) FROM jobs j JOIN grid_jobs g ON g.id = j.id
             GROUP BY g.system, j.status ORDER BY g.system",
            "SELECT DISTINCT g.system, j.worker FROM jobs j JOIN grid_jobs g ON g.id = j.id
             WHERE j.status = 'claimed' AND j.lease_until >= $1 ORDER BY g.system, j.worker",
        ],
        // Upstream jobs are listed one by one (`crossfit::upstream::open`), their method's
        // seeds summed up under it once queued.
        Queue::Crossfit | Queue::Upstream => [
            "SELECT c.method, j.status, COUNT(*) FROM jobs j JOIN crossfit_jobs c ON c.id = j.id
             GROUP BY c.method, j.status ORDER BY c.method",
            "SELECT DISTINCT c.method, j.worker FROM jobs j JOIN crossfit_jobs c ON c.id = j.id
             WHERE j.status = 'claimed' AND j.lease_until >= $1 ORDER BY c.method, j.worker",
        ],
    }
}

/// A queue's jobs by status, and the workers holding one now (their lease not run out), by
/// what they are stored under (a system, a method), as the machines page sums them up.
pub async fn summary(pool: &AnyPool, queue: Queue) -> Result<Vec<GridRow>> {
    let [counts, holders] = summary_sql(queue);
    let counts: Vec<(String, JobStatus, i64)> = sqlx::query_as(counts).fetch_all(pool).await?;
    let holders: Vec<(String, String)> = sqlx::query_as(holders)
        .bind(crate::auth::now_ms())
        .fetch_all(pool)
        .await?;
    let mut out: Vec<GridRow> = Vec::new();
    for (system, status, n) in counts {
        if out.last().is_none_or(|g| g.system != system) {
            out.push(GridRow {
                workers: holders
                    .iter()
                    .filter(|(s, _)| *s == system)
                    .map(|(_, w)| w.clone())
                    .collect(),
                system,
                queued: 0,
                claimed: 0,
                done: 0,
                failed: 0,
            });
        }
        let g = out.last_mut().expect("pushed above");
        *match status {
            JobStatus::Queued => &mut g.queued,
            JobStatus::Claimed => &mut g.claimed,
            JobStatus::Done => &mut g.done,
            JobStatus::Failed => &mut g.failed,
        } = n;
    }
    Ok(out)
}
