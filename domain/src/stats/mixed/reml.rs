//! The profiled REML criterion of `y ~ X β + (1|unit) + (1|item)` as lme4 defines it (Bates,
//! Mächler, Bolker and Walker 2015, eqs. 34 and 41), from the data's sufficient statistics.
//!
//! lme4 factors the penalised cross-product matrix `[ΛZ X]'[ΛZ X] + diag(I, 0)` with a sparse
//! Cholesky. With two crossed intercepts the block of the factor with more levels is diagonal
//! (an observation has one level of it), so it is eliminated by hand and only the Schur
//! complement on the other factor and X, of size `levels + p`, is factored densely. The
//! elimination subtracts `Σ_j v_j v_j' / (θ_b² n_j + 1)` over the eliminated levels j, where
//! `v_j = D_θ w_j` scales a vector `w_j` of counts and sums that does not depend on θ: levels
//! with the same count `n_j` are summed once, when the data are read, so an evaluation costs a
//! few `(levels + p)²` products and one small Cholesky (an annotator answers each item once,
//! so there is usually one count). The determinants and the penalised residual sum of squares
//! are the same as lme4's, whatever the order of elimination.

use nalgebra::{DMatrix, DVector};
use std::ops::AddAssign;

/// The eliminated levels that share one count `n_j`: `Σ w_j w_j'`, `Σ w_j ȳ_j`, `Σ ȳ_j²` (with
/// `ȳ_j` the level's sum of y), and how many levels.
#[derive(Clone, Debug)]
struct SameCount {
    count: f64,
    levels: f64,
    ww: DMatrix<f64>,
    wy: DVector<f64>,
    yy: f64,
}

/// The sufficient statistics of a crossed design.
#[derive(Clone, Debug)]
pub(super) struct Design {
    pub n: usize,
    pub p: usize,
    /// Levels of the factor eliminated first (more levels) and of the one factored densely.
    pub big_levels: usize,
    pub small_levels: usize,
    /// The eliminated factor is the item factor (else the unit factor).
    pub big_is_item: bool,
    /// Per level of the dense factor: its count, sum of X rows and sum of y.
    small_count: Vec<f64>,
    small_x: Vec<DVector<f64>>,
    small_y: Vec<f64>,
    groups: Vec<SameCount>,
    pub xtx: DMatrix<f64>,
    xty: DVector<f64>,
    yty: f64,
}

/// One evaluation at relative standard deviations θ.
pub(super) struct Solved {
    pub logdet_l: f64,
    pub logdet_rx: f64,
    /// The penalised residual sum of squares at the conditional modes.
    pub r2: f64,
    pub beta: DVector<f64>,
    /// `(R_X' R_X)⁻¹`: the covariance of β̂ over σ².
    pub unscaled_vcov: DMatrix<f64>,
}

impl Design {
    /// From observations `(unit, item, x row, y)`; levels are `0..units` and `0..items`, each
    /// with at least one observation (checked by the caller).
    pub fn new(obs: &[(usize, usize, &[f64], f64)], units: usize, items: usize, p: usize) -> Self {
        let big_is_item = items >= units;
        let (nb, ns) = if big_is_item {
            (items, units)
        } else {
            (units, items)
        };
        let size = ns + p;
        // Per eliminated level: w_j (its count with each dense level, then its X sums), its
        // count and its sum of y.
        let mut w = vec![DVector::<f64>::zeros(size); nb];
        let (mut count, mut sum_y) = (vec![0.0; nb], vec![0.0; nb]);
        let mut small_count = vec![0.0; ns];
        let mut small_x = vec![DVector::<f64>::zeros(p); ns];
        let mut small_y = vec![0.0; ns];
        let (mut xtx, mut xty, mut yty) = (DMatrix::zeros(p, p), DVector::zeros(p), 0.0);
        for &(u, i, x, y) in obs {
            let (b, s) = if big_is_item { (i, u) } else { (u, i) };
            let x = DVector::from_column_slice(x);
            w[b][s] += 1.0;
            w[b].rows_mut(ns, p).add_assign(&x);
            count[b] += 1.0;
            sum_y[b] += y;
            small_count[s] += 1.0;
            small_x[s] += &x;
            small_y[s] += y;
            xtx += &x * x.transpose();
            xty += &x * y;
            yty += y * y;
        }
        let mut groups: Vec<SameCount> = Vec::new();
        for j in 0..nb {
            let at = match groups.iter().position(|g| g.count == count[j]) {
                Some(at) => at,
                None => {
                    groups.push(SameCount {
                        count: count[j],
                        levels: 0.0,
                        ww: DMatrix::zeros(size, size),
                        wy: DVector::zeros(size),
                        yy: 0.0,
                    });
                    groups.len() - 1
                }
            };
            let g = &mut groups[at];
            g.levels += 1.0;
            g.ww.ger(1.0, &w[j], &w[j], 1.0);
            g.wy.axpy(sum_y[j], &w[j], 1.0);
            g.yy += sum_y[j] * sum_y[j];
        }
        Design {
            n: obs.len(),
            p,
            big_levels: nb,
            small_levels: ns,
            big_is_item,
            small_count,
            small_x,
            small_y,
            groups,
            xtx,
            xty,
            yty,
        }
    }

    /// θ as (big, small) from θ as (unit, item).
    pub fn ordered(&self, unit: f64, item: f64) -> (f64, f64) {
        if self.big_is_item {
            (item, unit)
        } else {
            (unit, item)
        }
    }

    /// Solves the penalised least squares at θ (unit, item); `None` if a factor is not
    /// positive definite (only for non-finite θ).
    pub fn solve(&self, theta_unit: f64, theta_item: f64) -> Option<Solved> {
        let (tb, ts) = self.ordered(theta_unit.abs(), theta_item.abs());
        let (qs, p) = (self.small_levels, self.p);
        let size = qs + p;
        let mut s = DMatrix::<f64>::zeros(size, size);
        let mut rhs = DVector::<f64>::zeros(size);
        for l in 0..qs {
            s[(l, l)] = ts * ts * self.small_count[l] + 1.0;
            for c in 0..p {
                let v = ts * self.small_x[l][c];
                s[(l, qs + c)] = v;
                s[(qs + c, l)] = v;
            }
            rhs[l] = ts * self.small_y[l];
        }
        s.view_mut((qs, qs), (p, p)).copy_from(&self.xtx);
        rhs.rows_mut(qs, p).copy_from(&self.xty);
        // v_j = D_θ w_j with D_θ = diag(θ_b θ_s for the dense levels, θ_b for X).
        let scale = DVector::<f64>::from_fn(size, |k, _| if k < qs { tb * ts } else { tb });
        let (mut logdet_big, mut r2) = (0.0, self.yty);
        let mut sum_ww = DMatrix::<f64>::zeros(size, size);
        let mut sum_wy = DVector::<f64>::zeros(size);
        for g in &self.groups {
            let d = tb * tb * g.count + 1.0;
            logdet_big += g.levels * d.ln();
            sum_ww += &g.ww / d;
            sum_wy.axpy(tb / d, &g.wy, 1.0);
            r2 -= tb * tb * g.yy / d;
        }
        for a in 0..size {
            for b in 0..size {
                s[(a, b)] -= scale[a] * scale[b] * sum_ww[(a, b)];
            }
            rhs[a] -= scale[a] * sum_wy[a];
        }
        let chol = s.cholesky()?;
        let l = chol.l_dirty();
        let diag_log =
            |range: std::ops::Range<usize>| -> f64 { range.map(|k| 2.0 * l[(k, k)].ln()).sum() };
        let logdet_l = logdet_big + diag_log(0..qs);
        let logdet_rx = diag_log(qs..size);
        // A Cholesky factor has a positive diagonal: these solves do not fail.
        let c = l.view((0, 0), (size, size)).solve_lower_triangular(&rhs)?;
        r2 -= c.norm_squared();
        let z = chol.solve(&rhs);
        let lx = l.view((qs, qs), (p, p)).lower_triangle();
        let lx_inv = lx.solve_lower_triangular(&DMatrix::identity(p, p))?;
        Some(Solved {
            logdet_l,
            logdet_rx,
            r2: r2.max(0.0),
            beta: z.rows(qs, p).into_owned(),
            unscaled_vcov: lx_inv.transpose() * lx_inv,
        })
    }

    /// Residual degrees of freedom of the REML criterion.
    pub fn dof(&self) -> f64 {
        (self.n - self.p) as f64
    }

    /// lme4's profiled REML deviance at θ (unit, item).
    pub fn profiled(&self, theta_unit: f64, theta_item: f64) -> f64 {
        match self.solve(theta_unit, theta_item) {
            Some(s) if s.r2 > 0.0 => {
                let m = self.dof();
                s.logdet_l + s.logdet_rx + m * (1.0 + (2.0 * std::f64::consts::PI * s.r2 / m).ln())
            }
            _ => f64::INFINITY,
        }
    }

    /// lmerTest's REML deviance at the variance parameters (θ unit, θ item, σ), not profiled.
    pub fn deviance(&self, varpar: &[f64]) -> f64 {
        let Some(s) = self.solve(varpar[0], varpar[1]) else {
            return f64::INFINITY;
        };
        let sigma2 = varpar[2] * varpar[2];
        s.logdet_l
            + s.logdet_rx
            + s.r2 / sigma2
            + self.dof() * (2.0 * std::f64::consts::PI * sigma2).ln()
    }
}
