//! One held job's turn in a worker: run until it settles or a signal comes (the job handed
//! back), or until it finds that this machine cannot run it (handed back for another machine).

use super::{Ended, JobKind};
use crate::jobs::lease::Worker;
use crate::jobs::stop::Stop;
use std::future::Future;
use std::time::Instant;
use store::error::{Error, Result};
use store::lease::Held;

/// How a held job's turn ended.
pub(super) enum Turn {
    /// Done or failed (said and marked on the job).
    Settled,
    /// A signal came: the job was handed back; the signal's exit status.
    Stopped(i32),
    /// This machine cannot run the job's kind (`Error::Unfit`): the job was handed back.
    Unfit,
}

impl Turn {
    /// Counts a settled job; leaves `kind` to other machines after an unfit one (an error when
    /// no kind is left); the way the worker ends after a signal.
    pub(super) fn count(
        self,
        kind: JobKind,
        kinds: &mut Vec<JobKind>,
        jobs: &mut usize,
        me: &str,
    ) -> Result<Option<Ended>> {
        match self {
            Turn::Settled => *jobs += 1,
            Turn::Stopped(status) => return Ok(Some(Ended::Stopped { status })),
            Turn::Unfit => {
                kinds.retain(|k| *k != kind);
                eprintln!("worker {me}: leaves {kind:?} jobs to other machines from now on");
                if kinds.is_empty() {
                    return Err(Error::Unfit(format!(
                        "worker {me} can run none of its kinds of job on this machine any more"
                    )));
                }
            }
        }
        Ok(None)
    }
}

/// Runs a held job until it settles (its result reported, or its failure said and marked on
/// the job) or a signal comes: then the job is handed back and the signal's exit status
/// answered. A job this machine cannot run (`Error::Unfit`) is handed back too, not failed,
/// with the worker's name and why: another worker can run it.
pub(super) async fn run_one<Q: store::lease::JobKind, T>(
    w: &mut Worker<Q>,
    held: &Held<Q::Key>,
    stop: &mut Stop,
    work: impl Future<Output = Result<T>>,
    report: impl FnOnce(T),
) -> Result<Turn> {
    let name = Q::name(held.lease.job, &held.key);
    let started = Instant::now();
    match stop.or(work).await {
        Err((signal, status)) => {
            eprintln!("{}", w.hand_back(held, signal).await?);
            Ok(Turn::Stopped(status))
        }
        Ok(Err(Error::Unfit(why))) => {
            let said = format!(
                "worker {} cannot run {name} on its machine ({why}) and handed it back to the queue",
                w.name
            );
            if !w.release(held, &said).await? {
                eprintln!("worker {}: {name} was no longer its own ({why})", w.name);
            } else {
                eprintln!("{said}");
            }
            Ok(Turn::Unfit)
        }
        Ok(result) => {
            match w.settle(held, result).await {
                Ok(Some(v)) => {
                    report(v);
                    let took = started.elapsed().as_secs_f64();
                    eprintln!("{name}: done by {} in {took:.3} s", w.name);
                }
                Ok(None) => {}
                Err(e) => eprintln!("{name}: failed: {e}"),
            }
            Ok(Turn::Settled)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_this_machine_cannot_run_is_left_and_no_kind_left_ends_the_worker() {
        let (mut kinds, mut jobs) = (vec![JobKind::Onnx, JobKind::Crossfit], 0);
        let count = |t: Turn, k, kinds: &mut Vec<JobKind>, jobs: &mut usize| {
            t.count(k, kinds, jobs, "host:1")
        };
        assert_eq!(
            count(Turn::Settled, JobKind::Onnx, &mut kinds, &mut jobs),
            Ok(None)
        );
        assert_eq!(jobs, 1);
        assert_eq!(
            count(Turn::Unfit, JobKind::Onnx, &mut kinds, &mut jobs),
            Ok(None)
        );
        assert_eq!((kinds.clone(), jobs), (vec![JobKind::Crossfit], 1));
        let ended = count(Turn::Unfit, JobKind::Crossfit, &mut kinds, &mut jobs);
        assert!(matches!(ended, Err(Error::Unfit(_))), "{ended:?}");
        assert_eq!(
            count(Turn::Stopped(143), JobKind::Onnx, &mut kinds, &mut jobs),
            Ok(Some(Ended::Stopped { status: 143 }))
        );
    }
}
