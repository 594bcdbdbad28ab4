//! A grid shared by many machines: its groups are jobs (`store::machine::grid`); any
//! worker process pointed at the database claims the next one under a lease it renews every
//! quarter of the lease, and stores a job's runs only while it still holds it (`store::finish`),
//! so every group is stored exactly once.

use domain::ids::TaskId;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;
use std::path::PathBuf;
use std::time::Duration;
use store::error::{Error, Result};
use store::machine::grid::Recipe;
pub use store::machine::grid::{complete, fail, job_target, runnable, Group, Held};

/// The lease a worker holds on a job unless told otherwise (`--lease-seconds`): long enough to
/// ride out a slow database, short enough that a killed worker's group is soon taken over.
pub const LEASE: Duration = Duration::from_secs(60);

/// How a worker runs a shared grid.
#[derive(Clone, Debug)]
pub struct GridRun {
    /// Replace finished evaluations (their jobs are queued again).
    pub replace: bool,
    /// Also write each trained model folder under this folder.
    pub export: Option<std::path::PathBuf>,
    pub device: crate::runtime::Device,
    /// A progress bar on stderr.
    pub bar: bool,
    /// How long a claimed job stays this worker's without a renewal ([`LEASE`]).
    pub lease: Duration,
    /// Queue the jobs and stop: `clues-lab worker` processes run them.
    pub queue_only: bool,
    /// The clock the jobs are queued by (the system's; a test's in tests).
    pub clock: store::lease::Clock,
}

/// The learner a grid job runs, as any worker reads it from the job (`clues-lab worker`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "learner", rename_all = "kebab-case")]
pub enum Learner {
    /// The frozen MiniLM encoder with a span head per shot group (the encoder is where
    /// `baseline` finds it on the worker's machine).
    FrozenBaseline,
    /// The encoder folder `weights` fine-tuned on the job's shot group.
    FineTuning { weights: PathBuf },
    /// The job's ONNX model folder (its source) evaluated.
    Onnx,
    /// Prompt-based fine-tuning (`prompt`) of the encoder folder `weights` with its masked-LM
    /// head, on the job's shot group (template and verbaliser: the task's defaults when none).
    Prompt {
        weights: PathBuf,
        template: Option<String>,
        verbaliser: Option<String>,
        steps: u32,
    },
    /// In-context learning through a language-model server (`icl`): the job's shot group as
    /// the demonstrations (k = 0: none).
    InContext {
        endpoint: String,
        model: String,
        max_tokens: u32,
        timeout_seconds: u64,
        concurrency: u32,
    },
}

/// What every worker runs a grid job with: the learner, and whether a finished run is replaced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecipe {
    #[serde(flatten)]
    pub learner: Learner,
    pub replace: bool,
}

impl JobRecipe {
    pub fn parse(json: &str) -> Result<JobRecipe> {
        serde_json::from_str(json).map_err(|e| {
            Error::Invalid(format!(
                "a grid job's recipe {json} is not one this worker knows: {e}"
            ))
        })
    }
}

/// Queues `groups` of `system` to run with `learner` (see [`store::machine::grid::enqueue`]),
/// now by `clock`.
pub async fn enqueue(
    pool: &AnyPool,
    system: &str,
    learner: Learner,
    source: Option<&str>,
    groups: &[(TaskId, u32, u32)],
    (replace, clock): (bool, &store::lease::Clock),
) -> Result<Vec<i64>> {
    let recipe = serde_json::to_string(&JobRecipe { learner, replace }).map_err(Error::internal)?;
    let what = Recipe {
        system,
        source,
        recipe: &recipe,
    };
    store::machine::grid::enqueue(pool, what, groups, (replace, clock)).await
}

/// One worker's turn through a grid.
pub type Worker = store::lease::Worker<store::machine::grid::GridKind>;
