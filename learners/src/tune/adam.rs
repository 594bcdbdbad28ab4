//! AdamW with the gradient's global norm clipped, in one pass over each weight on the CPU.
//! candle_nn's AdamW makes about fourteen weight-sized temporaries per weight and update, and
//! clipping two more: on a BERT-base model that was 2.0 s of a 2.7 s update (`bench --train`,
//! PyTorch's step: 0.4 s). This does candle_nn's arithmetic, in f32 and in the same order,
//! reading each weight, gradient and moment once and writing the weight in place (candle's
//! in-place op), split over rayon's threads. On other devices candle_nn's AdamW and `clip` run
//! as before.

use super::fused::{f32_values, with_values};
use candle_core::backprop::GradStore;
use candle_core::{CpuStorage, Device, InplaceOp2, Layout, Result, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rayon::prelude::*;
use std::sync::Mutex;

/// Elements per parallel piece of the step.
const PIECE: usize = 1 << 15;

/// AdamW over a model's weights, with clipping.
pub enum Adam {
    /// On the CPU: each weight's first and second moments, beside the weight.
    Cpu {
        vars: Vec<(Var, Vec<f32>, Vec<f32>)>,
        params: ParamsAdamW,
        step_t: i32,
    },
    /// Elsewhere: candle_nn's.
    Candle { vars: Vec<Var>, opt: AdamW },
}

/// One weight's update: the moments it reads and writes, and the update's constants.
struct Update<'a> {
    moments: Mutex<(&'a mut [f32], &'a mut [f32])>,
    /// The gradient's factor from clipping, then AdamW's constants as candle_nn's affine ops
    /// apply them (f64 cast to f32).
    scale: f32,
    c: Constants,
}

#[derive(Clone, Copy)]
struct Constants {
    beta1: f32,
    one_minus_beta1: f32,
    beta2: f32,
    one_minus_beta2: f32,
    scale_m: f32,
    scale_v: f32,
    decay: f32,
    eps: f32,
    lr: f32,
}

impl InplaceOp2 for Update<'_> {
    fn name(&self) -> &'static str {
        "adamw-step"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<()> {
        let g = f32_values(s2, l2)?;
        let Some((a, b)) = l1.contiguous_offsets() else {
            candle_core::bail!("adam: the weight is not contiguous")
        };
        let CpuStorage::F32(theta) = s1 else {
            candle_core::bail!("adam: the weight is not f32")
        };
        let theta = &mut theta[a..b];
        let mut moments = self
            .moments
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (m, v) = &mut *moments;
        if theta.len() != g.len() || m.len() != g.len() {
            candle_core::bail!("adam: a gradient of another size than its weight");
        }
        let (c, scale) = (self.c, self.scale);
        // Each element on its own: split over rayon's threads, the same bits on any number.
        theta
            .par_chunks_mut(PIECE)
            .zip(g.par_chunks(PIECE))
            .zip(m.par_chunks_mut(PIECE).zip(v.par_chunks_mut(PIECE)))
            .for_each(|((theta, g), (m, v))| {
                for i in 0..g.len() {
                    let gi = g[i] * scale;
                    m[i] = m[i] * c.beta1 + gi * c.one_minus_beta1;
                    v[i] = v[i] * c.beta2 + (gi * gi) * c.one_minus_beta2;
                    let (m_hat, v_hat) = (m[i] * c.scale_m, v[i] * c.scale_v);
                    let adjusted = m_hat / (v_hat.sqrt() + c.eps);
                    theta[i] = theta[i] * c.decay - adjusted * c.lr;
                }
            });
        Ok(())
    }
}

impl Adam {
    pub fn new(vars: Vec<Var>, params: ParamsAdamW) -> Result<Adam> {
        let on_cpu = vars
            .iter()
            .all(|v| matches!(v.device(), Device::Cpu) && v.dtype() == candle_core::DType::F32);
        if !on_cpu {
            let opt = AdamW::new(vars.clone(), params)?;
            return Ok(Adam::Candle { vars, opt });
        }
        let vars = vars
            .into_iter()
            .map(|v| {
                let n = v.elem_count();
                (v, vec![0f32; n], vec![0f32; n])
            })
            .collect();
        Ok(Adam::Cpu {
            vars,
            params,
            step_t: 0,
        })
    }

    pub fn set_learning_rate(&mut self, lr: f64) {
        match self {
            Adam::Cpu { params, .. } => params.lr = lr,
            Adam::Candle { opt, .. } => opt.set_learning_rate(lr),
        }
    }

    /// Scales the gradients so that their global L2 norm is at most `max_norm` (as
    /// `clip`), then makes one AdamW update of every weight that has a gradient.
    pub fn clip_and_step(&mut self, grads: &mut GradStore, max_norm: f64) -> Result<()> {
        let (vars, params, step_t) = match self {
            Adam::Candle { vars, opt } => {
                clip(grads, vars, max_norm)?;
                return opt.step(grads);
            }
            Adam::Cpu {
                vars,
                params,
                step_t,
            } => (vars, params, step_t),
        };
        let mut sq = 0.0f64;
        for (var, ..) in vars.iter() {
            if let Some(g) = grads.get(var.as_tensor()) {
                // Fixed pieces added in order: the same norm on any number of threads.
                let parts: Vec<f64> = with_values([g], |[g]| {
                    Ok(g.par_chunks(PIECE)
                        .map(|c| c.iter().map(|&x| f64::from(x * x)).sum::<f64>())
                        .collect())
                })?;
                sq += parts.iter().sum::<f64>();
            }
        }
        let norm = sq.sqrt();
        let scale = if norm > max_norm && norm.is_finite() {
            (max_norm / (norm + 1e-6)) as f32
        } else {
            1.0
        };
        *step_t += 1;
        let p = params.clone();
        let c = Constants {
            beta1: p.beta1 as f32,
            one_minus_beta1: (1.0 - p.beta1) as f32,
            beta2: p.beta2 as f32,
            one_minus_beta2: (1.0 - p.beta2) as f32,
            scale_m: (1.0 / (1.0 - p.beta1.powi(*step_t))) as f32,
            scale_v: (1.0 / (1.0 - p.beta2.powi(*step_t))) as f32,
            decay: (1.0 - p.lr * p.weight_decay) as f32,
            eps: p.eps as f32,
            lr: p.lr as f32,
        };
        for (var, m, v) in vars.iter_mut() {
            if let Some(g) = grads.get(var.as_tensor()) {
                let update = Update {
                    moments: Mutex::new((m.as_mut_slice(), v.as_mut_slice())),
                    scale,
                    c,
                };
                var.as_tensor().inplace_op2(g, &update)?;
            }
        }
        Ok(())
    }
}

/// Scales the gradients so that their global L2 norm is at most `max` (as Hugging Face's
/// Trainer does by default, with 1.0).
pub fn clip(
    grads: &mut candle_core::backprop::GradStore,
    vars: &[candle_core::Var],
    max: f64,
) -> Result<()> {
    let mut sq = 0.0f64;
    for v in vars {
        if let Some(g) = grads.get(v.as_tensor()) {
            sq += f64::from(g.sqr()?.sum_all()?.to_scalar::<f32>()?);
        }
    }
    let norm = sq.sqrt();
    if norm > max && norm.is_finite() {
        let scale = max / (norm + 1e-6);
        for v in vars {
            if let Some(g) = grads.remove(v.as_tensor()) {
                grads.insert(v.as_tensor(), (g * scale)?);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Tensor;

    /// Three updates of two weights, the gradient clipped on the first: the same weights as
    /// candle_nn's AdamW after `clip`, to float rounding.
    #[test]
    fn the_fused_update_is_candle_nns_adamw_after_clipping() {
        let dev = Device::Cpu;
        let start = [
            Tensor::randn(0f32, 1.0, (7, 5), &dev).unwrap(),
            Tensor::randn(0f32, 1.0, 11, &dev).unwrap(),
        ];
        let make = || -> Vec<Var> { start.iter().map(|t| Var::from_tensor(t).unwrap()).collect() };
        let (ours, theirs) = (make(), make());
        let params = ParamsAdamW {
            lr: 0.01,
            weight_decay: 0.05,
            ..ParamsAdamW::default()
        };
        let mut fused = Adam::new(ours.clone(), params.clone()).unwrap();
        assert!(matches!(fused, Adam::Cpu { .. }));
        let mut candle = AdamW::new(theirs.clone(), params).unwrap();
        for (step, size) in [(0, 30.0), (1, 0.1), (2, 1.0)] {
            let loss = |vs: &[Var]| {
                let a = (vs[0].as_tensor().sqr().unwrap().sum_all().unwrap() * size).unwrap();
                let b = vs[1].as_tensor().sin().unwrap().sum_all().unwrap();
                (a + b).unwrap()
            };
            let mut g1 = loss(&ours).backward().unwrap();
            fused.clip_and_step(&mut g1, 1.0).unwrap();
            let mut g2 = loss(&theirs).backward().unwrap();
            clip(&mut g2, &theirs, 1.0).unwrap();
            candle.step(&g2).unwrap();
            for (a, b) in ours.iter().zip(&theirs) {
                let values = |v: &Var| {
                    v.as_tensor()
                        .flatten_all()
                        .unwrap()
                        .to_vec1::<f32>()
                        .unwrap()
                };
                let (x, y) = (values(a), values(b));
                let diff = x
                    .iter()
                    .zip(&y)
                    .map(|(p, q)| (p - q).abs())
                    .fold(0f32, f32::max);
                assert!(diff < 1e-6, "update {step}: {diff}");
            }
        }
        let moved = (ours[0].as_tensor() - &start[0]).unwrap().abs().unwrap();
        let moved = moved.sum_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(moved > 0.01, "{moved}");
    }
}
