//! The shared grids' jobs: one shot group of a task for a system (its key in `grid_jobs`, the
//! job itself in `jobs`), queued, then claimed, renewed, failed or done under a lease
//! (`store::lease`); a job whose lease ran out is claimed again and the runs the lost worker
//! had opened are marked failed.

use crate::auth::now_ms;
use crate::error::Result;
use crate::lease::{self, Clock, Queue};
use crate::tx::Lock;
use domain::ids::TaskId;
use domain::run::JobStatus;
use sqlx::{Any, AnyPool, Transaction};

/// A grid job's shot group (k = split = 0: every group of the task).
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Group {
    pub task_id: TaskId,
    #[sqlx(try_from = "i64")]
    pub k: u32,
    #[sqlx(try_from = "i64")]
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
/// answers the jobs' ids; queued now by `clock`.
pub async fn enqueue(
    pool: &AnyPool,
    what: Recipe<'_>,
    groups: &[(TaskId, u32, u32)],
    (replace, clock): (bool, &Clock),
) -> Result<Vec<i64>> {
    let mut tx = crate::tx::begin_write(pool, &[Lock::Jobs(Queue::Grid, what.system)]).await?;
    let queued = queue_groups(&mut tx, what, groups, (replace, clock)).await;
    crate::tx::finish(tx, queued).await
}

/// Queues each group in `tx`, which holds the system's queuing lock.
async fn queue_groups(
    tx: &mut sqlx::AnyConnection,
    what: Recipe<'_>,
    groups: &[(TaskId, u32, u32)],
    (replace, clock): (bool, &Clock),
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
                    lease::requeue(tx, id, Some(recipe), clock).await?;
                    sqlx::query("UPDATE grid_jobs SET source = $1 WHERE id = $2")
                        .bind(source)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
                id
            }
            None => {
                let id = lease::add(tx, Queue::Grid, Some(recipe), clock).await?;
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
/// ran out and another worker took the job over, it handed the job back as it stopped, or
/// someone cancelled it (run in the same transaction, see [`lease::JobKind::ON_LEAVE`]).
const OPEN_RUNS_FAILED: &str =
    "UPDATE machine_runs SET status = 'failed', error = $1, finished_at = $2
     WHERE grid_job_id = $3 AND status = 'running'";

/// The grids' jobs as a kind of job: keys in `grid_jobs`, weighed by their shots, summed up by
/// system.
pub struct GridKind;

impl lease::JobKind for GridKind {
    const QUEUE: Queue = Queue::Grid;
    const TABLE: &'static str = "grid_jobs";
    type Key = Group;
    const KEY_SQL: &'static str = "SELECT task_id, k, split FROM grid_jobs WHERE id = $1";
    const ON_LEAVE: Option<&'static str> = Some(OPEN_RUNS_FAILED);
    const WEIGHT: &'static str = "k.k";
    const OWNER: &'static str = "k.system";

    fn name(job: i64, g: &Group) -> String {
        format!("grid job {job} (k={} split={})", g.k, g.split)
    }
}

/// Marks a held job failed (another command queues it again).
pub async fn fail(pool: &AnyPool, held: &Held, error: &str) -> Result<()> {
    lease::fail(pool, &held.lease, error).await
}

/// Inside the transaction that stores a held job's runs: marks the job done, or refuses when
/// the lease was lost meanwhile (another worker took the job over and stores it).
pub async fn complete(tx: &mut Transaction<'static, Any>, held: &Held) -> Result<()> {
    let what = <GridKind as lease::JobKind>::name(held.lease.job, &held.key);
    lease::complete(tx, &held.lease, &what).await
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
