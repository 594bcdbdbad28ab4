//! Two reference methods that need no model, computed from a seed's training lines: the most
//! frequent training output, and the output of the training input nearest by token F1.

use super::metrics::normalize_answer;
use super::sampler::TsvLine;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Every test item gets the most frequent first output of the training lines (ties: the
    /// one seen first).
    Majority,
    /// Each test item gets the first output of the training line whose input has the highest
    /// token F1 with it (SQuAD-normalised; ties: the earlier line).
    Nearest,
}

impl Baseline {
    pub fn name(self) -> &'static str {
        match self {
            Baseline::Majority => "majority-output",
            Baseline::Nearest => "nearest-input",
        }
    }
    pub fn parse(s: &str) -> Option<Baseline> {
        [Baseline::Majority, Baseline::Nearest]
            .into_iter()
            .find(|b| b.name() == s)
    }
}

fn first_output(l: &TsvLine) -> &str {
    l.output.split('\t').next().unwrap_or("")
}

fn overlap_f1(a: &[String], b: &[String]) -> f64 {
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for t in b {
        *counts.entry(t).or_default() += 1;
    }
    let same = a
        .iter()
        .filter(|t| match counts.get_mut(t.as_str()) {
            Some(c) if *c > 0 => {
                *c -= 1;
                true
            }
            _ => false,
        })
        .count();
    if same == 0 {
        0.0
    } else {
        2.0 * same as f64 / (a.len() + b.len()) as f64
    }
}

/// Predictions for `test_inputs` from `train`; empty training sets predict empty strings.
pub fn predict(method: Baseline, train: &[TsvLine], test_inputs: &[&str]) -> Vec<String> {
    match method {
        Baseline::Majority => {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for l in train {
                let o = first_output(l);
                match counts.iter_mut().find(|(x, _)| *x == o) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((o, 1)),
                }
            }
            let top = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
            let best = counts
                .iter()
                .find(|(_, n)| *n == top)
                .map_or("", |(o, _)| *o);
            vec![best.to_string(); test_inputs.len()]
        }
        Baseline::Nearest => {
            let tokens = |s: &str| -> Vec<String> {
                normalize_answer(s)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect()
            };
            let train_tokens: Vec<Vec<String>> = train.iter().map(|l| tokens(&l.input)).collect();
            test_inputs
                .iter()
                .map(|input| {
                    let t = tokens(input);
                    let mut best: Option<(f64, usize)> = None;
                    for (i, tt) in train_tokens.iter().enumerate() {
                        let f = overlap_f1(&t, tt);
                        if best.is_none_or(|(b, _)| f > b) {
                            best = Some((f, i));
                        }
                    }
                    best.map_or(String::new(), |(_, i)| first_output(&train[i]).to_string())
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(i: &str, o: &str) -> TsvLine {
        TsvLine {
            input: i.into(),
            output: o.into(),
        }
    }

    #[test]
    fn majority_and_nearest() {
        let train = vec![
            line("a lovely warm film", "positive"),
            line("a cold dull film", "negative"),
            line("dull and cold", "negative\tbad"),
        ];
        assert_eq!(
            predict(Baseline::Majority, &train, &["x", "y"]),
            vec!["negative", "negative"]
        );
        assert_eq!(
            predict(
                Baseline::Nearest,
                &train,
                &["The warm, lovely story", "so dull"]
            ),
            vec!["positive", "negative"]
        );
        assert_eq!(predict(Baseline::Nearest, &[], &["x"]), vec![""]);
        assert_eq!(Baseline::parse("nearest-input"), Some(Baseline::Nearest));
    }
}
