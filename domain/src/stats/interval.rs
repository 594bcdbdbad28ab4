//! 95% intervals of a mean, each named by what it covers:
//! - *other annotators* (on these items): the t-interval over units (annotators or splits),
//!   computed on the logit scale so that it stays within 0–1 (`logit_t_interval`);
//! - *more items from these annotators*: a percentile bootstrap over the test items with the
//!   units held fixed, its percentiles expanded for the number of items (`bootstrap_items`,
//!   and the difference of two cells on the same items).
//!
//! A cell's scores are a matrix: one row per unit, one column per test item, every row over the
//! same items in the same order. A replicate draws the items with replacement (the same draw for
//! every row, and for both cells of a difference: they answered the same items) and takes the
//! mean over units of each unit's mean over the drawn items. The interval is the 2.5th and 97.5th
//! percentiles of the replicates (numpy's linear percentile), as
//! `scipy.stats.bootstrap(method="percentile")`.
//!
//! The two-level bootstrap (units drawn too) is not used by the report: with three annotators a
//! cell has ten distinct unit draws, and it covers about 80%, not 95% (`clues-lab simulate`
//! measures it). It is kept so that the simulation can show that.

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

/// The t-interval of the mean of scores in [0, 1] on the logit scale: `expit(logit(m) ±
/// t(1 − (1 − level) / 2, n − 1) · se / (m (1 − m)))` with `se = s / √n` (the delta method),
/// so that it never leaves [0, 1]. A mean at 0 or 1 (every unit there) is a point interval.
/// `None` for fewer than two values.
pub fn logit_t_interval(xs: &[f64], level: f64) -> Option<Interval> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = (xs.iter().sum::<f64>() / n as f64).clamp(0.0, 1.0);
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    if mean <= 0.0 || mean >= 1.0 || var <= 0.0 {
        return Some(Interval {
            low: mean,
            high: mean,
        });
    }
    let q = super::dist::t_quantile(1.0 - (1.0 - level) / 2.0, (n - 1) as f64);
    let half = q * (var / n as f64).sqrt() / (mean * (1.0 - mean));
    let logit = (mean / (1.0 - mean)).ln();
    let expit = |z: f64| 1.0 / (1.0 + (-z).exp());
    Some(Interval {
        low: expit(logit - half),
        high: expit(logit + half),
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
    tails(replicates, tail)
}

fn tails(replicates: &[f64], tail: f64) -> Interval {
    Interval {
        low: percentile(replicates, tail),
        high: percentile(replicates, 100.0 - tail),
    }
}

/// The tail (percent) of the expanded percentile interval over `m` items (Hesterberg 2015,
/// "What teachers should know about the bootstrap", sec. 6.4): the percentile interval is too
/// narrow by `√((m − 1)/m)` and by using z where t belongs, so its tails are taken at
/// `Φ(−√(m/(m − 1)) · t(1 − α/2, m − 1))` instead of α/2. At 50 items: 2.1% and 97.9%.
pub fn expanded_tail(m: usize, level: f64) -> f64 {
    let alpha = 1.0 - level;
    if m < 2 {
        return 100.0 * alpha / 2.0;
    }
    let m = m as f64;
    let q = (m / (m - 1.0)).sqrt() * super::dist::t_quantile(1.0 - alpha / 2.0, m - 1.0);
    100.0 * super::dist::normal_cdf(-q)
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

/// The mean over units (drawn with replacement if `units` is given its generator, else all of
/// them) of each unit's mean over the drawn items (`counts`).
fn replicate(
    units: Option<&mut SplitMix64>,
    rows: &[Vec<f64>],
    counts: &[f64],
    means: &mut Vec<f64>,
) -> f64 {
    let items = counts.len() as f64;
    means.clear();
    means.extend(
        rows.iter()
            .map(|r| r.iter().zip(counts).map(|(x, c)| x * c).sum::<f64>() / items),
    );
    let n = rows.len();
    match units {
        Some(rng) => (0..n).map(|_| means[index(rng, n)]).sum::<f64>() / n as f64,
        None => means.iter().sum::<f64>() / n as f64,
    }
}

/// The replicates of `stat(rng, counts)` over `resamples` item draws.
fn over_item_draws(
    items: usize,
    resamples: usize,
    seed: u64,
    mut stat: impl FnMut(&mut SplitMix64, &[f64]) -> f64,
) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    let mut counts = vec![0.0; items];
    (0..resamples.max(1))
        .map(|_| {
            draw_items(&mut rng, items, &mut counts);
            stat(&mut rng, &counts)
        })
        .collect()
}

/// The bootstrap interval of a cell's mean over its items, these units held fixed: it covers
/// the mean of these annotators on more items like these. Expanded percentiles
/// (`expanded_tail`), which cover 95% from 50 items on (`clues-lab simulate`).
pub fn bootstrap_items(rows: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Interval> {
    let items = valid(rows)?;
    let mut means = Vec::with_capacity(rows.len());
    let reps = over_item_draws(items, resamples, seed, |_, counts| {
        replicate(None, rows, counts, &mut means)
    });
    Some(tails(&reps, expanded_tail(items, LEVEL)))
}

/// The bootstrap interval at `level` over items of `mean(b) − mean(a)`, two cells on the same
/// items with their units held fixed; `None` unless both have units and the same number of
/// items.
pub fn bootstrap_items_difference(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    resamples: usize,
    seed: u64,
    level: f64,
) -> Option<Interval> {
    let (items, reps) = difference_draws(a, b, resamples, seed, false)?;
    Some(tails(&reps, expanded_tail(items, level)))
}

/// The replicates of `mean(b) − mean(a)` over item draws shared by both cells (they answered
/// the same items), each cell's units drawn on their own where `draw_units`; with the number of
/// items, or `None` unless both have units and the same number of items.
fn difference_draws(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    resamples: usize,
    seed: u64,
    draw_units: bool,
) -> Option<(usize, Vec<f64>)> {
    let items = valid(a)?;
    if valid(b)? != items {
        return None;
    }
    let mut means = Vec::with_capacity(a.len().max(b.len()));
    let reps = over_item_draws(items, resamples, seed, |rng, counts| {
        let ma = replicate(draw_units.then_some(&mut *rng), a, counts, &mut means);
        replicate(draw_units.then_some(rng), b, counts, &mut means) - ma
    });
    Some((items, reps))
}

/// The two-level bootstrap interval of a cell's mean over units and items (`None` without units
/// or items); not used by the report (see the module's doc).
pub fn bootstrap_mean(rows: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Interval> {
    let items = valid(rows)?;
    let mut means = Vec::with_capacity(rows.len());
    let reps = over_item_draws(items, resamples, seed, |rng, counts| {
        replicate(Some(rng), rows, counts, &mut means)
    });
    Some(percentile_interval(&reps, LEVEL))
}

/// The two-level bootstrap interval of `mean(b) - mean(a)`, two cells over the same items (the
/// same item draw for both, each cell's units drawn on their own); `None` unless both have
/// units and the same number of items. Not used by the report (see the module's doc).
pub fn bootstrap_difference(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let (_, reps) = difference_draws(a, b, resamples, seed, true)?;
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
    fn logit_interval_stays_within_the_scale() {
        // Near the ceiling the plain t-interval passes 1; on the logit scale it cannot.
        let xs = [0.92, 0.99, 0.97];
        let plain = t_interval(&xs, LEVEL).unwrap();
        let bounded = logit_t_interval(&xs, LEVEL).unwrap();
        assert!(plain.high > 1.0);
        assert!(bounded.low > 0.0 && bounded.high < 1.0 && bounded.contains(0.96));
        // The half-width on the logit scale, by hand.
        let m: f64 = 0.96;
        let s = ((0.04f64.powi(2) + 0.03f64.powi(2) + 0.01f64.powi(2)) / 2.0).sqrt();
        let half = 4.302652729749462 * s / 3f64.sqrt() / (m * (1.0 - m));
        let want = 1.0 / (1.0 + (-((m / (1.0 - m)).ln() + half)).exp());
        assert!((bounded.high - want).abs() < 1e-12);
        let all = logit_t_interval(&[1.0, 1.0, 1.0], LEVEL).unwrap();
        assert_eq!((all.low, all.high), (1.0, 1.0));
        assert_eq!(logit_t_interval(&[0.5], LEVEL), None);
    }

    #[test]
    fn expanded_tails_by_hand() {
        // 50 items: √(50/49) · t(0.975, 49) = 1.0102 · 2.0096, Φ(−2.0300) = 2.118%.
        assert!(
            (expanded_tail(50, LEVEL) - 2.118).abs() < 0.001,
            "{}",
            expanded_tail(50, LEVEL)
        );
        assert!((expanded_tail(100_000, LEVEL) - 2.5).abs() < 0.001);
        assert!((expanded_tail(1, LEVEL) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn item_bootstrap_holds_the_units() {
        // Two units that differ only by a constant: drawing items moves both alike, so the
        // difference between two such cells never moves.
        let a = vec![vec![0.0, 1.0, 1.0, 0.0, 1.0], vec![1.0, 1.0, 1.0, 0.0, 1.0]];
        let i = bootstrap_items(&a, 500, 3).unwrap();
        assert!(i.low < 0.7 && 0.7 < i.high && i.low >= 0.0 && i.high <= 1.0);
        let b: Vec<Vec<f64>> = a
            .iter()
            .map(|r| r.iter().map(|x| x * 0.5).collect())
            .collect();
        let d = bootstrap_items_difference(&a, &a, 100, 1, LEVEL).unwrap();
        assert_eq!((d.low, d.high), (0.0, 0.0));
        let d = bootstrap_items_difference(&a, &b, 500, 1, LEVEL).unwrap();
        assert!(d.high < 0.0 && d.low >= -0.5);
        assert_eq!(bootstrap_items(&[], 10, 1), None);
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
