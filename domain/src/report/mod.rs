//! The researcher's analysis of human annotations, pure and IO-free: per-annotator and
//! per-scenario S1 (the paper's Tables 5, 8 and 9), the training filter, majority vote,
//! agreement, confidence against correctness, time and pay.

pub mod agreement;
mod annotator;
pub mod calibration;
pub mod draw;
pub mod inference;
pub mod machine;
pub mod order;
mod output;
pub mod reference;
mod scenario;
mod training;
pub mod vote;

pub use annotator::{flagged, pay_cents};
pub use output::*;
pub use scenario::{majority, scenario_annotators};

use crate::ids::{AssignmentId, ExampleId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::s1::{spread, Scoring};
use crate::shots::{self, ShotFile};
use crate::study::StudyConfig;
use crate::study_pages::questionnaire::summarize;
use crate::study_pages::{Questionnaires, Replies, Stage};
use crate::task::{Family, Gold, TaskSpec};
use annotator::score_annotator;
use inference::{human_matrix, Side, HUMANS};
use scenario::{aggregate, confidence};
use std::collections::{BTreeSet, HashMap, HashSet};
use training::training_tables;

/// One item of an annotator's assignment, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRecord {
    pub phase: Phase,
    pub example_id: ExampleId,
    /// Identifies the same item across files (the nesting of the training sets); only read
    /// for training items (`ssr::report::load` leaves it empty for test items).
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

/// The rules of a study the report applies: its pay rate, its training filter and its shot
/// group (the training file of each k, for Tables 8 and 9 and the nesting note).
#[derive(Clone, Debug, PartialEq)]
pub struct StudyRules {
    pub hourly_rate_cents: u32,
    pub filter_margin: f64,
    /// `(k, split)` of every k the study's chain names (at least its k-shot scenarios).
    pub files: Vec<ShotFile>,
    pub allow_unnested: bool,
    /// The filter's second criterion: more failed attention checks than this flags a worker.
    pub attention_max_failures: Option<u32>,
    /// The study's questionnaires, for their summaries.
    pub questionnaire: Questionnaires,
    /// Each worker saw the training examples in an order of their own.
    pub shuffle_training: bool,
}

impl StudyRules {
    /// The rules of a study configuration.
    pub fn of(config: &StudyConfig) -> Self {
        let mut files = config.scenario_files();
        for &f in &config.shot_group {
            if !files.iter().any(|x| x.0 == f.0) {
                files.push(f);
            }
        }
        files.sort_unstable();
        StudyRules {
            hourly_rate_cents: config.hourly_rate_cents,
            filter_margin: config.filter_margin,
            files,
            allow_unnested: config.allow_unnested,
            attention_max_failures: config.pages.attention_max_failures,
            questionnaire: config.pages.questionnaire.clone(),
            shuffle_training: config.shuffle_training,
        }
    }

    fn split_for(&self, k: u32) -> Option<u32> {
        self.files.iter().find(|f| f.0 == k).map(|f| f.1)
    }
}

/// What the report needs of a task: its spec, the gold of each test example (by example id)
/// and the content keys of each training shot group `(k, split)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskData {
    pub spec: TaskSpec,
    pub test_golds: HashMap<ExampleId, Gold>,
    pub shot_sets: HashMap<(u32, u32), HashSet<String>>,
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
    // Each annotator is scored once; the tables read these scores.
    let scores: Vec<AnnotatorScore> = annotators
        .iter()
        .map(|a| {
            score_annotator(
                a,
                &tasks[&a.task],
                rules.get(&a.study),
                flags.contains(&a.assignment),
            )
        })
        .collect();
    let by_assignment: HashMap<AssignmentId, &AnnotatorScore> =
        scores.iter().map(|s| (s.assignment, s)).collect();
    let (shot_groups, notes) = shot_groups(tasks, &annotators, rules);
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
        annotators: scores,
        questionnaires: questionnaires(&annotators, rules),
        tasks: columns,
        machines: Vec::new(),
        references: Vec::new(),
        calibration: Vec::new(),
    }
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

fn tables(
    tasks: &HashMap<String, TaskData>,
    columns: &[TaskColumn],
    group: &[&AnnotatorRecord],
    scored: &HashMap<AssignmentId, &AnnotatorScore>,
    rules: &HashMap<StudyId, StudyRules>,
) -> Tables {
    let mut t = Tables::default();
    for col in columns {
        let data = &tasks[&col.name];
        let ks: BTreeSet<u32> = group
            .iter()
            .filter(|a| a.task == col.name)
            .map(|a| a.k)
            .collect();
        let mut pilot = Vec::new();
        // Per k: each annotator's (screening, test) S1, where every one of them has both.
        let mut screened: HashMap<u32, Vec<(f64, f64)>> = HashMap::new();
        for &k in &ks {
            let annotators = scenario(group, &col.name, k);
            let scores: Vec<&AnnotatorScore> =
                annotators.iter().map(|a| scored[&a.assignment]).collect();
            if let Some((cell, items)) = human_cell(data, &col.name, k, &annotators, &scores) {
                t.main.push(cell);
                let pairs: Option<Vec<(f64, f64)>> = scores
                    .iter()
                    .map(|s| Some((s.screening_s1?, s.test_s1?)))
                    .collect();
                screened.extend(pairs.map(|p| (k, p)));
                pilot.push(scores.iter().filter_map(|s| s.test_s1).collect());
                if let Some(items) = items {
                    t.items.insert((col.name.clone(), k), items);
                }
            }
            t.scenarios.push(aggregate(data, k, &annotators));
        }
        compare_scenarios(&mut t, &col.name, &ks, &screened);
        t.plan.extend(inference::plan(&col.name, &pilot));
        training_tables(&mut t, data, &col.name, &ks, group, rules);
        t.order
            .extend(order::order_cells(&col.name, &ks, group, scored, rules));
        t.confidence.extend(confidence(data, &col.name, group));
    }
    inference::adjust(&mut t.comparisons);
    t
}

/// The Table 5 cell of a scenario (none without a finished annotator), with the item matrix
/// its intervals come from where S1 is a mean over items.
fn human_cell(
    data: &TaskData,
    task: &str,
    k: u32,
    annotators: &[&AnnotatorRecord],
    scores: &[&AnnotatorScore],
) -> Option<(Cell, Option<inference::Matrix>)> {
    let values = |f: fn(&AnnotatorScore) -> Option<f64>| {
        scores.iter().filter_map(|s| f(s)).collect::<Vec<_>>()
    };
    let of = |f: fn(&AnnotatorScore) -> Option<f64>| spread(&values(f));
    let (official, any_of) = (of(|s| s.test_s1)?, of(|s| s.test_s1_any_of)?);
    // A corpus-level metric (CrossFit's F1, MCC, ...) is not a mean over items: its cells get
    // the t-interval only, and no item-level comparison.
    let per_item = !data.spec.metric.is_some_and(|m| m.is_corpus_level());
    let matrix = |scoring| {
        if per_item {
            human_matrix(annotators, scoring)
        } else {
            inference::Matrix::default()
        }
    };
    let items = matrix(Scoring::Official);
    let name = |scoring: &str| format!("{task}|humans k={k}|{scoring}");
    let cell = Cell {
        task: task.to_string(),
        k,
        official,
        any_of,
        test_items: scores.iter().map(|s| s.test_done).sum(),
        skipped: scores.iter().map(|s| s.test_skips).sum(),
        answered: of(|s| s.test_s1_answered),
        answered_any_of: of(|s| s.test_s1_answered_any_of),
        official_ci: Some(inference::uncertainty(
            &values(|s| s.test_s1),
            &items,
            &name("official"),
        )),
        any_of_ci: Some(inference::uncertainty(
            &values(|s| s.test_s1_any_of),
            &matrix(Scoring::AnyOf),
            &name("any-of"),
        )),
        screening: of(|s| s.screening_s1),
    };
    Some((cell, per_item.then_some(items)))
}

/// Each scenario of `task` against the next smaller one (zero-shot against 10, 10 against
/// 20, ...), adjusted for the screening S1 where both groups have it.
fn compare_scenarios(
    t: &mut Tables,
    task: &str,
    ks: &BTreeSet<u32>,
    screened: &HashMap<u32, Vec<(f64, f64)>>,
) {
    let scenarios: Vec<u32> = ks
        .iter()
        .copied()
        .filter(|&k| t.items.contains_key(&(task.to_string(), k)))
        .collect();
    for pair in scenarios.windows(2) {
        let side = |k: u32| {
            let m = &t.items[&(task.to_string(), k)];
            (
                Side {
                    who: HUMANS.into(),
                    k,
                    units: m.rows.len(),
                },
                m,
            )
        };
        if let Some(mut c) = inference::compare(task, side(pair[0]), side(pair[1])) {
            if let (Some(a), Some(b)) = (screened.get(&pair[0]), screened.get(&pair[1])) {
                c.adjusted = inference::adjusted(a, b);
            }
            t.comparisons.push(c);
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_inference;
