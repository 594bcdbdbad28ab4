//! The logistic mixed model of 0/1 item outcomes with crossed random intercepts for annotator
//! and item, `logit P(correct) = X β + (1|unit) + (1|item)`, fitted by maximum likelihood under
//! the Laplace approximation as lme4's `glmer(…, family = binomial)` fits it, with glmer's Wald
//! tests of contrasts `L'β` (z, from the covariance of β̂ that glmer reports: the β block of
//! twice the inverse Hessian of the deviance in θ and β).
//!
//! The deviance (`laplace`) is minimised over θ and β together, as glmer's second stage does:
//! Nelder–Mead from the plain logistic regression's β and θ = (1, 1), then Newton steps on
//! central-difference derivatives, a θ whose optimum lies at zero set to zero as lme4's
//! bounded optimiser leaves it. Checked against R's lme4 (`domain/tests/logistic_r.rs`).
//!
//! `fit_restricted` fits the same model by REML under the Laplace approximation, whose test
//! holds its level with three annotators a scenario where glmer's does not (the statistics
//! chapter); the bundle's `analysis.R` makes the same fit from lme4's parts.

use super::laplace::Binary;
use super::{fixed_effects, polish, renumber, settle_zeros, FitError, Obs, SINGULAR};
use crate::stats::dist::normal_cdf;
use crate::stats::numdiff;
use crate::stats::ttest::TTest;
use argmin::core::{CostFunction, Executor};
use argmin::solver::neldermead::NelderMead;
use nalgebra::{DMatrix, DVector};

/// The step of the numerical derivatives (lme4's `deriv12` takes the same).
const STEP: f64 = 1e-4;

/// The most restarts of Nelder–Mead after its first run.
const RESTARTS: usize = 4;

/// The largest design fitted: (levels of the smaller factor)² × (levels of the larger), the
/// work of one step (the smaller factor's block is factored densely at every step): 40
/// annotators on 300 items, or 12 on 3,000. Larger studies are left to the linear model.
pub const MAX_WORK: usize = 500_000;

/// A maximum-likelihood fit under the Laplace approximation.
#[derive(Clone, Debug)]
pub struct LogisticFit {
    pub beta: Vec<f64>,
    /// The covariance of β̂ (row-major `p × p`), as glmer's `vcov`.
    pub vcov: Vec<f64>,
    /// Standard deviations of the annotator and item intercepts (on the logit scale).
    pub sd_unit: f64,
    pub sd_item: f64,
    /// The Laplace deviance at the optimum (`−2 logLik`).
    pub deviance: f64,
    pub singular: bool,
    pub n: usize,
    pub units: usize,
    pub items: usize,
}

/// glmer's Wald test of a contrast: z against the standard normal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wald {
    pub estimate: f64,
    pub se: f64,
    pub z: f64,
    pub p: f64,
}

/// A criterion to minimise (infinite where it cannot be computed).
struct Cost<'a>(&'a dyn Fn(&[f64]) -> f64);

impl CostFunction for Cost<'_> {
    type Param = DVector<f64>;
    type Output = f64;
    fn cost(&self, v: &Self::Param) -> Result<f64, argmin::core::Error> {
        Ok((self.0)(v.as_slice()))
    }
}

/// The Laplace deviance at (θ, β).
fn criterion(data: &Binary) -> impl Fn(&[f64]) -> f64 + '_ {
    |v: &[f64]| data.deviance(v[0], v[1], &v[2..]).unwrap_or(f64::INFINITY)
}

/// The observations with their units and items numbered from 0, as `laplace` takes them.
fn binary(obs: &[Obs], p: usize) -> Binary {
    let (units, nu) = renumber(obs.iter().map(|o| o.unit));
    let (items, ni) = renumber(obs.iter().map(|o| o.item));
    let rows: Vec<(usize, usize, &[f64], f64)> = obs
        .iter()
        .enumerate()
        .map(|(k, o)| (units[k], items[k], o.x.as_slice(), o.y))
        .collect();
    Binary::new(&rows, nu, ni, p)
}

/// The Laplace deviance at given standard deviations and β (for checks against R); `None` for a
/// design the model cannot take.
pub fn deviance_at(obs: &[Obs], sd_unit: f64, sd_item: f64, beta: &[f64]) -> Option<f64> {
    binary(obs, beta.len()).deviance(sd_unit, sd_item, beta)
}

/// The design checked and ready, with the plain logistic regression's β to start from.
fn prepared(obs: &[Obs]) -> Result<(Binary, Vec<f64>), FitError> {
    let p = fixed_effects(obs)?;
    if obs.iter().any(|o| o.y != 0.0 && o.y != 1.0) {
        return Err(FitError::Design("a response is not 0 or 1".into()));
    }
    let data = binary(obs, p);
    let (nu, ni) = data.units_items();
    if nu < 2 || ni < 2 || obs.len() <= p + 2 {
        return Err(FitError::Design(
            "too few units, items or observations".into(),
        ));
    }
    if nu.min(ni).pow(2) * nu.max(ni) > MAX_WORK {
        return Err(FitError::Design(format!(
            "{nu} annotators on {ni} items are more than this fit takes \
             ((the fewer)² × the more, at most {MAX_WORK})"
        )));
    }
    if !data.full_rank() {
        return Err(FitError::Design(
            "the fixed effects are not of full rank".into(),
        ));
    }
    let start = data.glm().ok_or_else(|| {
        FitError::Design("the outcomes separate the fixed effects (a group all 0 or all 1)".into())
    })?;
    Ok((data, start))
}

/// Fits the model; every response must be 0 or 1.
pub fn fit(obs: &[Obs]) -> Result<LogisticFit, FitError> {
    let (data, start) = prepared(obs)?;
    let mut v0 = vec![1.0, 1.0];
    v0.extend_from_slice(&start);
    let v = optimise(&criterion(&data), v0)?;
    diverging(&v[2..])?;
    finish(&data, v)
}

/// Fits the model by restricted maximum likelihood under the Laplace approximation (β
/// integrated out beside the random effects, as glmmTMB's `REML = TRUE` does): the variances
/// are estimated less short of the truth with few annotators, and β̂'s covariance is the β
/// block of the inverse of the joint system of (u, β) at the mode (lme4's conditional
/// covariance). Not glmer's fit (lme4 has none such): checked by the simulation, and against
/// the same fit that the bundle's `analysis.R` builds from lme4's parts.
pub fn fit_restricted(obs: &[Obs]) -> Result<LogisticFit, FitError> {
    let (data, start) = prepared(obs)?;
    let at = |t: &[f64]| data.restricted(t[0], t[1], &start);
    let f = |t: &[f64]| at(t).map_or(f64::INFINITY, |r| r.criterion);
    let v = optimise(&f, vec![1.0, 1.0])?;
    let r = at(&v).ok_or(FitError::Optimiser)?;
    diverging(&r.beta)?;
    Ok(LogisticFit::of(
        &data,
        [v[0], v[1]],
        r.beta,
        r.vcov,
        r.criterion,
    ))
}

/// An estimate this large on the logit scale means the outcomes separate the fixed effects.
fn diverging(beta: &[f64]) -> Result<(), FitError> {
    if beta.iter().any(|b| b.abs() > 30.0) {
        return Err(FitError::Design(
            "the outcomes separate the fixed effects (an estimate diverges)".into(),
        ));
    }
    Ok(())
}

/// Nelder–Mead over the criterion's arguments (θ first, then any β) from `v0`, restarted from
/// where it stopped until a restart gains nothing, then zero components and Newton polish.
fn optimise(f: &dyn Fn(&[f64]) -> f64, v0: Vec<f64>) -> Result<Vec<f64>, FitError> {
    // Close is enough: the Newton steps below take the arguments to the optimum's last digits.
    let tolerance = 1e-6 * (1.0 + f(&v0).abs());
    let (mut best, mut cost) = nelder_mead(f, &v0, tolerance)?;
    for _ in 0..RESTARTS {
        let (again, again_cost) = nelder_mead(f, &best, tolerance)?;
        let gain = cost - again_cost;
        (best, cost) = (again, again_cost);
        if gain <= tolerance {
            break;
        }
    }
    let mut v = best;
    v[0] = v[0].abs();
    v[1] = v[1].abs();
    settle_zeros(f, &mut v);
    let central = |f: &dyn Fn(&[f64]) -> f64, x: &[f64]| numdiff::deriv12(f, x, STEP);
    // A step below 1e-8 is far below the 1e-4 the estimates are read to, and below what the
    // numerical derivatives resolve.
    polish(f, &mut v, &central, 1e-8);
    if !v.iter().all(|x| x.is_finite()) || !f(&v).is_finite() {
        return Err(FitError::Optimiser);
    }
    Ok(v)
}

/// One run of Nelder–Mead from a simplex of steps of 0.5 around `v0`: the best point and its
/// criterion.
fn nelder_mead(
    f: &dyn Fn(&[f64]) -> f64,
    v0: &[f64],
    tolerance: f64,
) -> Result<(Vec<f64>, f64), FitError> {
    let simplex: Vec<DVector<f64>> = std::iter::once(v0.to_vec())
        .chain((0..v0.len()).map(|k| {
            let mut v = v0.to_vec();
            v[k] += 0.5;
            v
        }))
        .map(DVector::from_vec)
        .collect();
    let solver = NelderMead::new(simplex)
        .with_sd_tolerance(tolerance)
        .map_err(|_| FitError::Optimiser)?;
    let res = Executor::new(Cost(f), solver)
        .configure(|s| s.max_iters(20_000))
        .run()
        .map_err(|_| FitError::Optimiser)?;
    let state = res.state();
    let best = state.best_param.as_ref().ok_or(FitError::Optimiser)?;
    Ok((best.iter().copied().collect(), state.best_cost))
}

/// The covariance of β̂: the β block of twice the inverse Hessian of the deviance in (θ, β),
/// as glmer's `vcov` (`use.hessian = TRUE`; the Hessian by central differences of step 1e-4,
/// as lme4 computes it); where that Hessian is not positive definite
/// (a θ at zero can make it so), the inverse of the β block alone, θ held at its estimate.
fn covariance(f: &dyn Fn(&[f64]) -> f64, v: &[f64]) -> Option<DMatrix<f64>> {
    let (n, p) = (v.len(), v.len() - 2);
    let h = DMatrix::from_row_slice(n, n, &numdiff::deriv12(f, v, STEP).1);
    if let Some(c) = h.clone().cholesky() {
        return Some(c.inverse().view((2, 2), (p, p)) * 2.0);
    }
    let beta_block = h.view((2, 2), (p, p)).clone_owned();
    Some(beta_block.cholesky()?.inverse() * 2.0)
}

fn finish(data: &Binary, v: Vec<f64>) -> Result<LogisticFit, FitError> {
    let f = criterion(data);
    let vcov = covariance(&f, &v).ok_or(FitError::Optimiser)?;
    let vcov = vcov.transpose().iter().copied().collect();
    Ok(LogisticFit::of(
        data,
        [v[0], v[1]],
        v[2..].to_vec(),
        vcov,
        f(&v),
    ))
}

impl LogisticFit {
    /// A fit of `data` at θ = (unit, item) standard deviations, with β, its covariance
    /// (row-major) and the criterion at the optimum.
    fn of(data: &Binary, theta: [f64; 2], beta: Vec<f64>, vcov: Vec<f64>, deviance: f64) -> Self {
        let (units, items) = data.units_items();
        LogisticFit {
            beta,
            vcov,
            sd_unit: theta[0],
            sd_item: theta[1],
            deviance,
            singular: theta.iter().any(|t| *t < SINGULAR),
            n: data.n,
            units,
            items,
        }
    }

    /// `L'β̂` and its standard error; `None` unless `l` has one weight per fixed effect.
    fn contrast(&self, l: &[f64]) -> Option<(f64, f64)> {
        let p = self.beta.len();
        if l.len() != p {
            return None;
        }
        let v = DMatrix::from_row_slice(p, p, &self.vcov);
        let l = DVector::from_column_slice(l);
        let var = (l.transpose() * v * &l)[(0, 0)];
        let se = var.sqrt();
        (se > 0.0 && se.is_finite()).then(|| (l.dot(&DVector::from_column_slice(&self.beta)), se))
    }

    /// glmer's Wald z-test of `L'β = 0`.
    pub fn wald(&self, l: &[f64]) -> Option<Wald> {
        let (estimate, se) = self.contrast(l)?;
        let z = estimate / se;
        Some(Wald {
            estimate,
            se,
            z,
            p: (2.0 * normal_cdf(-z.abs())).min(1.0),
        })
    }

    /// The same statistic against Student's t with the between-within degrees of freedom
    /// (annotators less fixed effects, as SAS's GLIMMIX gives a contrast of groups of
    /// annotators): with three annotators a scenario, z is liberal.
    pub fn between_within(&self, l: &[f64]) -> Option<TTest> {
        let (estimate, se) = self.contrast(l)?;
        TTest::of(estimate, se, self.units as f64 - self.beta.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Annotators in `groups` of `per`, each on `items` items, outcomes drawn from the model.
    fn drawn(per: usize, groups: usize, items: usize, sd: (f64, f64), seed: u64) -> Vec<Obs> {
        let mut rng = SplitMix64(seed);
        let units: Vec<f64> = (0..per * groups).map(|_| sd.0 * rng.normal()).collect();
        let item_effects: Vec<f64> = (0..items).map(|_| sd.1 * rng.normal()).collect();
        let mut rng = SplitMix64(seed ^ 0x5eed);
        let mut obs = Vec::new();
        for (unit, u) in units.iter().enumerate() {
            let group = unit / per;
            for (item, v) in item_effects.iter().enumerate() {
                let eta = 0.5 + 0.3 * group as f64 + u + v;
                let mut x = vec![0.0; groups];
                x[group] = 1.0;
                let y = f64::from(u8::from(rng.unit() < 1.0 / (1.0 + (-eta).exp())));
                obs.push(Obs { unit, item, x, y });
            }
        }
        obs
    }

    fn binary(obs: &[Obs]) -> Binary {
        let rows: Vec<(usize, usize, &[f64], f64)> = obs
            .iter()
            .map(|o| (o.unit, o.item, o.x.as_slice(), o.y))
            .collect();
        let units = obs.iter().map(|o| o.unit).max().unwrap_or(0) + 1;
        let items = obs.iter().map(|o| o.item).max().unwrap_or(0) + 1;
        Binary::new(&rows, units, items, obs[0].x.len())
    }

    #[test]
    fn without_random_effects_the_deviance_is_the_logistic_regressions() {
        let obs = drawn(3, 2, 20, (0.5, 1.0), 7);
        let data = binary(&obs);
        let beta = data.glm().unwrap();
        let plain: f64 = obs
            .iter()
            .map(|o| {
                let eta: f64 = o.x.iter().zip(&beta).map(|(a, b)| a * b).sum();
                let mu = 1.0 / (1.0 + (-eta).exp());
                -2.0 * if o.y > 0.5 { mu.ln() } else { (1.0 - mu).ln() }
            })
            .sum();
        let laplace = data.deviance(0.0, 0.0, &beta).unwrap();
        assert!((laplace - plain).abs() < 1e-9, "{laplace} != {plain}");
        // With random effects the deviance is another, and the same whichever factor is
        // eliminated (the same data with the roles of annotator and item swapped).
        let with = data.deviance(0.7, 1.1, &beta).unwrap();
        let swapped: Vec<Obs> = obs
            .iter()
            .map(|o| Obs {
                unit: o.item,
                item: o.unit,
                ..o.clone()
            })
            .collect();
        let other = binary(&swapped).deviance(1.1, 0.7, &beta).unwrap();
        assert!((with - other).abs() < 1e-9 * with, "{with} != {other}");
        assert!((with - plain).abs() > 1.0);
    }

    #[test]
    fn the_fit_is_the_optimum_and_its_tests_are_consistent() {
        let obs = drawn(3, 2, 60, (0.6, 1.2), 11);
        let m = fit(&obs).unwrap();
        let data = binary(&obs);
        let at = |t: [f64; 2], b: &[f64]| data.deviance(t[0], t[1], b).unwrap();
        let best = at([m.sd_unit, m.sd_item], &m.beta);
        assert!((best - m.deviance).abs() < 1e-9);
        for k in 0..4 {
            let mut v = vec![m.sd_unit, m.sd_item];
            v.extend_from_slice(&m.beta);
            v[k] += 1e-3;
            assert!(at([v[0], v[1]], &v[2..]) > best, "not a minimum along {k}");
        }
        let w = m.wald(&[-1.0, 1.0]).unwrap();
        let t = m.between_within(&[-1.0, 1.0]).unwrap();
        assert_eq!((w.estimate, w.se), (t.estimate, t.se));
        assert_eq!(t.df, 4.0);
        assert!(t.p > w.p, "t with 4 df is wider than z");
        assert!(m.wald(&[1.0]).is_none());
    }

    /// At θ = 0 the joint mode is the plain regression's β, and the restricted criterion its
    /// deviance plus `log|X'WX|` (β integrated out under a flat prior, exactly, by Laplace).
    #[test]
    fn without_random_effects_the_restricted_criterion_adds_log_det_xtwx() {
        let obs = drawn(3, 2, 20, (0.5, 1.0), 7);
        let data = binary(&obs);
        let beta = data.glm().unwrap();
        let r = data.restricted(0.0, 0.0, &[0.0, 0.0]).unwrap();
        for (a, b) in r.beta.iter().zip(&beta) {
            assert!((a - b).abs() < 1e-8, "{:?} != {beta:?}", r.beta);
        }
        let mut xtwx = DMatrix::<f64>::zeros(2, 2);
        for o in &obs {
            let eta: f64 = o.x.iter().zip(&beta).map(|(a, b)| a * b).sum();
            let mu = 1.0 / (1.0 + (-eta).exp());
            let x = DVector::from_column_slice(&o.x);
            xtwx += &x * x.transpose() * (mu * (1.0 - mu));
        }
        let plain = data.deviance(0.0, 0.0, &beta).unwrap();
        let expected = plain + xtwx.determinant().ln();
        assert!(
            (r.criterion - expected).abs() < 1e-8,
            "{} != {expected}",
            r.criterion
        );
        // β's covariance is then the regression's, (X'WX)⁻¹.
        let inv = xtwx.try_inverse().unwrap();
        assert!((r.vcov[0] - inv[(0, 0)]).abs() < 1e-8 && (r.vcov[1] - inv[(0, 1)]).abs() < 1e-8);
    }

    /// The restricted fit is the criterion's minimum in θ, and, with three annotators a
    /// scenario, estimates the annotators' SD above maximum likelihood's and the contrast's
    /// standard error wider (what makes its t hold its level in the simulation).
    #[test]
    fn the_restricted_fit_is_its_minimum_and_wider_than_maximum_likelihood() {
        let obs = drawn(3, 2, 60, (0.6, 1.2), 11);
        let (ml, reml) = (fit(&obs).unwrap(), fit_restricted(&obs).unwrap());
        let data = binary(&obs);
        let start = data.glm().unwrap();
        let at = |t: [f64; 2]| data.restricted(t[0], t[1], &start).unwrap().criterion;
        let best = at([reml.sd_unit, reml.sd_item]);
        assert!((best - reml.deviance).abs() < 1e-9);
        for k in 0..2 {
            let mut t = [reml.sd_unit, reml.sd_item];
            t[k] += 1e-3;
            assert!(at(t) > best, "not a minimum along {k}");
        }
        assert!(reml.sd_unit > ml.sd_unit, "{reml:?} {ml:?}");
        let l = [-1.0, 1.0];
        assert!(reml.wald(&l).unwrap().se > ml.wald(&l).unwrap().se);
    }

    #[test]
    fn outcomes_that_are_not_0_or_1_or_that_separate_are_refused() {
        let mut obs = drawn(3, 2, 10, (0.5, 1.0), 3);
        obs[0].y = 0.5;
        assert!(matches!(fit(&obs), Err(FitError::Design(_))));
        let mut obs = drawn(3, 2, 10, (0.5, 1.0), 3);
        for o in obs.iter_mut().filter(|o| o.x[0] == 1.0) {
            o.y = 1.0;
        }
        let e = fit(&obs).unwrap_err();
        assert!(e.to_string().contains("separate"), "{e}");
        // 50 annotators on 300 items: more work than the fit takes, refused before any.
        let big = drawn(25, 2, 300, (0.5, 1.0), 3);
        let e = fit(&big).unwrap_err();
        assert!(e.to_string().contains("50 annotators on 300 items"), "{e}");
    }
}
