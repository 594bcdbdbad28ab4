//! CrossFit's fine-tuning shared by workers: one method's job on one task and seed (its key in
//! `crossfit_jobs`, the job in `jobs`), queued with the recipe every worker runs it with,
//! claimed under a lease (`store::lease`), its progress written as it trains, its run stored
//! with the job marked done in one transaction.

use super::runs::{store, NewRun};
use super::task_id;
use crate::auth::now_ms;
use crate::error::{Error, Result};
use crate::lease::{self, Clock, Queue};
use crate::tx::Lock;
use domain::crossfit::metrics::Score;
use domain::run::JobStatus;
use domain::wire::crossfit::LearningQueue;
use domain::wire::queue::QueueKind;
use sqlx::AnyPool;
use std::time::Duration;

/// A CrossFit job: the method, task and seed it stores a run of, and its recipe.
#[derive(Clone, Debug)]
pub struct Seed {
    pub method: String,
    pub task: String,
    pub seed: u32,
    /// The recipe it was queued with (JSON).
    pub settings: String,
}

/// A CrossFit job this worker holds.
pub type Held = lease::Held<Seed>;

impl Seed {
    /// The job as a person names it.
    pub fn name(&self) -> String {
        format!("{} on {} seed {}", self.method, self.task, self.seed)
    }
}

/// Queues `method`'s fine-tuning of `task` for each of `seeds` with the recipe `settings`
/// (JSON) and answers the jobs' ids. A job already queued or running keeps going, and must
/// have been queued with the same recipe (a method's runs are made one way); a failed job, or
/// a done one whose run is gone, is queued again with this recipe.
pub async fn enqueue(
    pool: &AnyPool,
    method: &str,
    task: &str,
    seeds: &[u32],
    settings: &str,
) -> Result<Vec<i64>> {
    let (task_id, _) = task_id(pool, task).await?;
    // All or nothing: a refusal leaves no seed queued with the refused recipe. The refusal
    // rolls back before it is answered: a dropped transaction would keep its row locks until
    // its connection is next used, and a claim (SKIP LOCKED) would pass the queued seed by.
    let mut tx = crate::tx::begin_write(pool, &[Lock::Jobs("crossfit", method)]).await?;
    let queued = queue_seeds(&mut tx, (method, task, task_id), seeds, settings).await;
    crate::tx::finish(tx, queued).await
}

/// Queues each seed in `tx`, which holds the method's queuing lock; refused where one is
/// queued or running with another recipe.
async fn queue_seeds(
    tx: &mut sqlx::AnyConnection,
    (method, task, task_id): (&str, &str, i64),
    seeds: &[u32],
    settings: &str,
) -> Result<Vec<i64>> {
    let mut ids = Vec::with_capacity(seeds.len());
    for &seed in seeds {
        let found: Option<(i64, i64)> = sqlx::query_as(
            "SELECT c.id, (SELECT COUNT(*) FROM crossfit_runs r WHERE r.method = c.method
                 AND r.task_id = c.task_id AND r.seed = c.seed)
             FROM crossfit_jobs c WHERE c.method = $1 AND c.task_id = $2 AND c.seed = $3",
        )
        .bind(method)
        .bind(task_id)
        .bind(i64::from(seed))
        .fetch_optional(&mut *tx)
        .await?;
        let id = match found {
            Some((id, runs)) => {
                let (status, queued_with) = lease::state(tx, id).await?;
                let again = match status {
                    JobStatus::Failed => true,
                    JobStatus::Done => runs == 0,
                    JobStatus::Queued | JobStatus::Claimed => false,
                };
                if again {
                    lease::requeue(tx, id, Some(settings)).await?;
                } else if queued_with.as_deref() != Some(settings) {
                    let queued_with = queued_with.unwrap_or_default();
                    return Err(Error::Refused(format!(
                        "{method} on {task} seed {seed} is queued or running with another recipe ({queued_with}); run the same command to share it, or give another --method"
                    )));
                }
                id
            }
            None => {
                let id = lease::add(tx, Queue::Crossfit, Some(settings)).await?;
                sqlx::query(
                    "INSERT INTO crossfit_jobs (id, method, task_id, seed) VALUES ($1, $2, $3, $4)",
                )
                .bind(id)
                .bind(method)
                .bind(task_id)
                .bind(i64::from(seed))
                .execute(&mut *tx)
                .await?;
                id
            }
        };
        ids.push(id);
    }
    Ok(ids)
}

/// A claimed job's key and recipe.
#[derive(sqlx::FromRow)]
struct Key {
    method: String,
    task: String,
    seed: i64,
    settings_json: String,
}

/// Claims the first of `jobs` that is queued or whose lease ran out, for `lease`; its
/// progress starts again.
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
    let terms = (lease, clock);
    let Some(lease) = lease::claim(pool, Queue::Crossfit, jobs, worker, terms, None).await? else {
        return Ok(None);
    };
    let key: Key = sqlx::query_as(
        "SELECT c.method, t.name AS task, c.seed, j.recipe_json AS settings_json
         FROM crossfit_jobs c JOIN jobs j ON j.id = c.id
         JOIN crossfit_tasks t ON t.id = c.task_id WHERE c.id = $1",
    )
    .bind(lease.job)
    .fetch_one(pool)
    .await?;
    Ok(Some(Held {
        lease,
        key: Seed {
            method: key.method,
            task: key.task,
            seed: key.seed as u32,
            settings: key.settings_json,
        },
    }))
}

/// Hands a held job back to the queue as its worker stops (its progress starts again at the
/// next claim). `false` when the worker no longer held it.
pub async fn release(pool: &AnyPool, held: &Held, why: &str) -> Result<bool> {
    lease::release(pool, &held.lease, why, None).await
}

/// Cancels an open job for `by` (a person's name): a worker training it stops at its next
/// renewal and stores nothing.
pub async fn cancel(pool: &AnyPool, job: i64, by: &str) -> Result<()> {
    lease::cancel(pool, Queue::Crossfit, job, by, None).await
}

/// The jobs not finished (queued, or claimed by some worker), oldest first: every CrossFit job
/// carries its recipe, so any worker can run it.
pub async fn runnable(pool: &AnyPool) -> Result<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM jobs WHERE kind = 'crossfit' AND status IN ('queued', 'claimed') ORDER BY id",
    )
    .fetch_all(pool)
    .await?)
}

/// Writes a held job's progress: `done` updates of `total`, and the worker's words.
pub async fn progress(
    pool: &AnyPool,
    held: &Held,
    done: u64,
    total: u64,
    words: &str,
) -> Result<()> {
    lease::progress(pool, &held.lease, done, total, words).await
}

/// Stores a held job's run and marks the job done in one transaction; stores nothing when
/// another worker took the job over meanwhile.
pub async fn finish(
    pool: &AnyPool,
    held: &Held,
    predictions: &[String],
    settings: &str,
) -> Result<Score> {
    let run = NewRun {
        method: &held.method,
        task: &held.task,
        seed: held.seed,
        kind: "predictions",
        predictions,
        settings: Some(settings),
    };
    store(pool, &run, Some((&held.lease, &held.name()))).await
}

/// How many of `jobs` are not finished (queued, or claimed by some worker).
pub async fn unfinished(pool: &AnyPool, jobs: &[i64]) -> Result<i64> {
    lease::unfinished(pool, jobs).await
}

/// Each method's jobs by status, and every job not done: upstream learning first, then the
/// seeds, running ones first with their progress and time left, then failed ones with why,
/// then queued ones.
pub async fn queue(pool: &AnyPool) -> Result<LearningQueue> {
    let rows: Vec<super::listed::Listed> = sqlx::query_as(
        "SELECT j.id, c.method, t.name AS task, c.seed, j.status, j.worker, j.lease_until, j.attempts,
            j.progress, j.done_updates, j.total_updates, j.started_at, j.error
         FROM crossfit_jobs c JOIN jobs j ON j.id = c.id JOIN crossfit_tasks t ON t.id = c.task_id
         WHERE j.status <> 'done'
         ORDER BY CASE j.status WHEN 'claimed' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END, j.id",
    )
    .fetch_all(pool)
    .await?;
    let now = now_ms();
    let mut open = super::upstream::open(pool).await?;
    open.extend(rows.into_iter().map(|r| r.row(now, QueueKind::Crossfit)));
    Ok(LearningQueue {
        methods: lease::summary(pool, Queue::Crossfit).await?,
        open,
    })
}
