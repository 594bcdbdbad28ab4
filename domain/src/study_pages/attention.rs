//! Attention checks: items whose answer the item itself states ("select 'positive' for this
//! one"), shown at configured places of the test phase, never scored as test items; which
//! check is due, whether an answer passes, and the filter's second criterion.

use crate::answer::Answer;
use crate::task::{Family, TaskSpec};
use serde::{Deserialize, Serialize};

/// One attention check of a study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttentionCheck {
    /// Shown after this many test items (0: before the first).
    pub after: u32,
    /// The item's text, which states what to answer.
    pub text: String,
    /// The question, as on the task's items.
    pub question: String,
    /// The answer the text asks for: the label on label tasks, the span(s) to mark on span
    /// tasks, the text on text-to-text tasks; empty: "no answer".
    #[serde(default)]
    pub answer: Vec<String>,
}

const CHECKS_MAX: usize = 20;
const TEXT_MAX: usize = 5000;

/// Every problem of a study's checks for a task with `test_items` test items.
pub fn problems(checks: &[AttentionCheck], spec: &TaskSpec, test_items: usize) -> Vec<String> {
    let mut errs = Vec::new();
    if checks.len() > CHECKS_MAX {
        errs.push(format!("at most {CHECKS_MAX} attention checks"));
    }
    for (i, c) in checks.iter().enumerate() {
        let name = format!("attention check {}", i + 1);
        if c.after as usize > test_items {
            errs.push(format!(
                "{name}: after {} test items, but the test set has {test_items}",
                c.after
            ));
        }
        let text = c.text.trim();
        if text.is_empty() || text.chars().count() > TEXT_MAX || c.question.trim().is_empty() {
            errs.push(format!(
                "{name}: give a text (at most {TEXT_MAX} characters) and a question"
            ));
        }
        match spec.family {
            Family::Classification => {
                if !matches!(c.answer.as_slice(), [l] if spec.labels.iter().any(|x| &x.name == l)) {
                    let names: Vec<&str> = spec.labels.iter().map(|l| l.name.as_str()).collect();
                    errs.push(format!(
                        "{name}: the answer must be one of the labels ({})",
                        names.join(", ")
                    ));
                }
            }
            Family::TextToText => {
                if !matches!(c.answer.as_slice(), [t] if !t.trim().is_empty()) {
                    errs.push(format!("{name}: the answer must be one text"));
                }
            }
            _ => {
                for a in &c.answer {
                    if a.trim().is_empty() || !c.text.contains(a.as_str()) {
                        errs.push(format!(
                            "{name}: the answer {a:?} must be a part of its text"
                        ));
                    }
                }
            }
        }
    }
    errs
}

/// The check to show now, if any: the first (by `after`, then by order) that is due after
/// `tests_done` test items and not yet answered (`answered` holds check indices).
pub fn due(checks: &[AttentionCheck], tests_done: u32, answered: &[u32]) -> Option<u32> {
    let mut order: Vec<u32> = (0..checks.len() as u32).collect();
    order.sort_by_key(|&i| (checks[i as usize].after, i));
    order
        .into_iter()
        .find(|&i| checks[i as usize].after <= tests_done && !answered.contains(&i))
}

/// Whether an answer is the one the check states: the same set of strings (texts trimmed), so
/// "no answer" passes a check that asks for none; a skip never passes.
pub fn passes(check: &AttentionCheck, answer: &Answer) -> bool {
    if matches!(answer, Answer::Skip { .. }) {
        return false;
    }
    let norm = |v: Vec<String>| {
        let mut v: Vec<String> = v.into_iter().map(|s| s.trim().to_string()).collect();
        v.sort();
        v.dedup();
        v
    };
    norm(answer.strings()) == norm(check.answer.clone())
}

/// The filter's second criterion: a worker who failed more than `max_failures` of the checks
/// they answered (a check never reached is not a failure).
pub fn too_many_failures(passed: &[bool], max_failures: Option<u32>) -> bool {
    max_failures.is_some_and(|m| passed.iter().filter(|p| !**p).count() > m as usize)
}
