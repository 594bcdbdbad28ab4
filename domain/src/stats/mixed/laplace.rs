//! The Laplace approximation to the deviance of the logistic model with crossed random
//! intercepts, `logit P(y = 1) = X β + (1|unit) + (1|item)`, as lme4's `glmer` computes it with
//! `nAGQ = 1` (Bates, Mächler, Bolker and Walker 2015, sec. 5.5): at given θ and β the
//! spherical random effects u are taken to their conditional mode by penalised iteratively
//! reweighted least squares (Newton's method, each step halved until the penalised deviance
//! falls), and the deviance is `Σ dᵢ(μ) + ‖u‖² + log|L|²` with `L L' = Λ'Z'WZΛ + I` and W the
//! binomial weights μ(1 − μ) at the mode.
//!
//! As in `reml`, the block of `Λ'Z'WZΛ + I` of the factor with more levels is diagonal (an
//! observation has one level of it), so it is eliminated by hand and only the Schur complement
//! on the other factor, of its number of levels, is factored densely: a step costs one pass
//! over the observations and one small Cholesky.

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

/// The penalised system at the current modes: the Schur complement's Cholesky factor, the
/// eliminated block's diagonal and the cross block, with the gradient of the penalised
/// log-likelihood.
struct System {
    chol: nalgebra::Cholesky<f64, nalgebra::Dyn>,
    diag: Vec<f64>,
    /// Row-major `small × big`.
    cross: Vec<f64>,
    grad_small: Vec<f64>,
    grad_big: Vec<f64>,
    /// `Σ dᵢ(μ) + ‖u‖²` at the current modes.
    penalised: f64,
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

    /// The linear predictor at modes `u = (small levels, big levels)`.
    fn eta(&self, offset: &[f64], ts: f64, tb: f64, u: &[f64]) -> Vec<f64> {
        let ns = self.small_levels;
        offset
            .iter()
            .zip(&self.levels)
            .map(|(o, &(s, b))| o + ts * u[s] + tb * u[ns + b])
            .collect()
    }

    /// `Σ dᵢ(μ) + ‖u‖²`.
    fn penalised(&self, eta: &[f64], u: &[f64]) -> f64 {
        let d: f64 = self
            .y
            .iter()
            .zip(eta)
            .map(|(y, e)| unit_deviance(*y, *e))
            .sum();
        d + u.iter().map(|v| v * v).sum::<f64>()
    }

    /// The penalised system at the modes `u`; `None` if it is not positive definite (it always
    /// is, up to rounding).
    fn system(&self, offset: &[f64], ts: f64, tb: f64, u: &[f64]) -> Option<System> {
        let (ns, nb) = (self.small_levels, self.big_levels);
        let eta = self.eta(offset, ts, tb, u);
        let mut a = vec![1.0; ns];
        let mut diag = vec![1.0; nb];
        let mut cross = vec![0.0; ns * nb];
        let mut grad_small: Vec<f64> = u[..ns].iter().map(|v| -v).collect();
        let mut grad_big: Vec<f64> = u[ns..].iter().map(|v| -v).collect();
        for ((&(s, b), e), y) in self.levels.iter().zip(&eta).zip(&self.y) {
            let mu = logistic(*e);
            let w = mu * (1.0 - mu);
            a[s] += ts * ts * w;
            diag[b] += tb * tb * w;
            cross[s * nb + b] += ts * tb * w;
            grad_small[s] += ts * (y - mu);
            grad_big[b] += tb * (y - mu);
        }
        // The Schur complement `A − C D⁻¹ C'` on the dense factor.
        let mut schur = DMatrix::from_diagonal(&DVector::from_vec(a));
        for j in 0..nb {
            for r in 0..ns {
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
            grad_small,
            grad_big,
            penalised: self.penalised(&eta, u),
        })
    }

    /// The Newton step of the system: `(Λ'Z'WZΛ + I)⁻¹ ∇`.
    fn step(&self, sys: &System) -> Vec<f64> {
        let (ns, nb) = (self.small_levels, self.big_levels);
        let mut rhs = DVector::from_vec(sys.grad_small.clone());
        for r in 0..ns {
            for j in 0..nb {
                rhs[r] -= sys.cross[r * nb + j] * sys.grad_big[j] / sys.diag[j];
            }
        }
        let small = sys.chol.solve(&rhs);
        let mut out: Vec<f64> = small.iter().copied().collect();
        out.extend((0..nb).map(|j| {
            let c: f64 = (0..ns).map(|r| sys.cross[r * nb + j] * small[r]).sum();
            (sys.grad_big[j] - c) / sys.diag[j]
        }));
        out
    }

    /// The Laplace deviance at θ (unit, item) and β; `None` if the modes cannot be found.
    pub fn deviance(&self, theta_unit: f64, theta_item: f64, beta: &[f64]) -> Option<f64> {
        let (ts, tb) = self.ordered(theta_unit.abs(), theta_item.abs());
        let offset = self.fixed(beta);
        let mut u = vec![0.0; self.small_levels + self.big_levels];
        let mut sys = self.system(&offset, ts, tb, &u)?;
        for _ in 0..100 {
            let delta = self.step(&sys);
            // A step may gain less than the criterion's rounding near the mode: taken anyway.
            let slack = 1e-13 * (1.0 + sys.penalised);
            let mut scale = 1.0;
            let moved = loop {
                let cand: Vec<f64> = u.iter().zip(&delta).map(|(a, d)| a + scale * d).collect();
                let next = self.system(&offset, ts, tb, &cand)?;
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
        let logdet_schur: f64 = 2.0 * sys.chol.l().diagonal().iter().map(|d| d.ln()).sum::<f64>();
        let logdet_diag: f64 = sys.diag.iter().map(|d| d.ln()).sum();
        let dev = sys.penalised + logdet_schur + logdet_diag;
        dev.is_finite().then_some(dev)
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
