//! Pearson's correlation coefficient with its test and Fisher-z interval, as
//! `scipy.stats.pearsonr(x, y)` and its `confidence_interval()`, and the difference between two
//! groups adjusted for a covariate (ANCOVA), as the group coefficient of the least-squares fit
//! `y ~ 1 + group + x` with its standard error, `n − 3` degrees of freedom and p (statsmodels'
//! OLS).

use super::dist::{normal_quantile, t_cdf};
use super::ttest::TTest;
use super::Interval;
use serde::{Deserialize, Serialize};

/// Below this many pairs a correlation's p is not reported (r, n and, from four pairs, the
/// interval are): with n − 2 < 3 degrees of freedom the t-test of r = 0 rests on the normality
/// of three or four points, and at n = 3 every |r| ≥ 0.997 is "significant".
pub const MIN_PAIRS_FOR_P: usize = 5;

/// r with its n, two-sided p (the t-test of r = 0 with n − 2 degrees of freedom, as scipy
/// computes it at any n; reported from [`MIN_PAIRS_FOR_P`] pairs) and 95% Fisher-z interval
/// (`None` below four pairs).
///
/// In a file (the report's JSON) the p is left out below [`MIN_PAIRS_FOR_P`] pairs, as on
/// every page and table (`Reported`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "Reported", from = "Reported")]
pub struct Correlation {
    pub r: f64,
    pub n: usize,
    pub p: f64,
    pub interval: Option<Interval>,
}

/// A correlation as files hold it: its p only where it is reported.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Reported {
    r: f64,
    n: usize,
    p: Option<f64>,
    interval: Option<Interval>,
}

impl From<Correlation> for Reported {
    fn from(c: Correlation) -> Reported {
        Reported {
            r: c.r,
            n: c.n,
            p: c.reported_p(),
            interval: c.interval,
        }
    }
}

impl From<Reported> for Correlation {
    /// A p left out reads back as NaN, which `reported_p` never shows.
    fn from(c: Reported) -> Correlation {
        Correlation {
            r: c.r,
            n: c.n,
            p: c.p.unwrap_or(f64::NAN),
            interval: c.interval,
        }
    }
}

impl Correlation {
    /// The p a report shows: `None` below [`MIN_PAIRS_FOR_P`] pairs.
    pub fn reported_p(&self) -> Option<f64> {
        (self.n >= MIN_PAIRS_FOR_P).then_some(self.p)
    }
}

/// Pearson's r of paired values with its test; `None` where `pearson` is.
pub fn correlation(x: &[f64], y: &[f64], level: f64) -> Option<Correlation> {
    let r = pearson(x, y)?;
    let n = x.len();
    let df = (n - 2) as f64;
    let p = if r.abs() >= 1.0 {
        0.0
    } else {
        let t = r * (df / (1.0 - r * r)).sqrt();
        (2.0 * t_cdf(-t.abs(), df)).min(1.0)
    };
    let interval = (n >= 4).then(|| {
        let z = r.clamp(-1.0, 1.0).atanh();
        let half = normal_quantile(1.0 - (1.0 - level) / 2.0) / ((n - 3) as f64).sqrt();
        Interval {
            low: (z - half).tanh(),
            high: (z + half).tanh(),
        }
    });
    Some(Correlation { r, n, p, interval })
}

/// r of paired values; `None` for fewer than three pairs, unequal lengths, or a side that
/// never varies.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 3 || y.len() != n {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// The ANCOVA group coefficient: the adjusted difference, the pooled slope, and the test of
/// the difference (`None` below four annotators or without residual variance).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ancova {
    pub difference: f64,
    pub slope: f64,
    pub test: Option<TTest>,
}

/// Group `b`'s mean outcome minus group `a`'s, adjusted for a covariate: pairs are
/// `(covariate, outcome)`; the common slope is pooled within the groups, and the difference is
/// `(ȳ_b − ȳ_a) − slope · (x̄_b − x̄_a)`, its variance `σ̂² (1/n_a + 1/n_b + (x̄_b − x̄_a)² / Sxx)`
/// with σ̂² the residual mean square on `n − 3` degrees of freedom. `None` for an empty group
/// or a covariate that never varies within the groups.
pub fn ancova(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<Ancova> {
    let (difference, slope, sxx, syy_left) = fit_ancova(a, b)?;
    let n = a.len() + b.len();
    let test = (n > 3).then_some(()).and_then(|_| {
        let mean_x = |g: &[(f64, f64)]| g.iter().map(|p| p.0).sum::<f64>() / g.len() as f64;
        let gap = mean_x(b) - mean_x(a);
        let df = (n - 3) as f64;
        let sigma2 = syy_left / df;
        let var = sigma2 * (1.0 / a.len() as f64 + 1.0 / b.len() as f64 + gap * gap / sxx);
        TTest::of(difference, var.sqrt(), df)
    });
    Some(Ancova {
        difference,
        slope,
        test,
    })
}

/// `(difference, slope, Sxx within, residual sum of squares)`.
fn fit_ancova(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<(f64, f64, f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let means = |g: &[(f64, f64)]| {
        let n = g.len() as f64;
        (
            g.iter().map(|p| p.0).sum::<f64>() / n,
            g.iter().map(|p| p.1).sum::<f64>() / n,
        )
    };
    let ((xa, ya), (xb, yb)) = (means(a), means(b));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (g, (mx, my)) in [(a, (xa, ya)), (b, (xb, yb))] {
        for (x, y) in g {
            sxy += (x - mx) * (y - my);
            sxx += (x - mx) * (x - mx);
            syy += (y - my) * (y - my);
        }
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let left = (syy - slope * sxy).max(0.0);
    Some(((yb - ya) - slope * (xb - xa), slope, sxx, left))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap() - 1.0).abs() < 1e-15);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-15);
        // x = 1, 2, 3, y = 1, 3, 2: sxy = 1, sxx = syy = 2, r = 0.5.
        assert!((pearson(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]).unwrap() - 0.5).abs() < 1e-15);
        assert_eq!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(pearson(&[1.0, 2.0], &[1.0, 2.0]), None);
        // Outcome = covariate + 0.1 in group b: slope 1, nothing left to the group.
        let a = [(0.2, 0.2), (0.4, 0.4)];
        let b = [(0.6, 0.7), (0.8, 0.9)];
        let fit = ancova(&a, &b).unwrap();
        assert!((fit.difference - 0.1).abs() < 1e-12 && (fit.slope - 1.0).abs() < 1e-12);
        // A perfect fit leaves no residual variance: no test.
        assert_eq!(fit.test, None);
        assert_eq!(ancova(&[(0.5, 0.1)], &[(0.5, 0.9)]), None);
        // r = 0.5 with n = 3: t = 0.5 · √(1 / 0.75), p from t(1); no interval below four pairs.
        let c = correlation(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0], 0.95).unwrap();
        let t = 0.5 / 0.75f64.sqrt();
        assert!((c.p - 2.0 * t_cdf(-t, 1.0)).abs() < 1e-14 && c.interval.is_none());
        // Computed as scipy does, but not reported below five pairs, in a file neither.
        assert_eq!(c.reported_p(), None);
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["p"], serde_json::Value::Null, "{json}");
        let back: Correlation = serde_json::from_value(json).unwrap();
        assert_eq!((back.r, back.n, back.reported_p()), (c.r, 3, None));
        let c = correlation(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 6.0, 8.0], 0.95).unwrap();
        let i = c.interval.unwrap();
        assert!(c.p < 1e-12 && i.low > 0.999_999 && i.high <= 1.0, "{c:?}");
        assert_eq!(c.reported_p(), None);
        let c = correlation(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0, 3.0, 2.0, 5.0, 4.0], 0.95).unwrap();
        assert_eq!(c.reported_p(), Some(c.p));
        let back: Correlation = serde_json::from_value(serde_json::to_value(c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
