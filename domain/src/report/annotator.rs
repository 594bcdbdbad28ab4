//! One annotator's line of the report: test S1 (a skip scoring 0) and over answered items,
//! training S1, items, skips, time and pay; and the study's training filter over annotators.

use super::{AnnotatorRecord, AnnotatorScore, ItemRecord, StudyRules, TaskData};
use crate::crossfit::metrics::evaluate;
use crate::ids::ExampleId;
use crate::ids::{AssignmentId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::s1::{mean, Scoring};
use crate::study::flag_low_performers;
use crate::study_pages::attention::too_many_failures;
use std::collections::{HashMap, HashSet};

/// Pay in cents for `ms` milliseconds at `rate_cents` per hour, rounded half up.
pub fn pay_cents(ms: i64, rate_cents: u32) -> i64 {
    let cents = (i128::from(ms.max(0)) * i128::from(rate_cents) * 2 + 3_600_000) / 7_200_000;
    cents as i64
}

pub(super) fn item_mean(
    items: &[&ItemRecord],
    get: impl Fn(&ItemRecord) -> Option<f64>,
) -> Option<f64> {
    let xs: Vec<f64> = items.iter().filter_map(|i| get(i)).collect();
    mean(&xs)
}

/// The submitted items of one phase, in the order shown.
pub(super) fn submitted(a: &AnnotatorRecord, phase: Phase) -> Vec<&ItemRecord> {
    a.items
        .iter()
        .filter(|i| i.phase == phase && i.submitted_at.is_some())
        .collect()
}

/// A corpus-level metric of a text-to-text task over (example id, answer) pairs; `None` for
/// other tasks and per-item metrics (those are means of the stored item scores).
pub(super) fn corpus_score(
    data: &TaskData,
    answers: &[(ExampleId, Option<String>)],
) -> Option<Option<f64>> {
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
    let answers: Vec<(ExampleId, Option<String>)> = items
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

pub(super) fn score_annotator(
    a: &AnnotatorRecord,
    data: &TaskData,
    rules: Option<&StudyRules>,
    flagged: bool,
) -> AnnotatorScore {
    let test = submitted(a, Phase::Test);
    let answered: Vec<&ItemRecord> = test.iter().copied().filter(|i| !i.skipped).collect();
    let (test_s1, test_s1_any_of) = test_scores(data, &test);
    let (answered_s1, answered_any_of) = if answered.is_empty() {
        (None, None)
    } else {
        test_scores(data, &answered)
    };
    let training = submitted(a, Phase::Training);
    let done: Vec<&ItemRecord> = a
        .items
        .iter()
        .filter(|i| i.submitted_at.is_some())
        .collect();
    let on_items: i64 = done
        .iter()
        .filter_map(|i| Some(i.submitted_at? - i.shown_at?))
        .sum();
    let paid_ms = a
        .finished_at
        .unwrap_or(a.last_activity)
        .max(a.pages.after_at.unwrap_or(0))
        - a.started_at;
    let failed_attention = too_many_failures(
        &a.pages.attention,
        rules.and_then(|r| r.attention_max_failures),
    );
    AnnotatorScore {
        assignment: a.assignment,
        study: a.study,
        worker: a.worker.clone(),
        task: a.task.clone(),
        k: a.k,
        status: a.status,
        test_s1,
        test_s1_any_of,
        test_s1_answered: answered_s1,
        test_s1_answered_any_of: answered_any_of,
        training_s1: item_mean(&training, |i| i.score(Scoring::Official)),
        screening_s1: item_mean(&submitted(a, Phase::Screening), |i| {
            i.score(Scoring::Official)
        }),
        items_done: done.len(),
        items_total: a.items.len(),
        skips: done.iter().filter(|i| i.skipped).count(),
        test_done: test.len(),
        test_skips: test.len() - answered.len(),
        seconds_on_items: on_items as f64 / 1000.0,
        seconds: paid_ms.max(0) as f64 / 1000.0,
        pay_cents: rules.map_or(0, |r| pay_cents(paid_ms, r.hourly_rate_cents)),
        flagged,
        attention_answered: a.pages.attention.len(),
        attention_passed: a.pages.attention.iter().filter(|p| **p).count(),
        failed_attention,
        seconds_on_questionnaires: a.pages.questionnaire_ms as f64 / 1000.0,
        authenticity: None,
    }
}

/// The assignments the filter flags: per study and scenario, among its finished k-shot
/// annotators, those more than the study's margin below the others' mean training S1; and,
/// where the study sets a limit, every finished annotator who failed more attention checks.
pub fn flagged<'a>(
    annotators: impl IntoIterator<Item = &'a AnnotatorRecord>,
    rules: &HashMap<StudyId, StudyRules>,
) -> HashSet<AssignmentId> {
    let mut groups: HashMap<(StudyId, u32), Vec<(AssignmentId, f64)>> = HashMap::new();
    let mut flags = HashSet::new();
    for a in annotators
        .into_iter()
        .filter(|a| a.status == PlaceStatus::Finished)
    {
        let limit = rules.get(&a.study).and_then(|r| r.attention_max_failures);
        if too_many_failures(&a.pages.attention, limit) {
            flags.insert(a.assignment);
        }
        if a.k == 0 {
            continue;
        }
        if let Some(s) = item_mean(&submitted(a, Phase::Training), |i| {
            i.score(Scoring::Official)
        }) {
            groups
                .entry((a.study, a.k))
                .or_default()
                .push((a.assignment, s));
        }
    }
    flags.extend(groups.into_iter().flat_map(|((study, _), scores)| {
        let margin = rules.get(&study).map_or(f64::INFINITY, |r| r.filter_margin);
        flag_low_performers(&scores, margin)
    }));
    flags
}
