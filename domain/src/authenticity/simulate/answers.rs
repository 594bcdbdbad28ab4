//! What simulated workers answer on a label task: a system that gets a share of the items
//! wrong, honest humans who err now and then and, on the items the system gets wrong (the hard
//! ones), give the system's wrong answer more often; a machine copier gives the system's answer.

use crate::rng::SplitMix64;

/// The stated answer model: `labels` labels; the system wrong on `system_wrong` of the items;
/// an honest human wrong on `human_error` of the others (a random other label), and on the
/// system's wrong items giving the system's answer with probability `shared_error`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnswerModel {
    pub labels: usize,
    pub system_wrong: f64,
    pub human_error: f64,
    pub shared_error: f64,
}

impl Default for AnswerModel {
    /// A binary task (SST-2): the system wrong on 15% of the items, humans on 8% of the easy
    /// ones and sharing the system's error on 30% of the hard ones.
    fn default() -> Self {
        AnswerModel {
            labels: 2,
            system_wrong: 0.15,
            human_error: 0.08,
            shared_error: 0.3,
        }
    }
}

/// A task's gold and a system's answers (label indices), item by item.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskAnswers {
    pub gold: Vec<usize>,
    pub system: Vec<usize>,
}

impl TaskAnswers {
    pub fn system_wrong(&self, i: usize) -> bool {
        self.system[i] != self.gold[i]
    }
}

impl AnswerModel {
    /// A label other than `not`.
    fn other(&self, rng: &mut SplitMix64, not: usize) -> usize {
        let pick = rng.below(self.labels.max(2) - 1);
        if pick >= not {
            pick + 1
        } else {
            pick
        }
    }

    /// `n` items: gold labels at random, the system wrong on `system_wrong` of them.
    pub fn task(&self, n: usize, rng: &mut SplitMix64) -> TaskAnswers {
        let gold: Vec<usize> = (0..n).map(|_| rng.below(self.labels.max(2))).collect();
        self.system_for(gold, rng)
    }

    /// A system's answers to items of the given gold labels (a real task's).
    pub fn system_for(&self, gold: Vec<usize>, rng: &mut SplitMix64) -> TaskAnswers {
        let system = gold
            .iter()
            .map(|&g| {
                if rng.unit() < self.system_wrong {
                    self.other(rng, g)
                } else {
                    g
                }
            })
            .collect();
        TaskAnswers { gold, system }
    }

    /// An honest human's answer to item `i`.
    pub fn human(&self, task: &TaskAnswers, i: usize, rng: &mut SplitMix64) -> usize {
        let gold = task.gold[i];
        if task.system_wrong(i) {
            if rng.unit() < self.shared_error {
                return task.system[i];
            }
        } else if rng.unit() < self.human_error {
            return self.other(rng, gold);
        }
        gold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humans_share_the_systems_errors_at_the_stated_rate() {
        let m = AnswerModel::default();
        let mut rng = SplitMix64(3);
        let task = m.task(20_000, &mut rng);
        let wrong: Vec<usize> = (0..20_000).filter(|&i| task.system_wrong(i)).collect();
        let share = wrong.len() as f64 / 20_000.0;
        assert!((share - 0.15).abs() < 0.01, "{share}");
        let shared = wrong
            .iter()
            .filter(|&&i| m.human(&task, i, &mut rng) == task.system[i])
            .count() as f64
            / wrong.len() as f64;
        assert!((shared - 0.3).abs() < 0.03, "{shared}");
    }
}
