//! What a researcher queues from the machines page, and the queued jobs as the page lists them:
//! any worker (`clues-lab worker`) runs them.

use crate::named::named_enum;
use crate::run::JobStatus;
use serde::{Deserialize, Serialize};

named_enum! {
    /// The kinds of learner the machines page queues, as its select lists them: each one's
    /// label and fields come from here, and `QueuedLearner::kind` says which one a request is.
    pub enum LearnerKind {
        FrozenBaseline = "frozen-baseline",
        FineTuning = "fine-tuning",
        Onnx = "onnx",
        Prompt = "prompt",
        InContext = "in-context",
        Crossfit = "crossfit",
        CrossfitUpstream = "crossfit-upstream",
    }
}

impl LearnerKind {
    /// What the page's select says.
    pub fn label(self) -> &'static str {
        match self {
            LearnerKind::FrozenBaseline => "Frozen MiniLM baseline (a span head per shot group)",
            LearnerKind::FineTuning => {
                "Fine-tuning of an encoder checkpoint (BERT, RoBERTa, DeBERTa)"
            }
            LearnerKind::Onnx => "An ONNX span model, evaluated",
            LearnerKind::Prompt => "Prompt-based fine-tuning (an encoder with its masked-LM head)",
            LearnerKind::InContext => "In-context learning through a language-model server",
            LearnerKind::Crossfit => "CrossFit direct fine-tuning (BART, T5; every seed)",
            LearnerKind::CrossfitUpstream => {
                "CrossFit upstream learning (a partition; then every seed of its test tasks)"
            }
        }
    }

    /// What its one folder or address is, where it takes one.
    pub fn folder(self) -> Option<&'static str> {
        match self {
            LearnerKind::FrozenBaseline => None,
            LearnerKind::FineTuning | LearnerKind::Prompt => Some("Checkpoint folder"),
            LearnerKind::Onnx | LearnerKind::Crossfit | LearnerKind::CrossfitUpstream => {
                Some("Model folder")
            }
            LearnerKind::InContext => Some("Server URL"),
        }
    }

    /// Whether it learns CrossFit's tasks (its results stored under a method), not CLUES's
    /// shot groups (under a system).
    pub fn crossfit(self) -> bool {
        match self {
            LearnerKind::Crossfit | LearnerKind::CrossfitUpstream => true,
            LearnerKind::FrozenBaseline
            | LearnerKind::FineTuning
            | LearnerKind::Onnx
            | LearnerKind::Prompt
            | LearnerKind::InContext => false,
        }
    }
}

/// The learner to queue, with what it needs (folders as the workers' machines see them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "learner", rename_all = "kebab-case")]
pub enum QueuedLearner {
    /// The frozen MiniLM encoder with a span head per shot group.
    FrozenBaseline,
    /// An encoder checkpoint folder (BERT, RoBERTa, DeBERTa) fine-tuned on each shot group,
    /// stored under `system` (default: "<folder> fine-tuned").
    FineTuning {
        weights: String,
        system: Option<String>,
    },
    /// A span-extraction ONNX model folder evaluated, stored under `system` (default: the
    /// folder's name).
    Onnx {
        model: String,
        system: Option<String>,
    },
    /// Prompt-based fine-tuning of an encoder checkpoint with its masked-LM head (`weights`),
    /// with a template and verbaliser (the task's defaults when left out) and `steps` updates
    /// (default 1000); stored under `system` (default: "<folder> prompt-tuned").
    Prompt {
        weights: String,
        system: Option<String>,
        template: Option<String>,
        verbaliser: Option<String>,
        steps: Option<u32>,
    },
    /// In-context learning through a language-model server (OpenAI completions API) at
    /// `endpoint`, asked for `model`, with `concurrency` calls in flight (default 1); stored
    /// under `system` (default: "LLM in-context (<model>)").
    InContext {
        endpoint: String,
        model: String,
        system: Option<String>,
        concurrency: Option<u32>,
    },
    /// CrossFit's direct fine-tuning of a BART or T5 folder on every seed of the CrossFit
    /// tasks, stored under `method` (default: "<folder> direct fine-tuning"); `steps`: updates
    /// per setting of CrossFit's grid (default 1000).
    Crossfit {
        model: String,
        method: Option<String>,
        steps: Option<u32>,
    },
    /// CrossFit's upstream learning, then direct fine-tuning from it on the partition's test
    /// tasks. The request names no tasks: the partition names them.
    CrossfitUpstream(UpstreamChoice),
}

impl QueuedLearner {
    /// Which kind of learner it is.
    pub fn kind(&self) -> LearnerKind {
        match self {
            QueuedLearner::FrozenBaseline => LearnerKind::FrozenBaseline,
            QueuedLearner::FineTuning { .. } => LearnerKind::FineTuning,
            QueuedLearner::Onnx { .. } => LearnerKind::Onnx,
            QueuedLearner::Prompt { .. } => LearnerKind::Prompt,
            QueuedLearner::InContext { .. } => LearnerKind::InContext,
            QueuedLearner::Crossfit { .. } => LearnerKind::Crossfit,
            QueuedLearner::CrossfitUpstream(_) => LearnerKind::CrossfitUpstream,
        }
    }
}

/// CrossFit's upstream learning (`method`: mtl, maml, first-order-maml or reptile) of a BART or
/// T5 folder on `partition`'s train tasks, the checkpoint chosen on its dev tasks and written to
/// `out`, then direct fine-tuning from it on each seed of its test tasks, stored under `name`
/// (default: "<out folder> fine-tuning"); `upstream_steps` (default 1000) and `steps` (updates
/// per setting of the test tasks' grid, default 1000).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpstreamChoice {
    pub model: String,
    pub partition: String,
    pub method: String,
    pub out: String,
    pub name: Option<String>,
    pub upstream_steps: Option<u32>,
    pub steps: Option<u32>,
}

/// A request to queue one learner on tasks: CLUES-format tasks for the CLUES learners (each of
/// their shot groups, or the one `group`; in-context learning also takes k = 0), CrossFit tasks
/// for CrossFit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueRequest {
    pub tasks: Vec<String>,
    /// One shot group (k, split); every group of each task when left out.
    pub group: Option<(u32, u32)>,
    pub learner: QueuedLearner,
    /// Run finished groups again.
    pub replace: bool,
}

/// What a queue request did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueAnswer {
    /// Jobs now queued (jobs already queued or running are kept as they are).
    pub jobs: usize,
    /// In words, for the page.
    pub said: String,
}

/// What a server or command built without the model track (the serving build `.ci/start`
/// makes; `server`'s `models` feature) says where the model track is asked for.
pub const WITHOUT_MODELS: &str = "this clues-lab was built without the model track (`.ci/start` builds the \
serving binary): a clues-lab built with its default features has it (`cargo build --release -p server`; \
`bash .ci/setup` installs ONNX Runtime)";

/// The tasks a learner can be queued on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueChoices {
    /// Whether this server can queue learners (a build with the model track).
    pub queueing: bool,
    /// CLUES-format tasks with a test set.
    pub tasks: Vec<String>,
    /// Imported CrossFit tasks.
    pub crossfit_tasks: Vec<String>,
    /// CrossFit's task partitions (upstream learning).
    pub partitions: Vec<String>,
}

named_enum! {
    /// A kind of queued job: the queue it is in, one name for the store (`jobs.kind`), the
    /// lock that serialises its queuing, and the browser.
    pub enum Queue {
        /// The CLUES track's grids (`grid_jobs`).
        Grid = "grid",
        /// CrossFit's seeds (`crossfit_jobs`).
        Crossfit = "crossfit",
        /// CrossFit's upstream learning (`upstream_jobs`).
        Upstream = "upstream",
        /// The crowd platforms' calls (`platform_actions`, the ledger).
        Platform = "platform",
    }
}

/// A CLUES grid job not done yet, as the machines page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridJobRow {
    pub id: i64,
    pub system: String,
    pub task: String,
    /// 0 and 0: every shot group of the task (the frozen baseline).
    pub k: i64,
    pub split: i64,
    pub status: JobStatus,
    /// Who holds it now (its lease not run out).
    pub worker: Option<String>,
    pub attempts: i64,
    pub error: Option<String>,
}
