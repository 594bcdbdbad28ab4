//! The planner: how many annotators per scenario a study needs to find a difference in S1 with
//! a given power, planned from a pilot's variance components, never from an observed difference.
//!
//! Under the scenario model `S1 ~ scenario + (1|annotator) + (1|item)` with the same m items for
//! every annotator, the item effects cancel in a difference of scenarios, and an annotator's mean
//! over the items varies between annotators with `τ² = σ²_annotator + σ²_residual / m`. With n
//! annotators per scenario the model's test of two scenarios is (on balanced data exactly) the
//! two-sample t-test of the annotators' means with `2n − 2` degrees of freedom, so its power is
//! statsmodels' `TTestIndPower` at the effect `d = difference / τ` (the exact noncentral t with
//! noncentrality `d · √(n1 n2 / (n1 + n2))`).
//!
//! The pilot's τ is uncertain, and so is the answer: it is given with the range across τ's 95%
//! interval. τ² is a combination of the annotator and residual mean squares,
//! `MS_a / m_pilot + MS_r (1/m − 1/m_pilot)`; its interval is the chi-square interval with
//! Satterthwaite's degrees of freedom for that combination (exact, `annotators − scenarios`,
//! when m is the pilot's number of items).

use super::dist::{chi2_quantile, nct_cdf, t_quantile};
use super::Interval;
use serde::{Deserialize, Serialize};

/// The power of the two-sided test at level `alpha` with `n1` and `n2` (>= 2 in all) units.
pub fn two_sample_power(effect: f64, n1: f64, n2: f64, alpha: f64) -> f64 {
    let df = n1 + n2 - 2.0;
    let nc = effect * (n1 * n2 / (n1 + n2)).sqrt();
    let crit = t_quantile(1.0 - alpha / 2.0, df);
    (1.0 - nct_cdf(crit, df, nc)) + nct_cdf(-crit, df, nc)
}

/// The number of units per group (equal groups, as a real number: round it up) at which the
/// test reaches `power`, as `TTestIndPower().solve_power(nobs1=None, ratio=1)`; `None` for no
/// effect or a power the test cannot reach below a million per group.
pub fn units_needed(effect: f64, power: f64, alpha: f64) -> Option<f64> {
    let effect = effect.abs();
    if effect.is_nan() || effect <= 0.0 || !(0.0..1.0).contains(&power) {
        return None;
    }
    let at = |n: f64| two_sample_power(effect, n, n, alpha) - power;
    let (mut lo, mut hi) = (1.5_f64, 2.0_f64);
    if at(lo) >= 0.0 {
        return Some(lo);
    }
    while at(hi) < 0.0 {
        lo = hi;
        hi *= 2.0;
        if hi > 1e6 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if at(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 * hi {
            break;
        }
    }
    Some(0.5 * (lo + hi))
}

/// What a pilot's fit of the scenario model says about annotators.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pilot {
    /// REML variances of the annotator intercepts and of the residual.
    pub unit_var: f64,
    pub resid_var: f64,
    /// Items per annotator in the pilot.
    pub items: f64,
    /// Degrees of freedom of the annotator mean square (annotators − scenarios) and of the
    /// residual (observations − annotators − items + 1).
    pub unit_df: f64,
    pub resid_df: f64,
}

/// A study sized for one difference.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub difference: f64,
    /// Items every annotator answers.
    pub items: f64,
    /// τ: the standard deviation of an annotator's mean over those items, and its interval at
    /// 1 − α (the level the plan is for).
    pub sd: f64,
    pub sd_interval: Option<Interval>,
    /// Annotators per scenario (`None`: more than a million), at τ and across its interval.
    pub needed: Option<u32>,
    pub needed_range: Option<(Option<u32>, Option<u32>)>,
}

impl Pilot {
    /// τ² at m items, and the Satterthwaite degrees of freedom of its estimate.
    pub fn tau2(&self, items: f64) -> (f64, f64) {
        let ms_unit = self.resid_var + self.items * self.unit_var;
        let (a, c) = (1.0 / self.items, 1.0 / items - 1.0 / self.items);
        let tau2 = (a * ms_unit + c * self.resid_var).max(self.resid_var / items);
        let denom = (a * ms_unit).powi(2) / self.unit_df
            + if self.resid_df > 0.0 {
                (c * self.resid_var).powi(2) / self.resid_df
            } else {
                0.0
            };
        (tau2, tau2 * tau2 / denom)
    }

    /// The annotators per scenario to find `difference` with `power` at `alpha` on `items`
    /// items; `None` for a pilot without spread or a power not above `alpha`.
    pub fn plan(&self, difference: f64, items: f64, power: f64, alpha: f64) -> Option<Planned> {
        if !(power > alpha && power < 1.0 && self.unit_df > 0.0 && items > 0.0) {
            return None;
        }
        let (tau2, df) = self.tau2(items);
        if !(tau2 > 0.0 && tau2.is_finite()) {
            return None;
        }
        let n_at = |sd: f64| units_needed(difference / sd, power, alpha).map(|n| n.ceil() as u32);
        let sd_interval = (df.is_finite() && df > 0.0).then(|| Interval {
            low: (df * tau2 / chi2_quantile(1.0 - alpha / 2.0, df)).sqrt(),
            high: (df * tau2 / chi2_quantile(alpha / 2.0, df)).sqrt(),
        });
        Some(Planned {
            difference,
            items,
            sd: tau2.sqrt(),
            sd_interval,
            needed: n_at(tau2.sqrt()),
            needed_range: sd_interval.map(|i| (n_at(i.low), n_at(i.high))),
        })
    }
}

/// The pooled sample standard deviation of two groups (`None` below three values in all).
pub fn pooled_sd(a: &[f64], b: &[f64]) -> Option<f64> {
    let ss = |xs: &[f64]| {
        let m = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let df = (a.len() + b.len()).checked_sub(2).filter(|&d| d > 0)?;
    Some(((ss(a) + ss(b)) / df as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_grows_with_units_and_the_solution_hits_the_target() {
        let p3 = two_sample_power(1.0, 3.0, 3.0, 0.05);
        let p10 = two_sample_power(1.0, 10.0, 10.0, 0.05);
        assert!(0.05 < p3 && p3 < p10 && p10 < 1.0);
        let n = units_needed(1.0, 0.8, 0.05).unwrap();
        assert!((two_sample_power(1.0, n, n, 0.05) - 0.8).abs() < 1e-8);
        // The classic textbook figure: d = 0.5 needs about 64 per group.
        assert_eq!(units_needed(0.5, 0.8, 0.05).unwrap().ceil(), 64.0);
        assert_eq!(units_needed(0.0, 0.8, 0.05), None);
        assert!((pooled_sd(&[1.0, 3.0], &[2.0, 4.0]).unwrap() - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(pooled_sd(&[1.0], &[2.0]), None);
    }

    #[test]
    fn the_plan_rests_on_the_annotator_spread_at_the_planned_items() {
        let pilot = Pilot {
            unit_var: 0.01,
            resid_var: 0.16,
            items: 100.0,
            unit_df: 4.0,
            resid_df: 500.0,
        };
        // At the pilot's items τ² = MS_a / m with the annotator mean square's df exactly.
        let (tau2, df) = pilot.tau2(100.0);
        assert!((tau2 - (0.01 + 0.0016)).abs() < 1e-15 && (df - 4.0).abs() < 1e-9);
        let p = pilot.plan(0.1, 100.0, 0.8, 0.05).unwrap();
        let d = 0.1 / tau2.sqrt();
        assert_eq!(
            p.needed,
            Some(units_needed(d, 0.8, 0.05).unwrap().ceil() as u32)
        );
        // The range runs from the small SD (fewer annotators) to the large one.
        let (lo, hi) = p.needed_range.unwrap();
        assert!(lo.unwrap() <= p.needed.unwrap() && p.needed.unwrap() <= hi.unwrap());
        let i = p.sd_interval.unwrap();
        assert!((i.low * i.low - 4.0 * tau2 / chi2_quantile(0.975, 4.0)).abs() < 1e-12);
        // More items shrink the residual part only.
        assert!((pilot.tau2(400.0).0 - (0.01 + 0.0004)).abs() < 1e-12);
        // τ's interval is at the plan's level: wider at α = 0.02.
        let wide = pilot
            .plan(0.1, 100.0, 0.8, 0.02)
            .unwrap()
            .sd_interval
            .unwrap();
        assert!(wide.low < i.low && wide.high > i.high);
        assert!((wide.low * wide.low - 4.0 * tau2 / chi2_quantile(0.99, 4.0)).abs() < 1e-12);
        // A power at or below alpha is no plan.
        assert_eq!(pilot.plan(0.1, 100.0, 0.05, 0.05), None);
    }
}
