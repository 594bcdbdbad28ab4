//! The one job queue that worker processes on many machines share (`jobs`): claimed,
//! renewed, handed back, cancelled, retried, done, each by one fixed statement. What a kind of
//! job runs on is a key table of its own, whose id is the job's; each kind says so once, as a
//! [`JobKind`] (`machine::grid::GridKind`: grid_jobs, `crossfit::jobs::SeedKind`:
//! crossfit_jobs, `crossfit::upstream::UpstreamKind`: upstream_jobs), and everything here is
//! written once over it.
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
//! when told. A process holds its jobs through a [`Worker`] (`worker`: the lease renewed while
//! it runs, the signals that hand it back, `stop`), and runs them through the lanes of
//! [`lanes::serve`], one [`lanes::Runner`] per kind.

use crate::db::Backend;
use crate::error::{Error, Result};
use domain::run::JobStatus;
use domain::wire::machine::GridRow;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyPool, Transaction};
use std::time::Duration;

pub use crate::clock::Clock;
pub use domain::wire::queue::Queue;
pub use worker::{worker_name, Heartbeat, Worker};

pub mod lanes;
pub mod stop;
mod worker;

/// A kind of job: its queue, what a holder reads of its key table, what leaving a job does to
/// the kind's own rows, how its unfinished jobs weigh, and how the machines page sums it up.
/// Implemented once per kind; `claim`, `release`, `cancel`, `unfinished` and `summary` are
/// written once over it, so a new kind is one implementation (and its key table's migration).
pub trait JobKind {
    const QUEUE: Queue;
    /// The kind's key table (its id is the job's), as the statements below name it.
    const TABLE: &'static str;
    /// What a holder reads of its job: a row of `KEY_SQL` (`$1` the job).
    type Key: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Sync + Unpin;
    const KEY_SQL: &'static str;
    /// Run in the same transaction when a claim takes a job over, its worker hands it back or
    /// someone cancels it (`$1` why, `$2` now in unix ms, `$3` the job); `None`: the kind keeps
    /// nothing of a running job's own to undo.
    const ON_LEAVE: Option<&'static str>;
    /// An unfinished job's weight, about proportional to its work (an expression over the key
    /// table as `k`): what a worker's turn reports as left.
    const WEIGHT: &'static str;
    /// What the machines page sums the kind's jobs under (an expression over the key table as
    /// `k`: a system, a method).
    const OWNER: &'static str;
    /// A held job as a person names it.
    fn name(job: i64, key: &Self::Key) -> String;
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

/// Claims the first of `jobs` of kind `K` that is queued or whose lease ran out, for `lease`
/// from now by `clock`; its progress starts again and its key is read in the same transaction.
/// When the claim takes a job over, the kind's `ON_LEAVE` runs in it too.
pub async fn claim<K: JobKind>(
    pool: &AnyPool,
    jobs: &[i64],
    worker: &str,
    (lease, clock): (Duration, &Clock),
) -> Result<Option<Held<K::Key>>> {
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let now = clock.now_ms();
    let list = crate::rows::json_ids(jobs);
    let found: Option<Claimable> = sqlx::query_as(CLAIMABLE[Backend::of(pool) as usize])
        .bind(&list)
        .bind(now)
        .bind(K::QUEUE.as_str())
        .fetch_optional(&mut *tx)
        .await?;
    let Some(job) = found else {
        tx.commit().await?;
        return Ok(None);
    };
    let took_over_from =
        (job.status == JobStatus::Claimed).then(|| job.worker.clone().unwrap_or_default());
    if let (Some(lost), Some(sql)) = (&took_over_from, K::ON_LEAVE) {
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
    let key: K::Key = sqlx::query_as(K::KEY_SQL)
        .bind(job.id)
        .fetch_one(&mut *tx)
        .await?;
    tx.commit().await?;
    let lease = Lease {
        queue: K::QUEUE,
        job: job.id,
        worker: worker.to_string(),
        attempt: job.attempts + 1,
        took_over_from,
        clock: clock.clone(),
    };
    Ok(Some(Held { lease, key }))
}

/// Inside a transaction that serialises the kind's queuing (`tx::Lock::Jobs`): a new job of
/// `queue`, queued now (by `clock`) with `recipe`; its key row is the caller's, with this id.
pub async fn add(
    tx: &mut sqlx::AnyConnection,
    queue: Queue,
    recipe: Option<&str>,
    clock: &Clock,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO jobs (kind, recipe_json, status, queued_at) VALUES ($1, $2, 'queued', $3)
         RETURNING id",
    )
    .bind(queue.as_str())
    .bind(recipe)
    .bind(clock.now_ms())
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

/// Queues a finished or failed job again, now (by `clock`), with `recipe`.
pub async fn requeue(
    tx: &mut sqlx::AnyConnection,
    job: i64,
    recipe: Option<&str>,
    clock: &Clock,
) -> Result<()> {
    sqlx::query(
        "UPDATE jobs SET status = 'queued', error = NULL, queued_at = $1, recipe_json = $2,
            progress = NULL WHERE id = $3",
    )
    .bind(clock.now_ms())
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

/// Hands a held job of kind `K` back to its queue at once, because its worker is stopping
/// (SIGTERM on a preemptible node, `scancel`): queued again for the next claim, `why` kept as
/// its error; the kind's `ON_LEAVE` runs in the same transaction. `false` when the worker no
/// longer held it (another worker took it over, or it was stored meanwhile).
pub async fn release<K: JobKind>(pool: &AnyPool, held: &Held<K::Key>, why: &str) -> Result<bool> {
    let held = &held.lease;
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let released = leave(&mut *tx, held, JobStatus::Queued, why).await?;
    if let (true, Some(sql)) = (released, K::ON_LEAVE) {
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

/// Cancels a job of kind `K` that is queued or running (from the machines page) for `by` (a
/// person's name): failed, with "cancelled by <by>" as its error, the kind's `ON_LEAVE` run in
/// the same transaction. A worker running it finds at its next renewal that it no longer holds
/// it, stores nothing and says why ([`lost_why`]). Refused when the job is not open.
pub async fn cancel<K: JobKind>(pool: &AnyPool, job: i64, by: &str, clock: &Clock) -> Result<()> {
    let queue = K::QUEUE;
    let why: &str = &format!("{CANCELLED_BY}{by}");
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let cancelled = sqlx::query(
        "UPDATE jobs SET status = 'failed', error = $1, lease_until = NULL
         WHERE id = $2 AND kind = $3 AND status IN ('queued', 'claimed')",
    )
    .bind(why)
    .bind(job)
    .bind(queue.as_str())
    .execute(&mut *tx)
    .await?;
    if cancelled.rows_affected() == 0 {
        tx.rollback().await?;
        return Err(not_open(pool, queue, job, "cancel").await);
    }
    if let Some(sql) = K::ON_LEAVE {
        sqlx::query(sql)
            .bind(why)
            .bind(clock.now_ms())
            .bind(job)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Queues a failed job again (from the machines page), with the recipe it had.
pub async fn retry(pool: &AnyPool, queue: Queue, job: i64, clock: &Clock) -> Result<()> {
    let retried = sqlx::query(
        "UPDATE jobs SET status = 'queued', error = NULL, queued_at = $1
         WHERE id = $2 AND kind = $3 AND status = 'failed'",
    )
    .bind(clock.now_ms())
    .bind(job)
    .bind(queue.as_str())
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
            .bind(queue.as_str())
            .fetch_optional(pool)
            .await;
    match status {
        Ok(None) => Error::NotFound(format!("there is no job {job} in this queue")),
        Ok(Some(s)) => Error::Refused(format!(
            "job {job} is {}: there is nothing to {what}",
            match s {
                JobStatus::Claimed => "running",
                s @ (JobStatus::Queued | JobStatus::Done | JobStatus::Failed) => s.as_str(),
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

/// How many of `jobs` of kind `K` are not finished (queued, or claimed by some worker), and
/// their weight (`K::WEIGHT`).
pub async fn unfinished<K: JobKind>(pool: &AnyPool, jobs: &[i64]) -> Result<(i64, i64)> {
    let sql = format!(
        "SELECT COUNT(*), CAST(COALESCE(SUM({weight}), 0) AS BIGINT)
         FROM jobs j JOIN {table} k ON k.id = j.id
         WHERE j.id IN (SELECT CAST(value AS BIGINT) FROM {ids})
           AND j.status IN ('queued', 'claimed')",
        weight = K::WEIGHT,
        table = K::TABLE,
        ids = Backend::of(pool).json_elements("$1"),
    );
    Ok(sqlx::query_as(&sql)
        .bind(crate::rows::json_ids(jobs))
        .fetch_one(pool)
        .await?)
}

/// Kind `K`'s jobs by what they are stored under (`K::OWNER`: a system, a method) and status,
/// and the workers holding one now by `clock` (their lease not run out), as the machines page
/// sums them up.
pub async fn summary<K: JobKind>(pool: &AnyPool, clock: &Clock) -> Result<Vec<GridRow>> {
    let (owner, table) = (K::OWNER, K::TABLE);
    let counts = format!(
        "SELECT {owner}, j.status, COUNT(*) FROM jobs j JOIN {table} k ON k.id = j.id
         GROUP BY {owner}, j.status ORDER BY {owner}"
    );
    let holders = format!(
        "SELECT DISTINCT {owner}, j.worker FROM jobs j JOIN {table} k ON k.id = j.id
         WHERE j.status = 'claimed' AND j.lease_until >= $1 ORDER BY {owner}, j.worker"
    );
    let counts: Vec<(String, JobStatus, i64)> = sqlx::query_as(&counts).fetch_all(pool).await?;
    let holders: Vec<(String, String)> = sqlx::query_as(&holders)
        .bind(clock.now_ms())
        .fetch_all(pool)
        .await?;
    let mut out: Vec<GridRow> = Vec::new();
    for (system, status, n) in counts {
        let g = crate::rows::group_of(
            &mut out,
            |g| g.system == system,
            || GridRow {
                workers: holders
                    .iter()
                    .filter(|(s, _)| *s == system)
                    .map(|(_, w)| w.clone())
                    .collect(),
                system: system.clone(),
                queued: 0,
                claimed: 0,
                done: 0,
                failed: 0,
            },
        );
        *match status {
            JobStatus::Queued => &mut g.queued,
            JobStatus::Claimed => &mut g.claimed,
            JobStatus::Done => &mut g.done,
            JobStatus::Failed => &mut g.failed,
        } = n;
    }
    Ok(out)
}
