//! The shared grids' jobs: one shot group of a task for a system (its key in `grid_jobs`, the
//! job itself in `jobs`), queued, then claimed, renewed, failed or done under a lease
//! (`store::lease`); a job whose lease ran out is claimed again and the runs the lost worker
//! had opened are marked failed.

use crate::auth::now_ms;
use crate::db::Backend;
use crate::error::Result;
use crate::lease::{self, Clock, Queue};
use crate::tx::Lock;
use domain::ids::TaskId;
use domain::run::JobStatus;
use sqlx::{Any, AnyPool, Transaction};
use std::time::Duration;

/// A grid job's shot group (k = split = 0: every group of the task).
#[derive(Clone, Debug)]
pub struct Group {
    pub task_id: TaskId,
    pub k: u32,
    pub split: u32,
}

/// A grid job this worker holds: its lease and its shot group.
pub type Held = lease::Held<Group>;

/// What a grid job runs: the system its runs are stored under, the model folder it evaluates
/// where that is not the system itself (`source`), and the recipe (JSON) any worker runs it
/// with (`clues-lab worker`).
#[derive(Clone, Copy, Debug)]
pub struct Recipe<'a> {
    pub system: &'a str,
    pub source: Option<&'a str>,
    pub recipe: &'a str,
}

/// Queues the groups of a recipe's system (a group already queued, claimed or done stays as it
/// is; a failed one is queued again with this recipe, and with `replace` a done one too) and
/// answers the jobs' ids.
pub async fn enqueue(
    pool: &AnyPool,
    what: Recipe<'_>,
    groups: &[(TaskId, u32, u32)],
    replace: bool,
) -> Result<Vec<i64>> {
    let mut tx = crate::tx::begin_write(pool, &[Lock::Jobs("grid", what.system)]).await?;
    let queued = queue_groups(&mut tx, what, groups, replace).await;
    crate::tx::finish(tx, queued).await
}

/// Queues each group in `tx`, which holds the system's queuing lock.
async fn queue_groups(
    tx: &mut sqlx::AnyConnection,
    what: Recipe<'_>,
    groups: &[(TaskId, u32, u32)],
    replace: bool,
) -> Result<Vec<i64>> {
    let Recipe {
        system,
        source,
        recipe,
    } = what;
    let mut ids = Vec::with_capacity(groups.len());
    for &(task, k, split) in groups {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM grid_jobs WHERE system = $1 AND task_id = $2 AND k = $3 AND split = $4",
        )
        .bind(system)
        .bind(task)
        .bind(i64::from(k))
        .bind(i64::from(split))
        .fetch_optional(&mut *tx)
        .await?;
        let id = match found {
            Some(id) => {
                let again = match lease::state(tx, id).await?.0 {
                    JobStatus::Failed => true,
                    JobStatus::Done => replace,
                    JobStatus::Queued | JobStatus::Claimed => false,
                };
                if again {
                    lease::requeue(tx, id, Some(recipe)).await?;
                    sqlx::query("UPDATE grid_jobs SET source = $1 WHERE id = $2")
                        .bind(source)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
                id
            }
            None => {
                let id = lease::add(tx, Queue::Grid, Some(recipe)).await?;
                sqlx::query(
                    "INSERT INTO grid_jobs (id, system, task_id, k, split, source)
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(id)
                .bind(system)
                .bind(task)
                .bind(i64::from(k))
                .bind(i64::from(split))
                .bind(source)
                .execute(&mut *tx)
                .await?;
                id
            }
        };
        ids.push(id);
    }
    Ok(ids)
}

/// The statement that marks the runs a job's worker had opened failed, saying why: its lease
/// ran out and another worker took the job over (run in the claim's transaction, see
/// [`lease::claim`]), or it handed the job back as it stopped ([`lease::release`]).
const OPEN_RUNS_FAILED: &str =
    "UPDATE machine_runs SET status = 'failed', error = $1, finished_at = $2
     WHERE grid_job_id = $3 AND status = 'running'";

/// Claims the first of `jobs` that is queued or whose lease ran out, for `lease`.
pub async fn claim(
    pool: &AnyPool,
    jobs: &[i64],
    worker: &str,
    lease: Duration,
) -> Result<Option<Held>> {
    claim_with(pool, jobs, worker, lease, &Clock::System).await
}

/// [`claim`] by `clock`.
pub async fn claim_with(
    pool: &AnyPool,
    jobs: &[i64],
    worker: &str,
    lease: Duration,
    clock: &Clock,
) -> Result<Option<Held>> {
    let Some(lease) = lease::claim(
        pool,
        Queue::Grid,
        jobs,
        worker,
        (lease, clock),
        Some(OPEN_RUNS_FAILED),
    )
    .await?
    else {
        return Ok(None);
    };
    let (task_id, k, split): (TaskId, i64, i64) =
        sqlx::query_as("SELECT task_id, k, split FROM grid_jobs WHERE id = $1")
            .bind(lease.job)
            .fetch_one(pool)
            .await?;
    Ok(Some(Held {
        lease,
        key: Group {
            task_id,
            k: k as u32,
            split: split as u32,
        },
    }))
}

/// Marks a held job failed (another command queues it again).
pub async fn fail(pool: &AnyPool, held: &Held, error: &str) -> Result<()> {
    lease::fail(pool, &held.lease, error).await
}

/// Hands a held job back to the queue as its worker stops; the runs it had opened are marked
/// failed with `why`. `false` when the worker no longer held it.
pub async fn release(pool: &AnyPool, held: &Held, why: &str) -> Result<bool> {
    lease::release(pool, &held.lease, why, Some(OPEN_RUNS_FAILED)).await
}

/// Cancels an open job for `by` (a person's name); the runs its worker had opened are marked
/// failed.
pub async fn cancel(pool: &AnyPool, job: i64, by: &str) -> Result<()> {
    lease::cancel(pool, Queue::Grid, job, by, Some(OPEN_RUNS_FAILED)).await
}

/// Inside the transaction that stores a held job's runs: marks the job done, or refuses when
/// the lease was lost meanwhile (another worker took the job over and stores it).
pub async fn complete(tx: &mut Transaction<'static, Any>, held: &Held) -> Result<()> {
    let what = format!(
        "grid job {} (k={} split={})",
        held.lease.job, held.k, held.split
    );
    lease::complete(tx, &held.lease, &what).await
}

/// How many of a list of grid jobs (`$1`, a JSON array of ids) are not finished, and their
/// shots; per dialect.
const UNFINISHED: [&str; 2] = [
    "SELECT COUNT(*), CAST(COALESCE(SUM(g.k), 0) AS BIGINT) FROM jobs j
     JOIN grid_jobs g ON g.id = j.id
     WHERE j.id IN (SELECT CAST(value AS BIGINT) FROM json_each($1))
       AND j.status IN ('queued', 'claimed')",
    "SELECT COUNT(*), CAST(COALESCE(SUM(g.k), 0) AS BIGINT) FROM jobs j
     JOIN grid_jobs g ON g.id = j.id
     WHERE j.id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS jsonb)))
       AND j.status IN ('queued', 'claimed')",
];

/// How many of `jobs` are not finished (queued, or claimed by some worker), and their shots
/// (the work left is about proportional to them).
pub async fn unfinished(pool: &AnyPool, jobs: &[i64]) -> Result<(i64, i64)> {
    let list = serde_json::to_string(jobs).expect("ids serialise");
    Ok(sqlx::query_as(UNFINISHED[Backend::of(pool) as usize])
        .bind(&list)
        .fetch_one(pool)
        .await?)
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

/// The jobs any worker can run (queued with a recipe) that are not finished, with their
/// recipes (JSON), oldest first.
pub async fn runnable(pool: &AnyPool) -> Result<Vec<(i64, String)>> {
    Ok(sqlx::query_as(
        "SELECT id, recipe_json FROM jobs
         WHERE kind = 'grid' AND recipe_json IS NOT NULL AND status IN ('queued', 'claimed')
         ORDER BY id",
    )
    .fetch_all(pool)
    .await?)
}

/// Every grid job not done: running ones first (with the worker holding it, while its lease
/// holds), then failed ones with why, then queued ones.
pub async fn open_jobs(pool: &AnyPool) -> Result<Vec<domain::wire::queue::GridJobRow>> {
    Ok(sqlx::query_as(
        "SELECT g.id, g.system, t.name AS task, g.k, g.split, j.status,
            CASE WHEN j.status = 'claimed' AND j.lease_until >= $1 THEN j.worker END AS worker,
            j.attempts, j.error
         FROM grid_jobs g JOIN jobs j ON j.id = g.id JOIN tasks t ON t.id = g.task_id
         WHERE j.status <> 'done'
         ORDER BY CASE j.status WHEN 'claimed' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END, g.id",
    )
    .bind(now_ms())
    .fetch_all(pool)
    .await?)
}
