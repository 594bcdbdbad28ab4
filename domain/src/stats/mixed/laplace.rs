//! The Laplace approximation to the deviance of the logistic model with crossed random
//! intercepts, `logit P(y = 1) = X β + (1|unit) + (1|item)`, as lme4's `glmer` computes it with
//! `nAGQ = 1` (Bates, Mächler, Bolker and Walker 2015, sec. 5.5): at given θ and β the
//! spherical random effects u are taken to their conditional mode by penalised iteratively
//! reweighted least squares (Newton's method, each step halved until the penalised deviance
//! falls), and the deviance is `Σ dᵢ(μ) + ‖u‖² + log|L|²` with `L L' = Λ'Z'WZΛ + I` and W the
//! binomial weights μ(1 − μ) at the mode.
//!
//! The restricted criterion (`restricted`) takes β to its mode together with u, unpenalised,
//! and adds its block to the determinant: `Σ dᵢ(μ) + ‖u‖² + log|H|`, H the joint system's
//! matrix (the Laplace approximation with β integrated out under a flat prior, as glmmTMB's
//! `REML = TRUE`).
//!
//! As in `reml`, the block of `Λ'Z'WZΛ + I` of the factor with more levels is diagonal (an
//! observation has one level of it), so it is eliminated by hand and only the Schur complement
//! on the other factor (and β, in the joint system), of its number of levels, is factored
//! densely: a step costs one pass over the observations and one small Cholesky.

use nalgebra::{DMatrix, DVector};

/// The data of a binary crossed design, with the factors ordered by their number of levels.
#[derive(Clone, Debug)]
pub(super) struct Binary {
    pub n: usize,
    pub p: usize,
    /// Levels of the factor eliminated by hand (more levels) and of the one factored densely.
    pub big_levels: usize,
    pub small_levels: usize,
    /// The eliminated factor is the item factor (else the unit factor).
    pub big_is_item: bool,
    /// Per observation: its level of the dense factor and of the eliminated one.
    levels: Vec<(usize, usize)>,
    /// The fixed-effect rows, row-major `n × p`.
    x: Vec<f64>,
    /// The responses, each 0 or 1.
    y: Vec<f64>,
}

/// `ln(1 + eˣ)` without overflow.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The binomial deviance of one response at linear predictor `eta`: `−2 ln P(y | η)`.
fn unit_deviance(y: f64, eta: f64) -> f64 {
    2.0 * if y > 0.5 {
        softplus(-eta)
    } else {
        softplus(eta)
    }
}

fn logistic(eta: f64) -> f64 {
    1.0 / (1.0 + (-eta).exp())
}

/// The penalised system at the current modes: the Schur complement's Cholesky factor (on the
/// dense unknowns: the smaller factor's levels, and β in the joint system), the eliminated
/// block's diagonal and the cross block, with the gradient of the penalised log-likelihood.
struct System {
    chol: nalgebra::Cholesky<f64, nalgebra::Dyn>,
    diag: Vec<f64>,
    /// Row-major `dense × big`.
    cross: Vec<f64>,
    grad_dense: Vec<f64>,
    grad_big: Vec<f64>,
    /// `Σ dᵢ(μ) + ‖u‖²` at the current modes.
    penalised: f64,
}

/// The REML-Laplace fit at one θ: the criterion, β at the joint mode, and β's covariance.
pub(super) struct Restricted {
    pub criterion: f64,
    pub beta: Vec<f64>,
    /// The β block of the inverse of the joint system (row-major `p × p`).
    pub vcov: Vec<f64>,
}

impl Binary {
    /// From observations `(unit, item, x row, y)`; levels are `0..units` and `0..items`, each
    /// with at least one observation, and every y is 0 or 1 (checked by the caller).
    pub fn new(obs: &[(usize, usize, &[f64], f64)], units: usize, items: usize, p: usize) -> Self {
        let big_is_item = items >= units;
        let (big_levels, small_levels) = if big_is_item {
            (items, units)
        } else {
            (units, items)
        };
        let levels = obs
            .iter()
            .map(|&(u, i, _, _)| if big_is_item { (u, i) } else { (i, u) })
            .collect();
        Binary {
            n: obs.len(),
            p,
            big_levels,
            small_levels,
            big_is_item,
            levels,
            x: obs.iter().flat_map(|o| o.2.iter().copied()).collect(),
            y: obs.iter().map(|o| o.3).collect(),
        }
    }

    /// The numbers of units and of items.
    pub fn units_items(&self) -> (usize, usize) {
        if self.big_is_item {
            (self.small_levels, self.big_levels)
        } else {
            (self.big_levels, self.small_levels)
        }
    }

    /// θ as (small, big) from θ as (unit, item).
    fn ordered(&self, unit: f64, item: f64) -> (f64, f64) {
        if self.big_is_item {
            (unit, item)
        } else {
            (item, unit)
        }
    }

    /// `X β` per observation.
    pub fn fixed(&self, beta: &[f64]) -> Vec<f64> {
        self.x
            .chunks(self.p)
            .map(|row| row.iter().zip(beta).map(|(a, b)| a * b).sum())
            .collect()
    }

    /// The number of unknowns factored densely: the smaller factor's levels, and β in the joint
    /// system. The unknowns are laid out as (dense, levels of the eliminated factor).
    fn dense(&self, joint: bool) -> usize {
        self.small_levels + if joint { self.p } else { 0 }
    }

    /// The linear predictor at the unknowns `u` (β among them in the joint system).
    fn eta(&self, offset: &[f64], ts: f64, tb: f64, u: &[f64], joint: bool) -> Vec<f64> {
        let (ns, m) = (self.small_levels, self.dense(joint));
        offset
            .iter()
            .zip(&self.levels)
            .zip(self.x.chunks(self.p))
            .map(|((o, &(s, b)), row)| {
                let fixed: f64 = if joint {
                    row.iter().zip(&u[ns..m]).map(|(a, c)| a * c).sum()
                } else {
                    0.0
                };
                o + fixed + ts * u[s] + tb * u[m + b]
            })
            .collect()
    }

    /// `Σ dᵢ(μ) + ‖u‖²` (β, in the joint system, is not penalised).
    fn penalised(&self, eta: &[f64], u: &[f64], joint: bool) -> f64 {
        let d: f64 = self
            .y
            .iter()
            .zip(eta)
            .map(|(y, e)| unit_deviance(*y, *e))
            .sum();
        let (ns, m) = (self.small_levels, self.dense(joint));
        let square = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
        d + square(&u[..ns]) + square(&u[m..])
    }

    /// The penalised system at the unknowns `u`; `None` if it is not positive definite (it
    /// always is, up to rounding, when X has full rank).
    fn system(&self, offset: &[f64], ts: f64, tb: f64, u: &[f64], joint: bool) -> Option<System> {
        let (ns, nb, m, p) = (
            self.small_levels,
            self.big_levels,
            self.dense(joint),
            self.p,
        );
        let eta = self.eta(offset, ts, tb, u, joint);
        // The dense block, lower triangle: the penalty's identity on the levels, none on β.
        let mut schur = DMatrix::<f64>::zeros(m, m);
        (0..ns).for_each(|s| schur[(s, s)] = 1.0);
        let mut diag = vec![1.0; nb];
        let mut cross = vec![0.0; m * nb];
        let mut grad_dense: Vec<f64> = (0..m).map(|k| if k < ns { -u[k] } else { 0.0 }).collect();
        let mut grad_big: Vec<f64> = u[m..].iter().map(|v| -v).collect();
        for (((&(s, b), e), y), row) in self
            .levels
            .iter()
            .zip(&eta)
            .zip(&self.y)
            .zip(self.x.chunks(p))
        {
            let mu = logistic(*e);
            let (w, r) = (mu * (1.0 - mu), y - mu);
            schur[(s, s)] += ts * ts * w;
            diag[b] += tb * tb * w;
            cross[s * nb + b] += ts * tb * w;
            grad_dense[s] += ts * r;
            grad_big[b] += tb * r;
            if joint {
                for (k, xk) in row.iter().enumerate().filter(|(_, x)| **x != 0.0) {
                    schur[(ns + k, s)] += xk * ts * w;
                    for (l, xl) in row.iter().enumerate().take(k + 1) {
                        schur[(ns + k, ns + l)] += xk * xl * w;
                    }
                    cross[(ns + k) * nb + b] += xk * tb * w;
                    grad_dense[ns + k] += xk * r;
                }
            }
        }
        // The Schur complement `A − C D⁻¹ C'` on the dense unknowns.
        for j in 0..nb {
            for r in 0..m {
                let cr = cross[r * nb + j];
                if cr == 0.0 {
                    continue;
                }
                for c in 0..=r {
                    schur[(r, c)] -= cr * cross[c * nb + j] / diag[j];
                }
            }
        }
        schur.fill_upper_triangle_with_lower_triangle();
        Some(System {
            chol: schur.cholesky()?,
            diag,
            cross,
            grad_dense,
            grad_big,
            penalised: self.penalised(&eta, u, joint),
        })
    }

    /// The Newton step of the system: its matrix's inverse times the gradient.
    fn step(&self, sys: &System) -> Vec<f64> {
        let (m, nb) = (sys.grad_dense.len(), self.big_levels);
        let mut rhs = DVector::from_vec(sys.grad_dense.clone());
        for r in 0..m {
            for j in 0..nb {
                rhs[r] -= sys.cross[r * nb + j] * sys.grad_big[j] / sys.diag[j];
            }
        }
        let dense = sys.chol.solve(&rhs);
        let mut out: Vec<f64> = dense.iter().copied().collect();
        out.extend((0..nb).map(|j| {
            let c: f64 = (0..m).map(|r| sys.cross[r * nb + j] * dense[r]).sum();
            (sys.grad_big[j] - c) / sys.diag[j]
        }));
        out
    }

    /// The unknowns at their mode, from `u`, by Newton's method with halving, and the system
    /// there; `None` if a system is not positive definite.
    fn mode(
        &self,
        offset: &[f64],
        t: (f64, f64),
        mut u: Vec<f64>,
        joint: bool,
    ) -> Option<(Vec<f64>, System)> {
        let (ts, tb) = t;
        let mut sys = self.system(offset, ts, tb, &u, joint)?;
        for _ in 0..100 {
            let delta = self.step(&sys);
            // A step may gain less than the criterion's rounding near the mode: taken anyway.
            let slack = 1e-13 * (1.0 + sys.penalised);
            let mut scale = 1.0;
            let moved = loop {
                let cand: Vec<f64> = u.iter().zip(&delta).map(|(a, d)| a + scale * d).collect();
                let next = self.system(offset, ts, tb, &cand, joint)?;
                if next.penalised <= sys.penalised + slack {
                    break Some((cand, next));
                }
                scale /= 2.0;
                if scale < 1e-10 {
                    break None;
                }
            };
            let Some((cand, next)) = moved else { break };
            u = cand;
            sys = next;
            // Newton's steps shrink quadratically: after one this small, u is at the mode to
            // the last digits.
            if scale == 1.0 && delta.iter().all(|d| d.abs() < 1e-7) {
                break;
            }
        }
        Some((u, sys))
    }

    /// `Σ dᵢ(μ) + ‖u‖² + log|L|²` at a mode: `L L'` the system's matrix.
    fn laplace(sys: &System) -> Option<f64> {
        let logdet_schur: f64 = 2.0 * sys.chol.l().diagonal().iter().map(|d| d.ln()).sum::<f64>();
        let logdet_diag: f64 = sys.diag.iter().map(|d| d.ln()).sum();
        let dev = sys.penalised + logdet_schur + logdet_diag;
        dev.is_finite().then_some(dev)
    }

    /// The Laplace deviance at θ (unit, item) and β; `None` if the modes cannot be found.
    pub fn deviance(&self, theta_unit: f64, theta_item: f64, beta: &[f64]) -> Option<f64> {
        let t = self.ordered(theta_unit.abs(), theta_item.abs());
        let u = vec![0.0; self.small_levels + self.big_levels];
        let (_, sys) = self.mode(&self.fixed(beta), t, u, false)?;
        Self::laplace(&sys)
    }

    /// The restricted (REML) criterion at θ under the Laplace approximation, β integrated out
    /// with the random effects as a flat prior integrates it: the joint mode of (u, β) from
    /// `start`, and `Σ dᵢ(μ) + ‖u‖² + log|H|` with H the joint system's matrix (which adds
    /// `log|X'WX − …|` to the deviance). β̂'s covariance is the β block of H⁻¹.
    pub fn restricted(
        &self,
        theta_unit: f64,
        theta_item: f64,
        start: &[f64],
    ) -> Option<Restricted> {
        let t = self.ordered(theta_unit.abs(), theta_item.abs());
        let (ns, m, p) = (self.small_levels, self.dense(true), self.p);
        let mut u = vec![0.0; m + self.big_levels];
        u[ns..m].copy_from_slice(start);
        let (u, sys) = self.mode(&vec![0.0; self.n], t, u, true)?;
        let inverse = sys.chol.inverse();
        let vcov = (0..p * p)
            .map(|k| inverse[(ns + k / p, ns + k % p)])
            .collect();
        Some(Restricted {
            criterion: Self::laplace(&sys)?,
            beta: u[ns..m].to_vec(),
            vcov,
        })
    }

    /// Whether X has full column rank.
    pub fn full_rank(&self) -> bool {
        let mut xtx = DMatrix::<f64>::zeros(self.p, self.p);
        for row in self.x.chunks(self.p) {
            let r = DVector::from_column_slice(row);
            xtx += &r * r.transpose();
        }
        xtx.cholesky().is_some()
    }

    /// The logistic regression without random effects (the starting β), by Newton's method;
    /// `None` if it does not converge (the data separate).
    pub fn glm(&self) -> Option<Vec<f64>> {
        let p = self.p;
        let mut beta = vec![0.0; p];
        for _ in 0..50 {
            let eta = self.fixed(&beta);
            let mut h = DMatrix::<f64>::zeros(p, p);
            let mut g = DVector::<f64>::zeros(p);
            for ((row, e), y) in self.x.chunks(p).zip(&eta).zip(&self.y) {
                let mu = logistic(*e);
                let r = DVector::from_column_slice(row);
                h += &r * r.transpose() * (mu * (1.0 - mu));
                g += &r * (y - mu);
            }
            let step = h.cholesky()?.solve(&g);
            beta.iter_mut().zip(step.iter()).for_each(|(b, s)| *b += s);
            if step.amax() < 1e-10 {
                return beta.iter().all(|b| b.abs() < 30.0).then_some(beta);
            }
        }
        None
    }
}
