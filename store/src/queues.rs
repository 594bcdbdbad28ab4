//! The machines page's actions on any queued job by its `Queue`: each dispatched to its kind
//! (`lease::JobKind`) once, here, so the page and the command line name a queue, not a kind.

use crate::clock::Clock;
use crate::crossfit::jobs::SeedKind;
use crate::crossfit::upstream::UpstreamKind;
use crate::error::{Error, Result};
use crate::lease::{self, Queue};
use crate::machine::grid::GridKind;
use sqlx::AnyPool;

/// Cancels an open job of `queue` for `by` (a person's name), with what its kind undoes.
pub async fn cancel(pool: &AnyPool, queue: Queue, job: i64, by: &str, clock: &Clock) -> Result<()> {
    match queue {
        Queue::Grid => lease::cancel::<GridKind>(pool, job, by, clock).await,
        Queue::Crossfit => lease::cancel::<SeedKind>(pool, job, by, clock).await,
        Queue::Upstream => lease::cancel::<UpstreamKind>(pool, job, by, clock).await,
        Queue::Platform => Err(platform_refusal()),
    }
}

/// A crowd platform's call is never cancelled or retried from here: one may have been sent
/// already, and its study's ledger knows what it did (`platform::ledger`).
fn platform_refusal() -> Error {
    Error::Refused(
        "a crowd platform's call is cancelled or sent again only from its study's ledger".into(),
    )
}

/// Queues a failed job of `queue` again, with the recipe it had.
pub async fn retry(pool: &AnyPool, queue: Queue, job: i64, clock: &Clock) -> Result<()> {
    match queue {
        Queue::Grid | Queue::Crossfit | Queue::Upstream => {
            lease::retry(pool, queue, job, clock).await
        }
        Queue::Platform => Err(platform_refusal()),
    }
}
