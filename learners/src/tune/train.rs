//! Fine-tuning a span model on a shot group (padded batches, the span loss over the positions a
//! head may choose) and the loop every learner shares: AdamW, warm-up and decay, clipping, seeded shuffles.

use super::encoder::{Inputs, Weights};
use super::{Dropout, Recipe};
use crate::features::Feature;
use candle_core::{Device, Result, Tensor, D};
use candle_nn::ParamsAdamW;
use domain::rng::SplitMix64;

/// One training input: a feature, the positions a head may choose (`[CLS]` first) and the
/// gold start and end positions (empty: no answer, i.e. `[CLS]`).
#[derive(Clone, Debug)]
pub struct Sample {
    pub feature: Feature,
    pub positions: Vec<usize>,
    pub starts: Vec<usize>,
    pub ends: Vec<usize>,
}

/// A batch of features padded to the longest.
pub fn inputs(batch: &[&Feature], dev: &Device) -> Result<Inputs> {
    let (b, len) = (
        batch.len(),
        batch.iter().map(|f| f.len()).max().unwrap_or(0),
    );
    let (mut ids, mut types, mut mask) = (
        vec![0u32; b * len],
        vec![0u32; b * len],
        vec![0f32; b * len],
    );
    for (r, f) in batch.iter().enumerate() {
        for i in 0..f.len() {
            ids[r * len + i] = f.ids[i] as u32;
            types[r * len + i] = f.type_ids[i] as u32;
            mask[r * len + i] = 1.0;
        }
    }
    Ok(Inputs {
        ids: Tensor::from_vec(ids, (b, len), dev)?,
        types: Tensor::from_vec(types, (b, len), dev)?,
        mask: Tensor::from_vec(mask, (b, len), dev)?,
    })
}

/// `[b, len]` additive masks: 0 at the listed positions of each row, -1e4 elsewhere.
fn only(rows: &[&[usize]], len: usize, dev: &Device) -> Result<Tensor> {
    let mut m = vec![-1e4f32; rows.len() * len];
    for (r, ps) in rows.iter().enumerate() {
        for &p in *ps {
            m[r * len + p] = 0.0;
        }
    }
    Tensor::from_vec(m, (rows.len(), len), dev)
}

/// log-sum-exp over the last dimension.
fn lse(x: &Tensor) -> Result<Tensor> {
    let m = x.max_keepdim(D::Minus1)?.detach();
    x.broadcast_sub(&m)?.exp()?.sum_keepdim(D::Minus1)?.log()? + m
}

/// The mean over a batch of -log P(gold) for start and end, each a softmax over the positions
/// a head may choose; a gold set of several positions counts their probabilities together.
pub fn loss(w: &Weights, batch: &[&Sample], dropout: &mut Dropout) -> Result<Tensor> {
    let dev = w.device.clone();
    let feats: Vec<&Feature> = batch.iter().map(|s| &s.feature).collect();
    let x = inputs(&feats, &dev)?;
    let len = x.ids.dims2()?.1;
    let (start, end) = w.forward(&x, dropout)?;
    let allowed = only(
        &batch
            .iter()
            .map(|s| s.positions.as_slice())
            .collect::<Vec<_>>(),
        len,
        &dev,
    )?;
    let cls: &[usize] = &[0];
    let gold = |pick: fn(&Sample) -> &[usize]| {
        let rows: Vec<&[usize]> = batch
            .iter()
            .map(|s| if pick(s).is_empty() { cls } else { pick(s) })
            .collect();
        only(&rows, len, &dev)
    };
    let part = |logits: &Tensor, gold: Tensor| -> Result<Tensor> {
        (lse(&logits.add(&allowed)?)? - lse(&logits.add(&gold)?)?)?.mean_all()
    };
    let s = part(&start, gold(|s| &s.starts)?)?;
    let e = part(&end, gold(|s| &s.ends)?)?;
    (s + e)? / 2.0
}

/// Fine-tunes every weight on `samples`; returns the mean loss of each epoch.
/// `progress(step, steps)` is called after every optimiser step.
pub fn train(
    w: &Weights,
    samples: &[Sample],
    r: &Recipe,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<f64>> {
    fit(
        super::ops::sorted_vars(&w.vars),
        samples.len(),
        r,
        progress,
        &mut |chunk, dropout| {
            let batch: Vec<&Sample> = chunk.iter().map(|&i| &samples[i]).collect();
            loss(w, &batch, dropout)
        },
    )
}

/// The optimisation every learner here shares: AdamW over `vars` (`adam`: one pass per weight
/// on the CPU) with the learning rate
/// decaying linearly to 0 (rising from 0 over `r.warmup` updates first), the gradient norm
/// clipped, `n` samples shuffled by a seeded generator in batches for `r.epochs` epochs (or
/// `r.steps` updates), dropout masks seeded. `loss(batch, dropout)` is a batch's mean loss;
/// returns each epoch's mean loss.
pub fn fit(
    vars: Vec<candle_core::Var>,
    n: usize,
    r: &Recipe,
    progress: &mut dyn FnMut(usize, usize),
    loss: &mut (dyn FnMut(&[usize], &mut Dropout) -> Result<Tensor> + Send),
) -> Result<Vec<f64>> {
    let mut opt = super::adam::Adam::new(
        vars.clone(),
        ParamsAdamW {
            lr: r.learning_rate,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: r.weight_decay,
        },
    )?;
    let bs = r.batch_size.max(1);
    let per_epoch = n.div_ceil(bs);
    let steps = r.steps.unwrap_or(r.epochs * per_epoch);
    let epochs = steps.div_ceil(per_epoch.max(1));
    let mut rng = SplitMix64(r.seed);
    let mut dropout = Dropout::on(r.dropout, r.seed ^ 0x005e_edd0);
    let mut losses = Vec::with_capacity(epochs);
    let mut step = 0;
    for _ in 0..epochs {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let (mut total, mut seen) = (0.0, 0);
        for chunk in order.chunks(bs).take(steps - step) {
            opt.set_learning_rate(r.learning_rate * schedule(step, steps, r.warmup));
            let l = super::ops::on_pool(|| {
                let l = loss(chunk, &mut dropout)?;
                let mut grads = super::ops::backward(&l)?;
                opt.clip_and_step(&mut grads, r.max_grad_norm)?;
                Ok::<_, candle_core::Error>(l)
            })?;
            total += f64::from(l.to_scalar::<f32>()?) * chunk.len() as f64;
            seen += chunk.len();
            step += 1;
            progress(step, steps);
        }
        losses.push(total / seen.max(1) as f64);
    }
    Ok(losses)
}

/// The learning rate's factor at update `step` of `steps` (Hugging Face's linear schedule):
/// rising from 0 over `warmup` updates, then falling linearly to 0.
pub fn schedule(step: usize, steps: usize, warmup: usize) -> f64 {
    if warmup == 0 {
        1.0 - step as f64 / steps as f64
    } else if step < warmup {
        step as f64 / warmup as f64
    } else {
        (steps - step.min(steps)) as f64 / (steps - warmup.min(steps)).max(1) as f64
    }
}

/// Start and end logits of every feature (no dropout), in the order given, `batch` at a time.
pub fn logits(w: &Weights, fs: &[Feature], batch: usize) -> Result<Vec<(Vec<f32>, Vec<f32>)>> {
    super::ops::on_pool(|| logits_here(w, fs, batch))
}

fn logits_here(w: &Weights, fs: &[Feature], batch: usize) -> Result<Vec<(Vec<f32>, Vec<f32>)>> {
    let mut out = vec![(Vec::new(), Vec::new()); fs.len()];
    let order = crate::eval::batch_order(fs);
    let mut off = Dropout::off();
    for chunk in order.chunks(batch.max(1)) {
        let feats: Vec<&Feature> = chunk.iter().map(|&i| &fs[i]).collect();
        let (s, e) = w.forward(&inputs(&feats, &w.device)?, &mut off)?;
        let (s, e) = (s.to_vec2::<f32>()?, e.to_vec2::<f32>()?);
        for (r, &i) in chunk.iter().enumerate() {
            let n = fs[i].len();
            out[i] = (s[r][..n].to_vec(), e[r][..n].to_vec());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Var;

    /// A linear layer (the fused kernel, its weight gradients added in place) fitted to fixed
    /// targets with dropout, seeded by `seed`: its weights after `fit`.
    fn fitted(seed: u64) -> Vec<f32> {
        let mut rng = SplitMix64(seed);
        let mut random = |shape: &[usize], spread: f64| {
            let n = shape.iter().product();
            let v: Vec<f32> = (0..n).map(|_| (spread * rng.normal()) as f32).collect();
            Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
        };
        let (x, target) = (random(&[256, 192], 1.0), random(&[256, 128], 1.0));
        let w = Var::from_tensor(&random(&[128, 192], 0.1)).unwrap();
        let b = Var::from_tensor(&random(&[128], 0.1)).unwrap();
        let r = Recipe {
            epochs: 2,
            learning_rate: 1e-2,
            batch_size: 128,
            dropout: 0.1,
            seed,
            ..Recipe::default()
        };
        let (wt, bt) = (w.as_tensor(), b.as_tensor());
        let loss = &mut |chunk: &[usize], d: &mut Dropout| {
            let ids: Vec<u32> = chunk.iter().map(|&i| i as u32).collect();
            let ids = Tensor::from_vec(ids, chunk.len(), &Device::Cpu)?;
            let x = x.index_select(&ids, 0)?.unsqueeze(0)?;
            let y = d.apply(&super::super::ops::linear(&x, wt, bt)?)?;
            (y - target.index_select(&ids, 0)?.unsqueeze(0)?)?
                .sqr()?
                .mean_all()
        };
        fit(vec![w.clone(), b.clone()], 256, &r, &mut |_, _| {}, loss).unwrap();
        w.flatten_all().unwrap().to_vec1().unwrap()
    }

    /// Trainings that run at once, their updates on rayon's shared threads (`ops::on_pool`, where
    /// a thread waiting inside one update may run a piece of another), each get their own
    /// gradients: the same weights, to the bit, as one at a time.
    #[test]
    fn trainings_at_once_on_rayons_threads_are_the_ones_alone() {
        let alone: Vec<Vec<f32>> = (0..4).map(fitted).collect();
        let at_once: Vec<Vec<f32>> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..4).map(|seed| s.spawn(move || fitted(seed))).collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_ne!(alone[0], alone[1]);
        assert_eq!(alone, at_once);
    }
}
