//! Tables 8 and 9 extended: the training step by position and by time. Per group of k-shot
//! annotators, S1 on the first and on the second half of the training examples *as each worker
//! saw them*, the seconds spent per training example, and how that time goes with test S1.
//!
//! Only where a study shows each worker the examples in an order of their own
//! (`shuffle_training`) does the halves' difference measure learning during the training
//! step: in the file's order the halves hold different examples for everyone, so it mixes
//! learning with the examples' difficulty (the table names the order of each cell).

use super::annotator::{item_mean, submitted};
use super::{scenario, AnnotatorRecord, AnnotatorScore, StudyRules};
use crate::ids::{AssignmentId, StudyId};
use crate::place::Phase;
use crate::s1::{spread, Scoring, Spread};
use crate::stats::interval::LEVEL;
use crate::stats::{correlation, Correlation};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// How a cell's annotators were shown their training examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Each worker in their own seeded order.
    Random,
    /// The file's order, the same for everyone.
    File,
    /// The cell pools studies of both kinds.
    Mixed,
}

impl Order {
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Random => "random per worker",
            Order::File => "file order",
            Order::Mixed => "mixed",
        }
    }
}

/// One group's training step by position and time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderCell {
    pub task: String,
    pub k: u32,
    pub order: Order,
    /// Per annotator: S1 on the first ⌊n/2⌋ training examples shown, and on the rest.
    pub first_half: Spread,
    pub second_half: Spread,
    /// Per annotator: mean seconds from showing a training example to its answer.
    pub seconds_per_example: Spread,
    /// Pearson's r across annotators of those seconds and test S1 (three annotators or more),
    /// with its n, p and Fisher-z interval.
    pub time_vs_test: Option<Correlation>,
}

/// The cells of one task's k-shot groups.
pub(super) fn order_cells(
    task: &str,
    ks: &BTreeSet<u32>,
    group: &[&AnnotatorRecord],
    scored: &HashMap<AssignmentId, &AnnotatorScore>,
    rules: &HashMap<StudyId, StudyRules>,
) -> Vec<OrderCell> {
    let mut out = Vec::new();
    for &k in ks.iter().filter(|&&k| k > 0) {
        let annotators = scenario(group, task, k);
        let shuffled: BTreeSet<bool> = annotators
            .iter()
            .map(|a| rules.get(&a.study).is_some_and(|r| r.shuffle_training))
            .collect();
        let order = match (shuffled.contains(&true), shuffled.contains(&false)) {
            (true, false) => Order::Random,
            (false, _) => Order::File,
            (true, true) => Order::Mixed,
        };
        let (mut first, mut second, mut seconds, mut tests) = (vec![], vec![], vec![], vec![]);
        for a in &annotators {
            // Items come in the order shown (by position).
            let items = submitted(a, Phase::Training);
            let half = items.len() / 2;
            let s1 = |part: &[&super::ItemRecord]| item_mean(part, |i| i.score(Scoring::Official));
            let (Some(f), Some(s)) = (s1(&items[..half]), s1(&items[half..])) else {
                continue;
            };
            let time = item_mean(&items, |i| {
                Some((i.submitted_at? - i.shown_at?) as f64 / 1000.0)
            });
            first.push(f);
            second.push(s);
            if let Some(t) = time {
                seconds.push(t);
                tests.push(scored[&a.assignment].test_s1);
            }
        }
        let paired: Vec<(f64, f64)> = seconds
            .iter()
            .zip(&tests)
            .filter_map(|(t, s)| Some((*t, (*s)?)))
            .collect();
        let (times, test_s1): (Vec<f64>, Vec<f64>) = paired.into_iter().unzip();
        if let (Some(first_half), Some(second_half), Some(seconds_per_example)) =
            (spread(&first), spread(&second), spread(&seconds))
        {
            out.push(OrderCell {
                task: task.to_string(),
                k,
                order,
                first_half,
                second_half,
                seconds_per_example,
                time_vs_test: correlation(&times, &test_s1, LEVEL),
            });
        }
    }
    out
}
