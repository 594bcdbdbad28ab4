//! BERT's and RoBERTa's self-attention as one op with its backward pass: per head,
//! softmax(scale · q kᵀ + the padding's bias), dropout's mask, times v.
//!
//! q, k, v and the output keep the linear layers' layout `[b, s, heads · d]`: the products read
//! a head through strides, where composed ops copy every head out and back (and candle's backward
//! pass adds a gradient into a fresh tensor at each of those copies). The backward pass computes
//! each head's probabilities again from q and k (one product more, of seven per head) instead
//! of keeping them from the forward pass.

use super::kernel::{op3, with_values, In, Kernel};
use super::matrix::{product, Matrix};
use super::{softmax_grad_row, softmax_row, unpack};
use candle_core::{bail, Device, Result, Shape, Tensor};
use rayon::prelude::*;

/// The attention of queries `q`, keys `k` and values `v` (each `[b, s, heads · d]`) with the
/// padding's `bias` (`[b, 1, 1, s]`: 0 where attended, a large negative number at padding) and
/// dropout's `keep` factors on the probabilities (`[b, heads, s, s]`; none without dropout).
pub fn attention_op(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    bias: &Tensor,
    heads: usize,
    scale: f64,
    keep: Option<Vec<f32>>,
) -> Result<Tensor> {
    let attention = Attention {
        heads,
        scale: scale as f32,
        bias: bias.flatten_all()?.to_vec1()?,
        keep,
    };
    op3(attention, q, k, v)
}

struct Attention {
    heads: usize,
    scale: f32,
    /// `[b, s]`
    bias: Vec<f32>,
    /// `[b, heads, s, s]`
    keep: Option<Vec<f32>>,
}

/// Positions, hidden size (heads · d) and head size.
#[derive(Clone, Copy)]
struct Dims {
    s: usize,
    h: usize,
    d: usize,
}

impl Attention {
    /// The sizes of `q`, checked against `k`, `v`, the bias and the mask.
    fn dims(&self, q: &Shape, k: &Shape, v: &Shape) -> Result<(usize, Dims)> {
        let &[b, s, h] = q.dims() else {
            bail!("attention over {:?}: [batch, positions, hidden] needed", q)
        };
        if k != q || v != q {
            bail!("attention's queries {q:?}, keys {k:?} and values {v:?} differ");
        }
        if self.heads == 0 || !h.is_multiple_of(self.heads) {
            bail!("a hidden size of {h} in {} heads", self.heads);
        }
        if self.bias.len() != b * s {
            bail!("a padding bias of {} for {b} x {s}", self.bias.len());
        }
        if let Some(keep) = &self.keep {
            if keep.len() != b * self.heads * s * s {
                bail!("a dropout mask of {} for {b} x {s}", keep.len());
            }
        }
        let d = h / self.heads;
        Ok((b, Dims { s, h, d }))
    }

    /// Head `bh` (batch · heads + head) of `t` (`[b, s, heads · d]`) as an `s × d` matrix.
    fn head<'a>(&self, t: &'a [f32], n: Dims, bh: usize) -> Matrix<'a> {
        let (b, head) = (bh / self.heads, bh % self.heads);
        Matrix::strided(&t[b * n.s * n.h + head * n.d..], n.s, n.d, n.h)
    }

    /// Head `bh`'s probabilities into `p` (`s × s`), before dropout.
    fn probs(&self, q: &[f32], k: &[f32], n: Dims, bh: usize, p: &mut [f32]) -> Result<()> {
        let (qh, kh) = (self.head(q, n, bh), self.head(k, n, bh));
        product(p, false, qh, kh.t(), false)?;
        let bias = &self.bias[(bh / self.heads) * n.s..][..n.s];
        for row in p.chunks_mut(n.s) {
            softmax_row(row, bias, self.scale);
        }
        Ok(())
    }

    /// Multiplies head `bh`'s `s × s` values by dropout's factors, where dropout is on.
    fn drop(&self, values: &mut [f32], bh: usize) {
        if let Some(keep) = &self.keep {
            let keep = &keep[bh * values.len()..][..values.len()];
            for (v, k) in values.iter_mut().zip(keep) {
                *v *= k;
            }
        }
    }

    /// Head `bh`'s gradients of q, k and v (`s × d` each, one after the other in `out`) from
    /// the output's gradient `dy`.
    fn head_grads(&self, x: [&[f32]; 4], n: Dims, bh: usize, out: &mut [f32]) -> Result<()> {
        let [q, k, v, dy] = x;
        let s = n.s;
        let (mut p, mut dp) = (vec![0f32; s * s], vec![0f32; s * s]);
        self.probs(q, k, n, bh, &mut p)?;
        let mut dropped = p.clone();
        self.drop(&mut dropped, bh);
        let (dq, rest) = out.split_at_mut(s * n.d);
        let (dk, dv) = rest.split_at_mut(s * n.d);
        let dyh = self.head(dy, n, bh);
        product(dv, false, Matrix::new(&dropped, s, s).t(), dyh, false)?;
        product(&mut dp, false, dyh, self.head(v, n, bh).t(), false)?;
        self.drop(&mut dp, bh);
        for (g, y) in dp.chunks_mut(s).zip(p.chunks(s)) {
            softmax_grad_row(g, y, self.scale);
        }
        product(
            dq,
            false,
            Matrix::new(&dp, s, s),
            self.head(k, n, bh),
            false,
        )?;
        product(
            dk,
            false,
            Matrix::new(&dp, s, s).t(),
            self.head(q, n, bh),
            false,
        )
    }
}

/// `heads` (`[b, heads, parts · s · d]`: each head's `parts` results of `s × d` one after the
/// other) into `parts` tensors of `[b, s, heads · d]`, one after the other.
fn merge(heads: &[f32], parts: usize, b: usize, n: Dims) -> Vec<f32> {
    let nh = n.h / n.d;
    let mut out = vec![0f32; parts * b * n.s * n.h];
    out.par_chunks_mut(n.h)
        .enumerate()
        .with_min_len(n.s)
        .for_each(|(row, out)| {
            let (part, bi, i) = (row / (b * n.s), (row / n.s) % b, row % n.s);
            for (head, out) in out.chunks_mut(n.d).enumerate() {
                let at = ((bi * nh + head) * parts + part) * n.s * n.d + i * n.d;
                out.copy_from_slice(&heads[at..][..n.d]);
            }
        });
    out
}

impl Kernel<3> for Attention {
    const NAME: &'static str = "fused-attention";

    fn forward(&self, [q, k, v]: [In; 3]) -> Result<(Vec<f32>, Shape)> {
        let (b, n) = self.dims(q.shape, k.shape, v.shape)?;
        let s = n.s;
        let mut heads = vec![0f32; b * self.heads * s * n.d];
        heads
            .par_chunks_mut(s * n.d)
            .enumerate()
            .try_for_each(|(bh, out)| {
                let mut p = vec![0f32; s * s];
                self.probs(q.v, k.v, n, bh, &mut p)?;
                self.drop(&mut p, bh);
                product(
                    out,
                    false,
                    Matrix::new(&p, s, s),
                    self.head(v.v, n, bh),
                    false,
                )
            })?;
        Ok((merge(&heads, 1, b, n), q.shape.clone()))
    }

    fn backward(
        &self,
        [q, k, v]: [&Tensor; 3],
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<[Option<Tensor>; 3]> {
        let (b, n) = self.dims(q.shape(), k.shape(), v.shape())?;
        if dy.shape() != q.shape() {
            bail!("attention's gradient {:?} for {:?}", dy.shape(), q.shape());
        }
        let all = with_values([q, k, v, dy], |x| {
            let mut heads = vec![0f32; 3 * b * self.heads * n.s * n.d];
            heads
                .par_chunks_mut(3 * n.s * n.d)
                .enumerate()
                .try_for_each(|(bh, out)| self.head_grads(x, n, bh, out))?;
            Ok(merge(&heads, 3, b, n))
        })?;
        let len = all.len();
        unpack(Tensor::from_vec(all, len, &Device::Cpu)?, [q, k, v])
    }
}
