//! CrossFit's upstream learning as a job that workers share (`upstream_jobs`, the job in
//! `jobs`): one partition learned upstream into one model folder, after which its worker queues
//! the test tasks' seeds (`jobs::enqueue`) and marks it done.
//!
//! Queuing the seeds is the upstream job's result. It is idempotent (the same recipe shares
//! the seeds already queued), so a worker that queued them and lost its lease before the mark
//! leaves nothing twice: the next claim finds the finished folder, queues the same seeds again
//! (nothing new) and marks the job done.

use crate::error::{Error, Result};
use crate::lease::{self, Clock, Queue};
use crate::tx::Lock;
use domain::run::JobStatus;
use domain::wire::crossfit::JobRow;
use sqlx::AnyPool;

/// An upstream job: the partition it learns, the folder it writes, the method name the test
/// tasks' runs are stored under, and its recipe (JSON).
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Upstream {
    pub partition: String,
    pub out_dir: String,
    pub method: String,
    pub recipe: String,
}

/// An upstream job this worker holds.
pub type Held = lease::Held<Upstream>;

/// Upstream learning as a kind of job: keys in `upstream_jobs` (their recipes in `jobs`), each
/// of the same weight, summed up by the method its test tasks' runs are stored under.
pub struct UpstreamKind;

impl lease::JobKind for UpstreamKind {
    const QUEUE: Queue = Queue::Upstream;
    const TABLE: &'static str = "upstream_jobs";
    type Key = Upstream;
    const KEY_SQL: &'static str =
        "SELECT p.name AS partition, u.out_dir, u.method, j.recipe_json AS recipe
         FROM upstream_jobs u JOIN jobs j ON j.id = u.id
         JOIN crossfit_partitions p ON p.id = u.partition_id WHERE u.id = $1";
    const ON_LEAVE: Option<&'static str> = None;
    const WEIGHT: &'static str = "1";
    const OWNER: &'static str = "k.method";

    fn name(_: i64, upstream: &Upstream) -> String {
        upstream.name()
    }
}

impl Upstream {
    /// The job as a person names it.
    pub fn name(&self) -> String {
        format!(
            "upstream learning of {} into {}",
            self.partition, self.out_dir
        )
    }
}

/// Queues the upstream learning of `partition` into `out_dir`, its test tasks' runs stored
/// under `method`, with `recipe` (JSON); answers the job's id. The same job (folder and
/// method) queued, running or done with the same recipe is shared; a failed one is queued
/// again; a folder or method that another upstream job writes, or that this one writes with
/// another recipe, is refused.
pub async fn enqueue(
    pool: &AnyPool,
    partition: &str,
    (out_dir, method): (&str, &str),
    recipe: &str,
    clock: &Clock,
) -> Result<i64> {
    let p: Option<i64> = sqlx::query_scalar("SELECT id FROM crossfit_partitions WHERE name = $1")
        .bind(partition)
        .fetch_optional(pool)
        .await?;
    let p = p.ok_or_else(|| Error::NotFound(format!("no partition named {partition:?}")))?;
    let mut tx = crate::tx::begin_write(pool, &[Lock::Jobs(Queue::Upstream, "")]).await?;
    let queued = queue_one(&mut tx, p, (out_dir, method), (recipe, clock)).await;
    crate::tx::finish(tx, queued).await
}

async fn queue_one(
    tx: &mut sqlx::AnyConnection,
    partition_id: i64,
    (out_dir, method): (&str, &str),
    (recipe, clock): (&str, &Clock),
) -> Result<i64> {
    let found: Vec<(i64, i64, String, String)> = sqlx::query_as(
        "SELECT id, partition_id, out_dir, method FROM upstream_jobs
         WHERE out_dir = $1 OR method = $2 ORDER BY id",
    )
    .bind(out_dir)
    .bind(method)
    .fetch_all(&mut *tx)
    .await?;
    match found.as_slice() {
        [] => {
            let id = lease::add(tx, Queue::Upstream, Some(recipe), clock).await?;
            sqlx::query(
                "INSERT INTO upstream_jobs (id, partition_id, out_dir, method) VALUES ($1, $2, $3, $4)",
            )
            .bind(id)
            .bind(partition_id)
            .bind(out_dir)
            .bind(method)
            .execute(&mut *tx)
            .await?;
            Ok(id)
        }
        [(id, p, o, m)] if *p == partition_id && o == out_dir && m == method => {
            let (status, queued_with) = lease::state(tx, *id).await?;
            if status == JobStatus::Failed {
                lease::requeue(tx, *id, Some(recipe), clock).await?;
            } else if queued_with.as_deref() != Some(recipe) {
                return Err(Error::Refused(format!(
                    "upstream job {id} ({method} into {out_dir}) is {} with another recipe; give another folder and method name",
                    status.as_str()
                )));
            }
            Ok(*id)
        }
        [(id, _, o, m), ..] => {
            Err(Error::Refused(if o == out_dir {
                format!("upstream job {id} writes {out_dir} already (method {m:?}); give another folder")
            } else {
                format!("upstream job {id} stores its runs as {method:?} already (into {o}); give another method name")
            }))
        }
    }
}

/// The upstream jobs not finished (queued, or claimed by some worker), oldest first.
pub async fn runnable(pool: &AnyPool) -> Result<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM jobs WHERE kind = 'upstream' AND status IN ('queued', 'claimed') ORDER BY id",
    )
    .fetch_all(pool)
    .await?)
}

/// Marks a held job done, once its test tasks' seeds are queued; refused when another worker
/// took it over meanwhile.
pub async fn finish(pool: &AnyPool, held: &Held) -> Result<()> {
    let mut tx = crate::tx::begin_write(pool, &[]).await?;
    let done = lease::complete(&mut tx, &held.lease, &held.name()).await;
    crate::tx::finish(tx, done).await
}

/// Every upstream job not done, as the machines page lists it beside the seeds: its method,
/// "upstream on <partition>" as its task, no seed.
pub async fn open(pool: &AnyPool, clock: &Clock) -> Result<Vec<JobRow>> {
    let rows: Vec<super::listed::Listed> = sqlx::query_as(
        "SELECT j.id, u.method, p.name AS task, CAST(NULL AS BIGINT) AS seed, j.status, j.worker, j.lease_until,
            j.attempts, j.progress, j.done_updates, j.total_updates, j.started_at, j.error
         FROM upstream_jobs u JOIN jobs j ON j.id = u.id
         JOIN crossfit_partitions p ON p.id = u.partition_id
         WHERE j.status <> 'done' ORDER BY j.id",
    )
    .fetch_all(pool)
    .await?;
    let now = clock.now_ms();
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut row = r.row(now, Queue::Upstream);
            row.task = format!("upstream on {}", row.task);
            row
        })
        .collect())
}
