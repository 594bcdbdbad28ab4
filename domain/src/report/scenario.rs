//! One scenario's annotators together: the majority vote (a skip is an abstention), Fleiss'
//! kappa or mean pairwise S1, and accuracy per confidence level.

use super::annotator::{corpus_score, submitted};
use super::{
    agreement, vote, Agreement, AnnotatorRecord, ConfidenceRow, ScenarioAggregate, TaskData,
};
use crate::ids::AssignmentId;
use crate::ids::ExampleId;
use crate::place::{Phase, PlaceStatus};
use crate::s1::{mean, same_score, Scoring};
use crate::task::{Family, TaskSpec};
use std::collections::{HashMap, HashSet};

type Ballots = HashMap<ExampleId, Vec<Option<Vec<String>>>>;

/// The test examples the annotators answered (sorted ids) and each one's ballots, one per
/// annotator in order (`None`: skipped or not answered).
fn ballots(annotators: &[&AnnotatorRecord]) -> (Vec<ExampleId>, Ballots) {
    let mut examples: Vec<ExampleId> = Vec::new();
    let mut ballots: Ballots = HashMap::new();
    for (n, a) in annotators.iter().enumerate() {
        for i in a.items.iter().filter(|i| i.phase == Phase::Test) {
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

/// The vote on one item; `None` when every annotator skipped it: a skip is never a vote (for
/// "no answer" or anything else), so the item has no majority answer and scores 0, as a skip.
fn vote_on(spec: &TaskSpec, ballots: &[Option<Vec<String>>]) -> Option<vote::Vote> {
    let cast: Vec<&[String]> = ballots.iter().flatten().map(Vec::as_slice).collect();
    if cast.is_empty() {
        return None;
    }
    Some(
        if matches!(spec.family, Family::Classification | Family::TextToText) {
            vote::plurality(&cast, &spec.label_names())
        } else {
            vote::span_majority(&cast)
        },
    )
}

/// The majority answer (internal encoding) of each test example the annotators answered;
/// `None` where they all skipped it.
pub fn majority(
    spec: &TaskSpec,
    annotators: &[&AnnotatorRecord],
) -> Vec<(ExampleId, Option<vote::Vote>)> {
    let (examples, ballots) = ballots(annotators);
    examples
        .into_iter()
        .map(|id| (id, vote_on(spec, &ballots[&id])))
        .collect()
}

/// The finished annotators of one task and k, without the flagged ones if `filtered`.
pub fn scenario_annotators<'a>(
    annotators: &'a [AnnotatorRecord],
    flags: &HashSet<AssignmentId>,
    task: &str,
    k: u32,
    filtered: bool,
) -> Vec<&'a AnnotatorRecord> {
    annotators
        .iter()
        .filter(|a| a.task == task && a.k == k && a.status == PlaceStatus::Finished)
        .filter(|a| !(filtered && flags.contains(&a.assignment)))
        .collect()
}

/// Majority vote S1 and agreement of one scenario's annotators on the test items.
pub(super) fn aggregate(
    data: &TaskData,
    k: u32,
    annotators: &[&AnnotatorRecord],
) -> ScenarioAggregate {
    let spec = &data.spec;
    let labels = spec.label_names();
    let is_label = spec.family == Family::Classification;
    let (examples, ballots) = ballots(annotators);
    let (mut official, mut any_of, mut ties) = (Vec::new(), Vec::new(), 0);
    let mut voted: Vec<(ExampleId, Option<String>)> = Vec::new();
    for id in &examples {
        let v = vote_on(spec, &ballots[id]);
        ties += usize::from(v.as_ref().is_some_and(|v| v.tie));
        voted.push((*id, v.as_ref().and_then(|v| v.answer.first().cloned())));
        if let Some(gold) = data.test_golds.get(id) {
            let (o, a) = match &v {
                Some(v) => {
                    let pred = spec.to_official(&v.answer);
                    (
                        spec.score(gold, &pred, Scoring::Official),
                        spec.score(gold, &pred, Scoring::AnyOf),
                    )
                }
                None => (0.0, 0.0),
            };
            official.push(o);
            any_of.push(a);
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
pub(super) fn confidence(
    data: &TaskData,
    task: &str,
    group: &[&AnnotatorRecord],
) -> Vec<ConfidenceRow> {
    if data.spec.family != Family::Classification {
        return Vec::new();
    }
    let answers: Vec<(u8, bool)> = group
        .iter()
        .filter(|a| a.task == task)
        .flat_map(|a| submitted(a, Phase::Test))
        .filter(|i| !i.skipped)
        .filter_map(|i| Some((i.confidence?, same_score(i.s1?, 1.0))))
        .collect();
    crate::answer::CONFIDENCE_LEVELS
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
