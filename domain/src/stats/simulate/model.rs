//! The crossed logistic crowd model the simulation draws studies from: an annotator of ability
//! `u ~ N(0, σ_u²)` answers an item of difficulty `b ~ N(0, σ_b²)` in scenario g correctly with
//! probability `expit(μ + δ_g + u − b)` (item S1 is 1 or 0, as on a label task). μ, σ_u and δ are
//! set from what a researcher would state in S1 points: the mean score, the standard deviation
//! of annotators' expected scores, and the scenario effect. Expectations over the normal
//! effects are Gauss–Hermite sums.

use crate::rng::SplitMix64;
use nalgebra::{DMatrix, SymmetricEigen};

/// Gauss–Hermite rule for `E[f(Z)]`, `Z ~ N(0, 1)` (Golub–Welsch on the probabilists' weight).
#[derive(Clone, Debug)]
pub struct Normal {
    nodes: Vec<f64>,
    weights: Vec<f64>,
}

impl Normal {
    pub fn new(n: usize) -> Self {
        let mut j = DMatrix::<f64>::zeros(n, n);
        for i in 1..n {
            let b = (i as f64).sqrt();
            j[(i, i - 1)] = b;
            j[(i - 1, i)] = b;
        }
        let eig = SymmetricEigen::new(j);
        let mut pairs: Vec<(f64, f64)> = (0..n)
            .map(|i| (eig.eigenvalues[i], eig.eigenvectors[(0, i)].powi(2)))
            .collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        Normal {
            nodes: pairs.iter().map(|p| p.0).collect(),
            weights: pairs.iter().map(|p| p.1).collect(),
        }
    }

    /// `E[f(σ Z)]`.
    pub fn mean(&self, sd: f64, f: impl Fn(f64) -> f64) -> f64 {
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(z, w)| w * f(sd * z))
            .sum()
    }
}

pub fn expit(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Solves `f(x) = target` for an increasing `f` on `[lo, hi]` by bisection.
fn solve(f: impl Fn(f64) -> f64, target: f64, mut lo: f64, mut hi: f64) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The model's parameters on the logit scale.
#[derive(Clone, Debug)]
pub struct Crowd {
    pub mu: f64,
    pub sd_unit: f64,
    pub sd_item: f64,
    /// The second scenario's shift.
    pub delta: f64,
    gh: Normal,
}

impl Crowd {
    /// A crowd whose first scenario scores `mean` on average (over annotators and items), whose
    /// annotators' expected scores have standard deviation `sd` (both as fractions), whose
    /// item difficulties have standard deviation `sd_item` logits, and whose second scenario
    /// scores `effect` more on average.
    pub fn calibrated(mean: f64, sd: f64, sd_item: f64, effect: f64) -> Crowd {
        let gh = Normal::new(40);
        let expected =
            |mu: f64, su: f64| gh.mean(1.0, |z| gh.mean(sd_item, |b| expit(mu + su * z - b)));
        let mu_for = |su: f64| solve(|mu| expected(mu, su), mean, -10.0, 10.0);
        let spread = |su: f64| {
            let mu = mu_for(su);
            let ability = |u: f64| gh.mean(sd_item, |b| expit(mu + u - b));
            let m = gh.mean(su, ability);
            gh.mean(su, |u| (ability(u) - m).powi(2)).sqrt()
        };
        let sd_unit = if sd > 0.0 {
            solve(spread, sd, 0.0, 10.0)
        } else {
            0.0
        };
        let mu = mu_for(sd_unit);
        let delta = solve(|d| expected(mu + d, sd_unit), mean + effect, -10.0, 10.0);
        Crowd {
            mu,
            sd_unit,
            sd_item,
            delta,
            gh,
        }
    }

    fn shift(&self, group: usize) -> f64 {
        self.mu + if group == 1 { self.delta } else { 0.0 }
    }

    /// The expected score of group `g` over annotators and items (the population's mean).
    pub fn population(&self, group: usize) -> f64 {
        let s = self.shift(group);
        self.gh.mean(1.0, |z| {
            self.gh
                .mean(self.sd_item, |b| expit(s + self.sd_unit * z - b))
        })
    }

    /// Other annotators on these items: `E_u[mean_j expit(shift + u − b_j)]`.
    pub fn other_annotators(&self, group: usize, items: &[f64]) -> f64 {
        let s = self.shift(group);
        let n = items.len() as f64;
        self.gh.mean(self.sd_unit, |u| {
            items.iter().map(|b| expit(s + u - b)).sum::<f64>() / n
        })
    }

    /// These annotators on more items: `mean_a E_b[expit(shift + u_a − b)]`.
    pub fn more_items(&self, group: usize, units: &[f64]) -> f64 {
        let s = self.shift(group);
        units
            .iter()
            .map(|u| self.gh.mean(self.sd_item, |b| expit(s + u - b)))
            .sum::<f64>()
            / units.len() as f64
    }

    pub fn draw_items(&self, rng: &mut SplitMix64, m: usize) -> Vec<f64> {
        (0..m).map(|_| self.sd_item * rng.normal()).collect()
    }

    pub fn draw_units(&self, rng: &mut SplitMix64, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.sd_unit * rng.normal()).collect()
    }

    /// Each annotator's item scores (1 right, 0 wrong) in group `g`.
    pub fn answer(
        &self,
        rng: &mut SplitMix64,
        group: usize,
        units: &[f64],
        items: &[f64],
    ) -> Vec<Vec<f64>> {
        let s = self.shift(group);
        units
            .iter()
            .map(|u| {
                items
                    .iter()
                    .map(|b| f64::from(u8::from(rng.unit() < expit(s + u - b))))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quadrature_and_calibration() {
        let gh = Normal::new(40);
        // Moments of the normal.
        assert!((gh.mean(1.0, |z| z * z) - 1.0).abs() < 1e-12);
        assert!((gh.mean(2.0, |z| z.powi(4)) - 48.0).abs() < 1e-9);
        // E[expit(Z)] = 1/2 by symmetry; a fine trapezoid agrees on a shifted one.
        assert!((gh.mean(1.5, expit) - 0.5).abs() < 1e-12);
        let trapezoid: f64 = (-8000..=8000)
            .map(|i| {
                let z = i as f64 / 1000.0;
                (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt() * expit(0.7 + 1.2 * z)
            })
            .sum::<f64>()
            / 1000.0;
        assert!((gh.mean(1.2, |x| expit(0.7 + x)) - trapezoid).abs() < 1e-9);
        let c = Crowd::calibrated(0.8, 0.09, 1.0, 0.1);
        assert!((c.population(0) - 0.8).abs() < 1e-9 && (c.population(1) - 0.9).abs() < 1e-9);
        // The annotators' spread, by simulation: 20,000 abilities.
        let mut rng = SplitMix64(3);
        let abilities: Vec<f64> = (0..20_000)
            .map(|_| c.more_items(0, &[c.sd_unit * rng.normal()]))
            .collect();
        let m = abilities.iter().sum::<f64>() / 20_000.0;
        let sd = (abilities.iter().map(|a| (a - m).powi(2)).sum::<f64>() / 20_000.0).sqrt();
        assert!((sd - 0.09).abs() < 0.003, "{sd}");
    }
}
