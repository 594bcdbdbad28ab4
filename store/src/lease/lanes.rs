//! The loop of a process that runs queued jobs (`clues-lab worker`, the server's crowd-platform
//! calls): one lane per kind of job, each a [`Runner`] (which of its kind's jobs it may claim
//! now, how it runs one) over a [`Worker`] of that kind; [`serve`] has no code of any kind's own.

use super::stop::{stopped_waiting, Stop};
use super::worker::Worker;
use super::{Clock, Held, JobKind};
use crate::error::{Error, Result};
use sqlx::AnyPool;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// A held job's key, as its runner reads it.
pub type KeyOf<R> = <<R as Runner>::Kind as JobKind>::Key;

/// How a kind of job is run: implemented once per kind, beside what the job does (the model
/// track's grids, seeds and upstream learning in `learners`, the crowd platforms' calls in
/// `platforms`).
pub trait Runner: Send + 'static {
    type Kind: JobKind + Send + Sync;
    /// What a run made, as the worker reports it.
    type Out: Send;
    /// The kind's jobs this runner may claim now (queued, or held under a lease that may run
    /// out), read on `clock`.
    fn open(
        &mut self,
        pool: &AnyPool,
        clock: &Clock,
    ) -> impl Future<Output = Result<Vec<i64>>> + Send;
    /// Runs a held job until its result is stored with the job marked done
    /// (`lease::complete`); `lost()` tells whether a renewal found the lease taken over. An
    /// `Error::Unfit` hands the job back for another machine; `Error::Later` hands it back to
    /// be tried again (the runner's `open` says when); any other error fails it.
    fn run<'a>(
        &'a self,
        pool: &'a AnyPool,
        held: &'a Held<KeyOf<Self>>,
        lost: Lost,
    ) -> impl Future<Output = Result<Self::Out>> + Send + 'a;
    /// Whether some of the kind's jobs are unfinished but not claimable yet (put off after a
    /// passing fault): a loop that ends when idle waits for them.
    fn waiting(
        &self,
        _pool: &AnyPool,
        _clock: &Clock,
    ) -> impl Future<Output = Result<bool>> + Send {
        std::future::ready(Ok(false))
    }
    /// Says what a run made.
    fn report(&self, out: Self::Out);
    /// This machine cannot run `held` (`why`): the runner stops taking what it belongs to, and
    /// names it ("Onnx jobs"); `false` where it takes nothing any more.
    fn unfit(&mut self, held: &Held<KeyOf<Self>>) -> (String, bool);
}

/// Whether a renewal found the held job's lease taken over.
pub type Lost = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// How one lane's try ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Turn {
    /// Nothing was claimable now; `open`: some of the lane's jobs are unfinished.
    Nothing { open: bool },
    /// A job was run and settled: done or failed (said and marked on the job).
    Settled,
    /// A job met a passing fault and was handed back to be tried again later.
    Again,
    /// A signal came: the job was handed back; the signal's exit status.
    Stopped(i32),
    /// This machine cannot run what the job belongs to: the job was handed back, and the lane
    /// takes none of it from now on (`left`: whether it takes anything at all).
    Unfit { left: bool },
}

/// A kind's runner with its worker, as the loop sees it.
pub trait Lane: Send {
    /// One try: claim a job of the lane and run it to its end.
    fn turn<'a>(
        &'a mut self,
        stop: &'a mut Stop,
    ) -> Pin<Box<dyn Future<Output = Result<Turn>> + Send + 'a>>;
}

/// A runner and a worker of its kind.
pub struct KindLane<R: Runner> {
    pub runner: R,
    pub worker: Worker<R::Kind>,
    clock: Clock,
}

impl<R: Runner> KindLane<R> {
    /// `runner`'s lane, claiming under leases of `lease` read on `clock`.
    pub fn new(pool: &AnyPool, runner: R, lease: Duration, clock: Clock) -> Box<Self> {
        let worker = Worker::new(pool, Vec::new(), lease).with_clock(clock.clone());
        Box::new(KindLane {
            runner,
            worker,
            clock,
        })
    }

    async fn try_one(&mut self, stop: &mut Stop) -> Result<Turn> {
        let pool = self.worker.pool().clone();
        let open = self.runner.open(&pool, &self.clock).await?;
        let any = !open.is_empty();
        self.worker.set_jobs(open);
        let Some(held) = self.worker.claim().await? else {
            let waiting = self.runner.waiting(&pool, &self.clock).await?;
            return Ok(Turn::Nothing {
                open: any || waiting,
            });
        };
        let lost: Lost = std::sync::Arc::new(self.worker.lost_flag());
        let name = R::Kind::name(held.lease.job, &held.key);
        let started = Instant::now();
        let me = self.worker.name.clone();
        match stop.or(self.runner.run(&pool, &held, lost)).await {
            Err((signal, status)) => {
                eprintln!("{}", self.worker.hand_back(&held, signal).await?);
                Ok(Turn::Stopped(status))
            }
            Ok(Err(Error::Unfit(why))) => {
                let said = format!(
                    "worker {me} cannot run {name} on its machine ({why}) and handed it back to the queue"
                );
                if self.worker.release(&held, &said).await? {
                    eprintln!("{said}");
                } else {
                    eprintln!("worker {me}: {name} was no longer its own ({why})");
                }
                let (what, left) = self.runner.unfit(&held);
                eprintln!("worker {me}: leaves {what} to other machines from now on");
                Ok(Turn::Unfit { left })
            }
            Ok(Err(Error::Later(why))) => {
                let said = format!("{name} will be tried again: {why}");
                if self.worker.release(&held, &said).await? {
                    eprintln!("worker {me}: {said}");
                }
                Ok(Turn::Again)
            }
            Ok(result) => {
                match self.worker.settle(&held, result).await {
                    Ok(Some(out)) => {
                        self.runner.report(out);
                        let took = started.elapsed().as_secs_f64();
                        eprintln!("{name}: done by {me} in {took:.3} s");
                    }
                    Ok(None) => {}
                    Err(e) => eprintln!("{name}: failed: {e}"),
                }
                Ok(Turn::Settled)
            }
        }
    }
}

impl<R: Runner> Lane for KindLane<R> {
    fn turn<'a>(
        &'a mut self,
        stop: &'a mut Stop,
    ) -> Pin<Box<dyn Future<Output = Result<Turn>> + Send + 'a>> {
        Box::pin(self.try_one(stop))
    }
}

/// How a process's loop ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Nothing was left to take (`exit_when_idle`), after this many jobs.
    Idle { jobs: usize },
    /// A signal stopped it: the exit status a shell gives that signal (143 for SIGTERM, 130
    /// for SIGINT).
    Stopped { status: i32 },
}

/// How the loop waits and ends.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// How long a loop with nothing to claim waits before it looks again.
    pub poll: Duration,
    /// End once no lane has an unfinished job (a Slurm array, a Kubernetes Job, a command
    /// that runs what it queued); else wait for new jobs.
    pub exit_when_idle: bool,
}

/// Claims and runs job after job from `lanes`, the first lane with a claimable job first (so
/// a lane listed earlier goes before one listed later), until a signal stops it or, with
/// `exit_when_idle`, nothing is left. A lane whose machine cannot run its jobs is dropped; an
/// error when none is left.
pub async fn serve(
    mut lanes: Vec<Box<dyn Lane>>,
    stop: &mut Stop,
    pace: Pace,
    me: &str,
) -> Result<Ended> {
    let mut jobs = 0;
    'tries: loop {
        let mut open = false;
        let mut i = 0;
        while i < lanes.len() {
            match lanes[i].turn(stop).await? {
                Turn::Nothing { open: o } => open |= o,
                Turn::Settled => {
                    jobs += 1;
                    continue 'tries;
                }
                Turn::Again => continue 'tries,
                Turn::Stopped(status) => return Ok(Ended::Stopped { status }),
                Turn::Unfit { left } => {
                    if !left {
                        lanes.remove(i);
                    }
                    if lanes.is_empty() {
                        return Err(Error::Unfit(format!(
                            "worker {me} can run none of its kinds of job on this machine any more"
                        )));
                    }
                    continue 'tries;
                }
            }
            i += 1;
        }
        // Nothing to claim now: other workers hold what is left, or nothing is left.
        if pace.exit_when_idle && !open {
            eprintln!("worker {me}: no job left; {jobs} run here");
            return Ok(Ended::Idle { jobs });
        }
        if let Err((signal, status)) = stop.or(tokio::time::sleep(pace.poll)).await {
            eprintln!("{}", stopped_waiting(me, signal));
            return Ok(Ended::Stopped { status });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A lane that answers its turns from a script, and writes its name when it runs a job.
    struct Scripted {
        name: &'static str,
        turns: Vec<Turn>,
        log: Arc<Mutex<Vec<&'static str>>>,
    }

    impl Lane for Scripted {
        fn turn<'a>(
            &'a mut self,
            _: &'a mut Stop,
        ) -> Pin<Box<dyn Future<Output = Result<Turn>> + Send + 'a>> {
            let turn = if self.turns.is_empty() {
                Turn::Nothing { open: false }
            } else {
                self.turns.remove(0)
            };
            if !matches!(turn, Turn::Nothing { .. }) {
                self.log.lock().unwrap().push(self.name);
            }
            Box::pin(async move { Ok(turn) })
        }
    }

    fn lane(
        name: &'static str,
        turns: Vec<Turn>,
        log: &Arc<Mutex<Vec<&'static str>>>,
    ) -> Box<dyn Lane> {
        Box::new(Scripted {
            name,
            turns,
            log: log.clone(),
        })
    }

    const IDLE: Pace = Pace {
        poll: Duration::from_millis(1),
        exit_when_idle: true,
    };

    #[tokio::test]
    async fn earlier_lanes_go_first_and_the_loop_ends_when_nothing_is_left() {
        let log = Arc::default();
        let lanes = vec![
            lane("grid", vec![Turn::Settled, Turn::Again], &log),
            lane("seeds", vec![Turn::Settled], &log),
        ];
        let ended = serve(lanes, &mut Stop::new().unwrap(), IDLE, "host:1").await;
        // A job handed back to be tried again is not counted as run.
        assert_eq!(ended, Ok(Ended::Idle { jobs: 2 }));
        assert_eq!(*log.lock().unwrap(), ["grid", "grid", "seeds"]);
    }

    #[tokio::test]
    async fn a_lane_this_machine_cannot_run_is_left_and_none_left_is_an_error() {
        let log = Arc::default();
        let lanes = vec![
            lane(
                "grid",
                vec![Turn::Unfit { left: true }, Turn::Unfit { left: false }],
                &log,
            ),
            lane(
                "seeds",
                vec![Turn::Settled, Turn::Unfit { left: false }],
                &log,
            ),
        ];
        let ended = serve(lanes, &mut Stop::new().unwrap(), IDLE, "host:1").await;
        assert!(matches!(ended, Err(Error::Unfit(_))), "{ended:?}");
        assert_eq!(*log.lock().unwrap(), ["grid", "grid", "seeds", "seeds"]);
    }

    #[tokio::test]
    async fn a_signal_ends_the_loop_with_its_status_and_open_jobs_keep_it_waiting() {
        let log = Arc::default();
        let lanes = vec![lane(
            "grid",
            vec![Turn::Nothing { open: true }, Turn::Stopped(143)],
            &log,
        )];
        let ended = serve(lanes, &mut Stop::new().unwrap(), IDLE, "host:1").await;
        assert_eq!(ended, Ok(Ended::Stopped { status: 143 }));
    }
}
