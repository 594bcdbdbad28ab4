//! The researcher's analysis of human annotations, pure and IO-free: per-annotator and
//! per-scenario S1 (the paper's Tables 5, 8 and 9), the training filter, majority vote,
//! agreement, confidence against correctness, time and pay.

pub mod agreement;
pub mod chart;
pub mod layout;
pub mod machine;
pub mod scores_csv;
pub mod table;
pub mod vote;

use crate::domain::crossfit::metrics::evaluate;
use crate::domain::s1::{mean, same_score, spread, Scoring, Spread};
use crate::domain::shots::{self, ShotFile};
use crate::domain::study::{flag_low_performers, StudyConfig};
use crate::domain::task::{Family, Gold, TaskSpec};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};

/// One item of an annotator's assignment, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRecord {
    pub training: bool,
    pub example_id: i64,
    /// Identifies the same item across files (the nesting of the training sets).
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
    pub assignment: i64,
    pub study: i64,
    pub worker: String,
    pub task: String,
    pub k: u32,
    /// `active`, `finished` or `abandoned`. Only finished annotators enter the tables.
    pub status: String,
    pub training_split: Option<u32>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub last_activity: i64,
    pub items: Vec<ItemRecord>,
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
    pub test_golds: HashMap<i64, Gold>,
    pub shot_sets: HashMap<(u32, u32), HashSet<String>>,
}

/// One annotator's line of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorScore {
    pub assignment: i64,
    pub study: i64,
    pub worker: String,
    pub task: String,
    pub k: u32,
    pub status: String,
    /// Test S1 over the submitted test items, a skip scoring 0.
    pub test_s1: Option<f64>,
    pub test_s1_any_of: Option<f64>,
    /// Test S1 over the test items answered (skips left out): the second view.
    pub test_s1_answered: Option<f64>,
    pub test_s1_answered_any_of: Option<f64>,
    pub training_s1: Option<f64>,
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
    /// Flagged by the study's training filter.
    pub flagged: bool,
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
    /// Per-annotator S1 over the answered test items (annotators who answered none left out).
    pub answered: Option<Spread>,
    pub answered_any_of: Option<Spread>,
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
    /// Items in the subset (of the first annotator's split).
    pub items: usize,
    pub spread: Spread,
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
    pub all: Tables,
    pub filtered: Tables,
    /// Machine systems' scores per task and k over splits (the model track).
    #[serde(default)]
    pub machines: Vec<machine::MachineCell>,
    /// Each study's shot group (the training file of each k) and whether it is nested.
    #[serde(default)]
    pub shot_groups: Vec<StudyShots>,
    /// What a reader must know about these numbers (e.g. a study whose sets are not nested).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A study's training files per k, as the report used them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyShots {
    pub study: i64,
    pub task: String,
    /// `(k, split)` of each k-shot scenario, k ascending.
    pub files: Vec<(u32, u32)>,
    /// Every smaller set lies within the next larger one.
    pub nested: bool,
}

/// Pay in cents for `ms` milliseconds at `rate_cents` per hour, rounded half up.
pub fn pay_cents(ms: i64, rate_cents: u32) -> i64 {
    let cents = (i128::from(ms.max(0)) * i128::from(rate_cents) * 2 + 3_600_000) / 7_200_000;
    cents as i64
}

fn item_mean(items: &[&ItemRecord], get: impl Fn(&ItemRecord) -> Option<f64>) -> Option<f64> {
    let xs: Vec<f64> = items.iter().filter_map(|i| get(i)).collect();
    mean(&xs)
}

fn submitted<'a>(a: &'a AnnotatorRecord, training: bool) -> Vec<&'a ItemRecord> {
    a.items
        .iter()
        .filter(|i| i.training == training && i.submitted_at.is_some())
        .collect()
}

/// A corpus-level metric of a text-to-text task over (example id, answer) pairs; `None` for
/// other tasks and per-item metrics (those are means of the stored item scores).
fn corpus_score(data: &TaskData, answers: &[(i64, Option<String>)]) -> Option<Option<f64>> {
    let metric = data.spec.metric.filter(|m| m.is_corpus_level())?;
    let preds: Vec<String> = answers
        .iter()
        .map(|(_, a)| a.clone().unwrap_or_default())
        .collect();
    let golds: Vec<Vec<String>> = answers
        .iter()
        .map(|(id, _)| {
            data.test_golds
                .get(id)
                .map(|g| g.official.clone())
                .unwrap_or_default()
        })
        .collect();
    Some(evaluate(metric, &preds, &golds).ok().and_then(|s| s.value))
}

/// Test S1 (official, any-of) of some test items: the mean of the item scores, or the task's
/// corpus-level metric over them (a skip's empty answer is then a wrong prediction).
fn test_scores(data: &TaskData, items: &[&ItemRecord]) -> (Option<f64>, Option<f64>) {
    let answers: Vec<(i64, Option<String>)> = items
        .iter()
        .map(|i| {
            (
                i.example_id,
                i.answer.as_ref().and_then(|x| x.first().cloned()),
            )
        })
        .collect();
    match corpus_score(data, &answers) {
        Some(corpus) => (corpus, corpus),
        None => (
            item_mean(items, |i| i.score(Scoring::Official)),
            item_mean(items, |i| i.score(Scoring::AnyOf)),
        ),
    }
}

fn score_annotator(
    a: &AnnotatorRecord,
    data: &TaskData,
    rules: Option<&StudyRules>,
    flagged: bool,
) -> AnnotatorScore {
    let test = submitted(a, false);
    let answered: Vec<&ItemRecord> = test.iter().copied().filter(|i| !i.skipped).collect();
    let (test_s1, test_s1_any_of) = test_scores(data, &test);
    let (answered_s1, answered_any_of) = if answered.is_empty() {
        (None, None)
    } else {
        test_scores(data, &answered)
    };
    let training = submitted(a, true);
    let done: Vec<&ItemRecord> = a
        .items
        .iter()
        .filter(|i| i.submitted_at.is_some())
        .collect();
    let on_items: i64 = done
        .iter()
        .filter_map(|i| Some(i.submitted_at? - i.shown_at?))
        .sum();
    let paid_ms = a.finished_at.unwrap_or(a.last_activity) - a.started_at;
    AnnotatorScore {
        assignment: a.assignment,
        study: a.study,
        worker: a.worker.clone(),
        task: a.task.clone(),
        k: a.k,
        status: a.status.clone(),
        test_s1,
        test_s1_any_of,
        test_s1_answered: answered_s1,
        test_s1_answered_any_of: answered_any_of,
        training_s1: item_mean(&training, |i| i.score(Scoring::Official)),
        items_done: done.len(),
        items_total: a.items.len(),
        skips: done.iter().filter(|i| i.skipped).count(),
        test_done: test.len(),
        test_skips: test.len() - answered.len(),
        seconds_on_items: on_items as f64 / 1000.0,
        seconds: paid_ms.max(0) as f64 / 1000.0,
        pay_cents: rules.map_or(0, |r| pay_cents(paid_ms, r.hourly_rate_cents)),
        flagged,
    }
}

/// The assignments the training filter flags: per study and scenario, among its finished
/// k-shot annotators, those more than the study's margin below the others' mean training S1.
pub fn flagged<'a>(
    annotators: impl IntoIterator<Item = &'a AnnotatorRecord>,
    rules: &HashMap<i64, StudyRules>,
) -> HashSet<i64> {
    let mut groups: HashMap<(i64, u32), Vec<(i64, f64)>> = HashMap::new();
    for a in annotators
        .into_iter()
        .filter(|a| a.status == "finished" && a.k > 0)
    {
        if let Some(s) = item_mean(&submitted(a, true), |i| i.score(Scoring::Official)) {
            groups
                .entry((a.study, a.k))
                .or_default()
                .push((a.assignment, s));
        }
    }
    groups
        .into_iter()
        .flat_map(|((study, _), scores)| {
            let margin = rules.get(&study).map_or(f64::INFINITY, |r| r.filter_margin);
            flag_low_performers(&scores, margin)
        })
        .collect()
}

/// Builds the whole report. `tasks` by task name; annotators of unknown tasks are ignored.
pub fn build(
    tasks: &HashMap<String, TaskData>,
    annotators: &[AnnotatorRecord],
    rules: &HashMap<i64, StudyRules>,
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
        .filter(|a| a.status == "finished")
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
    let by_assignment: HashMap<i64, &AnnotatorScore> =
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
        tasks: columns,
        machines: Vec::new(),
    }
}

/// Each study's training files with whether they nest, and a note for each that does not.
fn shot_groups(
    tasks: &HashMap<String, TaskData>,
    annotators: &[&AnnotatorRecord],
    rules: &HashMap<i64, StudyRules>,
) -> (Vec<StudyShots>, Vec<String>) {
    let studies: BTreeSet<(i64, &str)> = annotators
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
fn scenario<'a>(group: &[&'a AnnotatorRecord], task: &str, k: u32) -> Vec<&'a AnnotatorRecord> {
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
    scored: &HashMap<i64, &AnnotatorScore>,
    rules: &HashMap<i64, StudyRules>,
) -> Tables {
    let mut t = Tables::default();
    for col in columns {
        let data = &tasks[&col.name];
        let ks: BTreeSet<u32> = group
            .iter()
            .filter(|a| a.task == col.name)
            .map(|a| a.k)
            .collect();
        for &k in &ks {
            let annotators = scenario(group, &col.name, k);
            let scores: Vec<&AnnotatorScore> =
                annotators.iter().map(|a| scored[&a.assignment]).collect();
            let of = |f: fn(&AnnotatorScore) -> Option<f64>| {
                spread(&scores.iter().filter_map(|s| f(s)).collect::<Vec<_>>())
            };
            if let (Some(official), Some(any_of)) = (of(|s| s.test_s1), of(|s| s.test_s1_any_of)) {
                t.main.push(Cell {
                    task: col.name.clone(),
                    k,
                    official,
                    any_of,
                    test_items: scores.iter().map(|s| s.test_done).sum(),
                    skipped: scores.iter().map(|s| s.test_skips).sum(),
                    answered: of(|s| s.test_s1_answered),
                    answered_any_of: of(|s| s.test_s1_answered_any_of),
                });
            }
            t.scenarios.push(aggregate(data, k, &annotators));
        }
        training_tables(&mut t, data, &col.name, &ks, group, rules);
        t.confidence.extend(confidence(data, &col.name, group));
    }
    t
}

/// Tables 8 and 9 for one task: with the two largest training sizes `mid < max` (20 and 30
/// in the paper), S1 of the mid and max groups on the mid-shot items, and of the max group on
/// the max-shot items not in the mid-shot set. Each annotator on the files of their study's
/// shot group (e.g. 20_5 and 30_5 for SQuAD v2's chain 10_1 ⊂ 20_5 ⊂ 30_5).
fn training_tables(
    t: &mut Tables,
    data: &TaskData,
    task: &str,
    ks: &BTreeSet<u32>,
    group: &[&AnnotatorRecord],
    rules: &HashMap<i64, StudyRules>,
) {
    let sizes: Vec<u32> = ks.iter().copied().filter(|&k| k > 0).collect();
    let [.., mid, max] = sizes[..] else {
        return;
    };
    let empty = HashSet::new();
    // The annotator's k-shot file: their study's chain, else their own split.
    let set = |a: &AnnotatorRecord, k: u32| {
        rules
            .get(&a.study)
            .and_then(|r| r.split_for(k))
            .or(a.training_split)
            .and_then(|s| data.shot_sets.get(&(k, s)))
            .unwrap_or(&empty)
    };
    let cell = |group_k: u32, subset: Subset| -> Option<SubsetCell> {
        let annotators = scenario(group, task, group_k);
        let in_subset = |a: &AnnotatorRecord, key: &str| match subset {
            Subset::Shots { k } => set(a, k).contains(key),
            Subset::NewIn { k, without } => {
                set(a, k).contains(key) && !set(a, without).contains(key)
            }
        };
        let scores: Vec<f64> = annotators
            .iter()
            .filter_map(|a| {
                let items: Vec<&ItemRecord> = submitted(a, true)
                    .into_iter()
                    .filter(|i| in_subset(a, &i.content_key))
                    .collect();
                item_mean(&items, |i| i.score(Scoring::Official))
            })
            .collect();
        let items = annotators.first().map_or(0, |a| {
            a.items
                .iter()
                .filter(|i| i.training && in_subset(a, &i.content_key))
                .count()
        });
        Some(SubsetCell {
            task: task.to_string(),
            group_k,
            spread: spread(&scores)?,
            subset,
            items,
        })
    };
    t.table8.extend(
        [mid, max]
            .into_iter()
            .filter_map(|g| cell(g, Subset::Shots { k: mid })),
    );
    t.table9.extend(cell(
        max,
        Subset::NewIn {
            k: max,
            without: mid,
        },
    ));
}

type Ballots = HashMap<i64, Vec<Option<Vec<String>>>>;

/// The test examples the annotators answered (sorted ids) and each one's ballots, one per
/// annotator in order (`None`: skipped or not answered).
fn ballots(annotators: &[&AnnotatorRecord]) -> (Vec<i64>, Ballots) {
    let mut examples: Vec<i64> = Vec::new();
    let mut ballots: Ballots = HashMap::new();
    for (n, a) in annotators.iter().enumerate() {
        for i in a.items.iter().filter(|i| !i.training) {
            let row = ballots.entry(i.example_id).or_insert_with(|| {
                examples.push(i.example_id);
                vec![None; annotators.len()]
            });
            row[n] = i.answer.clone().filter(|_| !i.skipped);
        }
    }
    examples.sort_unstable();
    (examples, ballots)
}

fn vote_on(spec: &TaskSpec, ballots: &[Option<Vec<String>>]) -> vote::Vote {
    let cast: Vec<&[String]> = ballots.iter().flatten().map(Vec::as_slice).collect();
    if matches!(spec.family, Family::Classification | Family::TextToText) {
        vote::plurality(&cast, &spec.label_names())
    } else {
        vote::span_majority(&cast)
    }
}

/// The majority answer (internal encoding) of each test example the annotators answered.
pub fn majority(spec: &TaskSpec, annotators: &[&AnnotatorRecord]) -> Vec<(i64, vote::Vote)> {
    let (examples, ballots) = ballots(annotators);
    examples
        .into_iter()
        .map(|id| (id, vote_on(spec, &ballots[&id])))
        .collect()
}

/// The finished annotators of one task and k, without the flagged ones if `filtered`.
pub fn scenario_annotators<'a>(
    annotators: &'a [AnnotatorRecord],
    flags: &HashSet<i64>,
    task: &str,
    k: u32,
    filtered: bool,
) -> Vec<&'a AnnotatorRecord> {
    annotators
        .iter()
        .filter(|a| a.task == task && a.k == k && a.status == "finished")
        .filter(|a| !(filtered && flags.contains(&a.assignment)))
        .collect()
}

/// Majority vote S1 and agreement of one scenario's annotators on the test items.
fn aggregate(data: &TaskData, k: u32, annotators: &[&AnnotatorRecord]) -> ScenarioAggregate {
    let spec = &data.spec;
    let labels = spec.label_names();
    let is_label = spec.family == Family::Classification;
    let (examples, ballots) = ballots(annotators);
    let (mut official, mut any_of, mut ties) = (Vec::new(), Vec::new(), 0);
    let mut voted: Vec<(i64, Option<String>)> = Vec::new();
    for id in &examples {
        let v = vote_on(spec, &ballots[id]);
        ties += usize::from(v.tie);
        voted.push((*id, v.answer.first().cloned()));
        if let Some(gold) = data.test_golds.get(id) {
            let pred = spec.to_official(&v.answer);
            official.push(spec.score(gold, &pred, Scoring::Official));
            any_of.push(spec.score(gold, &pred, Scoring::AnyOf));
        }
    }
    let agreement = if is_label {
        let rows: Vec<Vec<usize>> = examples
            .iter()
            .filter(|id| ballots[id].iter().all(Option::is_some))
            .map(|id| {
                let mut row = vec![0; labels.len()];
                for b in ballots[id].iter().flatten() {
                    if let Some(j) = b.first().and_then(|l| labels.iter().position(|x| x == l)) {
                        row[j] += 1;
                    }
                }
                row
            })
            .collect();
        Agreement {
            measure: "Fleiss' kappa".into(),
            value: agreement::fleiss_kappa(&rows),
            items: rows.len(),
        }
    } else {
        let per_annotator: Vec<Vec<Option<Vec<String>>>> = (0..annotators.len())
            .map(|n| examples.iter().map(|id| ballots[id][n].clone()).collect())
            .collect();
        let shared = examples
            .iter()
            .filter(|id| ballots[id].iter().filter(|b| b.is_some()).count() >= 2)
            .count();
        Agreement {
            measure: "mean pairwise S1".into(),
            value: agreement::mean_pairwise_s1(&per_annotator).map(|(v, _)| v),
            items: shared,
        }
    };
    let corpus = corpus_score(data, &voted).map(|v| v.unwrap_or(0.0));
    ScenarioAggregate {
        task: spec.name.clone(),
        k,
        annotators: annotators.len(),
        items: official.len(),
        majority_s1: corpus.unwrap_or_else(|| mean(&official).unwrap_or(0.0)),
        majority_s1_any_of: corpus.unwrap_or_else(|| mean(&any_of).unwrap_or(0.0)),
        ties,
        agreement,
    }
}

/// Accuracy per confidence level over the test answers of a label task (skips left out).
fn confidence(data: &TaskData, task: &str, group: &[&AnnotatorRecord]) -> Vec<ConfidenceRow> {
    if data.spec.family != Family::Classification {
        return Vec::new();
    }
    let answers: Vec<(u8, bool)> = group
        .iter()
        .filter(|a| a.task == task)
        .flat_map(|a| submitted(a, false))
        .filter(|i| !i.skipped)
        .filter_map(|i| Some((i.confidence?, same_score(i.s1?, 1.0))))
        .collect();
    crate::domain::answer::CONFIDENCE_LEVELS
        .iter()
        .map(|&(level, _)| {
            let at: Vec<bool> = answers
                .iter()
                .filter(|(l, _)| *l == level)
                .map(|(_, c)| *c)
                .collect();
            let correct = at.iter().filter(|c| **c).count();
            ConfidenceRow {
                task: task.to_string(),
                level,
                answers: at.len(),
                correct,
                accuracy: (!at.is_empty()).then(|| correct as f64 / at.len() as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
