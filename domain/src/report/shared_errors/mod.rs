//! Shared errors, without any system run: workers of a task who give the same wrong answers far
//! more often than independent people do (a farm of scripts drawing on one source, a group using
//! one chatbot). For each ordered pair (x, y): of the test items x got wrong that y answered,
//! on how many y gave x's wrong answer, against what honest workers do.
//!
//! The honest rate is read from the task's own pairs, robustly: the median over all pairs of
//! the share of one's wrong answers the other repeats (hard items make honest errors coincide
//! too, and that is what the share measures), at least `SHARED_HONEST_RATE`, raised in
//! proportion for a `y` who errs more than the median worker. A pair is past chance where the
//! binomial tail of its count at that rate is under `SHARED_BOUND` divided by the number of
//! ordered pairs (Bonferroni): over a whole task, one honest pair in 1,000 studies at most.
//! Farm pairs are a minority of all pairs while a farm is under 70% of the workers, so they
//! cannot move the median.

use crate::ids::{AssignmentId, ExampleId};
use crate::stats::dist::binomial_tail;
use std::collections::HashMap;

/// Over a task's ordered pairs, the chance that any honest pair is named (Bonferroni)...
pub const SHARED_BOUND: f64 = 0.001;
/// ...and the far smaller chance that makes the signal low on its own.
pub const SHARED_STRONG_BOUND: f64 = 1e-9;
/// The least honest rate of repeating another worker's wrong answer (a binary task's hard
/// items make about 17% of honest errors coincide in the simulation).
pub const SHARED_HONEST_RATE: f64 = 0.25;
/// The least wrong items of `x` that `y` answered for a pair to be judged.
pub const SHARED_MIN_ITEMS: usize = 5;

/// One worker's test answers (official encoding) and the items among them they got wrong.
pub struct Answers<'a> {
    pub assignment: AssignmentId,
    pub answers: &'a HashMap<ExampleId, Vec<String>>,
    pub wrong: Vec<ExampleId>,
}

/// What shared errors say of one worker.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shared {
    /// Other workers with whom the pair is past chance (either way round).
    pub partners: usize,
    /// The smallest pair's tail times the number of ordered pairs (`SHARED_BOUND` compares).
    pub corrected_p: f64,
    /// That pair's counts: wrong items judged, and those repeated.
    pub judged: usize,
    pub repeated: usize,
    /// Past `SHARED_STRONG_BOUND`: low on its own.
    pub strong: bool,
}

/// One ordered pair's counts: `x`'s wrong items that `y` answered, and those on which `y` gave
/// the same answer.
fn pair_counts(x: &Answers, y: &Answers) -> (usize, usize) {
    let mut judged = 0;
    let mut repeated = 0;
    for id in &x.wrong {
        if let (Some(a), Some(b)) = (x.answers.get(id), y.answers.get(id)) {
            judged += 1;
            repeated += usize::from(same_answer(a, b));
        }
    }
    (judged, repeated)
}

/// Two answers in the official encoding are the same answer whatever their order.
fn same_answer(a: &[String], b: &[String]) -> bool {
    let mut a: Vec<&String> = a.iter().collect();
    let mut b: Vec<&String> = b.iter().collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

fn error_rate(w: &Answers) -> Option<f64> {
    (!w.answers.is_empty()).then(|| w.wrong.len() as f64 / w.answers.len() as f64)
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        None
    } else if n % 2 == 1 {
        Some(xs[n / 2])
    } else {
        Some((xs[n / 2 - 1] + xs[n / 2]) / 2.0)
    }
}

/// Shared errors of each worker of one task (the workers with any answers).
pub fn shared_errors(workers: &[Answers]) -> HashMap<AssignmentId, Shared> {
    let n = workers.len();
    let rates: Vec<Option<f64>> = workers.iter().map(error_rate).collect();
    let typical_error = median(rates.iter().flatten().copied().collect());
    let mut counts = Vec::new();
    for (i, x) in workers.iter().enumerate() {
        for (j, y) in workers.iter().enumerate().filter(|(j, _)| *j != i) {
            let (judged, repeated) = pair_counts(x, y);
            if judged >= SHARED_MIN_ITEMS {
                counts.push((i, j, judged, repeated));
            }
        }
    }
    let honest = median(
        counts
            .iter()
            .map(|&(_, _, k, m)| m as f64 / k as f64)
            .collect(),
    )
    .unwrap_or(0.0)
    .max(SHARED_HONEST_RATE);
    let pairs = (n * n.saturating_sub(1)).max(1) as f64;
    let mut out: HashMap<AssignmentId, Shared> = workers
        .iter()
        .map(|w| {
            let none = Shared {
                corrected_p: 1.0,
                ..Shared::default()
            };
            (w.assignment, none)
        })
        .collect();
    let mut partners: HashMap<AssignmentId, Vec<AssignmentId>> = HashMap::new();
    for (i, j, judged, repeated) in counts {
        // A y who errs more than the typical worker repeats more by chance.
        let weaker = rates[j]
            .zip(typical_error)
            .filter(|&(_, t)| t > 0.0)
            .map_or(1.0, |(e, t)| (e / t).max(1.0));
        let rate = (honest * weaker).min(1.0);
        let p = binomial_tail(repeated as u64, judged as u64, rate) * pairs;
        let (x, y) = (workers[i].assignment, workers[j].assignment);
        for (me, other) in [(x, y), (y, x)] {
            let Some(s) = out.get_mut(&me) else {
                continue;
            };
            if p < s.corrected_p {
                (s.corrected_p, s.judged, s.repeated) = (p, judged, repeated);
                s.strong = p < SHARED_STRONG_BOUND;
            }
            if p < SHARED_BOUND {
                let list = partners.entry(me).or_default();
                if !list.contains(&other) {
                    list.push(other);
                }
            }
        }
    }
    for (me, list) in partners {
        if let Some(s) = out.get_mut(&me) {
            s.partners = list.len();
        }
    }
    out
}

#[cfg(test)]
mod tests;
