//! `clues-lab crossfit learn`: CrossFit's direct fine-tuning of a text-to-text model (BART) on
//! each seed of a task, the best development checkpoint decoded greedily on the test set and
//! stored as a run that `crossfit arg` compares like any other; resumable per task and seed.

pub mod upstream;

use crate::runtime::Device;
use crate::seq2seq::text::Text;
use crate::seq2seq::train::{decode_all, direct, Grid, Pair};
use crate::seq2seq::Model;
use app::error::{AppError, Result};
use app::ssr::crossfit as xf;
use domain::crossfit::metrics::{evaluate, Metric};
use domain::crossfit::sampler::TsvLine;
use std::path::{Path, PathBuf};
use std::time::Instant;

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
            return Err(AppError::Invalid(
                "--learning-rates must be numbers between 0 and 1".into(),
            ));
        }
        if self.batch_sizes.is_empty() || self.batch_sizes.contains(&0) {
            return Err(AppError::Invalid("--batch-sizes must be positive".into()));
        }
        if self.max_input_tokens < 2 || self.max_output_tokens < 1 {
            return Err(AppError::Invalid(
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
fn method_name(given: &Option<String>, model: &Path, what: &str) -> Result<String> {
    match given {
        Some(m) if m.trim().is_empty() => {
            Err(AppError::Invalid("--method must not be empty".into()))
        }
        Some(m) => Ok(m.trim().to_string()),
        None => Ok(format!("{} {what}", crate::tune::folder_name(model))),
    }
}

/// Checks that `dir` opens as a text-to-text model with its tokenizer.
pub fn check_model(dir: &Path) -> Result<()> {
    Model::load(dir, &candle_core::Device::Cpu)?;
    Text::open(&dir.join("tokenizer.json")).map(|_| ())
}

/// One seed's data as token ids: training pairs (the first output of each line), and the
/// development and test inputs with their gold outputs.
struct SeedData {
    train: Vec<Pair>,
    dev: (Vec<Vec<u32>>, Vec<Vec<String>>),
    test: Vec<Vec<u32>>,
}

pub(crate) fn golds(lines: &[TsvLine]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|l| l.outputs().into_iter().map(str::to_string).collect())
        .collect()
}

fn seed_data(
    tok: &Text,
    a: &TuneArgs,
    train: &[TsvLine],
    dev: &[TsvLine],
    test: &[TsvLine],
) -> Result<SeedData> {
    let inputs = |ls: &[TsvLine]| -> Result<Vec<Vec<u32>>> {
        ls.iter()
            .map(|l| tok.ids(&l.input, a.max_input_tokens))
            .collect()
    };
    let pairs = train
        .iter()
        .map(|l| {
            let out = l.outputs().first().copied().unwrap_or_default();
            Ok(Pair {
                src: tok.ids(&l.input, a.max_input_tokens)?,
                tgt: tok.ids(out, a.max_output_tokens)?,
            })
        })
        .collect::<Result<Vec<Pair>>>()?;
    Ok(SeedData {
        train: pairs,
        dev: (inputs(dev)?, golds(dev)),
        test: inputs(test)?,
    })
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

/// `clues-lab crossfit learn`.
pub async fn learn(pool: &sqlx::AnyPool, a: LearnArgs) -> Result<()> {
    a.tune.grid()?;
    xf::metric_of(pool, &a.task).await?;
    check_model(&a.model)?;
    let method = method_name(&a.method, &a.model, "direct fine-tuning")?;
    learn_task(pool, &a.model, &a.task, &method, &a.tune, None).await
}

/// Direct fine-tuning of `model` on every seed of `task` without a run of `method`, each
/// stored as soon as it is done; `upstream`: how the model was learned before (stored with
/// each run's settings).
pub async fn learn_task(
    pool: &sqlx::AnyPool,
    model: &Path,
    task: &str,
    method: &str,
    a: &TuneArgs,
    upstream: Option<&serde_json::Value>,
) -> Result<()> {
    let grid = a.grid()?;
    let metric = xf::metric_of(pool, task).await?;
    let done = xf::seeds_with_run(pool, method, task).await?;
    let seeds: Vec<u32> = xf::seeds_of(pool, task)
        .await?
        .into_iter()
        .filter(|s| !done.contains(s))
        .collect();
    if !done.is_empty() {
        eprintln!("{task}: seeds {done:?} already have a run of {method:?}, kept");
    }
    let started = Instant::now();
    for (n, &seed) in seeds.iter().enumerate() {
        let lines = |split: &'static str| xf::split_lines(pool, task, seed, split);
        let (train, dev, test) = (
            lines("train").await?,
            lines("dev").await?,
            lines("test").await?,
        );
        let (dir, device, g, label) = (
            model.to_path_buf(),
            a.device,
            grid.clone(),
            format!("{task} seed {seed}"),
        );
        let tok = Text::open(&model.join("tokenizer.json"))?;
        let data = seed_data(&tok, a, &train, &dev, &test)?;
        let settings_count = g.learning_rates.len() * g.batch_sizes.len();
        let (preds, tried, trained_on, start) =
            tokio::task::spawn_blocking(move || -> Result<_> {
                let (on, trained_on) = crate::tune::device(device)?;
                let load = || Model::load(&dir, &on);
                let (dev_ids, dev_golds) = &data.dev;
                let score = |ids: &[Vec<u32>]| scored(&tok, metric, ids, dev_golds);
                let mut last = Instant::now();
                let mut progress = |setting: usize, step: usize, steps: usize| {
                    if last.elapsed().as_secs() >= 10 || step == steps {
                        last = Instant::now();
                        eprintln!(
                            "{label}: setting {} of {settings_count}, update {step} of {steps}",
                            setting + 1
                        );
                    }
                };
                let (best, tried) = direct(
                    &load,
                    &data.train,
                    dev_ids,
                    &score,
                    &g,
                    u64::from(seed),
                    &mut progress,
                )?;
                let out = decode_all(&best, &data.test, g.max_output_tokens)
                    .map_err(crate::tune::model_error)?;
                let texts = out
                    .iter()
                    .map(|ids| tok.text(ids))
                    .collect::<Result<Vec<String>>>()?;
                Ok((texts, tried, trained_on, best.start()))
            })
            .await
            .map_err(|e| AppError::Model(format!("training stopped: {e}")))??;
        let chosen = tried
            .iter()
            .fold(None::<&crate::seq2seq::train::Tried>, |b, t| match b {
                Some(b) if b.best_dev >= t.best_dev => Some(b),
                _ => Some(t),
            });
        let settings = serde_json::json!({
            "learner": "direct fine-tuning", "model": model.display().to_string(), "upstream": upstream,
            "grid": grid, "tried": tried, "chosen": chosen, "trained_on": trained_on,
            "decoding": {"strategy": "greedy", "num_beams": 1, "max_output_tokens": grid.max_output_tokens,
                         "decoder_start_token_id": start, "max_input_tokens": a.max_input_tokens},
        })
        .to_string();
        let score = xf::store_run(
            pool,
            method,
            task,
            seed,
            "predictions",
            &preds,
            Some(&settings),
        )
        .await?;
        let elapsed = started.elapsed().as_secs_f64();
        let left = elapsed / (n + 1) as f64 * (seeds.len() - n - 1) as f64;
        println!(
            "{task} seed {seed}: {} {} on the test set (best development score {:.4}); {:.1} min, about {:.1} min left",
            metric.name(),
            score.value.map_or("n/a".into(), |v| format!("{v:.4}")),
            chosen.map_or(f64::NAN, |c| c.best_dev),
            elapsed / 60.0,
            left / 60.0
        );
    }
    Ok(())
}
