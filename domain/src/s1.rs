//! S1, the unified CLUES metric: per item, F1 between the predicted and gold *sets* of answer
//! strings (exact match, duplicates collapsed), averaged over items; plus spread statistics.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Which gold set an item is scored against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scoring {
    /// The official CLUES scorer: the gold set is the set of distinct gold strings of the
    /// item (for reading comprehension test rows, every annotator's answer together).
    Official,
    /// The maximum S1 over the item's alternative gold answers (each annotator's answer of
    /// a reading-comprehension item on its own); identical to `Official` for other tasks.
    AnyOf,
}

impl Scoring {
    pub fn name(self) -> &'static str {
        match self {
            Scoring::Official => "official",
            Scoring::AnyOf => "any-of",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Scoring::Official => {
                "official CLUES scoring: F1 against the set of distinct gold strings"
            }
            Scoring::AnyOf => "any-of scoring: best F1 over the alternative gold answers",
        }
    }
}

/// S1 of one item. Both arguments are answers in the official encoding, taken as sets:
/// an empty gold set scores 1 only for an empty prediction; an empty prediction against a
/// non-empty gold scores 0. Note that `[""]` is a set holding the empty string, not empty.
pub fn s1_item<P: AsRef<str>, G: AsRef<str>>(pred: &[P], gold: &[G]) -> f64 {
    let pred: HashSet<&str> = pred.iter().map(AsRef::as_ref).collect();
    let gold: HashSet<&str> = gold.iter().map(AsRef::as_ref).collect();
    if gold.is_empty() {
        return if pred.is_empty() { 1.0 } else { 0.0 };
    }
    if pred.is_empty() {
        return 0.0;
    }
    let hits = pred.intersection(&gold).count() as f64;
    if hits == 0.0 {
        return 0.0;
    }
    let precision = hits / pred.len() as f64;
    let recall = hits / gold.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// The best S1 over alternative gold answers; no alternatives means an empty gold.
pub fn s1_any_of<P: AsRef<str>, G: AsRef<str>>(pred: &[P], alternatives: &[Vec<G>]) -> f64 {
    if alternatives.is_empty() {
        return s1_item::<P, &str>(pred, &[]);
    }
    alternatives
        .iter()
        .map(|alt| s1_item(pred, alt))
        .fold(0.0, f64::max)
}

/// Two scores closer than this are the same score wherever scores are compared (the training
/// filter's margin, a "correct" answer). A score is a mean of item S1 values, each a ratio of
/// small integers (2 x hits / (predicted + gold strings)), so two different scores of a study
/// differ by far more than this, while f64 arithmetic on them errs by about 1e-16: with 10/10,
/// 8/10 and 7/10, the others' mean minus 0.7 is 0.20000000000000007, not 0.2.
pub const SCORE_TOLERANCE: f64 = 1e-9;

/// Is score `a` more than `b` (by more than `SCORE_TOLERANCE`)?
pub fn score_above(a: f64, b: f64) -> bool {
    a - b > SCORE_TOLERANCE
}

/// Are two scores the same (within `SCORE_TOLERANCE`)?
pub fn same_score(a: f64, b: f64) -> bool {
    (a - b).abs() <= SCORE_TOLERANCE
}

/// Mean of the per-item scores; `None` for no items.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Mean and standard deviation of a group of scores (e.g. the annotators of a scenario).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    /// Population standard deviation (divides by n, numpy's default `np.std`). Reports use this.
    pub std_pop: f64,
    /// Sample standard deviation (divides by n - 1); `None` for a single value.
    pub std_sample: Option<f64>,
}

pub fn spread(xs: &[f64]) -> Option<Spread> {
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    let n = xs.len();
    Some(Spread {
        n,
        mean: m,
        std_pop: (ss / n as f64).sqrt(),
        std_sample: (n > 1).then(|| (ss / (n - 1) as f64).sqrt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn official_self_test_gives_0_35() {
        let preds: Vec<Vec<&str>> = vec![vec!["a", "b"], vec![], vec!["c"], vec!["d", "e"]];
        let golds: Vec<Vec<&str>> = vec![vec!["b", "c", "d"], vec![], vec![], vec!["f", "g"]];
        let scores: Vec<f64> = preds
            .iter()
            .zip(&golds)
            .map(|(p, g)| s1_item(p, g))
            .collect();
        // Item 1 by hand: P = 1/2, R = 1/3, F1 = 2PR/(P+R) = 0.4.
        assert!(close(scores[0], 0.4));
        assert_eq!(&scores[1..], &[1.0, 0.0, 0.0]);
        assert!(close(mean(&scores).unwrap(), 0.35));
    }

    #[test]
    fn empty_sets() {
        let none: [&str; 0] = [];
        assert_eq!(s1_item(&none, &none), 1.0);
        assert_eq!(s1_item(&["x"], &none), 0.0);
        assert_eq!(s1_item(&none, &["x"]), 0.0);
        // The official NER "no entity" answer is a set holding the empty string.
        assert_eq!(s1_item(&[""], &[""]), 1.0);
        assert_eq!(s1_item(&none, &[""]), 0.0);
        assert_eq!(s1_item(&[""], &none), 0.0);
    }

    #[test]
    fn duplicates_collapse_and_matching_is_exact() {
        assert_eq!(s1_item(&["a", "a", "b"], &["a", "b"]), 1.0);
        assert_eq!(s1_item(&["a"], &["a", "a", "a"]), 1.0);
        assert_eq!(s1_item(&["Paris"], &["paris"]), 0.0);
        assert_eq!(s1_item(&["Paris "], &["Paris"]), 0.0);
        assert_eq!(s1_item(&[" Paris"], &["Paris"]), 0.0);
    }

    #[test]
    fn any_of_takes_the_best_alternative() {
        let alts = vec![vec!["the Normans"], vec!["Normans"], vec!["Normans"]];
        assert_eq!(s1_any_of(&["Normans"], &alts), 1.0);
        // Official: gold set {the Normans, Normans}: P = 1, R = 1/2 -> 2/3.
        assert!(close(
            s1_item(&["Normans"], &["the Normans", "Normans", "Normans"]),
            2.0 / 3.0
        ));
        let none: [&str; 0] = [];
        let no_alts: Vec<Vec<&str>> = vec![];
        assert_eq!(s1_any_of(&none, &no_alts), 1.0);
        assert_eq!(s1_any_of(&["x"], &no_alts), 0.0);
    }

    #[test]
    fn spread_population_and_sample() {
        let s = spread(&[0.5, 0.7, 0.9]).unwrap();
        assert!(close(s.mean, 0.7));
        // Population: sqrt(((0.2)^2 * 2) / 3); sample: sqrt(0.08 / 2) = 0.2.
        assert!(close(s.std_pop, (0.08f64 / 3.0).sqrt()));
        assert!(close(s.std_sample.unwrap(), 0.2));
        assert_eq!(spread(&[1.0]).unwrap().std_sample, None);
        assert!(spread(&[]).is_none());
    }
}
