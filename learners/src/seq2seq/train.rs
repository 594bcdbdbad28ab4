//! CrossFit's direct fine-tuning of a text-to-text model on one task and seed: teacher-forced
//! cross-entropy, each (learning rate, batch size) of the grid trained for a number of updates
//! with warm-up, the development set decoded every so often, the best checkpoint kept.

use super::{greedy, pad_rows, Model};
use crate::tune::ops::sorted_vars;
use crate::tune::train::fit;
use crate::tune::{Dropout, Recipe};
use candle_core::{Result, Tensor, D};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// One training pair: the input's token ids and the output's (the labels, with their end token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub src: Vec<u32>,
    pub tgt: Vec<u32>,
}

/// The mean cross-entropy of a batch's output tokens under teacher forcing (the decoder reads
/// the start token and the output shifted right; padding is not counted).
pub fn loss(m: &Model, batch: &[&Pair], d: &mut Dropout) -> Result<Tensor> {
    let dev = m.weights.device.clone();
    let srcs: Vec<&[u32]> = batch.iter().map(|p| p.src.as_slice()).collect();
    let (src, mask) = pad_rows(&srcs, m.pad(), &dev)?;
    let inputs: Vec<Vec<u32>> = batch
        .iter()
        .map(|p| {
            std::iter::once(m.start())
                .chain(p.tgt[..p.tgt.len().saturating_sub(1)].iter().copied())
                .collect()
        })
        .collect();
    let rows: Vec<&[u32]> = inputs.iter().map(Vec::as_slice).collect();
    let (tgt_in, _) = pad_rows(&rows, m.pad(), &dev)?;
    let labels: Vec<&[u32]> = batch.iter().map(|p| p.tgt.as_slice()).collect();
    let (labels, counted) = pad_rows(&labels, 0, &dev)?;
    let (enc, pad) = m.encode(&src, &mask, d)?;
    let logits = m.logits(&enc, &pad, &tgt_in, d)?;
    let (b, t, v) = logits.dims3()?;
    let logp = candle_nn::ops::log_softmax(&logits.reshape((b * t, v))?, D::Minus1)?;
    let picked = logp
        .gather(&labels.reshape((b * t, 1))?.contiguous()?, 1)?
        .reshape(b * t)?;
    let counted = counted.reshape(b * t)?;
    (picked * &counted)?.sum_all()?.neg()? / counted.sum_all()?.to_scalar::<f32>()? as f64
}

/// CrossFit's grid and schedule (its `tune_hps_singletask.py` defaults).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Grid {
    pub learning_rates: Vec<f64>,
    pub batch_sizes: Vec<usize>,
    pub steps: usize,
    pub warmup: usize,
    pub eval_every: usize,
    pub max_output_tokens: usize,
}

impl Default for Grid {
    fn default() -> Self {
        Grid {
            learning_rates: vec![1e-5, 2e-5, 5e-5],
            batch_sizes: vec![2, 4, 8],
            steps: 1000,
            warmup: 100,
            eval_every: 100,
            max_output_tokens: 64,
        }
    }
}

/// How one (learning rate, batch size) did: its best development score and at which update.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tried {
    pub learning_rate: f64,
    pub batch_size: usize,
    pub best_dev: f64,
    pub best_step: usize,
    pub final_loss: f64,
}

/// Trains the model from its weights as given for each setting of the grid, decoding `dev`
/// every `eval_every` updates and scoring it with `score` (higher is better); leaves the model
/// with the weights of the best development score over the whole grid (the first on a tie) and
/// answers what each setting did. `progress(setting, step, steps)` follows the training and
/// answers whether to go on: `false` stops it with an error.
pub fn direct(
    m: &Model,
    train: &[Pair],
    dev: &[Vec<u32>],
    score: &dyn Fn(&[Vec<u32>]) -> f64,
    g: &Grid,
    seed: u64,
    progress: &mut dyn FnMut(usize, usize, usize) -> bool,
) -> store::Result<Vec<Tried>> {
    let err = crate::tune::model_error;
    // The starting weights, and the best setting's: a copy each, not a model read again.
    let start = m.weights.snapshot().map_err(err)?;
    let mut best: Option<(f64, Vec<(String, Tensor)>)> = None;
    let mut tried = Vec::new();
    let settings: Vec<(f64, usize)> = g
        .learning_rates
        .iter()
        .flat_map(|&lr| g.batch_sizes.iter().map(move |&bs| (lr, bs)))
        .collect();
    for (i, &(lr, bs)) in settings.iter().enumerate() {
        if i > 0 {
            m.weights.restore(&start).map_err(err)?;
        }
        let r = Recipe {
            learning_rate: lr,
            batch_size: bs,
            weight_decay: 0.0,
            steps: Some(g.steps),
            warmup: g.warmup,
            seed,
            ..Recipe::default()
        };
        let mut here = Best::default();
        // Atomic: the loss closure runs on rayon's threads (`ops::on_pool`).
        let go_on = AtomicBool::new(true);
        let losses = {
            let mut check = |step: usize, steps: usize| {
                go_on.store(progress(i, step, steps), Relaxed);
                if step.is_multiple_of(g.eval_every.max(1)) || step == steps {
                    here.consider(m, step, &|m| evaluate(m, dev, score, g.max_output_tokens));
                }
            };
            fit(
                sorted_vars(&m.weights.vars),
                train.len(),
                &r,
                &mut check,
                &mut |chunk, d| {
                    if !go_on.load(Relaxed) {
                        return Err(candle_core::Error::Msg("the training was stopped".into()));
                    }
                    let batch: Vec<&Pair> = chunk.iter().map(|&i| &train[i]).collect();
                    loss(m, &batch, d)
                },
            )
            .map_err(err)?
        };
        if !go_on.load(Relaxed) {
            return Err(store::Error::Model("the training was stopped".into()));
        }
        let (best_dev, best_step) = (here.score, here.step);
        here.restore(m).map_err(err)?;
        tried.push(Tried {
            learning_rate: lr,
            batch_size: bs,
            best_dev,
            best_step,
            final_loss: losses.last().copied().unwrap_or(f64::NAN),
        });
        if best.as_ref().is_none_or(|(s, _)| best_dev > *s) {
            // The last setting's weights are the model's already.
            let kept = if i + 1 < settings.len() {
                m.weights.snapshot().map_err(err)?
            } else {
                Vec::new()
            };
            best = Some((best_dev, kept));
        }
    }
    match best {
        None => Err(store::Error::Invalid(
            "the grid has no learning rate or batch size".into(),
        )),
        Some((_, w)) if w.is_empty() => Ok(tried),
        Some((_, w)) => {
            m.weights.restore(&w).map_err(err)?;
            Ok(tried)
        }
    }
}

/// The best development score seen so far in a training run, when it was seen and the weights
/// that gave it (the first on a tie).
pub struct Best {
    pub score: f64,
    pub step: usize,
    weights: Option<Vec<(String, Tensor)>>,
    failed: Option<candle_core::Error>,
}

impl Default for Best {
    fn default() -> Self {
        Best {
            score: f64::NEG_INFINITY,
            step: 0,
            weights: None,
            failed: None,
        }
    }
}

impl Best {
    /// Scores the model as it is at update `step`; keeps its weights when better than before.
    pub fn consider(&mut self, m: &Model, step: usize, score: &dyn Fn(&Model) -> Result<f64>) {
        if self.failed.is_some() {
            return;
        }
        let kept = score(m).and_then(|s| {
            if s > self.score {
                self.weights = Some(m.weights.snapshot()?);
                (self.score, self.step) = (s, step);
            }
            Ok(())
        });
        if let Err(e) = kept {
            self.failed = Some(e);
        }
    }

    /// Sets the model to the best weights seen (an error met while scoring is returned).
    pub fn restore(self, m: &Model) -> Result<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        match &self.weights {
            Some(w) => m.weights.restore(w),
            None => Ok(()),
        }
    }
}

/// Greedy outputs of `inputs`, 16 at a time, scored by `score`.
fn evaluate(
    m: &Model,
    inputs: &[Vec<u32>],
    score: &dyn Fn(&[Vec<u32>]) -> f64,
    max_tokens: usize,
) -> Result<f64> {
    Ok(score(&decode_all(m, inputs, max_tokens)?))
}

/// Greedy outputs of every input, 16 at a time.
pub fn decode_all(m: &Model, inputs: &[Vec<u32>], max_tokens: usize) -> Result<Vec<Vec<u32>>> {
    let mut out = Vec::with_capacity(inputs.len());
    for chunk in inputs.chunks(16) {
        let rows: Vec<&[u32]> = chunk.iter().map(Vec::as_slice).collect();
        out.extend(greedy(m, &rows, max_tokens)?);
    }
    Ok(out)
}
