//! 95% intervals of a mean: the exact t-interval over units (annotators or splits), and a
//! bootstrap over units and test items at once, for one cell or the difference of two.
//!
//! A cell's scores are a matrix: one row per unit, one column per test item, every row over the
//! same items in the same order. One bootstrap replicate draws the items with replacement
//! (the same draw for every row, and for both cells of a difference: they answered the same
//! items) and the units with replacement (each cell's own), and takes the mean over drawn units
//! of each unit's mean over drawn items. The interval is the 2.5th and 97.5th percentiles of the
//! replicates (numpy's linear percentile), as `scipy.stats.bootstrap(method="percentile")`.

use crate::rng::SplitMix64;
use serde::{Deserialize, Serialize};

/// The confidence level of every interval the report gives.
pub const LEVEL: f64 = 0.95;

/// Bootstrap replicates per interval.
pub const RESAMPLES: usize = 2000;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// `mean ± t(1 - (1 - level) / 2, n - 1) · s / √n` with the sample standard deviation; `None`
/// for fewer than two values. Equals `scipy.stats.t.interval(level, n - 1, mean, sem)`.
pub fn t_interval(xs: &[f64], level: f64) -> Option<Interval> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = super::dist::t_quantile(1.0 - (1.0 - level) / 2.0, (n - 1) as f64)
        * (var / n as f64).sqrt();
    Some(Interval {
        low: mean - half,
        high: mean + half,
    })
}

/// The `q`-th percentile (0..=100) with linear interpolation between order statistics
/// (numpy's default method); `xs` must not be empty.
pub fn percentile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (pos - lo as f64) * (v[hi] - v[lo])
}

fn percentile_interval(replicates: &[f64], level: f64) -> Interval {
    let tail = 100.0 * (1.0 - level) / 2.0;
    Interval {
        low: percentile(replicates, tail),
        high: percentile(replicates, 100.0 - tail),
    }
}

/// A matrix of scores with at least one unit and one item, every row the same length.
fn valid(rows: &[Vec<f64>]) -> Option<usize> {
    let items = rows.first()?.len();
    (items > 0 && rows.iter().all(|r| r.len() == items)).then_some(items)
}

/// An index below `n` by Lemire's multiply-shift (no division: this runs items x replicates
/// times per interval).
fn index(rng: &mut SplitMix64, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// How often each item is drawn in one replicate.
fn draw_items(rng: &mut SplitMix64, items: usize, counts: &mut [f64]) {
    counts.iter_mut().for_each(|c| *c = 0.0);
    for _ in 0..items {
        counts[index(rng, items)] += 1.0;
    }
}

/// The mean over drawn units of each unit's mean over the drawn items (`counts`).
fn replicate(rng: &mut SplitMix64, rows: &[Vec<f64>], counts: &[f64], means: &mut Vec<f64>) -> f64 {
    let items = counts.len() as f64;
    means.clear();
    means.extend(
        rows.iter()
            .map(|r| r.iter().zip(counts).map(|(x, c)| x * c).sum::<f64>() / items),
    );
    let n = rows.len();
    (0..n).map(|_| means[index(rng, n)]).sum::<f64>() / n as f64
}

/// The bootstrap interval of a cell's mean over units and items (`None` without units or items).
pub fn bootstrap_mean(rows: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Interval> {
    let items = valid(rows)?;
    let mut rng = SplitMix64(seed);
    let mut counts = vec![0.0; items];
    let mut means = Vec::with_capacity(rows.len());
    let reps: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            draw_items(&mut rng, items, &mut counts);
            replicate(&mut rng, rows, &counts, &mut means)
        })
        .collect();
    Some(percentile_interval(&reps, LEVEL))
}

/// The bootstrap interval of `mean(b) - mean(a)`, two cells over the same items (the same item
/// draw for both, each cell's units drawn on their own); `None` unless both have units and the
/// same number of items.
pub fn bootstrap_difference(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let items = valid(a)?;
    if valid(b)? != items {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let mut counts = vec![0.0; items];
    let mut means = Vec::with_capacity(a.len().max(b.len()));
    let reps: Vec<f64> = (0..resamples.max(1))
        .map(|_| {
            draw_items(&mut rng, items, &mut counts);
            let ma = replicate(&mut rng, a, &counts, &mut means);
            replicate(&mut rng, b, &counts, &mut means) - ma
        })
        .collect();
    Some(percentile_interval(&reps, LEVEL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_interval_by_hand() {
        // mean 0.5, s = 0.1, n = 3: half width t(0.975, 2) · 0.1 / √3.
        let i = t_interval(&[0.4, 0.5, 0.6], LEVEL).unwrap();
        let half = 4.302652729749462 * 0.1 / 3f64.sqrt();
        assert!((i.low - (0.5 - half)).abs() < 1e-12 && (i.high - (0.5 + half)).abs() < 1e-12);
        assert_eq!(t_interval(&[0.4], LEVEL), None);
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(percentile(&xs, 0.0), 1.0);
        assert_eq!(percentile(&xs, 100.0), 4.0);
        assert!((percentile(&xs, 2.5) - 1.075).abs() < 1e-12);
        assert!((percentile(&xs, 50.0) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_seeded_and_shrinks_to_a_point_without_variation() {
        let rows = vec![vec![1.0, 0.0, 1.0, 1.0], vec![0.0, 0.0, 1.0, 1.0]];
        let a = bootstrap_mean(&rows, 500, 7).unwrap();
        assert_eq!(Some(a), bootstrap_mean(&rows, 500, 7));
        assert_ne!(Some(a), bootstrap_mean(&rows, 500, 8));
        assert!(a.low < 0.625 && 0.625 < a.high && a.low >= 0.0 && a.high <= 1.0);
        let flat = vec![vec![0.5; 6]; 3];
        assert_eq!(
            bootstrap_mean(&flat, 100, 1),
            Some(Interval {
                low: 0.5,
                high: 0.5
            })
        );
        // b = a + 0.25 on every item and unit: the difference is 0.25 in every replicate.
        let b: Vec<Vec<f64>> = flat
            .iter()
            .map(|r| r.iter().map(|x| x + 0.25).collect())
            .collect();
        let d = bootstrap_difference(&flat, &b, 100, 1).unwrap();
        assert!((d.low - 0.25).abs() < 1e-12 && (d.high - 0.25).abs() < 1e-12);
        assert_eq!(bootstrap_mean(&[], 10, 1), None);
        assert_eq!(bootstrap_difference(&flat, &[vec![1.0]], 10, 1), None);
    }
}
