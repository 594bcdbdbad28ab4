//! The linear layer `x Wᵀ + b` as one op with its backward pass: three products by `gemm` (the
//! matrix crate candle's CPU backend multiplies with) and the bias's sums over rows.
//!
//! Composed from candle's ops (reshape, transpose, matmul, broadcast add, reshape), a linear
//! layer's backward pass adds a gradient into a fresh tensor at each of the five, one of them
//! through the transpose's strides, for every weight of the model; as one op, dx, dW and db
//! are each written once, dW and db into the weights' own buffers while `sink::backward` runs.

use super::kernel::{op3, with_values, In, Kernel};
use super::matrix::{product, Matrix};
use super::{add_parts, sink, unpack, ROWS};
use candle_core::{bail, Device, Result, Shape, Tensor};
use rayon::prelude::*;

/// `x Wᵀ + b` over the last dimension of `x` (`[.., in]`), with `w` `[out, in]` and `b` `[out]`.
pub fn linear_op(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
    op3(Linear, x, w, b)
}

/// The sizes of a linear layer: rows of x, inputs, outputs.
#[derive(Clone, Copy)]
struct Sizes {
    rows: usize,
    inner: usize,
    out: usize,
}

impl Sizes {
    /// The sizes of a linear layer of weight `w` on `x`, checked.
    fn of(x: &Shape, w: &Shape) -> Result<Sizes> {
        let &[out, inner] = w.dims() else {
            bail!("a linear layer's weight must be a matrix, not {w:?}");
        };
        let n = x.elem_count();
        if inner == 0 || !n.is_multiple_of(inner) {
            bail!("a linear layer of {inner} inputs given {n} values");
        }
        Ok(Sizes {
            rows: n / inner,
            inner,
            out,
        })
    }

    /// dx = dy W.
    fn dx(self, dx: &mut [f32], dy: &[f32], w: &[f32]) -> Result<()> {
        let g = Matrix::new(dy, self.rows, self.out);
        product(dx, false, g, Matrix::new(w, self.out, self.inner), true)
    }

    /// dW = dyᵀ x, added to `dw` where `add`.
    fn dw(self, dw: &mut [f32], add: bool, dy: &[f32], x: &[f32]) -> Result<()> {
        let g = Matrix::new(dy, self.rows, self.out);
        product(dw, add, g.t(), Matrix::new(x, self.rows, self.inner), true)
    }

    /// Adds the sums of dy's rows to `db` (over fixed pieces of rows, added in order).
    fn db(self, db: &mut [f32], dy: &[f32]) {
        let parts: Vec<Vec<f32>> = dy
            .par_chunks(ROWS * self.out)
            .map(|piece| {
                let mut sum = vec![0f32; self.out];
                for row in piece.chunks(self.out) {
                    for (s, v) in sum.iter_mut().zip(row) {
                        *s += v;
                    }
                }
                sum
            })
            .collect();
        add_parts(db, &parts);
    }
}

struct Linear;

impl Kernel<3> for Linear {
    const NAME: &'static str = "fused-linear";

    fn forward(&self, [x, w, b]: [In; 3]) -> Result<(Vec<f32>, Shape)> {
        let n = Sizes::of(x.shape, w.shape)?;
        if b.v.len() != n.out {
            bail!(
                "a linear layer of {} outputs given a bias of {}",
                n.out,
                b.v.len()
            );
        }
        // Each row starts as the bias; the product is added to it.
        let mut y: Vec<f32> = b.v.repeat(n.rows);
        product(
            &mut y,
            true,
            Matrix::new(x.v, n.rows, n.inner),
            Matrix::new(w.v, n.out, n.inner).t(),
            true,
        )?;
        let mut dims = x.shape.dims().to_vec();
        if let Some(last) = dims.last_mut() {
            *last = n.out;
        }
        Ok((y, Shape::from(dims)))
    }

    fn backward(
        &self,
        [x, w, b]: [&Tensor; 3],
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<[Option<Tensor>; 3]> {
        let n = Sizes::of(x.shape(), w.shape())?;
        if dy.elem_count() != n.rows * n.out {
            bail!(
                "a linear layer's gradient of {} values for {} rows of {}",
                dy.elem_count(),
                n.rows,
                n.out
            );
        }
        if sink::collecting() {
            let dx = with_values([w, dy], |[w, dy]| {
                let mut dx = vec![0f32; n.rows * n.inner];
                n.dx(&mut dx, dy, w)?;
                Ok(dx)
            })?;
            with_values([x, dy], |[x, dy]| {
                sink::add_to(w, |dw, fresh| n.dw(dw, !fresh, dy, x))?;
                sink::add_to(b, |db, _| {
                    n.db(db, dy);
                    Ok(())
                })
            })?;
            return Ok([
                Some(Tensor::from_vec(dx, x.shape(), &Device::Cpu)?),
                None,
                None,
            ]);
        }
        // dx, dW and db one after the other in one vector.
        let all = with_values([x, w, dy], |[x, w, dy]| {
            let mut all = vec![0f32; n.rows * n.inner + n.out * n.inner + n.out];
            let (dx, rest) = all.split_at_mut(n.rows * n.inner);
            let (dw, db) = rest.split_at_mut(n.out * n.inner);
            n.dx(dx, dy, w)?;
            n.dw(dw, false, dy, x)?;
            n.db(db, dy);
            Ok(all)
        })?;
        let len = all.len();
        unpack(Tensor::from_vec(all, len, &Device::Cpu)?, [x, w, b])
    }
}
