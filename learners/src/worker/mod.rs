//! `clues-lab worker`: one process that runs every kind of queued job (the CLUES grids' frozen
//! baseline, fine-tuning, ONNX evaluations, prompt-based fine-tuning and in-context learning;
//! CrossFit's fine-tuning and upstream learning) from the recipe each job carries, beside any number of others on any
//! machine pointed at the database. On SIGTERM or Ctrl-C it hands its job back and stops.

use crate::jobs::grid::{self, Learner};
use crate::runtime::Device;
use domain::wire::machine::WORKER_BEAT_MS;
use needs::Machine;
use runners::{GridRunner, SeedRunner, UpstreamRunner};
use sqlx::AnyPool;
use std::time::Duration;
use store::db::cli as db;
use store::error::{Error, Result};
use store::lease::lanes::{self, KindLane, Lane, Pace};
use store::lease::stop::Stop;
use store::lease::Clock;
use store::machine::workers;

pub use store::lease::lanes::Ended;

pub mod needs;
mod runners;

/// The kinds of work a worker takes (`--kinds`): the grids' learners one by one (each needs
/// its own of the machine), CrossFit's seeds and upstream learning. Each is run by its queue's
/// runner (`runners`); the queues themselves are `store::lease::Queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Work {
    /// The frozen MiniLM baseline's heads (`baseline`).
    FrozenBaseline,
    /// Fine-tuning of an encoder on a shot group (`baseline --finetune`).
    FineTuning,
    /// An ONNX model folder evaluated (`eval --plan`).
    Onnx,
    /// Prompt-based fine-tuning of an encoder with its masked-LM head (`prompt`).
    Prompt,
    /// In-context learning through a language-model server (`icl`).
    InContext,
    /// CrossFit's direct fine-tuning of a task's seed (`crossfit learn`, `crossfit upstream`).
    Crossfit,
    /// CrossFit's upstream learning of a partition, queued from the machines page (its test
    /// tasks' seeds are then `crossfit` jobs).
    CrossfitUpstream,
}

impl Work {
    const ALL: [Work; 7] = [
        Work::FrozenBaseline,
        Work::FineTuning,
        Work::Onnx,
        Work::Prompt,
        Work::InContext,
        Work::Crossfit,
        Work::CrossfitUpstream,
    ];

    /// The kind as `--kinds` names it.
    fn flag(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .map_or_else(|| format!("{self:?}"), |v| v.get_name().to_string())
    }

    fn of(l: &Learner) -> Work {
        match l {
            Learner::FrozenBaseline => Work::FrozenBaseline,
            Learner::FineTuning { .. } => Work::FineTuning,
            Learner::Onnx => Work::Onnx,
            Learner::Prompt { .. } => Work::Prompt,
            Learner::InContext { .. } => Work::InContext,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// The kinds of job this worker takes, comma-separated [default: every kind].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub kinds: Vec<Work>,
    /// Where it runs models: auto, cpu or cuda (with the `cuda` build). What each kind needs
    /// of the machine (this device, ONNX Runtime, the baseline's encoder) is checked before any
    /// job is claimed: the worker takes only the kinds it can run.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
    /// Stop once no job it takes is queued or held by another worker (for a Slurm job array or
    /// a Kubernetes Job); without it the worker waits for new jobs.
    #[arg(long)]
    pub exit_when_idle: bool,
    /// How long a claimed job stays this worker's without a renewal (it renews four times as
    /// often); a job whose worker died is taken over after this.
    #[arg(long, default_value_t = grid::LEASE.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
    /// How often a worker with nothing to claim looks again.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub poll_seconds: u64,
}

/// `clues-lab worker`: checks its machine, then claims job after job of the `--kinds` it can
/// run until stopped (or, with `--exit-when-idle`, until none is left), each run from its
/// recipe, its lease renewed while it runs; it is listed as a live worker meanwhile. A job
/// that fails is marked failed, with why, and the worker goes on; one the machine cannot run
/// is handed back.
pub async fn work(database: &str, a: WorkerArgs) -> Result<Ended> {
    let asked = if a.kinds.is_empty() {
        Work::ALL.to_vec()
    } else {
        a.kinds.clone()
    };
    let me = store::lease::worker_name();
    let (device, probe) = (a.device, asked.clone());
    let (fit, on) = tokio::task::spawn_blocking(move || {
        let machine = Machine::probe(device, &probe);
        let fit = machine.fit(&probe);
        let on = machine.devices(&fit.takes);
        (fit, on)
    })
    .await
    .map_err(|e| Error::Model(format!("the worker's checks stopped: {e}")))?;
    for (kind, why) in &fit.leaves {
        eprintln!("worker {me}: leaves {kind:?} jobs to other machines: {why}");
    }
    if fit.takes.is_empty() {
        return Err(Error::Unfit(format!(
            "this machine can run none of the kinds of job asked for: {}",
            fit.leaves
                .iter()
                .map(|(kind, why)| format!("{kind:?}: {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let pool = db::connect_existing(database).await?;
    let names: Vec<String> = fit.takes.iter().map(|k| k.flag()).collect();
    let host = me.rsplit_once(':').map_or(me.as_str(), |(host, _)| host);
    let arrival = workers::Arrival {
        name: &me,
        host,
        kinds: &names,
        device: &on,
    };
    workers::arrived(&pool, arrival).await?;
    // Signs of life while it runs, waiting or on a job; the page lists it by them.
    let beat = tokio::spawn({
        let (pool, me) = (pool.clone(), me.clone());
        async move {
            let every = Duration::from_millis(WORKER_BEAT_MS as u64);
            loop {
                tokio::time::sleep(every).await;
                if let Err(e) = workers::seen(&pool, &me).await {
                    tracing::warn!("worker {me}: its sign of life was not written: {e}");
                }
            }
        }
    });
    eprintln!("worker {me}: takes {:?} jobs; {on}", fit.takes);
    let ended = serve(pool.clone(), &a, fit.takes, &me).await;
    beat.abort();
    if let Err(e) = workers::ended(&pool, &me).await {
        tracing::warn!("worker {me}: its end was not written: {e}");
    }
    ended
}

/// Claims and runs job after job of `kinds` (see [`work`]) until stopped or idle: the grids
/// first, then CrossFit's seeds, then upstream learning (the seeds it queues are claimed first
/// once it is done).
async fn serve(pool: AnyPool, a: &WorkerArgs, kinds: Vec<Work>, me: &str) -> Result<Ended> {
    let lease = Duration::from_secs(a.lease_seconds);
    let device = a.device;
    let grid: Vec<Work> = kinds
        .iter()
        .copied()
        .filter(|k| !matches!(k, Work::Crossfit | Work::CrossfitUpstream))
        .collect();
    let mut lanes: Vec<Box<dyn Lane>> = Vec::new();
    let clock = Clock::System;
    if !grid.is_empty() {
        let runner = GridRunner::new(grid, device, lease);
        lanes.push(KindLane::new(&pool, runner, lease, clock.clone()));
    }
    if kinds.contains(&Work::Crossfit) {
        lanes.push(KindLane::new(
            &pool,
            SeedRunner { device },
            lease,
            clock.clone(),
        ));
    }
    if kinds.contains(&Work::CrossfitUpstream) {
        let runner = UpstreamRunner { device };
        lanes.push(KindLane::new(&pool, runner, lease, clock));
    }
    let pace = Pace {
        poll: Duration::from_secs(a.poll_seconds),
        exit_when_idle: a.exit_when_idle,
    };
    lanes::serve(lanes, &mut Stop::new()?, pace, me).await
}
