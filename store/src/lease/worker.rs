//! A worker's hold on the queue's jobs: it claims the next one under a lease it renews every
//! quarter of the lease, and stores a job only while it still holds it; every kind of job
//! ([`JobKind`]: the CLUES grids, CrossFit's seeds and upstream learning, the crowd platforms'
//! calls) shares this one worker.

use super::stop::{handed_back, stopped_waiting, Stop};
use super::{fail, lost_why, renew, Clock, Held, JobKind, Lease};
use crate::error::{Error, Result};
use sqlx::AnyPool;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// This worker process, as other workers and the machines page see it: host and process id.
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
    pub fn start(pool: &AnyPool, held: &Lease, lease: Duration) -> Heartbeat {
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
                        tracing::warn!(
                            "cannot renew the lease on {} job {}: {e}",
                            held.queue.as_str(),
                            held.job
                        )
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

/// One worker's turn through a queue's jobs: the next job it claims, with its lease renewed
/// until the job is settled; waits while other workers hold the rest, ends when nothing is
/// unfinished.
pub struct Worker<Q: JobKind> {
    pool: AnyPool,
    jobs: Vec<i64>,
    lease: Duration,
    pub name: String,
    beat: Option<Heartbeat>,
    /// The signals that hand the held job back and end the command ([`Self::on_signals`]).
    stop: Option<Stop>,
    /// The clock its leases are taken and renewed by ([`Self::with_clock`]).
    clock: Clock,
    queue: std::marker::PhantomData<Q>,
}

impl<Q: JobKind> Worker<Q> {
    pub fn new(pool: &AnyPool, jobs: Vec<i64>, lease: Duration) -> Worker<Q> {
        Worker {
            queue: std::marker::PhantomData,
            pool: pool.clone(),
            jobs,
            lease,
            name: worker_name(),
            beat: None,
            stop: None,
            clock: Clock::System,
        }
    }

    /// The same worker on `clock` (a test's, which moves only when told): its claims, the
    /// leases' ends and their renewals are read from it.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// A command's worker (`baseline --finetune`, `eval --plan`, `crossfit learn`): from now
    /// on, Ctrl-C or SIGTERM while it waits for a job or runs one ([`Self::next`],
    /// [`Self::hold`]) hands the job back to the queue at once and ends the command with
    /// `Error::Stopped`, as `clues-lab worker` does; without it, the job stayed held until its
    /// lease ran out, and a fine-tuned model's temporary folder stayed on disk.
    pub fn on_signals(mut self) -> Result<Self> {
        self.stop = Some(Stop::new()?);
        Ok(self)
    }

    /// The next job this worker holds, or `None` when every job is done or failed.
    pub async fn next(&mut self) -> Result<Option<Held<Q::Key>>> {
        let Some(mut stop) = self.stop.take() else {
            return self.next_job().await;
        };
        let next = stop.or(self.next_job()).await;
        self.stop = Some(stop);
        next.unwrap_or_else(|(signal, status)| {
            Err(Error::Stopped {
                said: stopped_waiting(&self.name, signal),
                status,
            })
        })
    }

    /// `work` on the held job; where a signal comes first ([`Self::on_signals`]), `work` is
    /// dropped, the job handed back and `Error::Stopped` answered.
    pub async fn hold<T>(
        &mut self,
        held: &Held<Q::Key>,
        work: impl std::future::Future<Output = Result<T>>,
    ) -> Result<Result<T>> {
        let Some(mut stop) = self.stop.take() else {
            return Ok(work.await);
        };
        let done = stop.or(work).await;
        self.stop = Some(stop);
        let (signal, status) = match done {
            Ok(result) => return Ok(result),
            Err(stopped) => stopped,
        };
        let said = self.hand_back(held, signal).await?;
        Err(Error::Stopped { said, status })
    }

    /// Hands the held job back to the queue because `signal` stopped this worker (the reason
    /// stored as the job's error); what to say of it.
    pub async fn hand_back(&mut self, held: &Held<Q::Key>, signal: &str) -> Result<String> {
        let job = Q::name(held.lease.job, &held.key);
        let why = handed_back(&self.name, signal, &job, true);
        let released = self.release(held, &why).await?;
        Ok(handed_back(&self.name, signal, &job, released))
    }

    async fn next_job(&mut self) -> Result<Option<Held<Q::Key>>> {
        loop {
            if let Some(held) = self.claim().await? {
                return Ok(Some(held));
            }
            if super::unfinished::<Q>(&self.pool, &self.jobs).await?.0 == 0 {
                return Ok(None);
            }
            // Other workers hold the rest: wait until they finish or a lease runs out.
            tokio::time::sleep(self.lease / 4).await;
        }
    }

    /// One try at a claim: a job this worker now holds, its lease renewed until it is settled,
    /// or `None` when no job is claimable now.
    pub async fn claim(&mut self) -> Result<Option<Held<Q::Key>>> {
        let terms = (self.lease, &self.clock);
        let Some(held) = super::claim::<Q>(&self.pool, &self.jobs, &self.name, terms).await? else {
            return Ok(None);
        };
        if let Some(lost) = &held.lease.took_over_from {
            eprintln!(
                "{}: taken over from {lost}, whose lease ran out",
                Q::name(held.lease.job, &held.key)
            );
        }
        self.beat = Some(Heartbeat::start(&self.pool, &held.lease, self.lease));
        Ok(Some(held))
    }

    /// The pool it claims through.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The jobs this worker claims from, from now on.
    pub fn set_jobs(&mut self, jobs: Vec<i64>) {
        self.jobs = jobs;
    }

    /// Hands the held job back to the queue as this worker stops, saying `why`; the renewals
    /// stop. `false` when the job was no longer this worker's.
    pub async fn release(&mut self, held: &Held<Q::Key>, why: &str) -> Result<bool> {
        self.beat = None;
        super::release::<Q>(&self.pool, held, why).await
    }

    /// Ends the held job's turn: its result, or `None` when the lease was lost (to another
    /// worker, which stores the job, or to a cancel from the machines page: said which), or the
    /// error. The job is marked failed on any error, where this worker still holds it.
    pub async fn settle<T>(&mut self, held: &Held<Q::Key>, result: Result<T>) -> Result<Option<T>> {
        self.beat = None;
        match result {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                fail(&self.pool, &held.lease, &e.to_string()).await?;
                match e {
                    Error::LeaseLost(why) => {
                        eprintln!("{}", lost_why(&self.pool, &held.lease, why).await);
                        Ok(None)
                    }
                    e => Err(e),
                }
            }
        }
    }

    /// [`Self::lost`] for the job held now, as a test that does not borrow the worker.
    pub fn lost_flag(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let flag = self.beat.as_ref().map(|b| b.lost.clone());
        move || flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Whether a renewal of the held job's lease found it taken over by another worker.
    pub fn lost(&self) -> bool {
        self.beat.as_ref().is_some_and(Heartbeat::lost)
    }

    /// The jobs not finished yet and their shots (for an estimate of the time left).
    pub async fn left(&self) -> Result<(i64, i64)> {
        super::unfinished::<Q>(&self.pool, &self.jobs).await
    }
}
