//! `clues-lab crossfit learn`: CrossFit's direct fine-tuning of a text-to-text model (BART) on
//! each seed of a task, the best development checkpoint decoded greedily on the test set and
//! stored as a run that `crossfit arg` compares like any other; resumable per task and seed.

pub mod upstream;
pub mod upstream_job;
mod worker;

pub use worker::{learn_task, queue_task, run_held, SeedsOf};

use crate::runtime::Device;
use crate::seq2seq::text::Text;
use crate::seq2seq::train::{Grid, Pair};
use crate::seq2seq::Model;
use domain::crossfit::metrics::{evaluate, Metric};
use domain::crossfit::sampler::TsvLine;
use std::path::{Path, PathBuf};
use store::crossfit as xf;
use store::error::{Error, Result};

/// CrossFit's fine-tuning of one task: the grid and schedule, lengths and device.
#[derive(Clone, Debug, clap::Args)]
pub struct TuneArgs {
    /// The learning rates tried (CrossFit: 1e-5, 2e-5, 5e-5).
    #[arg(long, value_delimiter = ',', default_values_t = [1e-5, 2e-5, 5e-5])]
    pub learning_rates: Vec<f64>,
    /// The batch sizes tried (CrossFit: 2, 4, 8).
    #[arg(long, value_delimiter = ',', default_values_t = [2, 4, 8])]
    pub batch_sizes: Vec<usize>,
    /// Updates per setting.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub steps: u32,
    /// Warm-up updates.
    #[arg(long, default_value_t = 100)]
    pub warmup: u32,
    /// The development set is decoded every this many updates (and after the last).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub eval_every: u32,
    #[arg(long, default_value_t = 512)]
    pub max_input_tokens: usize,
    #[arg(long, default_value_t = 64)]
    pub max_output_tokens: usize,
    /// Where candle trains: auto, cpu or cuda (with the `cuda` build).
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
    /// How long a claimed job (a task and seed) stays this worker's without a renewal (it
    /// renews four times as often). Run the same command on several machines pointed at one
    /// database and they share the seeds; a job whose worker stopped is taken over after this.
    #[arg(long, default_value_t = crate::jobs::grid::LEASE.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
    /// Keep each seed's chosen checkpoint as `DIR/<task>-seed<seed>/`: model.safetensors and
    /// config.json as transformers saves a ...ForConditionalGeneration, tokenizer.json, and
    /// decoding.json with the greedy decoding that gave the stored predictions.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    #[command(flatten)]
    pub queue: crate::command::QueueArg,
}

#[derive(Debug, clap::Args)]
pub struct LearnArgs {
    /// A text-to-text model folder as Hugging Face saves BART or T5 (config.json,
    /// model.safetensors, tokenizer.json).
    #[arg(long)]
    pub model: PathBuf,
    /// The CrossFit task; every seed of it without a run of this method is trained.
    #[arg(long)]
    pub task: String,
    /// The method name its runs are stored under [default: "<folder> direct fine-tuning"].
    #[arg(long)]
    pub method: Option<String>,
    #[command(flatten)]
    pub tune: TuneArgs,
}

impl TuneArgs {
    fn grid(&self) -> Result<Grid> {
        if self.learning_rates.iter().any(|&l| !(l > 0.0 && l < 1.0))
            || self.learning_rates.is_empty()
        {
            return Err(Error::Invalid(
                "--learning-rates must be numbers between 0 and 1".into(),
            ));
        }
        if self.batch_sizes.is_empty() || self.batch_sizes.contains(&0) {
            return Err(Error::Invalid("--batch-sizes must be positive".into()));
        }
        if self.max_input_tokens < 2 || self.max_output_tokens < 1 {
            return Err(Error::Invalid(
                "--max-input-tokens must be at least 2 and --max-output-tokens at least 1".into(),
            ));
        }
        Ok(Grid {
            learning_rates: self.learning_rates.clone(),
            batch_sizes: self.batch_sizes.clone(),
            steps: self.steps as usize,
            warmup: (self.warmup as usize).min(self.steps as usize),
            eval_every: self.eval_every as usize,
            max_output_tokens: self.max_output_tokens,
        })
    }
}

/// A method name: the given one (not blank), else the model folder's name and `what`.
pub(crate) fn method_name(given: &Option<String>, model: &Path, what: &str) -> Result<String> {
    match given {
        Some(m) if m.trim().is_empty() => Err(Error::Invalid("--method must not be empty".into())),
        Some(m) => Ok(m.trim().to_string()),
        None => Ok(format!("{} {what}", crate::tune::folder_name(model))),
    }
}

/// Checks that `dir` opens as a text-to-text model with its tokenizer. A folder that does not
/// (missing, unreadable or malformed files) is the asker's mistake: refused as invalid, naming
/// the file and why.
pub fn check_model(dir: &Path) -> Result<()> {
    let opened = Model::load(dir, &candle_core::Device::Cpu)
        .and_then(|_| Text::open(&dir.join("tokenizer.json")).map(|_| ()));
    opened.map_err(|e| match e {
        Error::Io { .. } | Error::Model(_) | Error::Unfit(_) | Error::Data { .. } => {
            Error::Invalid(format!(
                "{} does not open as a BART or T5 folder: {e}",
                dir.display()
            ))
        }
        e => e,
    })
}

pub(crate) fn golds(lines: &[TsvLine]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|l| l.outputs().into_iter().map(str::to_string).collect())
        .collect()
}

/// The pairs of lines: each input with its first output.
pub(crate) fn pairs(tok: &Text, lines: &[TsvLine], a: &TuneArgs) -> Result<Vec<Pair>> {
    lines
        .iter()
        .map(|l| {
            Ok(Pair {
                src: tok.ids(&l.input, a.max_input_tokens)?,
                tgt: tok.ids(
                    l.outputs().first().copied().unwrap_or_default(),
                    a.max_output_tokens,
                )?,
            })
        })
        .collect()
}

/// The inputs of lines as token ids.
pub(crate) fn inputs(tok: &Text, lines: &[TsvLine], a: &TuneArgs) -> Result<Vec<Vec<u32>>> {
    lines
        .iter()
        .map(|l| tok.ids(&l.input, a.max_input_tokens))
        .collect()
}

/// The metric's value of decoded outputs against golds (0 where it has none).
pub(crate) fn scored(tok: &Text, metric: Metric, ids: &[Vec<u32>], golds: &[Vec<String>]) -> f64 {
    let texts: Vec<String> = ids
        .iter()
        .map(|i| tok.text(i).unwrap_or_default())
        .collect();
    evaluate(metric, &texts, golds)
        .ok()
        .and_then(|s| s.value)
        .unwrap_or(0.0)
}

/// `clues-lab crossfit learn`: the seeds of the task are jobs that any number of workers
/// running the same command on one database share.
pub async fn learn(pool: &sqlx::AnyPool, a: LearnArgs) -> Result<()> {
    a.tune.grid()?;
    crate::tune::check_device(a.tune.device, false)?;
    xf::metric_of(pool, &a.task).await?;
    check_model(&a.model)?;
    let method = method_name(&a.method, &a.model, "direct fine-tuning")?;
    let seeds = SeedsOf {
        model: &a.model,
        task: &a.task,
        method: &method,
        a: &a.tune,
        upstream: None,
    };
    learn_task(pool, &seeds).await
}
