//! Fused CPU kernels with their backward passes for the encoders' layers: the linear layer,
//! layer norm, GELU (erf), the attention (BERT's and RoBERTa's whole, DeBERTa's softmax), and
//! the embedding lookup, split over rayon's threads; `sink` adds weight gradients in place.
//!
//! Written by hand because candle runs each of its ops in one thread and its backward pass adds
//! every gradient into a fresh tensor: composed, layer norm takes nine ops and GELU's backward
//! twelve, where these take one or two passes. Each kernel does the composed ops' arithmetic in
//! the same order where it can, to a few ulps (exp and GELU eight values at a time, `lanes`),
//! and every sum runs over fixed pieces added in a fixed order, so the results do not depend on
//! the number of threads. Off the CPU (a `cuda` build) `ops` composes the same maths from candle's
//! ops, which the unit tests (`tests.rs`) compare with these.
use candle_core::{bail, DType, Result, Shape, Tensor};
use kernel::{grad2, grad3, op1, op2, op3, In, Kernel};
use rayon::prelude::*;

mod attention;
mod embedding;
mod kernel;
mod lanes;
mod linear;
mod matrix;
mod sink;
pub use attention::attention_op;
pub use embedding::embedding_op;
pub use kernel::{f32_values, with_values};
pub use linear::linear_op;
pub use sink::backward;

/// Elements per parallel piece of an elementwise pass.
const PIECE: usize = 1 << 14;
/// Rows per parallel piece of a row-wise pass (a fixed number: it orders layer norm's sums).
const ROWS: usize = 32;

/// Whether `t` runs on these kernels: f32 on the CPU.
pub fn applies(t: &Tensor) -> bool {
    t.device().is_cpu() && t.dtype() == DType::F32
}

/// GELU (erf) of `x`, elementwise.
pub fn gelu_op(x: &Tensor) -> Result<Tensor> {
    op1(Gelu, x)
}

struct Gelu;

impl Kernel<1> for Gelu {
    const NAME: &'static str = "fused-gelu";

    fn forward(&self, [x]: [In; 1]) -> Result<(Vec<f32>, Shape)> {
        let mut y = vec![0f32; x.v.len()];
        y.par_chunks_mut(PIECE)
            .zip(x.v.par_chunks(PIECE))
            .for_each(|(y, x)| lanes::map_into(y, x, lanes::gelu));
        Ok((y, x.shape.clone()))
    }

    fn backward(&self, [x]: [&Tensor; 1], _y: &Tensor, dy: &Tensor) -> Result<[Option<Tensor>; 1]> {
        Ok([Some(grad2(GeluGrad, x, dy)?)])
    }
}

/// dx = dy · GELU'(x), from (x, dy).
struct GeluGrad;

impl Kernel<2> for GeluGrad {
    const NAME: &'static str = "fused-gelu-grad";

    fn forward(&self, [x, dy]: [In; 2]) -> Result<(Vec<f32>, Shape)> {
        if x.v.len() != dy.v.len() {
            bail!(
                "GELU of {} values given {} gradients",
                x.v.len(),
                dy.v.len()
            );
        }
        let mut dx = vec![0f32; x.v.len()];
        dx.par_chunks_mut(PIECE)
            .zip(x.v.par_chunks(PIECE).zip(dy.v.par_chunks(PIECE)))
            .for_each(|(dx, (x, dy))| {
                lanes::zip_into(dx, x, dy, |x, g| g * lanes::gelu_slope(x));
            });
        Ok((dx, x.shape.clone()))
    }
}

/// `x` times fixed `factors` (dropout's), elementwise; the factors get no gradient.
pub fn scale_op(x: &Tensor, factors: Vec<f32>) -> Result<Tensor> {
    op1(Scale { factors }, x)
}

struct Scale {
    factors: Vec<f32>,
}

impl Scale {
    fn times(&self, x: &[f32]) -> Result<Vec<f32>> {
        if x.len() != self.factors.len() {
            bail!("{} factors for {} values", self.factors.len(), x.len());
        }
        Ok(x.par_iter()
            .zip(self.factors.par_iter())
            .with_min_len(PIECE)
            .map(|(x, f)| x * f)
            .collect())
    }
}

impl Kernel<1> for Scale {
    const NAME: &'static str = "fused-scale";

    fn forward(&self, [x]: [In; 1]) -> Result<(Vec<f32>, Shape)> {
        Ok((self.times(x.v)?, x.shape.clone()))
    }

    fn backward(&self, [x]: [&Tensor; 1], _y: &Tensor, dy: &Tensor) -> Result<[Option<Tensor>; 1]> {
        let dx = with_values([dy], |[dy]| self.times(dy))?;
        Ok([Some(Tensor::from_vec(dx, x.shape(), x.device())?)])
    }
}

/// Layer norm of `x` over its last dimension, scaled by `w` and shifted by `b` (both `[h]`).
pub fn layer_norm_op(x: &Tensor, w: &Tensor, b: &Tensor, eps: f64) -> Result<Tensor> {
    op3(LayerNorm { eps: eps as f32 }, x, w, b)
}

struct LayerNorm {
    eps: f32,
}

/// A row's mean and 1 / standard deviation, as the composed layer norm takes them.
fn moments(row: &[f32], eps: f32) -> (f32, f32) {
    let n = row.len() as f32;
    let mean = row.iter().sum::<f32>() / n;
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
    (mean, 1.0 / (var + eps).sqrt())
}

impl Kernel<3> for LayerNorm {
    const NAME: &'static str = "fused-layer-norm";

    fn forward(&self, [x, w, b]: [In; 3]) -> Result<(Vec<f32>, Shape)> {
        let h = w.v.len();
        if h == 0 || b.v.len() != h || !x.v.len().is_multiple_of(h) {
            bail!(
                "layer norm over {h} values given {} and a bias of {}",
                x.v.len(),
                b.v.len()
            );
        }
        let mut y = vec![0f32; x.v.len()];
        y.par_chunks_mut(h)
            .zip(x.v.par_chunks(h))
            .with_min_len(ROWS)
            .for_each(|(y, x)| {
                let (mean, inv) = moments(x, self.eps);
                for (((y, x), w), b) in y.iter_mut().zip(x).zip(w.v).zip(b.v) {
                    *y = (x - mean) * inv * w + b;
                }
            });
        Ok((y, x.shape.clone()))
    }

    fn backward(
        &self,
        [x, w, b]: [&Tensor; 3],
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<[Option<Tensor>; 3]> {
        unpack(grad3(LayerNormGrad { eps: self.eps }, x, w, dy)?, [x, w, b])
    }
}

/// The gradients of `inputs`, one after the other in the vector `grads`, each shaped as its input.
fn unpack(grads: Tensor, inputs: [&Tensor; 3]) -> Result<[Option<Tensor>; 3]> {
    let (mut at, mut out) = (0, [None, None, None]);
    for (o, t) in out.iter_mut().zip(inputs) {
        let n = t.elem_count();
        *o = Some(grads.narrow(0, at, n)?.reshape(t.shape())?);
        at += n;
    }
    Ok(out)
}

/// Sums pieces' partial sums in their order into `into`.
fn add_parts(into: &mut [f32], parts: &[Vec<f32>]) {
    for part in parts {
        for (s, p) in into.iter_mut().zip(part) {
            *s += p;
        }
    }
}

/// Layer norm's gradients from (x, w, dy), one after the other in one vector: dx, dw, db.
struct LayerNormGrad {
    eps: f32,
}

impl Kernel<3> for LayerNormGrad {
    const NAME: &'static str = "fused-layer-norm-grad";

    fn forward(&self, [x, w, dy]: [In; 3]) -> Result<(Vec<f32>, Shape)> {
        let (w, h) = (w.v, w.v.len());
        let rows = x.v.len() / h;
        let mut out = vec![0f32; (rows + 2) * h];
        let (dx, sums) = out.split_at_mut(rows * h);
        // Each piece of rows writes its dx and returns its part of dw and db.
        let parts: Vec<Vec<f32>> = dx
            .par_chunks_mut(ROWS * h)
            .zip(x.v.par_chunks(ROWS * h).zip(dy.v.par_chunks(ROWS * h)))
            .map(|(dx, (x, dy))| {
                let mut part = vec![0f32; 2 * h];
                let (dw, db) = part.split_at_mut(h);
                for ((dx, x), dy) in dx.chunks_mut(h).zip(x.chunks(h)).zip(dy.chunks(h)) {
                    let (mean, inv) = moments(x, self.eps);
                    let (mut m1, mut m2) = (0f32, 0f32);
                    for ((x, dy), w) in x.iter().zip(dy).zip(w) {
                        let g = dy * w;
                        m1 += g;
                        m2 += g * (x - mean) * inv;
                    }
                    let (m1, m2) = (m1 / h as f32, m2 / h as f32);
                    for i in 0..h {
                        let xhat = (x[i] - mean) * inv;
                        dx[i] = inv * (dy[i] * w[i] - m1 - xhat * m2);
                        dw[i] += dy[i] * xhat;
                        db[i] += dy[i];
                    }
                }
                part
            })
            .collect();
        add_parts(sums, &parts);
        let n = out.len();
        Ok((out, Shape::from(n)))
    }
}

/// softmax(scale · x + bias) over the last dimension of `x` (`[b, heads, s, s]`), with `bias`
/// (`[b, 1, 1, s]`, the padding's) added to every row of its input; the bias gets no gradient.
pub fn masked_softmax_op(x: &Tensor, bias: &Tensor, scale: f64) -> Result<Tensor> {
    let scale = scale as f32;
    op2(MaskedSoftmax { scale }, x, bias)
}

struct MaskedSoftmax {
    scale: f32,
}

impl Kernel<2> for MaskedSoftmax {
    const NAME: &'static str = "fused-masked-softmax";

    fn forward(&self, [x, bias]: [In; 2]) -> Result<(Vec<f32>, Shape)> {
        let s = x.last();
        let batch = x.shape.dims().first().copied().unwrap_or(0);
        if s == 0 || bias.v.len() != batch * s || !x.v.len().is_multiple_of(batch * s) {
            bail!("a softmax over {s} values given a bias of {}", bias.v.len());
        }
        // Rows of one input: its bias row serves all of them.
        let per_input = x.v.len() / (batch * s);
        let mut y = vec![0f32; x.v.len()];
        y.par_chunks_mut(s)
            .zip(x.v.par_chunks(s))
            .enumerate()
            .with_min_len(ROWS)
            .for_each(|(r, (y, x))| {
                y.copy_from_slice(x);
                softmax_row(y, &bias.v[(r / per_input) * s..][..s], self.scale);
            });
        Ok((y, x.shape.clone()))
    }

    fn backward(&self, _x: [&Tensor; 2], y: &Tensor, dy: &Tensor) -> Result<[Option<Tensor>; 2]> {
        let scale = self.scale;
        Ok([Some(grad2(SoftmaxGrad { scale }, y, dy)?), None])
    }
}

/// A row of scores, in place, to softmax(scale · row + bias).
fn softmax_row(row: &mut [f32], bias: &[f32], scale: f32) {
    let mut max = f32::NEG_INFINITY;
    for (v, b) in row.iter_mut().zip(bias) {
        *v = *v * scale + b;
        max = max.max(*v);
    }
    let max = wide::f32x8::from(max);
    lanes::in_place(row, |v| lanes::exp(v - max));
    let sum: f32 = row.iter().sum();
    for v in row.iter_mut() {
        *v /= sum;
    }
}

/// A row of the softmax's output gradient dy, in place, to its input's: scale · y ⊙ (dy − Σ dy ⊙ y).
fn softmax_grad_row(row: &mut [f32], y: &[f32], scale: f32) {
    let dot: f32 = y.iter().zip(row.iter()).map(|(y, g)| y * g).sum();
    for (g, y) in row.iter_mut().zip(y) {
        *g = scale * y * (*g - dot);
    }
}

/// dx = scale · y ⊙ (dy − Σ dy ⊙ y), row by row, from (y, dy).
struct SoftmaxGrad {
    scale: f32,
}

impl Kernel<2> for SoftmaxGrad {
    const NAME: &'static str = "fused-softmax-grad";

    fn forward(&self, [y, dy]: [In; 2]) -> Result<(Vec<f32>, Shape)> {
        let s = y.last().max(1);
        let mut dx = vec![0f32; y.v.len()];
        dx.par_chunks_mut(s)
            .zip(y.v.par_chunks(s).zip(dy.v.par_chunks(s)))
            .with_min_len(ROWS)
            .for_each(|(dx, (y, dy))| {
                dx.copy_from_slice(dy);
                softmax_grad_row(dx, y, self.scale);
            });
        Ok((dx, y.shape.clone()))
    }
}

#[cfg(test)]
mod tests;
