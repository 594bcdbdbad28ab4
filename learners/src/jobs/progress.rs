//! Progress of a long run: a bar on stderr and `done`/`total` in the runs' rows, which the
//! machines page polls.

use domain::ids::RunId;
use sqlx::AnyPool;
use std::io::Write;
use std::time::Instant;
use store::machine;

/// Progress of a long run: a bar on stderr (when asked) and `done`/`total` in the runs' rows
/// (at most twice a second), read by the machines page.
pub struct Progress {
    pool: AnyPool,
    runs: Vec<RunId>,
    handle: tokio::runtime::Handle,
    label: String,
    bar: bool,
    last: Option<Instant>,
    /// What is counted, in words ("inputs", "training steps").
    unit: &'static str,
}

impl Progress {
    pub(super) fn new(pool: &AnyPool, runs: Vec<RunId>, label: String, bar: bool) -> Progress {
        Progress {
            pool: pool.clone(),
            runs,
            handle: tokio::runtime::Handle::current(),
            label,
            bar,
            last: None,
            unit: "inputs",
        }
    }

    /// The same progress, counting `unit` instead of model inputs.
    pub(super) fn counting(self, unit: &'static str) -> Progress {
        Progress { unit, ..self }
    }

    /// Called from the blocking thread that runs the model.
    pub(super) fn update(&mut self, done: usize, total: usize) {
        let finished = done >= total;
        if !finished && self.last.is_some_and(|t| t.elapsed().as_millis() < 500) {
            return;
        }
        self.last = Some(Instant::now());
        for run in &self.runs {
            let r = self
                .handle
                .block_on(machine::write::progress(&self.pool, *run, done, total));
            if let Err(e) = r {
                tracing::warn!("cannot record progress of run {run}: {e}");
            }
        }
        if self.bar {
            let width = 30;
            let filled = (done * width).checked_div(total).unwrap_or(width);
            let mut err = std::io::stderr();
            let _ = write!(
                err,
                "\r{} [{}{}] {done}/{total} {}",
                self.label,
                "#".repeat(filled),
                ".".repeat(width - filled),
                self.unit
            );
            if finished {
                let _ = writeln!(err);
            }
            let _ = err.flush();
        }
    }
}
