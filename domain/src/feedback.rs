//! What a worker reads after a training submission, in plain words: whether the answer was
//! right, and for span answers how many of the correct answers it matched (S1's exact match).

use super::answer::Answer;
use std::collections::HashSet;

/// How the answer fared; the page colours the feedback by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Right,
    Partly,
    Wrong,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Right => "right",
            Verdict::Partly => "partly",
            Verdict::Wrong => "wrong",
        }
    }
}

/// `x` with two decimals, without the float formatter (it weighs tens of KB in the worker's
/// bundle): 0.666 -> "0.67". For scores and other non-negative numbers.
pub fn two_decimals(x: f64) -> String {
    let c = (x.max(0.0) * 100.0).round() as u64;
    format!("{}.{:02}", c / 100, c % 100)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The feedback on `yours` against the revealed gold strings (`gold` empty: the text has no
/// answer), with `score` the item's S1 (or the task metric for free text).
pub fn feedback(yours: &Answer, gold: &[String], score: f64) -> (Verdict, String) {
    let verdict = if score >= 1.0 - 1e-9 {
        Verdict::Right
    } else if score > 0.0 {
        Verdict::Partly
    } else {
        Verdict::Wrong
    };
    let message = match yours {
        Answer::Skip { .. } => "You skipped this example. The correct answer is below.".into(),
        Answer::Label { .. } if verdict == Verdict::Right => "Your answer is correct.".into(),
        Answer::Label { .. } => {
            "Your answer is not the correct one. See the correct answer below.".into()
        }
        Answer::NoAnswer if gold.is_empty() => "Correct: this text has no answer.".into(),
        Answer::NoAnswer => "This text does have an answer. See the correct answer below.".into(),
        Answer::Text { .. } => match verdict {
            Verdict::Right => "Your answer matches the correct answer.".into(),
            Verdict::Partly => format!(
                "Your answer partly matches the correct answer (score {}; 1 is a full match).",
                two_decimals(score)
            ),
            Verdict::Wrong => "Your answer does not match the correct answer.".into(),
        },
        Answer::Spans { .. } if gold.is_empty() => {
            "This text has no answer: the right choice was \"No answer in this text\".".into()
        }
        Answer::Spans { .. } => {
            let mine: HashSet<String> = yours.strings().into_iter().collect();
            let correct: HashSet<&str> = gold.iter().map(String::as_str).collect();
            let matched = correct.iter().filter(|g| mine.contains(**g)).count();
            let extra = mine.len() - mine.iter().filter(|m| correct.contains(m.as_str())).count();
            let mut m = format!(
                "Your answers matched {matched} of {}.",
                plural(correct.len(), "correct answer", "correct answers")
            );
            if extra > 0 {
                m.pop();
                m.push_str(&format!(
                    "; {} of yours {} not among them.",
                    plural(extra, "answer", "answers"),
                    if extra == 1 { "is" } else { "are" }
                ));
            }
            m
        }
    };
    (verdict, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::SpanAnswer;

    fn spans(texts: &[&str]) -> Answer {
        Answer::Spans {
            spans: texts
                .iter()
                .enumerate()
                .map(|(i, t)| SpanAnswer {
                    text: t.to_string(),
                    offset: i * 10,
                    length: t.chars().count(),
                })
                .collect(),
        }
    }

    fn gold(g: &[&str]) -> Vec<String> {
        g.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn span_answers_count_the_correct_answers_matched() {
        let (v, m) = feedback(&spans(&["Paris"]), &gold(&["Paris", "Lyon"]), 2.0 / 3.0);
        assert_eq!(v, Verdict::Partly);
        assert_eq!(m, "Your answers matched 1 of 2 correct answers.");
        let (v, m) = feedback(&spans(&["Rome", "Paris"]), &gold(&["Paris"]), 2.0 / 3.0);
        assert_eq!(v, Verdict::Partly);
        assert_eq!(
            m,
            "Your answers matched 1 of 1 correct answer; 1 answer of yours is not among them."
        );
        let (v, m) = feedback(&spans(&["Rome"]), &gold(&["Paris"]), 0.0);
        assert_eq!(v, Verdict::Wrong);
        assert_eq!(
            m,
            "Your answers matched 0 of 1 correct answer; 1 answer of yours is not among them."
        );
        let (v, _) = feedback(&spans(&["Paris", "Paris"]), &gold(&["Paris"]), 1.0);
        assert_eq!(v, Verdict::Right);
        let (v, m) = feedback(&spans(&["Paris"]), &[], 0.0);
        assert_eq!(v, Verdict::Wrong);
        assert!(m.contains("no answer"), "{m}");
    }

    #[test]
    fn labels_no_answer_and_skips() {
        let label = Answer::Label {
            label: "positive".into(),
            confidence: 4,
        };
        assert_eq!(
            feedback(&label, &gold(&["positive"]), 1.0).1,
            "Your answer is correct."
        );
        assert_eq!(
            feedback(&label, &gold(&["negative"]), 0.0).0,
            Verdict::Wrong
        );
        assert_eq!(feedback(&Answer::NoAnswer, &[], 1.0).0, Verdict::Right);
        assert_eq!(
            feedback(&Answer::NoAnswer, &gold(&["x"]), 0.0).0,
            Verdict::Wrong
        );
        let skip = Answer::Skip { confidence: None };
        assert!(feedback(&skip, &gold(&["x"]), 0.0)
            .1
            .starts_with("You skipped"));
        let text = Answer::Text {
            text: "a cat".into(),
        };
        assert!(feedback(&text, &gold(&["the cat"]), 0.5)
            .1
            .contains("score 0.50"));
        assert_eq!(two_decimals(2.0 / 3.0), "0.67");
        assert_eq!(two_decimals(0.9), "0.90");
        assert_eq!(two_decimals(1.0), "1.00");
        assert_eq!(two_decimals(12.345), "12.35");
    }
}
