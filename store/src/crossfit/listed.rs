//! A CrossFit job as the machines page lists it, read the same way for a task's seed
//! (`jobs`) and a partition's upstream learning (`upstream`): its pace and time left.

use domain::run::JobStatus;
use domain::wire::crossfit::JobRow;
use domain::wire::queue::Queue;

/// A job as the machines page reads it: a seed (`jobs`) or an upstream job (`upstream`).
#[derive(sqlx::FromRow)]
pub(super) struct Listed {
    id: i64,
    method: String,
    task: String,
    seed: Option<i64>,
    status: JobStatus,
    worker: Option<String>,
    lease_until: Option<i64>,
    attempts: i64,
    progress: Option<String>,
    done_updates: i64,
    total_updates: i64,
    started_at: Option<i64>,
    error: Option<String>,
}

impl Listed {
    /// The page's row at `now` (unix ms): a running job's pace and time left, and its worker
    /// while the lease holds.
    pub(super) fn row(self, now: i64, queue: Queue) -> JobRow {
        let r = self;
        let running = r.status == JobStatus::Claimed;
        let pace = match (running, r.started_at) {
            (true, Some(t)) if r.done_updates > 0 && r.total_updates >= r.done_updates => {
                Some((now - t) as f64 / 1000.0 / r.done_updates as f64)
            }
            _ => None,
        };
        JobRow {
            id: r.id,
            queue,
            method: r.method,
            task: r.task,
            seed: r.seed.map(|s| s as u32),
            status: r.status,
            // A worker whose lease ran out holds nothing any more.
            worker: r
                .worker
                .filter(|_| running && r.lease_until.is_some_and(|l| l >= now)),
            attempts: r.attempts,
            progress: r.progress.filter(|_| running),
            done: r.done_updates,
            total: r.total_updates,
            left_seconds: pace.map(|p| p * (r.total_updates - r.done_updates) as f64),
            error: r.error,
        }
    }
}
