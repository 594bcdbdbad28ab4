//! Model confidence beside human confidence on label tasks: each system's accuracy per bin of
//! the probability it gave its answers, the crowd's per Likert level, and the reliability diagram.

use super::Report;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One machine answer on a label task's test item: the probability the model gave it and
/// whether it was right (S1 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineAnswer {
    pub system: String,
    pub task: String,
    pub probability: f64,
    pub correct: bool,
}

/// A system's answers on a task whose probability lies in `[low, high)` (the last bin holds 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BinRow {
    pub system: String,
    pub task: String,
    pub low: f64,
    pub high: f64,
    pub answers: usize,
    pub correct: usize,
    pub accuracy: Option<f64>,
    pub mean_probability: Option<f64>,
}

/// Bins of width 0.1.
pub const BINS: usize = 10;

/// Every bin of every system and task (empty bins included, so tables line up).
pub fn bins(answers: &[MachineAnswer]) -> Vec<BinRow> {
    let mut groups: BTreeMap<(&str, &str), Vec<&MachineAnswer>> = BTreeMap::new();
    for a in answers {
        groups.entry((&a.system, &a.task)).or_default().push(a);
    }
    let mut out = Vec::new();
    for ((system, task), list) in groups {
        for b in 0..BINS {
            let (low, high) = (b as f64 / BINS as f64, (b + 1) as f64 / BINS as f64);
            let inside: Vec<&&MachineAnswer> = list
                .iter()
                .filter(|a| {
                    let at = ((a.probability.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1);
                    at == b
                })
                .collect();
            let n = inside.len();
            let correct = inside.iter().filter(|a| a.correct).count();
            out.push(BinRow {
                system: system.to_string(),
                task: task.to_string(),
                low,
                high,
                answers: n,
                correct,
                accuracy: (n > 0).then(|| correct as f64 / n as f64),
                mean_probability: (n > 0)
                    .then(|| inside.iter().map(|a| a.probability).sum::<f64>() / n as f64),
            });
        }
    }
    out
}

/// Expected calibration error of one system on one task: the answers' share of each bin times
/// the gap between its accuracy and its mean probability, summed.
pub fn expected_calibration_error(rows: &[&BinRow]) -> Option<f64> {
    let total: usize = rows.iter().map(|r| r.answers).sum();
    (total > 0).then(|| {
        rows.iter()
            .filter_map(|r| {
                Some(r.answers as f64 / total as f64 * (r.accuracy? - r.mean_probability?).abs())
            })
            .sum()
    })
}

/// Adds the bins of the machine answers to a report.
pub fn attach(r: &mut Report, answers: &[MachineAnswer]) {
    r.calibration = bins(answers);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A machine's answer to an SST-2 item (for this module's tests and the diagram's).
    pub(crate) fn answer(system: &str, p: f64, correct: bool) -> MachineAnswer {
        MachineAnswer {
            system: system.into(),
            task: "SST-2".into(),
            probability: p,
            correct,
        }
    }

    #[test]
    fn answers_fall_in_their_bins_and_the_error_weighs_them() {
        let a = vec![
            answer("m", 0.55, true),
            answer("m", 0.59, false),
            answer("m", 0.95, true),
            answer("m", 1.0, true),
            answer("m", 0.0, false),
        ];
        let rows = bins(&a);
        assert_eq!(rows.len(), BINS);
        let b5 = &rows[5];
        assert_eq!((b5.answers, b5.correct), (2, 1));
        assert!((b5.mean_probability.unwrap() - 0.57).abs() < 1e-12);
        // 1.0 lands in the last bin with 0.95.
        assert_eq!((rows[9].answers, rows[9].correct), (2, 2));
        assert_eq!((rows[0].answers, rows[0].accuracy), (1, Some(0.0)));
        assert_eq!(rows[3].accuracy, None);
        // ECE = 2/5 |0.5 - 0.57| + 2/5 |1 - 0.975| + 1/5 |0 - 0| = 0.028 + 0.01.
        let refs: Vec<&BinRow> = rows.iter().collect();
        assert!((expected_calibration_error(&refs).unwrap() - 0.038).abs() < 1e-12);
    }
}
