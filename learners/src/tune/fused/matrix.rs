//! Matrix products by `gemm` (the matrix crate candle's CPU backend multiplies with) on
//! matrices read through strides, so that transposes and attention heads need no copies.

use candle_core::{bail, Result};

/// A matrix read from a slice through its row and column strides.
#[derive(Clone, Copy)]
pub struct Matrix<'a> {
    values: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Matrix<'a> {
    /// A row-major `rows × cols` matrix.
    pub fn new(values: &'a [f32], rows: usize, cols: usize) -> Matrix<'a> {
        Matrix {
            values,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// A `rows × cols` matrix whose rows lie `row_stride` values apart (one attention head's
    /// columns of a `[s, heads · d]` block, from the head's first value on).
    pub fn strided(values: &'a [f32], rows: usize, cols: usize, row_stride: usize) -> Matrix<'a> {
        Matrix {
            row_stride,
            ..Matrix::new(values, rows, cols)
        }
    }

    /// The same values read as the transpose.
    pub fn t(self) -> Matrix<'a> {
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
/// on rayon's threads where `parallel` (else on this one: a product inside a parallel piece).
pub fn product(dst: &mut [f32], add: bool, lhs: Matrix, rhs: Matrix, parallel: bool) -> Result<()> {
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
    let parallelism = if parallel && threads > 1 {
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
