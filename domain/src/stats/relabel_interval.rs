//! The interval of the permutation test of annotator labels: the shifts of the contrast it does
//! not reject, so that where that test decides, interval and p never disagree.
//!
//! A shift δ of the contrast `Σ w_g · mean(group g)` is tested by subtracting `δ · s_g` from
//! every unit of group g, `s = w / Σ w²` (so the shifted contrast is the observed one less δ;
//! for a pair, b moves by −δ against a), and relabelling as `contrast_relabel_test` does, with
//! the same seed where the relabellings are drawn. The interval is the set of δ whose p is above
//! α, its ends found by bisection to `PRECISION` of the scores' scale. For a pair each
//! relabelling's statistic moves with δ at most as fast as the observed one, so p only falls as
//! δ leaves the estimate and the set is an interval; a trend's is taken between the same ends.
//! Where the design cannot reach a p at or below α (3 against 3 at 0.05: its smallest p is
//! 0.10), no shift is rejected and there is no interval: `None`.

use super::interval::Interval;
use super::relabel::{contrast_relabel_test, RelabelTest};

/// The ends' precision, relative to the scale of the scores (their range, at least 1).
pub const PRECISION: f64 = 1e-10;

/// The p of the shift `delta`.
fn p_at(groups: &[&[f64]], weights: &[f64], delta: f64, seed: u64) -> Option<f64> {
    let norm: f64 = weights.iter().map(|w| w * w).sum();
    let shifted: Vec<Vec<f64>> = groups
        .iter()
        .zip(weights)
        .map(|(g, w)| g.iter().map(|x| x - delta * w / norm).collect())
        .collect();
    let views: Vec<&[f64]> = shifted.iter().map(Vec::as_slice).collect();
    contrast_relabel_test(&views, weights, seed).map(|t| t.p)
}

/// The shifts not rejected at `alpha`; `None` where none is (or the test cannot be made).
pub fn shift_interval(
    groups: &[&[f64]],
    weights: &[f64],
    alpha: f64,
    seed: u64,
) -> Option<Interval> {
    let t = contrast_relabel_test(groups, weights, seed)?;
    invert(groups, weights, alpha, seed, &t)
}

/// `shift_interval` of the test `t` already made of these groups (its statistic and smallest
/// p), so that a caller who has it does not relabel once more.
pub fn invert(
    groups: &[&[f64]],
    weights: &[f64],
    alpha: f64,
    seed: u64,
    t: &RelabelTest,
) -> Option<Interval> {
    if t.min_p > alpha {
        return None;
    }
    let all = groups.iter().flat_map(|g| g.iter().copied());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
        (l.min(x), h.max(x))
    });
    let scale = (hi - lo).max(1.0);
    let norm: f64 = weights.iter().map(|w| w * w).sum::<f64>().sqrt();
    let end = |direction: f64| -> Option<f64> {
        // Out from the estimate (p = 1 there) until a shift is rejected, then bisect.
        let mut inside = t.statistic;
        let mut step = scale * norm.max(1e-12);
        let mut outside = None;
        for _ in 0..60 {
            let x = t.statistic + direction * step;
            if p_at(groups, weights, x, seed)? <= alpha {
                outside = Some(x);
                break;
            }
            inside = x;
            step *= 2.0;
        }
        let mut outside = outside?;
        while (outside - inside).abs() > PRECISION * scale {
            let mid = 0.5 * (inside + outside);
            if p_at(groups, weights, mid, seed)? <= alpha {
                outside = mid;
            } else {
                inside = mid;
            }
        }
        Some(0.5 * (inside + outside))
    };
    Some(Interval {
        low: end(-1.0)?,
        high: end(1.0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::relabel::relabel_test;

    #[test]
    fn three_against_three_at_five_percent_rejects_no_shift() {
        let (a, b) = ([0.5, 0.55, 0.6], [0.8, 0.85, 0.9]);
        assert_eq!(shift_interval(&[&a, &b], &[-1.0, 1.0], 0.05, 1), None);
        // At α = 0.10 its smallest p (2/20) is reachable.
        assert!(shift_interval(&[&a, &b], &[-1.0, 1.0], 0.10, 1).is_some());
    }

    #[test]
    fn the_interval_is_the_set_of_shifts_the_test_keeps() {
        let a = [0.61, 0.55, 0.70, 0.64, 0.58];
        let b = [0.72, 0.80, 0.69, 0.77, 0.83];
        let i = shift_interval(&[&a, &b], &[-1.0, 1.0], 0.05, 1).unwrap();
        let d = b.iter().sum::<f64>() / 5.0 - a.iter().sum::<f64>() / 5.0;
        assert!(i.low < d && d < i.high, "{i:?} {d}");
        // Just inside each end the shifted groups are not rejected; just outside they are.
        let p = |delta: f64| {
            let shifted: Vec<f64> = b.iter().map(|x| x - delta).collect();
            relabel_test(&a, &shifted, 1).unwrap().p
        };
        for (end, out) in [(i.low, -1.0), (i.high, 1.0)] {
            assert!(p(end - out * 1e-6) > 0.05, "{end}");
            assert!(p(end + out * 1e-6) <= 0.05, "{end}");
        }
        // The test rejects zero exactly when the interval leaves it out.
        assert_eq!(p(0.0) <= 0.05, !i.contains(0.0));
    }

    #[test]
    fn alike_scores_give_a_point_and_a_trend_its_slope() {
        let same = [0.9; 4];
        let i = shift_interval(&[&same, &same], &[-1.0, 1.0], 0.05, 1).unwrap();
        assert!(i.low.abs() < 1e-9 && i.high.abs() < 1e-9, "{i:?}");
        // Three groups of a trend: the interval holds the observed slope.
        let (g0, g1, g2) = (
            [0.5, 0.52, 0.48, 0.51],
            [0.6, 0.58, 0.63, 0.61],
            [0.7, 0.72, 0.69, 0.74],
        );
        let w = crate::stats::groups::trend_weights(&[0, 10, 20], 10.0).unwrap();
        let i = shift_interval(&[&g0, &g1, &g2], &w, 0.05, 1).unwrap();
        let slope: f64 = [&g0, &g1, &g2]
            .iter()
            .zip(&w)
            .map(|(g, w)| w * g.iter().sum::<f64>() / 4.0)
            .sum();
        assert!(i.contains(slope) && !i.contains(0.0), "{i:?} {slope}");
    }
}
