//! A grid shared by many machines: its groups are jobs (`app::ssr::machine::grid`); any
//! worker process pointed at the database claims the next one under a lease it renews every
//! quarter of the lease, and stores a job's runs only while it still holds it (`store::finish`),
//! so every group is stored exactly once.

use super::lease::Claims;
use app::error::Result;
pub use app::ssr::machine::grid::{
    claim, complete, enqueue, fail, job_target, unfinished, Group, Held,
};
use sqlx::AnyPool;
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

/// The CLUES track's grids as a queue workers claim from.
pub struct GridJobs;

impl Claims for GridJobs {
    type Key = Group;

    async fn claim(
        pool: &AnyPool,
        jobs: &[i64],
        worker: &str,
        lease: Duration,
    ) -> Result<Option<Held>> {
        claim(pool, jobs, worker, lease).await
    }

    async fn unfinished(pool: &AnyPool, jobs: &[i64]) -> Result<(i64, i64)> {
        unfinished(pool, jobs).await
    }

    fn name(held: &Held) -> String {
        format!(
            "grid job {} (k={} split={})",
            held.lease.job, held.k, held.split
        )
    }
}

/// One worker's turn through a grid.
pub type Worker = super::lease::Worker<GridJobs>;
