//! The planner: the power of a two-sided two-sample t-test between two scenarios' annotators,
//! and how many annotators per scenario a study needs for a given difference and power.
//!
//! Both follow statsmodels' `TTestIndPower` (pooled variance, `df = n1 + n2 - 2`, the exact
//! noncentral t with noncentrality `d · √(n1 n2 / (n1 + n2))`); the effect `d` is a difference
//! in S1 over the pooled standard deviation of annotator S1 within a scenario (from pilot data).

use super::dist::{nct_cdf, t_quantile};

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
}
