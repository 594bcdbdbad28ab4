//! Pearson's correlation coefficient, as `scipy.stats.pearsonr(x, y).statistic`, and the
//! difference between two groups adjusted for a covariate (ANCOVA), as the group coefficient
//! of the least-squares fit `y ~ 1 + group + x` (statsmodels' OLS).

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

/// Group `b`'s mean outcome minus group `a`'s, adjusted for a covariate: pairs are
/// `(covariate, outcome)`; the common slope is pooled within the groups, and the difference is
/// `(ȳ_b − ȳ_a) − slope · (x̄_b − x̄_a)`. `None` for an empty group or a covariate that never
/// varies within the groups.
pub fn adjusted_difference(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<(f64, f64)> {
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
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (g, (mx, my)) in [(a, (xa, ya)), (b, (xb, yb))] {
        for (x, y) in g {
            sxy += (x - mx) * (y - my);
            sxx += (x - mx) * (x - mx);
        }
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some(((yb - ya) - slope * (xb - xa), slope))
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
        let (d, slope) = adjusted_difference(&a, &b).unwrap();
        assert!((d - 0.1).abs() < 1e-12 && (slope - 1.0).abs() < 1e-12);
        assert_eq!(adjusted_difference(&[(0.5, 0.1)], &[(0.5, 0.9)]), None);
    }
}
