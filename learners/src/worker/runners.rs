//! The model track's kinds of job as a worker runs them (`store::lease::lanes::Runner`): the
//! CLUES grids by each job's recipe, CrossFit's seeds, and upstream learning.

use super::Work;
use crate::crossfit;
use crate::crossfit::upstream_job as upstream;
use crate::jobs::grid::{self, JobRecipe, Learner};
use crate::jobs::{self, Summary};
use crate::runtime::Device;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::time::Duration;
use store::crossfit::jobs::{self as xf_jobs, SeedKind};
use store::crossfit::upstream::{self as up_jobs, UpstreamKind};
use store::error::{Error, Result};
use store::lease::lanes::{KeyOf, Lost, Runner};
use store::lease::{Clock, Held};
use store::machine::grid::GridKind;

/// The grid jobs a worker of `kinds` can run now (queued or held, with a recipe it knows).
async fn grid_jobs(pool: &AnyPool, kinds: &[Work]) -> Result<Vec<(i64, JobRecipe)>> {
    let mut out = Vec::new();
    for (id, json) in grid::runnable(pool).await? {
        match JobRecipe::parse(&json) {
            Ok(r) if kinds.contains(&Work::of(&r.learner)) => out.push((id, r)),
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
        clock: store::lease::Clock::System,
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

/// The CLUES grids' jobs of the learners this worker takes, each run by its recipe.
pub(super) struct GridRunner {
    takes: Vec<Work>,
    device: Device,
    lease: Duration,
    /// The recipes of the jobs open at the last look, by job.
    recipes: HashMap<i64, JobRecipe>,
}

impl GridRunner {
    pub(super) fn new(takes: Vec<Work>, device: Device, lease: Duration) -> Self {
        GridRunner {
            takes,
            device,
            lease,
            recipes: HashMap::new(),
        }
    }
}

impl Runner for GridRunner {
    type Kind = GridKind;
    type Out = Vec<Summary>;

    async fn open(&mut self, pool: &AnyPool, _: &Clock) -> Result<Vec<i64>> {
        self.recipes = grid_jobs(pool, &self.takes).await?.into_iter().collect();
        let mut ids: Vec<i64> = self.recipes.keys().copied().collect();
        ids.sort_unstable();
        Ok(ids)
    }

    async fn run(&self, pool: &AnyPool, held: &Held<KeyOf<Self>>, _: Lost) -> Result<Vec<Summary>> {
        // A job claimed from the list is in it.
        let recipe = self.recipes.get(&held.lease.job).ok_or_else(|| {
            Error::internal(format!(
                "grid job {} was claimed without its recipe",
                held.lease.job
            ))
        })?;
        run_grid_job(pool, held, recipe, self.device, self.lease).await
    }

    fn report(&self, done: Vec<Summary>) {
        done.iter().for_each(|s| println!("{}", s.render()));
    }

    fn unfit(&mut self, held: &Held<KeyOf<Self>>) -> (String, bool) {
        let Some(kind) = self
            .recipes
            .get(&held.lease.job)
            .map(|r| Work::of(&r.learner))
        else {
            return ("nothing".into(), !self.takes.is_empty());
        };
        self.takes.retain(|k| *k != kind);
        (format!("{kind:?} jobs"), !self.takes.is_empty())
    }
}

/// CrossFit's seeds (direct fine-tuning of a task's seed).
pub(super) struct SeedRunner {
    pub device: Device,
}

impl Runner for SeedRunner {
    type Kind = SeedKind;
    type Out = ();

    async fn open(&mut self, pool: &AnyPool, _: &Clock) -> Result<Vec<i64>> {
        xf_jobs::runnable(pool).await
    }

    async fn run(&self, pool: &AnyPool, held: &Held<KeyOf<Self>>, lost: Lost) -> Result<()> {
        crossfit::run_held(pool, held, (self.device, &*lost)).await
    }

    fn report(&self, (): ()) {}

    fn unfit(&mut self, _: &Held<KeyOf<Self>>) -> (String, bool) {
        (format!("{:?} jobs", Work::Crossfit), false)
    }
}

/// CrossFit's upstream learning of a partition.
pub(super) struct UpstreamRunner {
    pub device: Device,
}

impl Runner for UpstreamRunner {
    type Kind = UpstreamKind;
    type Out = ();

    async fn open(&mut self, pool: &AnyPool, _: &Clock) -> Result<Vec<i64>> {
        up_jobs::runnable(pool).await
    }

    async fn run(&self, pool: &AnyPool, held: &Held<KeyOf<Self>>, lost: Lost) -> Result<()> {
        upstream::run_held(pool, held, (self.device, &*lost)).await
    }

    fn report(&self, (): ()) {}

    fn unfit(&mut self, _: &Held<KeyOf<Self>>) -> (String, bool) {
        (format!("{:?} jobs", Work::CrossfitUpstream), false)
    }
}
