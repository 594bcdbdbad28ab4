//! What the report says: each annotator's line, the cells of the score tables (per scenario,
//! with the filtered view, subsets, agreement and confidence), and the whole `Report`.

use super::inference::{Comparison, Matrix, PlanRefusal, PlanRow, Uncertainty};
use super::{calibration, machine};
use crate::ids::{AssignmentId, StudyId};
use crate::place::PlaceStatus;
use crate::s1::Spread;
use crate::task::Family;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One annotator's line of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorScore {
    pub assignment: AssignmentId,
    pub study: StudyId,
    pub worker: String,
    pub task: String,
    pub k: u32,
    pub status: PlaceStatus,
    /// Test S1 over the submitted test items, a skip scoring 0.
    pub test_s1: Option<f64>,
    pub test_s1_any_of: Option<f64>,
    /// Test S1 over the test items answered (skips left out): the second view.
    pub test_s1_answered: Option<f64>,
    pub test_s1_answered_any_of: Option<f64>,
    pub training_s1: Option<f64>,
    /// S1 on the study's screening items (left out of the JSON where a study has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screening_s1: Option<f64>,
    pub items_done: usize,
    pub items_total: usize,
    /// Skips over all submitted items (training and test).
    pub skips: usize,
    /// Submitted test items and the skips among them.
    pub test_done: usize,
    pub test_skips: usize,
    /// Sum over submitted items of submit minus first show.
    pub seconds_on_items: f64,
    /// From taking the place to finishing (or the last activity, if not finished): paid time.
    pub seconds: f64,
    pub pay_cents: i64,
    /// Flagged by the study's training filter (or by its attention checks).
    pub flagged: bool,
    /// Attention checks answered and passed (left out of the JSON where a study has none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attention_answered: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attention_passed: usize,
    /// More failed attention checks than the study allows (a reason of `flagged`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed_attention: bool,
    /// Time on the questionnaires: paid, not part of `seconds_on_items`.
    #[serde(default, skip_serializing_if = "no_time")]
    pub seconds_on_questionnaires: f64,
    /// The page's signals and the data's, and the level they give (see `authenticity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authenticity: Option<super::authenticity::Authenticity>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn no_time(s: &f64) -> bool {
    *s == 0.0
}

/// A study's questionnaires summed up over the workers of one scenario who answered them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioQuestions {
    pub study: StudyId,
    pub task: String,
    pub k: u32,
    pub workers: usize,
    pub questions: Vec<crate::study_pages::questionnaire::QuestionSummary>,
}

/// A cell of the main table (the paper's Table 5): annotators' test S1 of one task and k
/// (a skip scoring 0), the share of test items skipped, and S1 over answered items only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub task: String,
    pub k: u32,
    pub official: Spread,
    pub any_of: Spread,
    /// Test items the cell's annotators submitted, and the skips among them.
    pub test_items: usize,
    pub skipped: usize,
    /// The same apart for items whose gold is empty and items whose gold is not.
    #[serde(default)]
    pub skips_by_gold: SkipsByGold,
    /// Per-annotator S1 over the answered test items (annotators who answered none left out).
    pub answered: Option<Spread>,
    pub answered_any_of: Option<Spread>,
    /// 95% intervals of `official` and `any_of` (see `inference`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub official_ci: Option<Uncertainty>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of_ci: Option<Uncertainty>,
    /// The annotators' S1 on the study's screening items (where it has them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screening: Option<Spread>,
    /// The training splits the cell's annotators were trained on (none for zero-shot).
    #[serde(default)]
    pub splits: Vec<u32>,
}

/// Skipped of submitted test items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skips {
    pub skipped: usize,
    pub submitted: usize,
}

impl Skips {
    pub fn rate(&self) -> Option<f64> {
        (self.submitted > 0).then(|| self.skipped as f64 / self.submitted as f64)
    }
}

/// Skips on items whose gold is empty ("no answer" is right: NER without the entity type,
/// unanswerable SQuAD v2) and on items whose gold is not: a worker who skips what they find
/// hard skips the two differently.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkipsByGold {
    pub empty_gold: Skips,
    pub with_gold: Skips,
}

impl Cell {
    /// Skipped test items as a fraction of the submitted ones.
    pub fn skip_rate(&self) -> f64 {
        if self.test_items == 0 {
            0.0
        } else {
            self.skipped as f64 / self.test_items as f64
        }
    }
}

/// Which training items a training-step cell covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Subset {
    /// The items of the k-shot training set (Table 8: k = 20 in the paper).
    Shots { k: u32 },
    /// The items of the k-shot set that are not in the `without`-shot set (Table 9: 30 \ 20).
    NewIn { k: u32, without: u32 },
}

impl Subset {
    pub fn describe(&self) -> String {
        match self {
            Subset::Shots { k } => format!("the {k}-shot training items"),
            Subset::NewIn { k, without } => {
                format!("the {k}-shot training items not in the {without}-shot set")
            }
        }
    }
}

/// Training-step S1 of one group (the annotators of k shots) on a subset of training items.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubsetCell {
    pub task: String,
    pub group_k: u32,
    pub subset: Subset,
    /// Items in the subset: the fewest any annotator of the cell had, and the most (they
    /// differ where the cell pools studies whose training files differ).
    pub items: usize,
    #[serde(default)]
    pub items_max: usize,
    pub spread: Spread,
}

impl SubsetCell {
    /// The items as a table shows them: `20`, or `10-20` where the annotators' subsets differ.
    pub fn items_text(&self) -> String {
        if self.items_max > self.items {
            format!("{}-{}", self.items, self.items_max)
        } else {
            self.items.to_string()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// `Fleiss' kappa` or `mean pairwise S1`.
    pub measure: String,
    pub value: Option<f64>,
    /// Items it was computed on (label tasks: those every annotator labelled).
    pub items: usize,
}

/// Majority vote and agreement of one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioAggregate {
    pub task: String,
    pub k: u32,
    pub annotators: usize,
    pub items: usize,
    pub majority_s1: f64,
    pub majority_s1_any_of: f64,
    /// Items whose vote was tied (see `vote`).
    pub ties: usize,
    pub agreement: Agreement,
}

/// Accuracy of the test answers given at one confidence level (label tasks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceRow {
    pub task: String,
    pub level: u8,
    pub answers: usize,
    pub correct: usize,
    pub accuracy: Option<f64>,
}

/// Every table, for one set of annotators.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    pub main: Vec<Cell>,
    pub table8: Vec<SubsetCell>,
    pub table9: Vec<SubsetCell>,
    pub scenarios: Vec<ScenarioAggregate>,
    pub confidence: Vec<ConfidenceRow>,
    /// Each study's declared family of scenario comparisons, and humans against each system at
    /// the same k (exploratory).
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
    /// Tables 8 and 9 extended: each k-shot group's training step by position and time.
    #[serde(default)]
    pub order: Vec<super::order::OrderCell>,
    /// Per study: annotators per scenario a study needs (from its fit as pilot data).
    #[serde(default)]
    pub plan: Vec<PlanRow>,
    /// Per study the planner does not plan from: why.
    #[serde(default)]
    pub plan_refused: Vec<PlanRefusal>,
    /// Each human cell's item scores (official), for the comparisons with systems.
    #[serde(skip)]
    pub items: BTreeMap<(String, u32), Matrix>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskColumn {
    pub name: String,
    pub family: Family,
}

/// The report: columns in the paper's grouping, rows of shots, and the tables both with all
/// finished annotators and without those the training filter flags.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub tasks: Vec<TaskColumn>,
    pub shots: Vec<u32>,
    pub annotators: Vec<AnnotatorScore>,
    /// Per study and scenario: the questionnaires' summaries (none without questionnaires).
    #[serde(default, skip_serializing_if = "Vec::is_empty", skip_deserializing)]
    pub questionnaires: Vec<ScenarioQuestions>,
    pub all: Tables,
    pub filtered: Tables,
    /// Without the annotators of low authenticity (the sensitivity analysis).
    #[serde(default)]
    pub authentic: Tables,
    /// Machine systems' scores per task and k over splits (the model track).
    #[serde(default)]
    pub machines: Vec<machine::MachineCell>,
    /// Reference answers' scores per task and k over the shot groups' splits (see `reference`).
    #[serde(default)]
    pub references: Vec<machine::MachineCell>,
    /// Machine accuracy per probability bin on label tasks (see `calibration`).
    #[serde(default)]
    pub calibration: Vec<calibration::BinRow>,
    /// Each study's shot group (the training file of each k) and whether it is nested.
    #[serde(default)]
    pub shot_groups: Vec<StudyShots>,
    /// What a reader must know about these numbers (e.g. a study whose sets are not nested).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Each study's analysis plan: declared, and frozen with its hash where it was.
    #[serde(default)]
    pub plans: Vec<StudyPlan>,
    /// Synthetic workers (made by `load fill`) in the tables: none unless asked for.
    #[serde(default)]
    pub synthetic_workers: usize,
}

/// A study's analysis plan as the report applied it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyPlan {
    pub study: StudyId,
    pub task: String,
    pub family: Vec<String>,
    pub primary: Option<String>,
    pub frozen: Option<super::FrozenPlan>,
}

/// A study's training files per k, as the report used them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyShots {
    pub study: StudyId,
    pub task: String,
    /// `(k, split)` of each k-shot scenario, k ascending.
    pub files: Vec<(u32, u32)>,
    /// Every smaller set lies within the next larger one.
    pub nested: bool,
}

/// Which annotators a set of tables covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    All,
    Filtered,
    Authentic,
}

impl Which {
    /// Every view, in the report's order.
    pub const VIEWS: [Which; 3] = [Which::All, Which::Filtered, Which::Authentic];

    pub fn id(self) -> &'static str {
        match self {
            Which::All => "all",
            Which::Filtered => "filtered",
            Which::Authentic => "authentic",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Which::All => "all finished annotators",
            Which::Filtered => "without the annotators the training filter flags",
            Which::Authentic => "without the annotators of low authenticity",
        }
    }
    pub fn of(self, r: &Report) -> &Tables {
        match self {
            Which::All => &r.all,
            Which::Filtered => &r.filtered,
            Which::Authentic => &r.authentic,
        }
    }

    pub fn of_mut(self, r: &mut Report) -> &mut Tables {
        match self {
            Which::All => &mut r.all,
            Which::Filtered => &mut r.filtered,
            Which::Authentic => &mut r.authentic,
        }
    }
}
