//! The signals that stop a process running jobs (Ctrl-C, SIGTERM from `kill`, systemd or
//! Slurm): a worker or a grid command hands the job it holds back to the queue, and says so.

use crate::error::{Error, Result};
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The signals listened for from the start of a process's jobs (none is missed between waits).
/// Once listened for, a signal no longer ends the process by itself: it is heard where the
/// process waits through [`Stop::or`].
pub struct Stop {
    term: Signal,
    int: Signal,
}

impl Stop {
    pub fn new() -> Result<Stop> {
        let listen = |k: SignalKind| {
            signal(k).map_err(|e| Error::io("cannot listen for signals".to_string(), e))
        };
        Ok(Stop {
            term: listen(SignalKind::terminate())?,
            int: listen(SignalKind::interrupt())?,
        })
    }

    /// `work`'s output, or the name and exit status of the signal that came first (the status a
    /// shell gives a process the signal ended: 143 for SIGTERM, 130 for SIGINT).
    pub async fn or<T>(
        &mut self,
        work: impl std::future::Future<Output = T>,
    ) -> std::result::Result<T, (&'static str, i32)> {
        tokio::select! {
            v = work => Ok(v),
            _ = self.term.recv() => Err(("SIGTERM", 143)),
            _ = self.int.recv() => Err(("SIGINT", 130)),
        }
    }
}

/// What a worker says when `signal` stops it between jobs.
pub fn stopped_waiting(worker: &str, signal: &str) -> String {
    format!("worker {worker} was stopped ({signal}) while it waited for a job")
}

/// What a worker says as it hands `job` back on `signal` (`released`: it still held the job).
pub fn handed_back(worker: &str, signal: &str, job: &str, released: bool) -> String {
    if released {
        format!("worker {worker} was stopped ({signal}) and handed {job} back to the queue")
    } else {
        format!("worker {worker} was stopped ({signal}); {job} was no longer its own")
    }
}
