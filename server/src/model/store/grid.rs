//! The fine-tuning grid shared by many machines: its shot groups are jobs in `grid_jobs`; any
//! worker process pointed at the database claims the next one under a lease it renews.
//!
//! A claim is one write transaction: PostgreSQL's `FOR UPDATE SKIP LOCKED` lets workers that
//! claim at the same moment pass over each other's rows (SQLite has one writer anyway). A job
//! whose lease ran out, because its worker was killed or lost the database, is claimed again
//! and the run the lost worker had opened is marked failed. A worker stores its run only while
//! it still holds the lease, in the transaction that marks the job done (`store::finish`), so
//! every group is stored exactly once.

use app::error::{AppError, Result};
use app::ssr::auth::now_ms;
use app::ssr::db::Backend;
use domain::ids::TaskId;
use domain::run::JobStatus;
use sqlx::{Any, AnyPool, Transaction};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The lease a worker holds on a job unless told otherwise (`--lease-seconds`): long enough to
/// ride out a slow database, short enough that a killed worker's group is soon taken over.
pub const LEASE: Duration = Duration::from_secs(60);

/// How a worker runs a shared grid.
#[derive(Clone, Debug)]
pub struct GridRun {
    /// Replace finished evaluations (their jobs are queued again).
    pub replace: bool,
    /// Also write each trained model folder under this folder.
    pub export: Option<std::path::PathBuf>,
    pub device: crate::model::runtime::Device,
    /// A progress bar on stderr.
    pub bar: bool,
    /// How long a claimed job stays this worker's without a renewal ([`LEASE`]).
    pub lease: Duration,
}

/// This worker process, as other workers and the models page see it: host and process id.
pub fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    format!("{host}:{}", std::process::id())
}

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
    let mut tx = app::ssr::tx::begin_immediate(pool, &[]).await?;
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

/// Renews a held job's lease every quarter of `lease` until dropped; `lost()` tells whether a
/// renewal found the job taken over.
pub struct Heartbeat {
    lost: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Heartbeat {
    pub fn start(pool: &AnyPool, held: &Held, lease: Duration) -> Heartbeat {
        let lost = Arc::new(AtomicBool::new(false));
        let (pool, held, flag) = (pool.clone(), held.clone(), lost.clone());
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(lease / 4).await;
                let renewed = sqlx::query(
                    "UPDATE grid_jobs SET lease_until = $1 WHERE id = $2 AND worker = $3 AND status = 'claimed'",
                )
                .bind(now_ms() + lease.as_millis() as i64)
                .bind(held.job)
                .bind(&held.worker)
                .execute(&pool)
                .await;
                match renewed {
                    Ok(r) if r.rows_affected() == 0 => {
                        flag.store(true, Ordering::Relaxed);
                        return;
                    }
                    Ok(_) => {}
                    // The database may come back before the lease runs out.
                    Err(e) => {
                        tracing::warn!("cannot renew the lease on grid job {}: {e}", held.job)
                    }
                }
            }
        });
        Heartbeat { lost, task }
    }

    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One worker's turn through a grid: the next job it claims, with its lease renewed until the
/// job is settled; waits while other workers hold the rest, ends when nothing is unfinished.
pub struct Worker {
    pool: AnyPool,
    jobs: Vec<i64>,
    lease: Duration,
    pub name: String,
    beat: Option<Heartbeat>,
}

impl Worker {
    pub fn new(pool: &AnyPool, jobs: Vec<i64>, lease: Duration) -> Worker {
        Worker {
            pool: pool.clone(),
            jobs,
            lease,
            name: worker_name(),
            beat: None,
        }
    }

    /// The next job this worker holds, or `None` when every job is done or failed.
    pub async fn next(&mut self) -> Result<Option<Held>> {
        loop {
            if let Some(held) = claim(&self.pool, &self.jobs, &self.name, self.lease).await? {
                if let Some(lost) = &held.took_over_from {
                    eprintln!(
                        "grid job {} (k={} split={}): taken over from {lost}, whose lease ran out",
                        held.job, held.k, held.split
                    );
                }
                self.beat = Some(Heartbeat::start(&self.pool, &held, self.lease));
                return Ok(Some(held));
            }
            if unfinished(&self.pool, &self.jobs).await?.0 == 0 {
                return Ok(None);
            }
            // Other workers hold the rest: wait until they finish or a lease runs out.
            tokio::time::sleep(self.lease / 4).await;
        }
    }

    /// Ends the held job's turn: its result, or `None` when the lease was lost to another
    /// worker (which stores the job), or the error. The job is marked failed on any error,
    /// where this worker still holds it.
    pub async fn settle<T>(&mut self, held: &Held, result: Result<T>) -> Result<Option<T>> {
        self.beat = None;
        match result {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                fail(&self.pool, held, &e.to_string()).await?;
                match e {
                    AppError::LeaseLost(why) => {
                        eprintln!("{why}");
                        Ok(None)
                    }
                    e => Err(e),
                }
            }
        }
    }

    /// The jobs not finished yet and their shots (for an estimate of the time left).
    pub async fn left(&self) -> Result<(i64, i64)> {
        unfinished(&self.pool, &self.jobs).await
    }
}
