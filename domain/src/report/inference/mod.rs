//! Inference on the report's cells and comparisons, annotators (or a system's splits) as the
//! random unit: each cell's intervals named by what they cover, each study's declared family of
//! scenario comparisons (`family`: the crossed mixed model, Holm within the family), humans
//! against each system at the same k (Welch across annotators and splits), and the planner
//! from each study's variance components.
//!
//! A cell's units are its annotators (or a system's splits) and its items the test items every
//! unit answered; `domain::stats` does the arithmetic. Every random draw is seeded by the name
//! of what it is drawn for (task, k, who, scoring), so a report is the same every time it is
//! built from the same answers.

mod family;
mod planner;

pub use family::{study_family, FamilyInput, StudyFit};
pub use planner::{plan, PlanRefusal, PlanRow, Refusal, NO_SPREAD};

use super::AnnotatorRecord;
use crate::analysis_plan::Contrast;
use crate::ids::{ExampleId, StudyId};
use crate::place::Phase;
use crate::s1::Scoring;
use crate::stats::groups::Method;
use crate::stats::{self, Ancova, Interval, PermutationTest, RelabelTest, TTest};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// The power a design should have, and the level of tests no plan declares (humans against
/// a system).
pub const POWER: f64 = 0.8;
pub const ALPHA: f64 = crate::analysis_plan::DEFAULT_ALPHA;

fn default_alpha() -> f64 {
    ALPHA
}

fn cell_level() -> f64 {
    stats::interval::LEVEL
}
/// The `who` of the human side of a comparison.
pub const HUMANS: &str = "humans";
/// The differences (in S1) the planner table sizes a study for.
pub const PLANNED: [f64; 2] = [0.05, 0.10];

/// 95% intervals of a cell's mean, named by what they cover. A cell pools the annotators of a
/// task and k across studies whose plans may set other levels: it describes, and tests nothing,
/// so its level is its own and is written beside it (`level`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Uncertainty {
    /// The intervals' level (`stats::interval::LEVEL`).
    #[serde(default = "cell_level")]
    pub level: f64,
    /// Other annotators (or splits) on these items: the t-interval over the units on the logit
    /// scale (two units or more).
    pub other_units: Option<Interval>,
    /// These annotators (or splits) on more items: the item bootstrap, units held fixed.
    pub more_items: Option<Interval>,
    /// Items the bootstrap drew from: those every unit of the cell answered.
    pub items: usize,
    /// The seed of the bootstrap's draws (`seed` of the cell's name), for a rerun.
    #[serde(default)]
    pub seed: u64,
}

/// One side of a comparison: a scenario's humans (`who` = "humans") or a system, at k shots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub who: String,
    pub k: u32,
    /// Annotators or splits.
    pub units: usize,
    /// The training splits the side used: the annotators' (none for zero-shot, and for a
    /// scenario of a study's family), or the system's runs compared.
    #[serde(default)]
    pub splits: Vec<u32>,
}

impl Side {
    pub fn describe(&self) -> String {
        format!("{} k={}", self.who, self.k)
    }

    /// Its units, with the splits they used: `3 on split 1`, `5 on splits 1, 2, 3, 4, 5`.
    pub fn units_text(&self) -> String {
        match self.splits.as_slice() {
            [] => self.units.to_string(),
            [one] => format!("{} on split {one}", self.units),
            many => format!("{} on splits {}", self.units, splits_list(many)),
        }
    }
}

/// Splits as a reader lists them: `1, 2, 3`.
fn splits_list(splits: &[u32]) -> String {
    let list: Vec<String> = splits.iter().map(u32::to_string).collect();
    list.join(", ")
}

/// Which of the system's runs a comparison with humans used, in words: at k = 0 its zero-shot
/// run; else its runs on the humans' training split(s), or on every split where it has no run
/// on one of theirs.
fn split_words(humans: &Side, system: &Side) -> String {
    let runs = match system.splits.as_slice() {
        [one] => format!("its run on split {one}"),
        many => format!("its runs on splits {}", splits_list(many)),
    };
    if system.k == 0 {
        "; the system's zero-shot run (no training split)".into()
    } else if humans.splits.is_empty() {
        format!("; the system: {runs} (the humans' training splits are not recorded)")
    } else if humans.splits == system.splits {
        format!("; the system: {runs}, the humans' training split(s)")
    } else {
        format!(
            "; the system: {runs}, all it has, as it has no run on one of the humans' training splits ({})",
            splits_list(&humans.splits)
        )
    }
}

/// Where a comparison stands in its study's analysis plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The plan's primary comparison (in its family).
    Primary,
    /// In the family the plan declared before data collection.
    Family,
    /// Not in a plan frozen before data collection: humans against a system, or any comparison
    /// of a study whose data began before its plan was frozen.
    Exploratory,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Primary => "primary",
            Status::Family => "family",
            Status::Exploratory => "exploratory",
        }
    }
}

/// The item-level view of a difference: these annotators (and these runs) on more items like
/// these. It holds the units fixed, so it says nothing of other annotators, and it is never
/// part of a family.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemLevel {
    /// The paired sign-flip permutation test of the item differences.
    pub test: PermutationTest,
    /// The item bootstrap of the difference.
    pub interval: Option<Interval>,
}

/// The logistic mixed model beside the linear one, where every item S1 of a family is 0 or 1 (a
/// label task): `logit P(right) = scenario + (1|annotator) + (1|item)`, as glmer fits it
/// (`stats::mixed::logistic`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Logistic {
    /// The contrast on the log-odds scale (the trend's per 10 shots): `test` is the Wald
    /// statistic against t with the between-within degrees of freedom (annotators less
    /// scenarios), `p_wald` glmer's own p against the normal, `interval` the t-interval at
    /// 1 − α; the intercepts' standard deviations are in logits.
    Fitted {
        test: TTest,
        p_wald: f64,
        interval: Interval,
        sd_annotator: f64,
        sd_item: f64,
        /// The same contrast from the restricted fit (REML under the Laplace approximation,
        /// `mixed::logistic::fit_restricted`) against t with the same degrees of freedom: the
        /// reading that holds its level with three annotators a scenario; `None` where that
        /// fit failed.
        #[serde(default)]
        restricted: Option<TTest>,
    },
    /// Why there is no fit (outcomes that separate the scenarios, say).
    NotFitted { error: String },
}

impl Logistic {
    /// In words, for the report's cell.
    pub fn describe(&self) -> String {
        match self {
            Logistic::Fitted {
                test,
                p_wald,
                interval,
                restricted,
                ..
            } => format!(
                "log-odds {:+.3} (SE {:.3}, {} to {}), z {:.2}: p {} against t({}), glmer's p {} against the normal; {}",
                test.estimate,
                test.se,
                format_args!("{:+.3}", interval.low),
                format_args!("{:+.3}", interval.high),
                test.t,
                stats::p_text(test.p),
                test.df,
                stats::p_text(*p_wald),
                restricted.map_or("the REML fit failed".into(), |r| format!(
                    "by REML {:+.3} (SE {:.3}): p {} against t({})",
                    r.estimate,
                    r.se,
                    stats::p_text(r.p),
                    r.df
                ))
            ),
            Logistic::NotFitted { error } => format!("not fitted: {error}"),
        }
    }
}

/// A comparison on the test items both sides answered (official scoring).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub task: String,
    /// The study whose family it belongs to (`None`: humans of the scope against a system).
    pub study: Option<StudyId>,
    pub label: String,
    /// The scenarios contrasted (`None`: humans against a system).
    pub contrast: Option<Contrast>,
    /// The sides with their units: the contrast's scenarios, or the humans and the system.
    pub sides: Vec<Side>,
    pub items: usize,
    /// The difference (b − a), or the trend's slope per 10 shots.
    pub difference: f64,
    pub method: Method,
    /// The t-test across annotators (estimate = `difference`): the mixed model's, or Welch's
    /// where the method says a permutation test decides (a description there; `None` where
    /// the annotators' means do not spread); `None` where the method says there is no test.
    pub test: Option<TTest>,
    /// The interval at 1 − `alpha` of the test that decides, for other annotators on these
    /// items: the t-test's, or the shifts the permutation test does not reject; `None` where
    /// that test rejects no shift (its smallest p is above α) or there is no test.
    pub interval: Option<Interval>,
    /// The level: the study's plan's (frozen, else configured); `ALPHA` for humans against a
    /// system.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// `p()` adjusted by Holm within the study's declared family.
    pub p_holm: Option<f64>,
    pub status: Status,
    /// The exact permutation test of annotator labels (two scenarios).
    pub permutation: Option<RelabelTest>,
    /// The difference over the pooled standard deviation of the units' scores.
    pub effect: Option<f64>,
    /// These annotators on more items (two sides).
    pub these_annotators: Option<ItemLevel>,
    /// The seed of the comparison's random draws (`seed` of its name): the relabellings, the
    /// sign flips and the item bootstrap, for a rerun.
    #[serde(default)]
    pub seed: u64,
    /// Between two scenarios whose annotators all answered screening items: the difference of
    /// their test S1 adjusted for their screening S1, with its test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<Ancova>,
    /// The logistic mixed model's test of the same contrast, where every item S1 of the
    /// study's family is 0 or 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logistic: Option<Logistic>,
}

impl Comparison {
    /// The p that decides (and that Holm adjusts): the permutation test's where the method
    /// says it decides, else the t-test's; `None` where there is no test.
    pub fn p(&self) -> Option<f64> {
        self.method.p(self.test.as_ref())
    }

    /// Why the comparison has no interval, in words.
    pub fn why_no_interval(&self) -> String {
        match &self.method {
            Method::Permutation { test, .. } => format!(
                "none: no shift is rejected (the smallest p this design can reach, {}, is above α = {})",
                stats::p_text(test.min_p),
                self.alpha
            ),
            Method::NoTest { .. } => "none: no test".into(),
            Method::MixedModel { .. } | Method::Welch { .. } | Method::OneSample { .. } => {
                "none".into()
            }
        }
    }
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
    pub fn restrict(&self, items: &[ExampleId]) -> Matrix {
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

    pub fn unit_means(&self) -> Vec<f64> {
        let n = self.items.len().max(1) as f64;
        self.rows
            .iter()
            .map(|r| r.iter().sum::<f64>() / n)
            .collect()
    }

    pub fn item_means(&self) -> Vec<f64> {
        let n = self.rows.len().max(1) as f64;
        (0..self.items.len())
            .map(|c| self.rows.iter().map(|r| r[c]).sum::<f64>() / n)
            .collect()
    }
}

/// The items every matrix has, ascending.
pub fn shared_items<'a>(ms: impl IntoIterator<Item = &'a Matrix>) -> Vec<ExampleId> {
    let mut it = ms.into_iter();
    let Some(first) = it.next() else {
        return Vec::new();
    };
    let mut items = first.items.clone();
    for m in it {
        let has: HashSet<ExampleId> = m.items.iter().copied().collect();
        items.retain(|i| has.contains(i));
    }
    items
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
        level: cell_level(),
        other_units: stats::logit_t_interval(unit_scores, stats::interval::LEVEL),
        more_items: stats::bootstrap_items(&m.rows, stats::interval::RESAMPLES, seed(name)),
        items: m.items.len(),
        seed: seed(name),
    }
}

/// The difference over the pooled sample standard deviation of the two sides' unit scores.
pub(crate) fn effect(a: &[f64], b: &[f64], difference: f64) -> Option<f64> {
    stats::pooled_sd(a, b)
        .filter(|s| *s > 0.0)
        .map(|s| difference / s)
}

/// These units on more items: the sign-flip test of the item differences and the item
/// bootstrap of the difference at `level`, `b` against `a` over the same items, both drawn from
/// `seed` (the comparison's).
pub(crate) fn item_level(a: &Matrix, b: &Matrix, seed: u64, level: f64) -> Option<ItemLevel> {
    let d: Vec<f64> = a
        .item_means()
        .iter()
        .zip(b.item_means())
        .map(|(x, y)| y - x)
        .collect();
    Some(ItemLevel {
        test: stats::sign_flip_test(&d, stats::paired::RESAMPLES, seed)?,
        interval: stats::bootstrap_items_difference(
            &a.rows,
            &b.rows,
            stats::interval::RESAMPLES,
            seed,
            level,
        ),
    })
}

/// Humans (`a`) against a system (`b`) at the same k on the items both answered: Welch's test
/// across annotators and splits (each side's own spread), or the one-sample test across
/// annotators where the system ran on one split; exploratory (no plan declares it).
pub fn humans_vs_system(task: &str, a: (Side, &Matrix), b: (Side, &Matrix)) -> Option<Comparison> {
    let shared = shared_items([a.1, b.1]);
    if shared.is_empty() || a.1.rows.is_empty() || b.1.rows.is_empty() {
        return None;
    }
    let (ma, mb) = (a.1.restrict(&shared), b.1.restrict(&shared));
    let (ua, ub) = (ma.unit_means(), mb.unit_means());
    let on = split_words(&a.0, &b.0);
    let (method, test) = match (ua.len(), ub.len()) {
        (na, nb) if na >= 2 && nb >= 2 => (
            Method::Welch {
                reason: format!(
                    "across annotators and the system's splits, each side's own spread{on}"
                ),
            },
            stats::welch(&ua, &ub)?,
        ),
        (na, 1) if na >= 2 => (
            Method::OneSample {
                reason: format!(
                    "across annotators (the system ran on one split: its score is taken as fixed){on}"
                ),
            },
            stats::against_fixed(&ua, ub[0])?,
        ),
        _ => return None,
    };
    let seed = seed(&format!("{task}|{}|{}", a.0.describe(), b.0.describe()));
    Some(Comparison {
        task: task.to_string(),
        study: None,
        label: format!("{} vs {}", b.0.describe(), a.0.describe()),
        contrast: None,
        items: shared.len(),
        difference: test.estimate,
        interval: Some(test.interval(1.0 - ALPHA)),
        alpha: ALPHA,
        p_holm: None,
        status: Status::Exploratory,
        permutation: None,
        effect: effect(&ua, &ub, test.estimate),
        these_annotators: item_level(&ma, &mb, seed, 1.0 - ALPHA),
        seed,
        adjusted: None,
        logistic: None,
        method,
        test: Some(test),
        sides: vec![a.0, b.0],
    })
}
