//! The researcher's analysis of human annotations, pure and IO-free: per-annotator and
//! per-scenario S1 (the paper's Tables 5, 8 and 9), the training filter, majority vote,
//! agreement, confidence against correctness, time and pay.

pub mod agreement;
mod annotator;
pub mod authenticity;
pub mod calibration;
mod cells;
pub mod draw;
pub mod inference;
pub mod machine;
pub mod order;
mod output;
pub mod reference;
mod rules;
mod scenario;
pub mod shared_errors;
mod training;
pub mod vote;

pub use annotator::{flagged, pay_cents};
pub use output::*;
pub use rules::{FrozenPlan, StudyRules};
pub use scenario::{majority, scenario_annotators};

use crate::authenticity::Level;
use crate::ids::{AssignmentId, ExampleId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::s1::Scoring;
use crate::shots;
use crate::study_pages::questionnaire::summarize;
use crate::study_pages::{Replies, Stage};
use crate::task::{Family, Gold, TaskSpec};
use annotator::score_annotator;
use cells::tables;
use std::collections::{BTreeSet, HashMap, HashSet};

/// One item of an annotator's assignment, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRecord {
    pub phase: Phase,
    pub example_id: ExampleId,
    /// Identifies the same item across files (the nesting of the training sets); only read
    /// for training items (`store::report::load` leaves it empty for test items).
    pub content_key: String,
    /// The answer's span strings (internal encoding: empty for "no answer" and for a skip);
    /// `None` while not submitted.
    pub answer: Option<Vec<String>>,
    pub skipped: bool,
    pub confidence: Option<u8>,
    pub s1: Option<f64>,
    pub s1_any_of: Option<f64>,
    pub shown_at: Option<i64>,
    pub submitted_at: Option<i64>,
    /// What the worker's page recorded while the item was shown (absent from older pages).
    pub signals: Option<crate::authenticity::ItemSignals>,
}

impl ItemRecord {
    /// The item's score under a scoring: a skip is not an answer and scores 0 whatever was
    /// stored for it (see `Answer::score`); `None` while not submitted.
    pub fn score(&self, scoring: Scoring) -> Option<f64> {
        if self.skipped && self.submitted_at.is_some() {
            return Some(0.0);
        }
        match scoring {
            Scoring::Official => self.s1,
            Scoring::AnyOf => self.s1_any_of,
        }
    }
}

/// A worker's place in a scenario with everything they did; times in unix milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct AnnotatorRecord {
    pub assignment: AssignmentId,
    pub study: StudyId,
    pub worker: String,
    pub task: String,
    pub k: u32,
    /// Only finished annotators enter the tables.
    pub status: PlaceStatus,
    pub training_split: Option<u32>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub last_activity: i64,
    pub items: Vec<ItemRecord>,
    /// What the worker did on the study's own pages.
    pub pages: PageRecord,
}

/// A worker's questionnaires and attention checks; times in unix milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageRecord {
    /// Per answered attention check (in the study's order): whether it passed.
    pub attention: Vec<bool>,
    /// When the questionnaire after the test was answered: paid time runs to it.
    pub after_at: Option<i64>,
    /// Time on the questionnaires (answer minus first showing): paid, not item time.
    pub questionnaire_ms: i64,
    pub replies: Vec<(Stage, Replies)>,
}

/// What the report needs of a task: its spec, the gold of each test example (by example id)
/// and the content keys of each training shot group `(k, split)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskData {
    pub spec: TaskSpec,
    pub test_golds: HashMap<ExampleId, Gold>,
    pub shot_sets: HashMap<(u32, u32), HashSet<String>>,
    /// Words of each test item (context and question): the reading floor's measure.
    pub words: HashMap<ExampleId, u32>,
    /// Each finished system run's answers on the test items (machine agreement).
    pub systems: Vec<authenticity::SystemAnswers>,
}

/// Builds the whole report. `tasks` by task name; annotators of unknown tasks are ignored.
pub fn build(
    tasks: &HashMap<String, TaskData>,
    annotators: &[AnnotatorRecord],
    rules: &HashMap<StudyId, StudyRules>,
) -> Report {
    let annotators: Vec<&AnnotatorRecord> = annotators
        .iter()
        .filter(|a| tasks.contains_key(&a.task))
        .collect();
    let flags = flagged(annotators.iter().copied(), rules);
    let mut authenticity = authenticity::assess(&annotators, tasks);
    let mut columns: Vec<TaskColumn> = annotators
        .iter()
        .map(|a| a.task.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|name| TaskColumn {
            family: tasks[&name].spec.family,
            name,
        })
        .collect();
    columns.sort_by_key(|c| (family_rank(c.family), c.name.clone()));
    let finished: Vec<&AnnotatorRecord> = annotators
        .iter()
        .copied()
        .filter(|a| a.status == PlaceStatus::Finished)
        .collect();
    let kept: Vec<&AnnotatorRecord> = finished
        .iter()
        .copied()
        .filter(|a| !flags.contains(&a.assignment))
        .collect();
    let authentic: Vec<&AnnotatorRecord> = finished
        .iter()
        .copied()
        .filter(|a| authenticity.get(&a.assignment).map(|x| x.level) != Some(Level::Low))
        .collect();
    // Each annotator is scored once; the tables read these scores.
    let scores: Vec<AnnotatorScore> = annotators
        .iter()
        .map(|a| {
            let mut s = score_annotator(
                a,
                &tasks[&a.task],
                rules.get(&a.study),
                flags.contains(&a.assignment),
            );
            s.authenticity = authenticity.remove(&a.assignment);
            s
        })
        .collect();
    let by_assignment: HashMap<AssignmentId, &AnnotatorScore> =
        scores.iter().map(|s| (s.assignment, s)).collect();
    let (shot_groups, mut notes) = shot_groups(tasks, &annotators, rules);
    let plans = study_plans(&annotators, rules, &mut notes);
    Report {
        shot_groups,
        notes,
        shots: annotators
            .iter()
            .map(|a| a.k)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        all: tables(tasks, &columns, &finished, &by_assignment, rules),
        filtered: tables(tasks, &columns, &kept, &by_assignment, rules),
        authentic: tables(tasks, &columns, &authentic, &by_assignment, rules),
        annotators: scores,
        questionnaires: questionnaires(&annotators, rules),
        tasks: columns,
        machines: Vec::new(),
        references: Vec::new(),
        calibration: Vec::new(),
        plans,
        synthetic_workers: 0,
    }
}

/// Each study's plan as applied, and a note for a study whose data began before its plan was
/// frozen or that departs from its frozen plan.
fn study_plans(
    annotators: &[&AnnotatorRecord],
    rules: &HashMap<StudyId, StudyRules>,
    notes: &mut Vec<String>,
) -> Vec<StudyPlan> {
    let studies: BTreeSet<(StudyId, &str)> = annotators
        .iter()
        .map(|a| (a.study, a.task.as_str()))
        .collect();
    let mut out = Vec::new();
    for (study, task) in studies {
        let Some(r) = rules.get(&study) else { continue };
        match &r.frozen {
            None => notes.push(format!(
                "Study {study} ({task}): its data began before an analysis plan was frozen, so its comparisons are exploratory."
            )),
            Some(f) => notes.extend(f.deviations.iter().map(|d| {
                format!("Study {study} ({task}) departs from its frozen analysis plan: {d}.")
            })),
        }
        out.push(StudyPlan {
            study,
            task: task.to_string(),
            family: r.family.iter().map(|c| c.label.clone()).collect(),
            primary: r.primary.clone(),
            frozen: r.frozen.clone(),
        });
    }
    out
}

/// The summary of each study's questionnaires per scenario, over the workers who answered.
fn questionnaires(
    annotators: &[&AnnotatorRecord],
    rules: &HashMap<StudyId, StudyRules>,
) -> Vec<ScenarioQuestions> {
    let groups: BTreeSet<(StudyId, &str, u32)> = annotators
        .iter()
        .filter(|a| !a.pages.replies.is_empty())
        .map(|a| (a.study, a.task.as_str(), a.k))
        .collect();
    let mut out = Vec::new();
    for (study, task, k) in groups {
        let Some(r) = rules.get(&study) else { continue };
        let group: Vec<&AnnotatorRecord> = annotators
            .iter()
            .copied()
            .filter(|a| a.study == study && a.k == k)
            .collect();
        let mut questions = Vec::new();
        for stage in [Stage::Before, Stage::After] {
            let replies: Vec<&Replies> = group
                .iter()
                .flat_map(|a| a.pages.replies.iter())
                .filter(|(s, _)| *s == stage)
                .map(|(_, r)| r)
                .collect();
            questions.extend(summarize(stage, r.questionnaire.of(stage), &replies));
        }
        out.push(ScenarioQuestions {
            study,
            task: task.to_string(),
            k,
            workers: group.iter().filter(|a| !a.pages.replies.is_empty()).count(),
            questions,
        });
    }
    out
}

/// Each study's training files with whether they nest, and a note for each that does not.
fn shot_groups(
    tasks: &HashMap<String, TaskData>,
    annotators: &[&AnnotatorRecord],
    rules: &HashMap<StudyId, StudyRules>,
) -> (Vec<StudyShots>, Vec<String>) {
    let studies: BTreeSet<(StudyId, &str)> = annotators
        .iter()
        .map(|a| (a.study, a.task.as_str()))
        .collect();
    let mut groups = Vec::new();
    let mut notes = Vec::new();
    for (study, task) in studies {
        let Some(r) = rules.get(&study) else { continue };
        let broken = shots::not_nested(&tasks[task].shot_sets, &r.files);
        if let Some(&(small, big)) = broken.first() {
            notes.push(format!(
                "Study {study} ({task}): the training sets are not nested ({} is not within {}){}, so its larger-shot workers did not train on the smaller sets' items; Tables 8 and 9 compare different items for this study.",
                shots::file_name(small),
                shots::file_name(big),
                if r.allow_unnested { "; the admin allowed this" } else { "" },
            ));
        }
        groups.push(StudyShots {
            study,
            task: task.to_string(),
            files: r.files.clone(),
            nested: broken.is_empty(),
        });
    }
    (groups, notes)
}

pub(crate) fn family_rank(f: Family) -> u8 {
    match f {
        Family::Classification => 0,
        Family::SequenceLabelling => 1,
        Family::ReadingComprehension => 2,
        Family::TextToText => 3,
    }
}

/// Annotators of one task and k, in a stable order.
pub(super) fn scenario<'a>(
    group: &[&'a AnnotatorRecord],
    task: &str,
    k: u32,
) -> Vec<&'a AnnotatorRecord> {
    group
        .iter()
        .copied()
        .filter(|a| a.task == task && a.k == k)
        .collect()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_authenticity;
#[cfg(test)]
mod tests_degenerate;
#[cfg(test)]
mod tests_inference;
#[cfg(test)]
mod tests_machine;
