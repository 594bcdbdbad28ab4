//! `clues-lab worker`: one process that runs every kind of queued job (the CLUES grids' frozen
//! baseline, fine-tuning, ONNX evaluations, prompt-based fine-tuning and in-context learning;
//! CrossFit's fine-tuning and upstream learning) from the recipe each job carries, beside any number of others on any
//! machine pointed at the database. On SIGTERM or Ctrl-C it hands its job back and stops.

use crate::crossfit;
use crate::crossfit::upstream_job as upstream;
use crate::jobs::grid::{self, JobRecipe, Learner};
use crate::jobs::lease::Worker;
use crate::jobs::stop::{stopped_waiting, Stop};
use crate::jobs::{self, Summary};
use crate::runtime::Device;
use domain::wire::machine::WORKER_BEAT_MS;
use needs::Machine;
use sqlx::AnyPool;
use std::time::Duration;
use store::crossfit::jobs as xf_jobs;
use store::crossfit::jobs::SeedKind;
use store::crossfit::upstream as up_jobs;
use store::crossfit::upstream::UpstreamKind;
use store::db::cli as db;
use store::error::{Error, Result};
use store::machine::grid::GridKind;
use store::machine::workers;
use turn::run_one;

pub mod needs;
mod turn;

/// The kinds of job a worker takes (`--kinds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum JobKind {
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

impl JobKind {
    const ALL: [JobKind; 7] = [
        JobKind::FrozenBaseline,
        JobKind::FineTuning,
        JobKind::Onnx,
        JobKind::Prompt,
        JobKind::InContext,
        JobKind::Crossfit,
        JobKind::CrossfitUpstream,
    ];

    /// The kind as `--kinds` names it.
    fn flag(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .map_or_else(|| format!("{self:?}"), |v| v.get_name().to_string())
    }

    fn of(l: &Learner) -> JobKind {
        match l {
            Learner::FrozenBaseline => JobKind::FrozenBaseline,
            Learner::FineTuning { .. } => JobKind::FineTuning,
            Learner::Onnx => JobKind::Onnx,
            Learner::Prompt { .. } => JobKind::Prompt,
            Learner::InContext { .. } => JobKind::InContext,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// The kinds of job this worker takes, comma-separated [default: every kind].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub kinds: Vec<JobKind>,
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

/// How a worker ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Nothing was left to take (`--exit-when-idle`), after this many jobs.
    Idle { jobs: usize },
    /// A signal stopped it: the exit status a shell gives that signal (143 for SIGTERM, 130
    /// for SIGINT).
    Stopped { status: i32 },
}

/// The grid jobs a worker of `kinds` can run now (queued or held, with a recipe it knows).
async fn grid_jobs(pool: &AnyPool, kinds: &[JobKind]) -> Result<Vec<(i64, JobRecipe)>> {
    let mut out = Vec::new();
    for (id, json) in grid::runnable(pool).await? {
        match JobRecipe::parse(&json) {
            Ok(r) if kinds.contains(&JobKind::of(&r.learner)) => out.push((id, r)),
            Ok(_) => {}
            Err(e) => tracing::warn!("grid job {id} skipped: {e}"),
        }
    }
    Ok(out)
}

/// Runs one held grid job by its recipe, with this worker's device: fine-tunes, trains the
/// frozen baseline's heads or evaluates, and stores the runs with the job marked done.
async fn run_grid_job(
    pool: &AnyPool,
    held: &grid::Held,
    recipe: &JobRecipe,
    device: Device,
    lease: Duration,
) -> Result<Vec<Summary>> {
    let o = grid::GridRun {
        replace: recipe.replace,
        export: None,
        device,
        bar: false,
        lease,
        queue_only: false,
    };
    match &recipe.learner {
        Learner::FrozenBaseline => jobs::baseline_held(pool, held, &o).await,
        Learner::Onnx => Ok(vec![jobs::evaluate_held(pool, held, &o).await?]),
        Learner::InContext {
            endpoint,
            model,
            max_tokens,
            timeout_seconds,
            concurrency,
        } => {
            let (system, task, _) = grid::job_target(pool, held.lease.job).await?;
            let a = crate::icl::IclArgs {
                endpoint: endpoint.clone(),
                model: model.clone(),
                task,
                k: held.k,
                split: held.split,
                system: Some(system),
                max_tokens: *max_tokens,
                timeout_seconds: *timeout_seconds,
                replace: recipe.replace,
                concurrency: *concurrency,
            };
            Ok(vec![crate::icl::run(pool, &a, Some(held)).await?])
        }
        Learner::Prompt {
            weights,
            template,
            verbaliser,
            steps,
        } => {
            let (system, task, _) = grid::job_target(pool, held.lease.job).await?;
            let a = jobs::PromptArgs {
                weights: weights.clone(),
                task,
                k: Some(held.k),
                split: Some(held.split),
                template: template.clone(),
                verbaliser: verbaliser.clone(),
                system: Some(system),
                steps: *steps,
                replace: recipe.replace,
                device,
            };
            Ok(vec![jobs::prompt_held(pool, &a, held).await?])
        }
        Learner::FineTuning { weights } => {
            let (system, ..) = grid::job_target(pool, held.lease.job).await?;
            let start = crate::tune::Start::new(Some(weights.clone()), Some(system))?;
            Ok(vec![jobs::tune_held(pool, &start, held, &o).await?])
        }
    }
}

/// `clues-lab worker`: checks its machine, then claims job after job of the `--kinds` it can
/// run until stopped (or, with `--exit-when-idle`, until none is left), each run from its
/// recipe, its lease renewed while it runs; it is listed as a live worker meanwhile. A job
/// that fails is marked failed, with why, and the worker goes on; one the machine cannot run
/// is handed back.
pub async fn work(database: &str, a: WorkerArgs) -> Result<Ended> {
    let asked = if a.kinds.is_empty() {
        JobKind::ALL.to_vec()
    } else {
        a.kinds.clone()
    };
    let me = crate::jobs::lease::worker_name();
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

/// Claims and runs job after job of `kinds` (see [`work`]) until stopped or idle.
async fn serve(pool: AnyPool, a: &WorkerArgs, mut kinds: Vec<JobKind>, me: &str) -> Result<Ended> {
    let lease = Duration::from_secs(a.lease_seconds);
    let mut grids: Worker<GridKind> = Worker::new(&pool, Vec::new(), lease);
    let mut seeds: Worker<SeedKind> = Worker::new(&pool, Vec::new(), lease);
    let mut upstreams: Worker<UpstreamKind> = Worker::new(&pool, Vec::new(), lease);
    let mut stop = Stop::new()?;
    let mut jobs = 0;
    loop {
        let open = grid_jobs(&pool, &kinds).await?;
        grids.set_jobs(open.iter().map(|(id, _)| *id).collect());
        if let Some(held) = grids.claim().await? {
            // A job claimed from the list is in it.
            let Some((_, recipe)) = open.iter().find(|(id, _)| *id == held.lease.job) else {
                continue;
            };
            let run = run_grid_job(&pool, &held, recipe, a.device, lease);
            let report = |done: Vec<Summary>| done.iter().for_each(|s| println!("{}", s.render()));
            let turn = run_one(&mut grids, &held, &mut stop, run, report).await?;
            let kind = JobKind::of(&recipe.learner);
            if let Some(ended) = turn.count(kind, &mut kinds, &mut jobs, me)? {
                return Ok(ended);
            }
            continue;
        }
        let open_seeds = if kinds.contains(&JobKind::Crossfit) {
            xf_jobs::runnable(&pool).await?
        } else {
            Vec::new()
        };
        seeds.set_jobs(open_seeds.clone());
        if let Some(held) = seeds.claim().await? {
            let lost = seeds.lost_flag();
            let run = crossfit::run_held(&pool, &held, a.device, &lost);
            let turn = run_one(&mut seeds, &held, &mut stop, run, |()| {}).await?;
            if let Some(ended) = turn.count(JobKind::Crossfit, &mut kinds, &mut jobs, me)? {
                return Ok(ended);
            }
            continue;
        }
        // Upstream learning last: the seeds it queues are claimed first once it is done.
        let open_upstream = if kinds.contains(&JobKind::CrossfitUpstream) {
            up_jobs::runnable(&pool).await?
        } else {
            Vec::new()
        };
        upstreams.set_jobs(open_upstream.clone());
        if let Some(held) = upstreams.claim().await? {
            let lost = upstreams.lost_flag();
            let run = upstream::run_held(&pool, &held, a.device, &lost);
            let turn = run_one(&mut upstreams, &held, &mut stop, run, |()| {}).await?;
            let kind = JobKind::CrossfitUpstream;
            if let Some(ended) = turn.count(kind, &mut kinds, &mut jobs, me)? {
                return Ok(ended);
            }
            continue;
        }
        // Nothing to claim now: other workers hold what is left, or nothing is left.
        let idle = open.is_empty() && open_seeds.is_empty() && open_upstream.is_empty();
        if a.exit_when_idle && idle {
            eprintln!("worker {me}: no job left; {jobs} run here");
            return Ok(Ended::Idle { jobs });
        }
        let wait = tokio::time::sleep(Duration::from_secs(a.poll_seconds));
        if let Err((signal, status)) = stop.or(wait).await {
            eprintln!("{}", stopped_waiting(me, signal));
            return Ok(Ended::Stopped { status });
        }
    }
}
