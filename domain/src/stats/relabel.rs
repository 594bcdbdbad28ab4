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
    let mut idx: Vec<usize> = (0..n).collect();
    Some(drawn(observed, seed, |rng| {
        for i in 0..na {
            let j = i + rng.below(n - i);
            idx.swap(i, j);
        }
        let sum: f64 = idx[..na].iter().map(|&i| all[i]).sum();
        stat(sum).abs() >= bar
    }))
}

/// The Monte Carlo test from `RESAMPLES` relabellings drawn from `seed`: `reaches` draws one
/// and says whether its statistic is at least as extreme as the observed one.
fn drawn(
    observed: f64,
    seed: u64,
    mut reaches: impl FnMut(&mut SplitMix64) -> bool,
) -> RelabelTest {
    let mut rng = SplitMix64(seed);
    let hits = (0..RESAMPLES).filter(|_| reaches(&mut rng)).count();
    let r = RESAMPLES as f64 + 1.0;
    RelabelTest {
        statistic: observed,
        p: (hits as f64 + 1.0) / r,
        exact: false,
        relabellings: RESAMPLES as u64,
        min_p: 1.0 / r,
    }
}

/// `C(n_1 + … + n_g; n_1, …, n_g)`, the ways to deal units into groups of these sizes,
/// saturating at `u64::MAX`.
pub fn multinomial(sizes: &[usize]) -> u64 {
    let mut n = 0u64;
    let mut ways = 1u64;
    for &k in sizes {
        n += k as u64;
        ways = ways.saturating_mul(choose(n, k as u64));
    }
    ways
}

/// The test of the contrast `Σ w_g · mean(group g) = 0` by relabelling the annotators of the
/// groups it weighs (weight not zero) among those groups, their sizes kept: exchangeable when
/// those groups do not differ. Two groups of opposite weights are `relabel_test`'s design (its
/// subset enumeration is the faster one); more are dealt one unit at a time, every assignment
/// while there are at most `EXACT_LIMIT`. The smallest reachable p of an exact test is the
/// share of assignments that tie the most extreme one on generic scores (the contrast's
/// symmetries). `None` unless two weighted groups each have a unit.
pub fn contrast_relabel_test(groups: &[&[f64]], weights: &[f64], seed: u64) -> Option<RelabelTest> {
    if groups.len() != weights.len() {
        return None;
    }
    let pool: Vec<(&[f64], f64)> = groups
        .iter()
        .zip(weights)
        .filter(|(_, w)| **w != 0.0)
        .map(|(g, w)| (*g, *w))
        .collect();
    if pool.len() < 2 || pool.iter().any(|(g, _)| g.is_empty()) {
        return None;
    }
    if let [(a, wa), (b, wb)] = pool[..] {
        if wa == -wb {
            return relabel_test(a, b, seed).map(|t| RelabelTest {
                statistic: wb * t.statistic,
                ..t
            });
        }
    }
    Some(Dealt::of(&pool).test(seed))
}

/// The units of a contrast's groups, each with its group's coefficient `w_g / n_g`.
struct Dealt {
    scores: Vec<f64>,
    coef: Vec<f64>,
    sizes: Vec<usize>,
    observed: f64,
}

impl Dealt {
    fn of(pool: &[(&[f64], f64)]) -> Dealt {
        let coef: Vec<f64> = pool.iter().map(|(g, w)| w / g.len() as f64).collect();
        let observed = pool
            .iter()
            .zip(&coef)
            .map(|((g, _), c)| c * g.iter().sum::<f64>())
            .sum();
        Dealt {
            scores: pool.iter().flat_map(|(g, _)| g.iter().copied()).collect(),
            sizes: pool.iter().map(|(g, _)| g.len()).collect(),
            coef,
            observed,
        }
    }

    fn test(&self, seed: u64) -> RelabelTest {
        let bar = self.observed.abs() - 1e-12 * self.observed.abs().max(1.0);
        let ways = multinomial(&self.sizes);
        if ways <= EXACT_LIMIT {
            // Generic scores (logarithms of distinct integers) tie only through symmetries.
            let generic: Vec<f64> = (0..self.scores.len())
                .map(|i| ((i + 2) as f64).ln())
                .collect();
            let mut walk = Walk {
                dealt: self,
                generic: &generic,
                left: self.sizes.clone(),
                bar,
                hits: 0,
                extreme: (0.0, 0),
            };
            walk.deal(0, 0.0, 0.0);
            return RelabelTest {
                statistic: self.observed,
                p: walk.hits as f64 / ways as f64,
                exact: true,
                relabellings: ways,
                min_p: walk.extreme.1 as f64 / ways as f64,
            };
        }
        let mut labels: Vec<usize> = (0..self.sizes.len())
            .flat_map(|g| std::iter::repeat_n(g, self.sizes[g]))
            .collect();
        drawn(self.observed, seed, |rng| {
            for i in (1..labels.len()).rev() {
                labels.swap(i, rng.below(i + 1));
            }
            let stat: f64 = labels
                .iter()
                .zip(&self.scores)
                .map(|(&g, x)| self.coef[g] * x)
                .sum();
            stat.abs() >= bar
        })
    }
}

/// The depth-first deal of every assignment: hits at least as extreme as observed, and the
/// most extreme generic statistic with how many assignments reach it.
struct Walk<'a> {
    dealt: &'a Dealt,
    generic: &'a [f64],
    left: Vec<usize>,
    bar: f64,
    hits: u64,
    extreme: (f64, u64),
}

impl Walk<'_> {
    fn deal(&mut self, i: usize, stat: f64, generic: f64) {
        if i == self.dealt.scores.len() {
            self.hits += u64::from(stat.abs() >= self.bar);
            let (top, count) = self.extreme;
            let g = generic.abs();
            let tol = 1e-9 * top.max(1.0);
            self.extreme = if g > top + tol {
                (g, 1)
            } else if g >= top - tol {
                (top.max(g), count + 1)
            } else {
                (top, count)
            };
            return;
        }
        for g in 0..self.left.len() {
            if self.left[g] == 0 {
                continue;
            }
            self.left[g] -= 1;
            let c = self.dealt.coef[g];
            self.deal(
                i + 1,
                stat + c * self.dealt.scores[i],
                generic + c * self.generic[i],
            );
            self.left[g] += 1;
        }
    }
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

    #[test]
    fn contrasts_of_more_groups_deal_every_assignment() {
        assert_eq!(multinomial(&[3, 3, 3, 3]), 369_600);
        // A pair given as a contrast is relabel_test's, its statistic weighted.
        let (a, b) = ([0.5, 0.55, 0.6], [0.8, 0.85, 0.9]);
        let pair = contrast_relabel_test(&[&a, &[0.1], &b], &[-0.5, 0.0, 0.5], 0).unwrap();
        let plain = relabel_test(&a, &b, 0).unwrap();
        assert_eq!((pair.p, pair.min_p), (plain.p, plain.min_p));
        assert!((pair.statistic - 0.15).abs() < 1e-12);
        // Four groups of three, perfectly ordered on the trend: only it and its mirror are as
        // extreme, of 369,600 deals.
        let g: Vec<Vec<f64>> = (0..4)
            .map(|k| {
                (0..3)
                    .map(|i| 0.5 + 0.1 * k as f64 + 0.01 * i as f64)
                    .collect()
            })
            .collect();
        let rows: Vec<&[f64]> = g.iter().map(Vec::as_slice).collect();
        let w = [-0.3, -0.1, 0.1, 0.3];
        let t = contrast_relabel_test(&rows, &w, 0).unwrap();
        assert!(t.exact && t.relabellings == 369_600);
        assert!((t.p - 2.0 / 369_600.0).abs() < 1e-18, "{t:?}");
        assert!((t.min_p - t.p).abs() < 1e-18);
        // By brute force on a small unequal design: the share of deals at least as extreme.
        let (x, y, z) = ([0.2, 0.9], [0.4], [0.7, 0.1, 0.5]);
        let w = [-1.0, 0.25, 1.0];
        let t = contrast_relabel_test(&[&x, &y, &z], &w, 0).unwrap();
        let all = [0.2, 0.9, 0.4, 0.7, 0.1, 0.5];
        let stat = |l: &[usize]| -> f64 {
            let mean = |g: usize| {
                let v: Vec<f64> = (0..6).filter(|&i| l[i] == g).map(|i| all[i]).collect();
                v.iter().sum::<f64>() / v.len() as f64
            };
            w[0] * mean(0) + w[1] * mean(1) + w[2] * mean(2)
        };
        let observed = stat(&[0, 0, 1, 2, 2, 2]);
        let (mut hits, mut ways) = (0, 0);
        for code in 0..3usize.pow(6) {
            let l: Vec<usize> = (0..6).map(|i| code / 3usize.pow(i) % 3).collect();
            let n = |g: usize| l.iter().filter(|&&x| x == g).count();
            if (n(0), n(1), n(2)) == (2, 1, 3) {
                ways += 1;
                hits += usize::from(stat(&l).abs() >= observed.abs() - 1e-12);
            }
        }
        assert_eq!(ways, 60);
        assert!((t.p - hits as f64 / 60.0).abs() < 1e-15, "{t:?} {hits}");
        assert!((t.statistic - observed).abs() < 1e-12);
        // One weighted group is no test; a large design draws random deals.
        assert_eq!(contrast_relabel_test(&[&x, &y], &[0.0, 1.0], 0), None);
        let big: Vec<Vec<f64>> = (0..3)
            .map(|k| {
                (0..12)
                    .map(|i| 0.5 + 0.01 * ((i * 7 + k) % 5) as f64)
                    .collect()
            })
            .collect();
        let rows: Vec<&[f64]> = big.iter().map(Vec::as_slice).collect();
        let t = contrast_relabel_test(&rows, &[-1.0, 0.5, 0.5], 3).unwrap();
        assert!(!t.exact && t.p >= t.min_p && t.p <= 1.0);
        assert_eq!(Some(t), contrast_relabel_test(&rows, &[-1.0, 0.5, 0.5], 3));
    }
}
