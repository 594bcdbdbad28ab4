//! CrossFit's fine-tuning shared by workers: one method's job on one task and seed (its key in
//! `crossfit_jobs`, the job in `jobs`), queued with the recipe every worker runs it with,
//! claimed under a lease (`store::lease`), its progress written as it trains, its run stored
//! with the job marked done in one transaction.

use super::runs::{store, NewRun};
use super::task_id;
use crate::error::{Error, Result};
use crate::lease::{self, Clock, Queue};
use crate::tx::Lock;
use domain::crossfit::metrics::Score;
use domain::run::JobStatus;
use domain::wire::crossfit::LearningQueue;
use sqlx::AnyPool;

/// A CrossFit job: the method, task and seed it stores a run of, and its recipe.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Seed {
    pub method: String,
    pub task: String,
    #[sqlx(try_from = "i64")]
    pub seed: u32,
    /// The recipe it was queued with (JSON).
    pub settings: String,
}

/// CrossFit's seeds as a kind of job: keys in `crossfit_jobs` (their recipes in `jobs`), each
/// of the same weight, summed up by method.
pub struct SeedKind;

impl lease::JobKind for SeedKind {
    const QUEUE: Queue = Queue::Crossfit;
    const TABLE: &'static str = "crossfit_jobs";
    type Key = Seed;
    const KEY_SQL: &'static str =
        "SELECT c.method, t.name AS task, c.seed, j.recipe_json AS settings
         FROM crossfit_jobs c JOIN jobs j ON j.id = c.id
         JOIN crossfit_tasks t ON t.id = c.task_id WHERE c.id = $1";
    const ON_LEAVE: Option<&'static str> = None;
    const WEIGHT: &'static str = "1";
    const OWNER: &'static str = "k.method";

    fn name(_: i64, seed: &Seed) -> String {
        seed.name()
    }
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
    (method, task): (&str, &str),
    seeds: &[u32],
    settings: &str,
    clock: &Clock,
) -> Result<Vec<i64>> {
    let (task_id, _) = task_id(pool, task).await?;
    // All or nothing: a refusal leaves no seed queued with the refused recipe. The refusal
    // rolls back before it is answered: a dropped transaction would keep its row locks until
    // its connection is next used, and a claim (SKIP LOCKED) would pass the queued seed by.
    let mut tx = crate::tx::begin_write(pool, &[Lock::Jobs(Queue::Crossfit, method)]).await?;
    let queued = queue_seeds(&mut tx, (method, task, task_id), seeds, (settings, clock)).await;
    crate::tx::finish(tx, queued).await
}

/// Queues each seed in `tx`, which holds the method's queuing lock; refused where one is
/// queued or running with another recipe.
async fn queue_seeds(
    tx: &mut sqlx::AnyConnection,
    (method, task, task_id): (&str, &str, i64),
    seeds: &[u32],
    (settings, clock): (&str, &Clock),
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
                    lease::requeue(tx, id, Some(settings), clock).await?;
                } else if queued_with.as_deref() != Some(settings) {
                    let queued_with = queued_with.unwrap_or_default();
                    return Err(Error::Refused(format!(
                        "{method} on {task} seed {seed} is queued or running with another recipe ({queued_with}); run the same command to share it, or give another --method"
                    )));
                }
                id
            }
            None => {
                let id = lease::add(tx, Queue::Crossfit, Some(settings), clock).await?;
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

/// Each method's jobs by status, and every job not done: upstream learning first, then the
/// seeds, running ones first with their progress and time left, then failed ones with why,
/// then queued ones.
pub async fn queue(pool: &AnyPool, clock: &Clock) -> Result<LearningQueue> {
    let rows: Vec<super::listed::Listed> = sqlx::query_as(
        "SELECT j.id, c.method, t.name AS task, c.seed, j.status, j.worker, j.lease_until, j.attempts,
            j.progress, j.done_updates, j.total_updates, j.started_at, j.error
         FROM crossfit_jobs c JOIN jobs j ON j.id = c.id JOIN crossfit_tasks t ON t.id = c.task_id
         WHERE j.status <> 'done'
         ORDER BY CASE j.status WHEN 'claimed' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END, j.id",
    )
    .fetch_all(pool)
    .await?;
    let now = clock.now_ms();
    let mut open = super::upstream::open(pool, clock).await?;
    open.extend(rows.into_iter().map(|r| r.row(now, Queue::Crossfit)));
    Ok(LearningQueue {
        methods: lease::summary::<SeedKind>(pool, clock).await?,
        open,
    })
}
