//! t-tests of a difference or contrast with its standard error and degrees of freedom: the
//! shape every test of the report takes (the mixed model's Satterthwaite test, Welch's test
//! across annotators, the one-sample test against a fixed score, ANCOVA's coefficient).
//! Welch's test equals `scipy.stats.ttest_ind(b, a, equal_var=False)` with its interval.

use super::dist::{t_cdf, t_quantile};
use super::Interval;
use serde::{Deserialize, Serialize};

/// A two-sided t-test of `estimate = 0`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TTest {
    pub estimate: f64,
    pub se: f64,
    pub df: f64,
    pub t: f64,
    pub p: f64,
}

impl TTest {
    /// From an estimate, its standard error and degrees of freedom; `None` unless both are
    /// positive and finite.
    pub fn of(estimate: f64, se: f64, df: f64) -> Option<Self> {
        if !(se > 0.0 && df > 0.0 && se.is_finite() && df.is_finite() && estimate.is_finite()) {
            return None;
        }
        let t = estimate / se;
        Some(TTest {
            estimate,
            se,
            df,
            t,
            p: (2.0 * t_cdf(-t.abs(), df)).min(1.0),
        })
    }

    /// The `level` confidence interval `estimate ± t(df) · se`.
    pub fn interval(&self, level: f64) -> Interval {
        let half = t_quantile(1.0 - (1.0 - level) / 2.0, self.df) * self.se;
        Interval {
            low: self.estimate - half,
            high: self.estimate + half,
        }
    }
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    (
        m,
        xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
    )
}

/// Welch's test of the contrast `Σ w_g · mean(group g)` across units: each group's variance
/// its own, the degrees of freedom by Welch–Satterthwaite. `None` when a weighted group has
/// fewer than two units or no group varies.
pub fn welch_contrast(groups: &[&[f64]], weights: &[f64]) -> Option<TTest> {
    if groups.len() != weights.len() {
        return None;
    }
    let (mut estimate, mut var, mut denom) = (0.0, 0.0, 0.0);
    for (g, &w) in groups.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        if g.len() < 2 {
            return None;
        }
        let (m, v) = mean_var(g);
        let part = w * w * v / g.len() as f64;
        estimate += w * m;
        var += part;
        denom += part * part / (g.len() - 1) as f64;
    }
    TTest::of(estimate, var.sqrt(), var * var / denom)
}

/// Welch's test of `mean(b) − mean(a)`.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TTest> {
    welch_contrast(&[a, b], &[-1.0, 1.0])
}

/// The one-sample test of `value − mean(xs)`: a group of units against a fixed score (a
/// system evaluated once); `n − 1` degrees of freedom.
pub fn against_fixed(xs: &[f64], value: f64) -> Option<TTest> {
    if xs.len() < 2 {
        return None;
    }
    let (m, v) = mean_var(xs);
    TTest::of(
        value - m,
        (v / xs.len() as f64).sqrt(),
        (xs.len() - 1) as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_by_hand() {
        // a: mean 2, var 1, n 3; b: mean 5, var 20/3, n 4: se² = 1/3 + 5/3 = 2,
        // df = 2² / ((1/3)²/2 + (5/3)²/3) = 4 / (53/54) = 216/53.
        let t = welch(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!((t.estimate - 3.0).abs() < 1e-12);
        assert!((t.se - 2f64.sqrt()).abs() < 1e-12, "{}", t.se);
        assert!((t.df - 216.0 / 53.0).abs() < 1e-12, "{}", t.df);
        assert_eq!(welch(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]), None);
        let f = against_fixed(&[0.4, 0.5, 0.6], 0.8).unwrap();
        assert!((f.estimate - 0.3).abs() < 1e-12 && f.df == 2.0);
        assert!((f.se - 0.1 / 3f64.sqrt()).abs() < 1e-12);
        let i = f.interval(0.95);
        assert!((i.high - i.low - 2.0 * 4.302652729749462 * f.se).abs() < 1e-9);
    }
}
