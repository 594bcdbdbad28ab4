//! CrossFit's seven metrics over text-to-text predictions: accuracy, classification macro-F1,
//! QA token F1 and exact match (SQuAD normalisation), Rouge-L, Matthews and Pearson correlation.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Case-insensitive exact match, the best over the golds.
    #[serde(rename = "ACC")]
    Accuracy,
    /// Macro-F1 over the labels seen in golds and predictions (sklearn's `average="macro"`).
    #[serde(rename = "Classification-F1")]
    ClassificationF1,
    /// Token F1 after SQuAD normalisation, the best over the golds.
    #[serde(rename = "QA-F1")]
    QaF1,
    /// Exact match after SQuAD normalisation, the best over the golds.
    #[serde(rename = "EM")]
    ExactMatch,
    /// ROUGE-L as the `rouge` package 1.0.0 computes it (summary level), the best over the golds.
    #[serde(rename = "Rouge-L")]
    RougeL,
    #[serde(rename = "Matthew-Correlation")]
    Matthews,
    /// Predictions read as numbers; those that are not are counted and left out.
    #[serde(rename = "Pearson-Correlation")]
    Pearson,
}

pub const METRICS: [Metric; 7] = [
    Metric::Accuracy,
    Metric::ClassificationF1,
    Metric::QaF1,
    Metric::ExactMatch,
    Metric::RougeL,
    Metric::Matthews,
    Metric::Pearson,
];

impl Metric {
    /// The name CrossFit's configuration uses.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Accuracy => "ACC",
            Metric::ClassificationF1 => "Classification-F1",
            Metric::QaF1 => "QA-F1",
            Metric::ExactMatch => "EM",
            Metric::RougeL => "Rouge-L",
            Metric::Matthews => "Matthew-Correlation",
            Metric::Pearson => "Pearson-Correlation",
        }
    }

    /// Macro-F1 and the correlations score a whole test set, not an item.
    pub fn is_corpus_level(self) -> bool {
        matches!(
            self,
            Metric::ClassificationF1 | Metric::Matthews | Metric::Pearson
        )
    }

    pub fn parse(s: &str) -> Option<Metric> {
        METRICS.into_iter().find(|m| m.name() == s.trim())
    }
}

/// A metric's value over a test set. `value` is `None` where the metric is undefined (no
/// items, a constant series for a correlation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub metric: Metric,
    pub value: Option<f64>,
    pub items: usize,
    /// Pearson only: predictions that are not numbers (left out of the correlation).
    pub non_numeric: usize,
}

/// SQuAD's answer normalisation: lower case, ASCII punctuation removed, the articles a/an/the
/// removed as whole words, whitespace collapsed.
pub fn normalize_answer(s: &str) -> String {
    let lower = s.to_lowercase();
    let no_punct: String = lower
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    no_punct
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Token F1 between two already normalised texts (multiset overlap).
fn token_f1(pred: &str, gold: &str) -> f64 {
    let p: Vec<&str> = pred.split_whitespace().collect();
    let g: Vec<&str> = gold.split_whitespace().collect();
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for t in &g {
        *counts.entry(t).or_default() += 1;
    }
    let mut same = 0;
    for t in &p {
        if let Some(c) = counts.get_mut(t) {
            if *c > 0 {
                *c -= 1;
                same += 1;
            }
        }
    }
    if same == 0 {
        return 0.0;
    }
    let precision = same as f64 / p.len() as f64;
    let recall = same as f64 / g.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// Python's `str.isspace()`: Unicode White_Space plus the separators U+001C..U+001F, which
/// Python's `strip()` and `split()` treat as whitespace and Rust's `trim()` does not.
pub fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `s.strip()`, which CrossFit applies to each prediction and to each line of a file.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// The sentences of a text as the `rouge` package (1.0.0) makes them in `Rouge.get_scores`:
/// split at every full stop, pieces that are empty *before* whitespace is folded dropped, then
/// whitespace folded to single spaces (so a piece of spaces only becomes an empty sentence).
fn rouge_sentences(text: &str) -> Vec<String> {
    text.split('.')
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            piece
                .split(py_space)
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A sentence's words as the package splits them: on single spaces (`""` gives one empty word).
fn rouge_words(sentence: &str) -> Vec<&str> {
    sentence.split(' ').collect()
}

/// The package's `_recon_lcs(x, y)`: the words of `x` on one longest common subsequence,
/// walking back from the end with its tie-break (up only when strictly better, else left),
/// added to `out`. Which subsequence is taken matters, since only its distinct words count.
fn recon_lcs<'a>(x: &[&'a str], y: &[&str], out: &mut HashSet<&'a str>) {
    let width = y.len() + 1;
    let mut table = vec![0u32; (x.len() + 1) * width];
    for i in 1..=x.len() {
        for j in 1..=y.len() {
            table[i * width + j] = if x[i - 1] == y[j - 1] {
                table[(i - 1) * width + j - 1] + 1
            } else {
                table[(i - 1) * width + j].max(table[i * width + j - 1])
            };
        }
    }
    let (mut i, mut j) = (x.len(), y.len());
    while i > 0 && j > 0 {
        if x[i - 1] == y[j - 1] {
            out.insert(x[i - 1]);
            i -= 1;
            j -= 1;
        } else if table[(i - 1) * width + j] > table[i * width + j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
}

/// The package's summary-level ROUGE-L F (`rouge_l_summary_level`): the union of the LCS words
/// of every (reference sentence, hypothesis sentence) pair as a *set*, over the numbers of
/// *distinct* words on each side, with the package's `1e-8` in the F formula. `None` where the
/// package raises (a side with no sentence).
fn rouge_l_summary_level(hyp: &[String], refs: &[String]) -> Option<f64> {
    if hyp.is_empty() || refs.is_empty() {
        return None;
    }
    let distinct = |sentences: &[String]| -> usize {
        sentences
            .iter()
            .flat_map(|s| rouge_words(s))
            .collect::<HashSet<_>>()
            .len()
    };
    let (m, n) = (distinct(refs), distinct(hyp));
    let hyp_words: Vec<Vec<&str>> = hyp.iter().map(|s| rouge_words(s)).collect();
    let mut union: HashSet<&str> = HashSet::new();
    for r in refs {
        let ref_words = rouge_words(r);
        for h in &hyp_words {
            recon_lcs(&ref_words, h, &mut union);
        }
    }
    let llcs = union.len() as f64;
    let (r_lcs, p_lcs) = (llcs / m as f64, llcs / n as f64);
    Some(2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8)))
}

/// ROUGE-L of one prediction against one gold exactly as CrossFit scores it: the `rouge`
/// package 1.0.0's `Rouge().get_scores(prediction, gold, avg=True)["rouge-l"]["f"]`, after
/// CrossFit's rule that a prediction with nothing but ASCII punctuation scores 0. A gold with
/// no sentence (only full stops), where the package raises an error, scores 0.
/// Written by hand because exactness needs it: the package's sentence split, distinct-word
/// counts and LCS tie-break all change scores, and no Rust crate reproduces them.
pub fn rouge_l(pred: &str, gold: &str) -> f64 {
    if pred.chars().all(|c| c.is_ascii_punctuation()) {
        return 0.0;
    }
    rouge_l_summary_level(&rouge_sentences(pred), &rouge_sentences(gold)).unwrap_or(0.0)
}

/// The best of `f` over the golds; an empty gold list scores 0.
fn best(golds: &[String], f: impl Fn(&str) -> f64) -> f64 {
    golds.iter().map(|g| f(g)).fold(0.0, f64::max)
}

/// One item's score for the per-item metrics (accuracy, QA-F1, EM, Rouge-L); `None` for the
/// corpus-level ones.
pub fn item_score(metric: Metric, prediction: &str, golds: &[String]) -> Option<f64> {
    let p = py_strip(prediction);
    Some(match metric {
        Metric::Accuracy => best(golds, |g| {
            f64::from(u8::from(p.to_lowercase() == g.to_lowercase()))
        }),
        Metric::ExactMatch => {
            let n = normalize_answer(p);
            best(golds, |g| f64::from(u8::from(n == normalize_answer(g))))
        }
        Metric::QaF1 => {
            let n = normalize_answer(p);
            best(golds, |g| token_f1(&n, &normalize_answer(g)))
        }
        Metric::RougeL => best(golds, |g| rouge_l(p, g)),
        Metric::ClassificationF1 | Metric::Matthews | Metric::Pearson => return None,
    })
}

fn macro_f1(truth: &[&str], pred: &[&str]) -> f64 {
    let labels: BTreeSet<&str> = truth.iter().chain(pred).copied().collect();
    let f1s: Vec<f64> = labels
        .iter()
        .map(|l| {
            let tp = truth
                .iter()
                .zip(pred)
                .filter(|(t, p)| *t == l && *p == l)
                .count();
            let fp = truth
                .iter()
                .zip(pred)
                .filter(|(t, p)| *t != l && *p == l)
                .count();
            let fn_ = truth
                .iter()
                .zip(pred)
                .filter(|(t, p)| *t == l && *p != l)
                .count();
            let denominator = 2 * tp + fp + fn_;
            if denominator == 0 {
                0.0
            } else {
                2.0 * tp as f64 / denominator as f64
            }
        })
        .collect();
    f1s.iter().sum::<f64>() / f1s.len() as f64
}

/// Matthews correlation for any number of classes (sklearn's formula); 0 when undefined.
fn matthews(truth: &[&str], pred: &[&str]) -> f64 {
    let s = truth.len() as f64;
    let c = truth.iter().zip(pred).filter(|(t, p)| t == p).count() as f64;
    let mut t_k: HashMap<&str, f64> = HashMap::new();
    let mut p_k: HashMap<&str, f64> = HashMap::new();
    for (t, p) in truth.iter().zip(pred) {
        *t_k.entry(t).or_default() += 1.0;
        *p_k.entry(p).or_default() += 1.0;
    }
    let tp: f64 = t_k
        .iter()
        .map(|(k, t)| t * p_k.get(k).unwrap_or(&0.0))
        .sum();
    let pp: f64 = p_k.values().map(|p| p * p).sum();
    let tt: f64 = t_k.values().map(|t| t * t).sum();
    let denominator = ((s * s - pp) * (s * s - tt)).sqrt();
    if denominator == 0.0 {
        0.0
    } else {
        (c * s - tp) / denominator
    }
}

fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let vx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let vy: f64 = ys.iter().map(|y| (y - my) * (y - my)).sum();
    (vx > 0.0 && vy > 0.0).then(|| cov / (vx * vy).sqrt())
}

/// Scores predictions (one per test item, in order) against each item's gold outputs.
/// Corpus-level metrics take each item's first gold as its label.
pub fn evaluate(
    metric: Metric,
    predictions: &[String],
    golds: &[Vec<String>],
) -> Result<Score, String> {
    if predictions.len() != golds.len() {
        return Err(format!(
            "{} predictions for {} test items",
            predictions.len(),
            golds.len()
        ));
    }
    let items = golds.len();
    let mut score = Score {
        metric,
        value: None,
        items,
        non_numeric: 0,
    };
    if items == 0 {
        return Ok(score);
    }
    let preds: Vec<&str> = predictions.iter().map(|p| py_strip(p)).collect();
    let first: Vec<&str> = golds
        .iter()
        .map(|g| g.first().map_or("", String::as_str))
        .collect();
    score.value = match metric {
        Metric::ClassificationF1 => Some(macro_f1(&first, &preds)),
        Metric::Matthews => Some(matthews(&first, &preds)),
        Metric::Pearson => {
            let mut xs = Vec::new();
            let mut ys = Vec::new();
            for (p, g) in preds.iter().zip(&first) {
                match (p.parse::<f64>(), g.trim().parse::<f64>()) {
                    (Ok(y), Ok(x)) if y.is_finite() && x.is_finite() => {
                        xs.push(x);
                        ys.push(y);
                    }
                    (_, Err(_)) => return Err(format!("gold {g:?} is not a number")),
                    _ => score.non_numeric += 1,
                }
            }
            pearson(&xs, &ys)
        }
        _ => {
            let total: f64 = preds
                .iter()
                .zip(golds)
                .filter_map(|(p, g)| item_score(metric, p, g))
                .sum();
            Some(total / items as f64)
        }
    };
    Ok(score)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }

    #[test]
    fn squad_normalisation() {
        assert_eq!(
            normalize_answer("  The Eiffel-Tower, in Paris!  "),
            "eiffeltower in paris"
        );
        assert_eq!(normalize_answer("an apple a day"), "apple day");
        // Articles only as whole words: "theatre" stays.
        assert_eq!(normalize_answer("Theatre"), "theatre");
    }

    #[test]
    fn per_item_metrics_by_hand() {
        let golds = s(&["The cat sat", "a dog"]);
        assert_eq!(
            item_score(Metric::Accuracy, " the CAT sat ", &golds),
            Some(1.0)
        );
        assert_eq!(item_score(Metric::Accuracy, "cat sat", &golds), Some(0.0));
        assert_eq!(
            item_score(Metric::ExactMatch, "cat sat.", &golds),
            Some(1.0)
        );
        // QA-F1: "cat on mat" vs "cat sat": 1 common of 3 and 2 -> P 1/3, R 1/2 -> 0.4.
        close(item_score(Metric::QaF1, "cat on mat", &golds).unwrap(), 0.4);
        // Rouge-L (the rouge package): "the cat on the mat" has 4 distinct words, "The cat
        // sat" 3; the LCS's words {cat}: P 1/4, R 1/3, F = 2 * (1/12) / (7/12 + 1e-8).
        let f = 2.0 * ((0.25 / 3.0) / (0.25 + 1.0 / 3.0 + 1e-8));
        assert_eq!(
            item_score(Metric::RougeL, "the cat on the mat", &golds),
            Some(f)
        );
        assert_eq!(item_score(Metric::RougeL, "...", &golds), Some(0.0));
        assert_eq!(item_score(Metric::Accuracy, "x", &[]), Some(0.0));
        assert_eq!(item_score(Metric::QaF1, "x", &[]), Some(0.0));
    }

    #[test]
    fn rouge_l_is_the_packages_summary_level_score() {
        let f = |p: f64, r: f64| 2.0 * ((p * r) / (p + r + 1e-8));
        // pred a b c d e, gold a x c y e: LCS a c e = 3 of 5 distinct words each side.
        assert_eq!(rouge_l("a b c d e", "a x c y e"), f(0.6, 0.6));
        // A repeated word counts once: {a, b} against {a, b}; a plain LCS F1 would give 0.8.
        assert_eq!(rouge_l("a b a b a b", "b a b a"), f(1.0, 1.0));
        // The paper's union example: r = w1..w5, c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5:
        // union LCS {w1, w2, w3, w5} = 4; 5 reference words, 8 distinct candidate words.
        assert_eq!(
            rouge_l("w1 w2 w6 w7 w8. w1 w3 w8 w9 w5", "w1 w2 w3 w4 w5"),
            f(4.0 / 8.0, 4.0 / 5.0)
        );
        // Full stops split sentences: "end. . ." has the words {end, ""}.
        assert_eq!(rouge_l("end. . .", "end."), f(0.5, 1.0));
        assert_eq!(rouge_l("!!!", "!!!"), 0.0);
        // A gold with no sentence makes the package raise: it scores 0 here.
        assert_eq!(rouge_l("a", "..."), 0.0);
        assert_eq!(py_strip("\u{1f} x\u{a0}"), "x");
    }

    #[test]
    fn corpus_metrics_by_hand() {
        let golds: Vec<Vec<String>> = ["pos", "pos", "neg", "neg"]
            .iter()
            .map(|g| s(&[g]))
            .collect();
        let preds = s(&["pos", "neg", "neg", " neg "]);
        // pos: tp 1, fp 0, fn 1 -> 2/3; neg: tp 2, fp 1, fn 0 -> 4/5; macro 11/15.
        close(
            evaluate(Metric::ClassificationF1, &preds, &golds)
                .unwrap()
                .value
                .unwrap(),
            11.0 / 15.0,
        );
        // Binary MCC: tp 1 (pos), tn 2, fp 0, fn 1 -> (1*2 - 0*1) / sqrt(1*2*3*2) = 2 / sqrt(12).
        close(
            evaluate(Metric::Matthews, &preds, &golds)
                .unwrap()
                .value
                .unwrap(),
            2.0 / 12f64.sqrt(),
        );
        close(
            evaluate(Metric::Accuracy, &preds, &golds)
                .unwrap()
                .value
                .unwrap(),
            0.75,
        );
        assert!(evaluate(Metric::Accuracy, &preds[..2], &golds).is_err());
    }

    #[test]
    fn pearson_counts_non_numbers() {
        let golds: Vec<Vec<String>> = ["1", "2", "3", "4"].iter().map(|g| s(&[g])).collect();
        let preds = s(&["2", "4", "six", "8"]);
        let sc = evaluate(Metric::Pearson, &preds, &golds).unwrap();
        // (1,2), (2,4), (4,8): exactly linear.
        close(sc.value.unwrap(), 1.0);
        assert_eq!(sc.non_numeric, 1);
        let flat = evaluate(Metric::Pearson, &s(&["1", "1", "1", "1"]), &golds).unwrap();
        assert_eq!(flat.value, None);
        // x 1 2 3, y 1 3 2: r = 0.5.
        let g3: Vec<Vec<String>> = ["1", "2", "3"].iter().map(|g| s(&[g])).collect();
        close(
            evaluate(Metric::Pearson, &s(&["1", "3", "2"]), &g3)
                .unwrap()
                .value
                .unwrap(),
            0.5,
        );
    }

    #[test]
    fn names_round_trip() {
        for m in METRICS {
            assert_eq!(Metric::parse(m.name()), Some(m));
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.name())
            );
        }
        assert_eq!(Metric::parse("BLEU"), None);
    }
}
