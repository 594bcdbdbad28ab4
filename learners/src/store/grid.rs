//! A grid shared by many machines: its groups are jobs (`app::ssr::machine::grid`); any
//! worker process pointed at the database claims the next one under a lease it renews every
//! quarter of the lease, and stores a job's runs only while it still holds it (`store::finish`),
//! so every group is stored exactly once.

use app::error::{AppError, Result};
use app::ssr::machine::grid::renew;
pub use app::ssr::machine::grid::{claim, complete, enqueue, fail, job_target, unfinished, Held};
use sqlx::AnyPool;
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
    pub device: crate::runtime::Device,
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
                match renew(&pool, &held, lease).await {
                    Ok(false) => {
                        flag.store(true, Ordering::Relaxed);
                        return;
                    }
                    Ok(true) => {}
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
