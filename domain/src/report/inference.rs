//! Inference on the report's cells (issue 26): a 95% interval on every human and machine
//! cell, the paired test between scenarios and between humans and systems, and the planner.
//!
//! A cell's units are its annotators (or a system's splits) and its items the test items every
//! unit answered; `domain::stats` does the arithmetic. Every random draw is seeded by the name
//! of what it is drawn for (task, k, who, scoring), so a report is the same every time it is
//! built from the same answers.

use super::AnnotatorRecord;
use crate::ids::ExampleId;
use crate::place::Phase;
use crate::s1::Scoring;
use crate::stats::{self, Interval, PermutationTest};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// The power a design should have, and the level of every test.
pub const POWER: f64 = 0.8;
pub const ALPHA: f64 = 0.05;
/// The `who` of the human side of a comparison.
pub const HUMANS: &str = "humans";
/// The differences (in S1) the planner table sizes a study for.
pub const PLANNED: [f64; 2] = [0.05, 0.10];

/// 95% intervals of a cell's mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Uncertainty {
    /// The exact t-interval over the units' scores (two units or more).
    pub t: Option<Interval>,
    /// The bootstrap over units and items (`stats::interval::RESAMPLES` replicates).
    pub bootstrap: Option<Interval>,
    /// Items the bootstrap drew from: those every unit of the cell answered.
    pub items: usize,
}

/// One side of a comparison: humans (`who` = "humans") or a system, at k shots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub who: String,
    pub k: u32,
    /// Annotators or splits.
    pub units: usize,
}

impl Side {
    pub fn describe(&self) -> String {
        format!("{} k={}", self.who, self.k)
    }
}

/// Whether the design could find a difference of the size seen: the two-sided two-sample
/// t-test across units (annotators or splits) at `ALPHA`, with the pooled spread of the units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Design {
    pub pooled_sd: f64,
    /// The power at the difference seen with the units the two sides have.
    pub power: f64,
    /// Units per side for `POWER` at that difference (`None`: more than a million).
    pub needed: Option<u32>,
}

/// `b` against `a` on the test items both answered (official scoring).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub task: String,
    pub a: Side,
    pub b: Side,
    pub items: usize,
    /// Mean over items of b's mean item S1 minus a's.
    pub difference: f64,
    /// The bootstrap interval of the difference over items (paired) and units.
    pub interval: Option<Interval>,
    /// The paired sign-flip test over items.
    pub test: PermutationTest,
    /// `test.p` adjusted by Holm over every comparison of the same table set.
    pub p_holm: f64,
    /// Cohen's d_z of the item differences.
    pub effect_dz: Option<f64>,
    pub design: Option<Design>,
    /// Between two human scenarios whose annotators all answered screening items: the
    /// difference of their mean test S1 adjusted for the groups' screening S1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<Adjusted>,
}

/// A difference adjusted for screening (ANCOVA across annotators: the group coefficient of
/// `test S1 ~ 1 + group + screening S1`, the slope pooled within the two groups).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Adjusted {
    pub difference: f64,
    pub slope: f64,
}

/// The adjusted difference of `b` against `a` from each annotator's (screening, test) S1.
pub fn adjusted(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<Adjusted> {
    stats::ancova(a, b).map(|f| Adjusted {
        difference: f.difference,
        slope: f.slope,
    })
}

impl Comparison {
    /// The design could not be expected to find this difference.
    pub fn underpowered(&self) -> bool {
        self.design.is_some_and(|d| d.power < POWER)
    }
}

/// Per task: the spread of annotator S1 within a scenario, pooled over its scenarios, and the
/// annotators per scenario a study needs to find each of `PLANNED` at `POWER`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRow {
    pub task: String,
    pub pilot_annotators: usize,
    pub pooled_sd: f64,
    /// `(difference, annotators per scenario)`.
    pub needed: Vec<(f64, Option<u32>)>,
}

/// A cell's units' scores over the items every unit has (ids ascending).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Matrix {
    pub items: Vec<ExampleId>,
    pub rows: Vec<Vec<f64>>,
}

impl Matrix {
    /// From each unit's `(item, score)` list.
    pub fn of(units: &[Vec<(ExampleId, f64)>]) -> Matrix {
        let Some(first) = units.first() else {
            return Matrix::default();
        };
        let mut items: Vec<ExampleId> = first.iter().map(|x| x.0).collect();
        for u in &units[1..] {
            let has: HashSet<ExampleId> = u.iter().map(|x| x.0).collect();
            items.retain(|i| has.contains(i));
        }
        items.sort_unstable();
        items.dedup();
        Matrix {
            rows: units.iter().map(|u| Self::row(u, &items)).collect(),
            items,
        }
    }

    fn row(unit: &[(ExampleId, f64)], items: &[ExampleId]) -> Vec<f64> {
        let by_id: BTreeMap<ExampleId, f64> = unit.iter().copied().collect();
        items.iter().map(|i| by_id[i]).collect()
    }

    /// The same units over `items` (a subset of this matrix's items).
    fn restrict(&self, items: &[ExampleId]) -> Matrix {
        let keep: HashSet<ExampleId> = items.iter().copied().collect();
        let cols: Vec<usize> = (0..self.items.len())
            .filter(|&c| keep.contains(&self.items[c]))
            .collect();
        Matrix {
            items: cols.iter().map(|&c| self.items[c]).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| cols.iter().map(|&c| r[c]).collect())
                .collect(),
        }
    }

    fn unit_means(&self) -> Vec<f64> {
        let n = self.items.len().max(1) as f64;
        self.rows
            .iter()
            .map(|r| r.iter().sum::<f64>() / n)
            .collect()
    }

    fn item_means(&self) -> Vec<f64> {
        let n = self.rows.len().max(1) as f64;
        (0..self.items.len())
            .map(|c| self.rows.iter().map(|r| r[c]).sum::<f64>() / n)
            .collect()
    }
}

/// The test items' scores of a human cell's annotators.
pub fn human_matrix(annotators: &[&AnnotatorRecord], scoring: Scoring) -> Matrix {
    let units: Vec<Vec<(ExampleId, f64)>> = annotators
        .iter()
        .map(|a| {
            a.items
                .iter()
                .filter(|i| i.phase == Phase::Test)
                .filter_map(|i| Some((i.example_id, i.score(scoring)?)))
                .collect()
        })
        .collect();
    Matrix::of(&units)
}

/// FNV-1a of a name: the seed of the draws made for it.
pub fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The intervals of a cell whose published mean is over `unit_scores` (each unit's S1).
pub fn uncertainty(unit_scores: &[f64], m: &Matrix, name: &str) -> Uncertainty {
    Uncertainty {
        t: stats::t_interval(unit_scores, stats::interval::LEVEL),
        bootstrap: stats::bootstrap_mean(&m.rows, stats::interval::RESAMPLES, seed(name)),
        items: m.items.len(),
    }
}

/// The design's power at the difference seen between the two sides' unit scores.
fn design(a: &[f64], b: &[f64], difference: f64) -> Option<Design> {
    let sd = stats::pooled_sd(a, b).filter(|&s| s > 0.0)?;
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if na < 2.0 || nb < 2.0 || difference == 0.0 {
        return None;
    }
    let effect = difference / sd;
    Some(Design {
        pooled_sd: sd,
        power: stats::two_sample_power(effect, na, nb, ALPHA),
        needed: stats::units_needed(effect, POWER, ALPHA).map(|n| n.ceil() as u32),
    })
}

/// `b` against `a` on the items both have; `None` when they share none.
pub fn compare(task: &str, a: (Side, &Matrix), b: (Side, &Matrix)) -> Option<Comparison> {
    let shared: Vec<ExampleId> = {
        let in_b: HashSet<ExampleId> = b.1.items.iter().copied().collect();
        a.1.items
            .iter()
            .copied()
            .filter(|i| in_b.contains(i))
            .collect()
    };
    if shared.is_empty() || a.1.rows.is_empty() || b.1.rows.is_empty() {
        return None;
    }
    let (ma, mb) = (a.1.restrict(&shared), b.1.restrict(&shared));
    let d: Vec<f64> = ma
        .item_means()
        .iter()
        .zip(mb.item_means())
        .map(|(x, y)| y - x)
        .collect();
    let name = format!("{task}|{}|{}", a.0.describe(), b.0.describe());
    let test = stats::sign_flip_test(&d, stats::paired::RESAMPLES, seed(&name))?;
    Some(Comparison {
        task: task.to_string(),
        items: shared.len(),
        difference: test.statistic,
        interval: stats::bootstrap_difference(
            &ma.rows,
            &mb.rows,
            stats::interval::RESAMPLES,
            seed(&name),
        ),
        p_holm: test.p,
        effect_dz: stats::cohen_dz(&d),
        design: design(&ma.unit_means(), &mb.unit_means(), test.statistic),
        adjusted: None,
        test,
        a: a.0,
        b: b.0,
    })
}

/// Sets each comparison's Holm-adjusted p over the whole family.
pub fn adjust(family: &mut [Comparison]) {
    let p: Vec<f64> = family.iter().map(|c| c.test.p).collect();
    for (c, adjusted) in family.iter_mut().zip(stats::holm(&p)) {
        c.p_holm = adjusted;
    }
}

/// The planner's row of a task from the unit scores of each of its scenarios.
pub fn plan(task: &str, scenarios: &[Vec<f64>]) -> Option<PlanRow> {
    let n: usize = scenarios.iter().map(Vec::len).sum();
    let df = n.checked_sub(scenarios.iter().filter(|s| !s.is_empty()).count())?;
    if df == 0 {
        return None;
    }
    let ss: f64 = scenarios
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| {
            let m = s.iter().sum::<f64>() / s.len() as f64;
            s.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
        })
        .sum();
    let sd = (ss / df as f64).sqrt();
    (sd > 0.0).then(|| PlanRow {
        task: task.to_string(),
        pilot_annotators: n,
        pooled_sd: sd,
        needed: PLANNED
            .iter()
            .map(|&d| {
                (
                    d,
                    stats::units_needed(d / sd, POWER, ALPHA).map(|n| n.ceil() as u32),
                )
            })
            .collect(),
    })
}
