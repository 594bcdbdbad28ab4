//! The linear mixed model of item S1 with crossed random intercepts for annotator (the unit)
//! and item, `S1 ~ X β + (1|unit) + (1|item)`, fitted by REML as lme4 fits it, and tests of
//! contrasts `L'β` with Satterthwaite's degrees of freedom as lmerTest computes them.
//!
//! The criterion is lme4's profiled REML deviance (`reml`); it is minimised over the relative
//! standard deviations θ by argmin's Nelder–Mead (the criterion is even in each θ, so the
//! search needs no bounds), then polished by Newton steps on Richardson-extrapolated
//! derivatives, and a component whose optimum lies at zero is set to zero as lme4's bounded
//! optimiser leaves it. A fit is singular, as lme4's `isSingular`, when a θ is below 1e-4.
//! Checked against R's lme4 and lmerTest (`domain/tests/mixed_r.rs`).

mod laplace;
pub mod logistic;
mod reml;

use super::numdiff;
use super::ttest::TTest;
use argmin::core::{CostFunction, Executor};
use argmin::solver::neldermead::NelderMead;
use nalgebra::{DMatrix, DVector};
use reml::Design;

/// lme4's `isSingular` tolerance on θ.
pub const SINGULAR: f64 = 1e-4;

/// One observation: its unit (annotator), item, fixed-effect row and response.
#[derive(Clone, Debug, PartialEq)]
pub struct Obs {
    pub unit: usize,
    pub item: usize,
    pub x: Vec<f64>,
    pub y: f64,
}

/// Why a model could not be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    #[error("the data do not identify the model: {0}")]
    Design(String),
    #[error("the optimiser did not converge")]
    Optimiser,
}

/// A REML fit.
#[derive(Clone, Debug)]
pub struct Fit {
    pub beta: Vec<f64>,
    /// The covariance of β̂ (row-major `p × p`).
    pub vcov: Vec<f64>,
    /// Standard deviations of the unit and item intercepts and of the residual.
    pub sd_unit: f64,
    pub sd_item: f64,
    pub sigma: f64,
    /// θ = (unit, item): the intercepts' standard deviations over σ.
    pub theta: [f64; 2],
    /// lme4's REML criterion at the optimum.
    pub reml: f64,
    pub singular: bool,
    pub n: usize,
    pub units: usize,
    pub items: usize,
    /// Twice the inverse Hessian of the deviance in (θ unit, θ item, σ), and the Jacobian of
    /// vcov(β̂) in the same parameters (`None` when the Hessian is not positive definite).
    satterthwaite: Option<(DMatrix<f64>, [DMatrix<f64>; 3])>,
}

struct Criterion<'a>(&'a Design);

impl CostFunction for Criterion<'_> {
    type Param = DVector<f64>;
    type Output = f64;
    fn cost(&self, t: &Self::Param) -> Result<f64, argmin::core::Error> {
        Ok(self.0.profiled(t[0], t[1]))
    }
}

/// Renumbers levels to `0..n` in order of first appearance; returns the count.
fn renumber(levels: impl Iterator<Item = usize>) -> (Vec<usize>, usize) {
    let mut map = std::collections::HashMap::new();
    let out: Vec<usize> = levels
        .map(|l| {
            let next = map.len();
            *map.entry(l).or_insert(next)
        })
        .collect();
    (out, map.len())
}

/// The number of fixed effects, the same in every row (and at least one).
pub(super) fn fixed_effects(obs: &[Obs]) -> Result<usize, FitError> {
    let p = obs.first().map_or(0, |o| o.x.len());
    if p == 0 || obs.iter().any(|o| o.x.len() != p) {
        return Err(FitError::Design(
            "every row needs the same fixed effects".into(),
        ));
    }
    Ok(p)
}

/// Fits the model by REML.
pub fn fit(obs: &[Obs]) -> Result<Fit, FitError> {
    let p = fixed_effects(obs)?;
    let (units, nu) = renumber(obs.iter().map(|o| o.unit));
    let (items, ni) = renumber(obs.iter().map(|o| o.item));
    if nu < 2 || ni < 2 || obs.len() <= p + 2 {
        return Err(FitError::Design(
            "too few units, items or observations".into(),
        ));
    }
    let rows: Vec<(usize, usize, &[f64], f64)> = obs
        .iter()
        .enumerate()
        .map(|(k, o)| (units[k], items[k], o.x.as_slice(), o.y))
        .collect();
    let design = Design::new(&rows, nu, ni, p);
    let xtx_rank = design.xtx.clone().cholesky().is_some();
    if !xtx_rank {
        return Err(FitError::Design(
            "the fixed effects are not of full rank".into(),
        ));
    }
    let theta = optimise(&design)?;
    finish(&design, theta)
}

/// Nelder–Mead from θ = (1, 1) as lme4 starts, then zero components and Newton polish.
fn optimise(d: &Design) -> Result<[f64; 2], FitError> {
    let start = |a: f64, b: f64| DVector::from_vec(vec![a, b]);
    // Close is enough: the Newton steps below take θ to the optimum's last digits.
    let tolerance = 1e-9 * (1.0 + d.profiled(1.0, 1.0).abs());
    let solver = NelderMead::new(vec![start(1.0, 1.0), start(1.5, 1.0), start(1.0, 1.5)])
        .with_sd_tolerance(tolerance)
        .map_err(|_| FitError::Optimiser)?;
    let res = Executor::new(Criterion(d), solver)
        .configure(|s| s.max_iters(5000))
        .run()
        .map_err(|_| FitError::Optimiser)?;
    let best = res.state().best_param.clone().ok_or(FitError::Optimiser)?;
    let mut theta = [best[0].abs(), best[1].abs()];
    let f = |t: &[f64]| d.profiled(t[0], t[1]);
    settle_zeros(&f, &mut theta);
    let richardson =
        |f: &dyn Fn(&[f64]) -> f64, x: &[f64]| (numdiff::gradient(f, x), numdiff::hessian(f, x));
    polish(&f, &mut theta, &richardson, 1e-10);
    if !theta.iter().all(|t| t.is_finite()) || !f(&theta).is_finite() {
        return Err(FitError::Optimiser);
    }
    Ok(theta)
}

/// A relative standard deviation (the first two coordinates of `v`) at or next to zero: lme4's
/// bound. The zero is kept where the criterion is no worse there.
pub(super) fn settle_zeros(f: &dyn Fn(&[f64]) -> f64, v: &mut [f64]) {
    for k in 0..2 {
        let mut zero = v.to_vec();
        zero[k] = 0.0;
        if v[k] < 1e-2 && f(&zero) <= f(v) + 1e-10 {
            v.copy_from_slice(&zero);
        }
    }
}

/// A criterion's gradient and Hessian (row-major) at a point.
pub(super) type Derivatives<'a> =
    &'a dyn Fn(&dyn Fn(&[f64]) -> f64, &[f64]) -> (Vec<f64>, Vec<f64>);

/// Newton steps on the free coordinates of `v` (the two relative standard deviations where not
/// zero, and every one after them), halved until the criterion does not rise by more than its
/// rounding (near the optimum a decrease is below the criterion's last digits, while the step
/// still gains digits), until a step moves no coordinate by `stop`.
pub(super) fn polish(f: &dyn Fn(&[f64]) -> f64, v: &mut [f64], derivs: Derivatives, stop: f64) {
    let free: Vec<usize> = (0..v.len()).filter(|&k| k >= 2 || v[k] > 0.0).collect();
    if free.is_empty() {
        return;
    }
    for _ in 0..20 {
        let sub = |x: &[f64]| {
            let mut t = v.to_vec();
            for (k, &i) in free.iter().enumerate() {
                t[i] = x[k];
            }
            f(&t)
        };
        let x: Vec<f64> = free.iter().map(|&i| v[i]).collect();
        let n = x.len();
        let (g, h) = derivs(&sub, &x);
        let Some(step) = DMatrix::from_row_slice(n, n, &h)
            .cholesky()
            .map(|c| c.solve(&DVector::from_vec(g)))
        else {
            return;
        };
        let now = f(v);
        let slack = 1e-10 * (1.0 + now.abs());
        let mut scale = 1.0;
        let moved = loop {
            let cand: Vec<f64> = x
                .iter()
                .zip(step.iter())
                .map(|(a, s)| a - scale * s)
                .collect();
            let positive = free.iter().zip(&cand).all(|(&i, c)| i >= 2 || *c > 0.0);
            if positive && sub(&cand) <= now + slack {
                break Some(cand);
            }
            scale /= 2.0;
            if scale < 1e-6 {
                break None;
            }
        };
        let Some(cand) = moved else { return };
        let change = cand
            .iter()
            .zip(&x)
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        for (k, &i) in free.iter().enumerate() {
            v[i] = cand[k];
        }
        if change < stop {
            return;
        }
    }
}

fn finish(d: &Design, theta: [f64; 2]) -> Result<Fit, FitError> {
    let s = d.solve(theta[0], theta[1]).ok_or(FitError::Optimiser)?;
    let sigma2 = s.r2 / d.dof();
    let sigma = sigma2.sqrt();
    let vcov = &s.unscaled_vcov * sigma2;
    let varpar = [theta[0], theta[1], sigma];
    Ok(Fit {
        beta: s.beta.iter().copied().collect(),
        vcov: vcov.transpose().iter().copied().collect(),
        sd_unit: theta[0] * sigma,
        sd_item: theta[1] * sigma,
        sigma,
        theta,
        reml: d.profiled(theta[0], theta[1]),
        singular: theta.iter().any(|t| *t < SINGULAR),
        n: d.n,
        units: if d.big_is_item {
            d.small_levels
        } else {
            d.big_levels
        },
        items: if d.big_is_item {
            d.big_levels
        } else {
            d.small_levels
        },
        satterthwaite: satterthwaite_parts(d, &varpar),
    })
}

/// lmerTest's ingredients: the covariance of the variance parameters (twice the inverse
/// Hessian of the REML deviance) and the Jacobian of vcov(β̂) in them.
fn satterthwaite_parts(d: &Design, varpar: &[f64; 3]) -> Option<(DMatrix<f64>, [DMatrix<f64>; 3])> {
    let h = numdiff::hessian(&|v: &[f64]| d.deviance(v), varpar);
    let h = DMatrix::from_row_slice(3, 3, &h);
    let a = h.cholesky()?.inverse() * 2.0;
    let p = d.p;
    let vcov_at = |v: &[f64]| -> Vec<f64> {
        d.solve(v[0], v[1]).map_or(vec![f64::NAN; p * p], |s| {
            (s.unscaled_vcov * (v[2] * v[2])).iter().copied().collect()
        })
    };
    let jac = numdiff::jacobian(&vcov_at, varpar);
    let m = |k: usize| DMatrix::from_column_slice(p, p, &jac[k]);
    let parts = [m(0), m(1), m(2)];
    parts
        .iter()
        .all(|j| j.iter().all(|x| x.is_finite()))
        .then_some((a, parts))
}

impl Fit {
    fn vcov_matrix(&self) -> DMatrix<f64> {
        let p = self.beta.len();
        DMatrix::from_row_slice(p, p, &self.vcov)
    }

    /// The test of `L'β = 0` with Satterthwaite's degrees of freedom; `None` when its
    /// ingredients could not be computed or `l` is not one weight per fixed effect.
    pub fn contrast(&self, l: &[f64]) -> Option<TTest> {
        if l.len() != self.beta.len() {
            return None;
        }
        let (a, jac) = self.satterthwaite.as_ref()?;
        let l = DVector::from_column_slice(l);
        let quad = |m: &DMatrix<f64>| (l.transpose() * m * &l)[(0, 0)];
        let var = quad(&self.vcov_matrix());
        let g = DVector::from_iterator(3, jac.iter().map(quad));
        let denom = (g.transpose() * a * &g)[(0, 0)];
        let estimate = l.dot(&DVector::from_column_slice(&self.beta));
        TTest::of(estimate, var.sqrt(), 2.0 * var * var / denom)
    }
}

#[cfg(test)]
mod tests;
