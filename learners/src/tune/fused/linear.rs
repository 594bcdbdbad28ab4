//! The linear layer `x Wᵀ + b` as one op with its backward pass: three products by `gemm` (the
//! matrix crate candle's CPU backend multiplies with) and the bias's sums over rows.
//!
//! Composed from candle's ops (reshape, transpose, matmul, broadcast add, reshape), a linear
//! layer's backward pass adds a gradient into a fresh tensor at each of the five, one of them
//! through the transpose's strides, for every weight of the model; as one op, dx, dW and db
//! are each written once.

use super::kernel::{grad3, op3, In, Kernel};
use super::{add_parts, unpack, ROWS};
use candle_core::{bail, Result, Shape, Tensor};
use rayon::prelude::*;

/// `x Wᵀ + b` over the last dimension of `x` (`[.., in]`), with `w` `[out, in]` and `b` `[out]`.
pub fn linear_op(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
    op3(Linear, x, w, b)
}

/// A matrix read from a slice through its row and column strides.
#[derive(Clone, Copy)]
struct Matrix<'a> {
    values: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Matrix<'a> {
    /// A row-major `rows × cols` matrix.
    fn new(values: &'a [f32], rows: usize, cols: usize) -> Matrix<'a> {
        Matrix {
            values,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The same values read as the transpose.
    fn t(self) -> Matrix<'a> {
        Matrix {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every element the strides reach lies in the slice.
    fn fits(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride
                < self.values.len()
    }
}

/// `dst` (row-major, `lhs.rows × rhs.cols`) = `dst` (where `add`, else nothing) + `lhs · rhs`,
/// on rayon's threads.
fn product(dst: &mut [f32], add: bool, lhs: Matrix, rhs: Matrix) -> Result<()> {
    let (m, n, k) = (lhs.rows, rhs.cols, lhs.cols);
    if rhs.rows != k || dst.len() != m * n || !lhs.fits() || !rhs.fits() {
        bail!(
            "a product of {m}x{k} by {}x{n} into {} values",
            rhs.rows,
            dst.len()
        );
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    let threads = rayon::current_num_threads();
    let parallelism = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: `dst` holds m × n values written row-major (column stride 1, row stride n), and
    // `fits` checked that every element `lhs` (m × k) and `rhs` (k × n) reach through their
    // strides lies in their slices; `dst` is a unique borrow, so it aliases neither.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            add,
            lhs.values.as_ptr(),
            lhs.col_stride as isize,
            lhs.row_stride as isize,
            rhs.values.as_ptr(),
            rhs.col_stride as isize,
            rhs.row_stride as isize,
            if add { 1.0 } else { 0.0 },
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
    Ok(())
}

/// The sizes of a linear layer of weight `w` on `x`: (rows of x, in, out).
fn sizes(x: In, w: In) -> Result<(usize, usize, usize)> {
    let &[out, inner] = w.shape.dims() else {
        bail!(
            "a linear layer's weight must be a matrix, not {:?}",
            w.shape
        );
    };
    if inner == 0 || !x.v.len().is_multiple_of(inner) {
        bail!(
            "a linear layer of {inner} inputs given {} values",
            x.v.len()
        );
    }
    Ok((x.v.len() / inner, inner, out))
}

struct Linear;

impl Kernel<3> for Linear {
    const NAME: &'static str = "fused-linear";

    fn forward(&self, [x, w, b]: [In; 3]) -> Result<(Vec<f32>, Shape)> {
        let (rows, inner, out) = sizes(x, w)?;
        if b.v.len() != out {
            bail!(
                "a linear layer of {out} outputs given a bias of {}",
                b.v.len()
            );
        }
        // Each row starts as the bias; the product is added to it.
        let mut y: Vec<f32> = b.v.repeat(rows);
        product(
            &mut y,
            true,
            Matrix::new(x.v, rows, inner),
            Matrix::new(w.v, out, inner).t(),
        )?;
        let mut dims = x.shape.dims().to_vec();
        if let Some(last) = dims.last_mut() {
            *last = out;
        }
        Ok((y, Shape::from(dims)))
    }

    fn backward(
        &self,
        [x, w, b]: [&Tensor; 3],
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<[Option<Tensor>; 3]> {
        unpack(grad3(LinearGrad, x, w, dy)?, [x, w, b])
    }
}

/// A linear layer's gradients from (x, W, dy), one after the other in one vector: dx = dy W,
/// dW = dyᵀ x, db = the sums of dy's rows (over fixed pieces of rows, added in order).
struct LinearGrad;

impl Kernel<3> for LinearGrad {
    const NAME: &'static str = "fused-linear-grad";

    fn forward(&self, [x, w, dy]: [In; 3]) -> Result<(Vec<f32>, Shape)> {
        let (rows, inner, out) = sizes(x, w)?;
        if dy.v.len() != rows * out {
            bail!(
                "a linear layer's gradient of {} values for {rows} rows of {out}",
                dy.v.len()
            );
        }
        let mut all = vec![0f32; rows * inner + out * inner + out];
        let (dx, rest) = all.split_at_mut(rows * inner);
        let (dw, db) = rest.split_at_mut(out * inner);
        let g = Matrix::new(dy.v, rows, out);
        product(dx, false, g, Matrix::new(w.v, out, inner))?;
        product(dw, false, g.t(), Matrix::new(x.v, rows, inner))?;
        let parts: Vec<Vec<f32>> =
            dy.v.par_chunks(ROWS * out)
                .map(|piece| {
                    let mut sum = vec![0f32; out];
                    for row in piece.chunks(out) {
                        for (s, v) in sum.iter_mut().zip(row) {
                            *s += v;
                        }
                    }
                    sum
                })
                .collect();
        add_parts(db, &parts);
        let n = all.len();
        Ok((all, Shape::from(n)))
    }
}
