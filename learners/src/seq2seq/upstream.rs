//! Upstream learning on a partition's seen tasks (CrossFit sec. 4): multi-task learning on their
//! shots mixed, and the meta-learners (MAML and first-order MAML with one inner step, Reptile),
//! each task's train split the support and its dev split the query; the outer update by AdamW.

use super::train::{loss, Best, Pair};
use super::Model;
use crate::tune::adam::clip;
use crate::tune::ops::{self, sorted_vars};
use crate::tune::train::{fit, schedule};
use crate::tune::{Dropout, Recipe};
use candle_core::{backprop::GradStore, Result, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use domain::rng::SplitMix64;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// How the seen tasks are learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Multi-task learning: every seen task's training pairs mixed, trained as one task.
    Mtl,
    /// MAML with one inner SGD step: the query loss at the adapted weights differentiated
    /// through the inner step, (I - a H) g, the Hessian-vector product H g of the support loss
    /// by a central difference of support gradients (candle has no second-order autodiff).
    Maml,
    /// First-order MAML: one inner SGD step on a support batch, the query batch's gradient
    /// at the adapted weights applied to the weights before it.
    Fomaml,
    /// Reptile: `inner_steps` SGD steps on support batches; the difference between the weights
    /// before and after is the outer gradient.
    Reptile,
}

/// An upstream run's settings (stored with the runs it leads to).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    pub method: Method,
    /// The outer (AdamW) learning rate, or MTL's.
    pub learning_rate: f64,
    /// The inner SGD step size of the meta-learners.
    pub inner_learning_rate: f64,
    /// Reptile's inner steps (first-order MAML takes one).
    pub inner_steps: usize,
    pub batch_size: usize,
    /// Outer updates (MTL: updates).
    pub steps: usize,
    pub warmup: usize,
    /// The dev tasks are decoded every this many updates; the best checkpoint is kept.
    pub eval_every: usize,
    pub dropout: f32,
    pub seed: u64,
}

/// A seen task's pairs: its train split (the support) and its dev split (the query).
pub struct Seen {
    pub support: Vec<Pair>,
    pub query: Vec<Pair>,
}

/// A batch of `n` pairs drawn without replacement (all of them when there are fewer).
fn draw<'a>(pairs: &'a [Pair], n: usize, rng: &mut SplitMix64) -> Vec<&'a Pair> {
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
        .into_iter()
        .take(n.max(1))
        .map(|i| &pairs[i])
        .collect()
}

/// Every weight's gradient of the loss on `batch` (zero where it has none), in `vars`' order.
fn gradients(m: &Model, vars: &[Var], batch: &[&Pair], d: &mut Dropout) -> Result<Vec<Tensor>> {
    let grads = ops::backward(&loss(m, batch, d)?)?;
    vars.iter()
        .map(|v| match grads.get(v.as_tensor()) {
            Some(g) => Ok(g.clone()),
            None => v.as_tensor().zeros_like(),
        })
        .collect()
}

/// Sets each weight to `base + scale * dir`.
fn set_along(vars: &[Var], base: &[Tensor], dir: &[Tensor], scale: f64) -> Result<()> {
    for ((v, b), t) in vars.iter().zip(base).zip(dir) {
        v.set(&(b + (t * scale)?)?)?;
    }
    Ok(())
}

/// MAML's outer gradient for one inner step of size `a` from the weights `vars` hold now:
/// g - a H g, where g is the query gradient at the adapted weights and H the support loss's
/// Hessian there, H g taken as (grad S(w + e g) - grad S(w - e g)) / 2e with the same dropout
/// masks on both sides and e g of norm 1e-2.
fn maml_gradient(
    m: &Model,
    vars: &[Var],
    a: f64,
    support: &[&Pair],
    query: &[&Pair],
    d: &mut Dropout,
) -> Result<Vec<Tensor>> {
    let start: Vec<Tensor> = vars
        .iter()
        .map(|v| v.as_tensor().copy())
        .collect::<Result<_>>()?;
    let masks = d.clone();
    let g_s = gradients(m, vars, support, d)?;
    set_along(vars, &start, &g_s, -a)?;
    let g = gradients(m, vars, query, d)?;
    let norm = g
        .iter()
        .map(|t| Ok(f64::from(t.sqr()?.sum_all()?.to_scalar::<f32>()?)))
        .sum::<Result<f64>>()?
        .sqrt();
    if norm == 0.0 {
        return Ok(g);
    }
    let e = 1e-2 / norm;
    let side = |sign: f64| -> Result<Vec<Tensor>> {
        set_along(vars, &start, &g, sign * e)?;
        gradients(m, vars, support, &mut masks.clone())
    };
    let (plus, minus) = (side(1.0)?, side(-1.0)?);
    g.iter()
        .zip(plus.iter().zip(&minus))
        .map(|(g, (p, q))| g - ((p - q)? * (a / (2.0 * e)))?)
        .collect()
}

/// One plain SGD step on `batch`: every weight minus `lr` times its gradient.
fn sgd_step(m: &Model, vars: &[Var], batch: &[&Pair], lr: f64, d: &mut Dropout) -> Result<()> {
    let grads = ops::backward(&loss(m, batch, d)?)?;
    for v in vars {
        if let Some(g) = grads.get(v.as_tensor()) {
            v.set(&(v.as_tensor() - (g * lr)?)?)?;
        }
    }
    Ok(())
}

/// A gradient store holding `grads` for `vars` (candle's optimisers read one).
fn store(vars: &[Var], grads: Vec<Tensor>) -> Result<GradStore> {
    // An empty store: the gradients of a tensor that depends on no variable.
    let mut s = Tensor::zeros((), candle_core::DType::F32, vars[0].device())?.backward()?;
    for (v, g) in vars.iter().zip(grads) {
        s.insert(v.as_tensor(), g);
    }
    Ok(s)
}

/// The meta-learners' outer optimiser: AdamW over every weight at the outer learning rate,
/// without weight decay.
pub fn outer_optimizer(m: &Model, s: &Settings) -> Result<AdamW> {
    AdamW::new(
        sorted_vars(&m.weights.vars),
        ParamsAdamW {
            lr: s.learning_rate,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )
}

/// The method's outer gradient from a task's support and query batches at the weights `m`
/// holds (which it holds again afterwards), in the order of `sorted_vars`.
pub fn outer_gradient(
    m: &Model,
    s: &Settings,
    support: &[&Pair],
    query: &[&Pair],
    d: &mut Dropout,
) -> Result<Vec<Tensor>> {
    let vars = sorted_vars(&m.weights.vars);
    let start: Vec<Tensor> = vars
        .iter()
        .map(|v| v.as_tensor().copy())
        .collect::<Result<_>>()?;
    let outer: Vec<Tensor> = match s.method {
        Method::Maml => maml_gradient(m, &vars, s.inner_learning_rate, support, query, d)?,
        Method::Fomaml => {
            sgd_step(m, &vars, support, s.inner_learning_rate, d)?;
            gradients(m, &vars, query, d)?
        }
        Method::Reptile => {
            for _ in 0..s.inner_steps.max(1) {
                sgd_step(m, &vars, support, s.inner_learning_rate, d)?;
            }
            vars.iter()
                .zip(&start)
                .map(|(v, t)| t - v.as_tensor())
                .collect::<Result<_>>()?
        }
        Method::Mtl => candle_core::bail!("multi-task learning has no meta-update"),
    };
    for (v, t) in vars.iter().zip(&start) {
        v.set(t)?;
    }
    Ok(outer)
}

/// One meta-update of `m`: the method's outer gradient, clipped at norm 1, applied by `opt`
/// to the weights the update started from.
pub fn meta_step(
    m: &Model,
    opt: &mut AdamW,
    s: &Settings,
    support: &[&Pair],
    query: &[&Pair],
    d: &mut Dropout,
) -> Result<()> {
    let outer = outer_gradient(m, s, support, query, d)?;
    let vars = sorted_vars(&m.weights.vars);
    let mut grads = store(&vars, outer)?;
    clip(&mut grads, &vars, 1.0)?;
    opt.step(&grads)
}

/// Learns the seen tasks with `s.method`, decoding the dev tasks (`score`, higher is better)
/// every `eval_every` updates; the model ends at the best checkpoint. Returns the best score
/// and the update it was seen at. `progress` hears of each update and answers whether to go on:
/// `false` stops the learning with an error at that update.
pub fn upstream(
    m: &Model,
    seen: &[Seen],
    s: &Settings,
    score: &dyn Fn(&Model) -> Result<f64>,
    progress: &mut dyn FnMut(usize, usize) -> bool,
) -> Result<(f64, usize)> {
    let mut best = Best::default();
    // Atomic: the loss closure runs on rayon's threads (`ops::on_pool`).
    let go = AtomicBool::new(true);
    let stopped = || candle_core::Error::Msg("upstream learning was stopped".into());
    let mut check = |step: usize, steps: usize, m: &Model| {
        go.store(go.load(Relaxed) && progress(step, steps), Relaxed);
        if go.load(Relaxed) && (step.is_multiple_of(s.eval_every.max(1)) || step == steps) {
            best.consider(m, step, score);
        }
    };
    if s.method == Method::Mtl {
        let pairs: Vec<&Pair> = seen.iter().flat_map(|t| &t.support).collect();
        let r = Recipe {
            learning_rate: s.learning_rate,
            batch_size: s.batch_size,
            weight_decay: 0.0,
            dropout: s.dropout,
            steps: Some(s.steps),
            warmup: s.warmup,
            seed: s.seed,
            ..Recipe::default()
        };
        fit(
            sorted_vars(&m.weights.vars),
            pairs.len(),
            &r,
            &mut |a, b| check(a, b, m),
            &mut |chunk, d| {
                if !go.load(Relaxed) {
                    return Err(stopped());
                }
                let batch: Vec<&Pair> = chunk.iter().map(|&i| pairs[i]).collect();
                loss(m, &batch, d)
            },
        )?;
    } else {
        let mut opt = outer_optimizer(m, s)?;
        let mut rng = SplitMix64(s.seed);
        let mut d = Dropout::on(s.dropout, s.seed ^ 0x005e_edd0);
        for step in 0..s.steps {
            opt.set_learning_rate(s.learning_rate * schedule(step, s.steps, s.warmup));
            let task = &seen[rng.below(seen.len())];
            let support = draw(&task.support, s.batch_size, &mut rng);
            let query = draw(&task.query, s.batch_size, &mut rng);
            // On rayon's threads, as `fit` runs each update (`ops::on_pool`).
            ops::on_pool(|| meta_step(m, &mut opt, s, &support, &query, &mut d))?;
            check(step + 1, s.steps, m);
            if !go.load(Relaxed) {
                return Err(stopped());
            }
        }
    }
    if !go.load(Relaxed) {
        return Err(stopped());
    }
    let (score, step) = (best.score, best.step);
    best.restore(m)?;
    Ok((score, step))
}
