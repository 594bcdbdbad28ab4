//! The paired test between two scenarios (or humans and a system) on the same test items: a
//! sign-flip permutation test of the mean item-level difference, the paired effect size, and
//! Holm's adjustment over a report's comparisons.
//!
//! The p-value follows `scipy.stats.permutation_test(..., permutation_type="samples")` with the
//! mean difference as statistic, two-sided: every one of the 2^n sign patterns when 2^n is at
//! most the number of resamples (exact), otherwise that many random patterns with scipy's +1
//! correction; `p = min(1, 2 · min(P(null <= observed), P(null >= observed)))`, with scipy's
//! tolerance of 100 ulps for ties.

use crate::rng::SplitMix64;
use serde::{Deserialize, Serialize};

/// Random sign patterns when the exact null distribution is too large (scipy's default).
pub const RESAMPLES: usize = 9999;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermutationTest {
    /// The mean of the differences.
    pub statistic: f64,
    pub p: f64,
    /// Every sign pattern was enumerated (else `resamples` random ones).
    pub exact: bool,
    pub resamples: usize,
}

/// The two-sided sign-flip test of `mean(d) = 0`; `None` for no differences.
pub fn sign_flip_test(d: &[f64], resamples: usize, seed: u64) -> Option<PermutationTest> {
    let n = d.len();
    if n == 0 {
        return None;
    }
    let mean = |signs: &mut dyn FnMut(usize) -> bool| {
        d.iter()
            .enumerate()
            .map(|(i, x)| if signs(i) { -x } else { *x })
            .sum::<f64>()
            / n as f64
    };
    let observed = mean(&mut |_| false);
    let gamma = (observed * f64::EPSILON * 100.0).abs();
    let (mut less, mut greater) = (0usize, 0usize);
    let mut count = |t: f64| {
        less += usize::from(t <= observed + gamma);
        greater += usize::from(t >= observed - gamma);
    };
    let exact = n < usize::BITS as usize && (1usize << n) <= resamples;
    let (p_less, p_greater, total) = if exact {
        let total = 1usize << n;
        for pattern in 0..total {
            count(mean(&mut |i| pattern >> i & 1 == 1));
        }
        (
            less as f64 / total as f64,
            greater as f64 / total as f64,
            total,
        )
    } else {
        // Flipping a set F of items gives the sum total - 2 · Σ_F d. Items go in bytes of 8:
        // each byte's 256 subset sums are tabled once, so a pattern costs n / 8 lookups (one
        // generator output gives the signs of 64 items).
        let total: f64 = d.iter().sum();
        let tables: Vec<[f64; 256]> = d
            .chunks(8)
            .map(|group| {
                let mut t = [0.0; 256];
                for (b, sum) in t.iter_mut().enumerate() {
                    *sum = group
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| b >> j & 1 == 1)
                        .map(|(_, x)| x)
                        .sum();
                }
                t
            })
            .collect();
        let mut rng = SplitMix64(seed);
        for _ in 0..resamples {
            let mut flipped = 0.0;
            let mut bits = 0u64;
            for (g, table) in tables.iter().enumerate() {
                if g % 8 == 0 {
                    bits = rng.next_u64();
                }
                flipped += table[(bits >> (8 * (g % 8))) as usize & 0xff];
            }
            count((total - 2.0 * flipped) / n as f64);
        }
        let r = resamples as f64 + 1.0;
        ((less + 1) as f64 / r, (greater + 1) as f64 / r, resamples)
    };
    Some(PermutationTest {
        statistic: observed,
        p: (2.0 * p_less.min(p_greater)).min(1.0),
        exact,
        resamples: total,
    })
}

/// The paired effect size (Cohen's d_z): the mean difference over the differences' sample
/// standard deviation; `None` for fewer than two or for differences that never vary.
pub fn cohen_dz(d: &[f64]) -> Option<f64> {
    let n = d.len();
    if n < 2 {
        return None;
    }
    let mean = d.iter().sum::<f64>() / n as f64;
    let sd = (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt();
    (sd > 0.0).then(|| mean / sd)
}

/// Holm's step-down adjustment of a family of p-values (order kept), as statsmodels'
/// `multipletests(p, method="holm")`.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_test_by_hand() {
        // d = (1, 1, 1): of 8 sign patterns, only all-plus reaches +1 and only all-minus -1.
        let t = sign_flip_test(&[1.0, 1.0, 1.0], 9999, 0).unwrap();
        assert!(t.exact && t.resamples == 8);
        assert!((t.p - 0.25).abs() < 1e-15 && t.statistic == 1.0);
        // No difference at all: every pattern ties, p = 1.
        assert_eq!(sign_flip_test(&[0.0, 0.0], 9999, 0).unwrap().p, 1.0);
        assert_eq!(sign_flip_test(&[], 9999, 0), None);
    }

    #[test]
    fn random_test_is_seeded_and_corrected() {
        let d: Vec<f64> = (0..40)
            .map(|i| if i % 3 == 0 { -0.5 } else { 1.0 })
            .collect();
        let a = sign_flip_test(&d, 999, 3).unwrap();
        assert!(!a.exact && a.resamples == 999);
        assert_eq!(Some(a), sign_flip_test(&d, 999, 3));
        // Never below the +1 correction's floor.
        assert!(a.p >= 2.0 / 1000.0 - 1e-15, "{}", a.p);
    }

    #[test]
    fn holm_by_hand() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        // sorted 0.01·4, 0.03·3, 0.04·2 (raised to 0.09), 0.5·1.
        let want = [0.04, 0.09, 0.09, 0.5];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(cohen_dz(&[1.0, 1.0]), None);
        assert!((cohen_dz(&[1.0, 2.0, 3.0]).unwrap() - 2.0).abs() < 1e-12);
    }
}
