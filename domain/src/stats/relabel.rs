//! The exact permutation test at the annotator level: under no scenario effect the labels of
//! the two groups' annotators are exchangeable, so every way of choosing which `n_a` of the
//! `n_a + n_b` annotators are group a is equally likely. The statistic is the difference of
//! the groups' mean annotator S1; p is the share of relabellings at least as far from zero as
//! the one observed (two-sided), over all `C(n_a + n_b, n_a)` of them while there are at most
//! `EXACT_LIMIT`, else over `RESAMPLES` random ones with the +1 correction.
//!
//! A design has a smallest p it can reach: `2 / C(6, 3) = 0.10` for 3 against 3. A reader must
//! see it, since such a design cannot be significant at 0.05 whatever the data.

use crate::rng::SplitMix64;
use serde::{Deserialize, Serialize};

/// Relabellings enumerated one by one up to this many.
pub const EXACT_LIMIT: u64 = 1 << 22;
/// Random relabellings beyond it.
pub const RESAMPLES: usize = 9999;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelabelTest {
    /// `mean(b) − mean(a)` of the annotators' scores.
    pub statistic: f64,
    pub p: f64,
    /// Every relabelling was enumerated (else `relabellings` random ones).
    pub exact: bool,
    pub relabellings: u64,
    /// The smallest p this design can give.
    pub min_p: f64,
}

/// `C(n, k)`, saturating at `u64::MAX`.
pub fn choose(n: u64, k: u64) -> u64 {
    let k = k.min(n - k.min(n));
    let mut c: u128 = 1;
    for i in 0..k {
        c = c * u128::from(n - i) / u128::from(i + 1);
        if c > u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    c as u64
}

/// The two-sided test of `mean(b) = mean(a)`; `None` unless each group has a unit.
pub fn relabel_test(a: &[f64], b: &[f64], seed: u64) -> Option<RelabelTest> {
    let (na, nb) = (a.len(), b.len());
    if na == 0 || nb == 0 {
        return None;
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let n = all.len();
    let total: f64 = all.iter().sum();
    let stat = |sum_a: f64| (total - sum_a) / nb as f64 - sum_a / na as f64;
    let observed = stat(a.iter().sum());
    let bar = observed.abs() - 1e-12 * observed.abs().max(1.0);
    let combos = choose(n as u64, na as u64);
    if n < 64 && combos <= EXACT_LIMIT {
        let mut hits = 0u64;
        // Gosper's hack: every n-bit mask with na bits set, in increasing order.
        let mut mask: u64 = (1u64 << na) - 1;
        let end = 1u64 << n;
        while mask < end {
            let mut sum = 0.0;
            let mut m = mask;
            while m != 0 {
                sum += all[m.trailing_zeros() as usize];
                m &= m - 1;
            }
            hits += u64::from(stat(sum).abs() >= bar);
            let c = mask & mask.wrapping_neg();
            let r = mask + c;
            mask = (((r ^ mask) >> 2) / c) | r;
        }
        let mirrored = if na == nb { 2.0 } else { 1.0 };
        return Some(RelabelTest {
            statistic: observed,
            p: hits as f64 / combos as f64,
            exact: true,
            relabellings: combos,
            min_p: (mirrored / combos as f64).min(1.0),
        });
    }
    let mut rng = SplitMix64(seed);
    let mut idx: Vec<usize> = (0..n).collect();
    let mut hits = 0u64;
    for _ in 0..RESAMPLES {
        for i in 0..na {
            let j = i + rng.below(n - i);
            idx.swap(i, j);
        }
        let sum: f64 = idx[..na].iter().map(|&i| all[i]).sum();
        hits += u64::from(stat(sum).abs() >= bar);
    }
    let r = RESAMPLES as f64 + 1.0;
    Some(RelabelTest {
        statistic: observed,
        p: (hits as f64 + 1.0) / r,
        exact: false,
        relabellings: RESAMPLES as u64,
        min_p: 1.0 / r,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_against_three_cannot_reach_five_percent() {
        assert_eq!(choose(6, 3), 20);
        assert_eq!(choose(20, 10), 184_756);
        assert_eq!(choose(5, 0), 1);
        // The most extreme split: only it and its mirror reach |difference| = 0.3.
        let t = relabel_test(&[0.5, 0.55, 0.6], &[0.8, 0.85, 0.9], 0).unwrap();
        assert!(t.exact && t.relabellings == 20);
        assert!((t.p - 0.1).abs() < 1e-15 && (t.min_p - 0.1).abs() < 1e-15);
        assert!((t.statistic - 0.3).abs() < 1e-12);
        // No difference: every relabelling is as far from zero or farther.
        let t = relabel_test(&[0.5, 0.7], &[0.6, 0.6], 0).unwrap();
        assert_eq!(t.p, 1.0);
        // Unequal groups have no mirror: 1 / C(5, 2).
        let t = relabel_test(&[0.1, 0.2], &[0.7, 0.8, 0.9], 0).unwrap();
        assert!((t.p - 0.1).abs() < 1e-15 && (t.min_p - 0.1).abs() < 1e-15);
        assert_eq!(relabel_test(&[], &[0.1], 0), None);
    }

    #[test]
    fn large_designs_sample_relabellings() {
        let a: Vec<f64> = (0..30).map(|i| 0.5 + 0.01 * (i % 7) as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| 0.52 + 0.01 * (i % 5) as f64).collect();
        let t = relabel_test(&a, &b, 9).unwrap();
        assert!(!t.exact && t.relabellings == RESAMPLES as u64);
        assert_eq!(Some(t), relabel_test(&a, &b, 9));
        assert!(t.p >= t.min_p && t.p <= 1.0);
    }
}
