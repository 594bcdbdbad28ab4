//! The tables of one set of annotators (all finished ones, or without the flagged): each task's
//! Table 5 cells with their intervals and skips, each study's family of comparisons and
//! planner row, Tables 8 and 9, the training order, majority vote, agreement and confidence.

use super::inference::{self, human_matrix};
use super::scenario::{aggregate, confidence};
use super::training::training_tables;
use super::{
    order, scenario, AnnotatorRecord, AnnotatorScore, Cell, SkipsByGold, StudyRules, Tables,
    TaskColumn, TaskData,
};
use crate::ids::{AssignmentId, StudyId};
use crate::place::Phase;
use crate::s1::{spread, Scoring};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(super) fn tables(
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
        let mut per_item = false;
        for &k in &ks {
            let annotators = scenario(group, &col.name, k);
            let scores: Vec<&AnnotatorScore> =
                annotators.iter().map(|a| scored[&a.assignment]).collect();
            if let Some((cell, items)) = human_cell(data, &col.name, k, &annotators, &scores) {
                t.main.push(cell);
                if let Some(items) = items {
                    per_item = true;
                    t.items.insert((col.name.clone(), k), items);
                }
            }
            t.scenarios.push(aggregate(data, k, &annotators));
        }
        if per_item {
            study_families(&mut t, &col.name, group, scored, rules);
        }
        training_tables(&mut t, data, &col.name, &ks, group, rules);
        t.order
            .extend(order::order_cells(&col.name, &ks, group, scored, rules));
        t.confidence.extend(confidence(data, &col.name, group));
    }
    t
}

/// Each study's declared family of scenario comparisons on its own annotators (Holm within
/// it: the family never depends on the other studies in scope), and its planner row.
fn study_families(
    t: &mut Tables,
    task: &str,
    group: &[&AnnotatorRecord],
    scored: &HashMap<AssignmentId, &AnnotatorScore>,
    rules: &HashMap<StudyId, StudyRules>,
) {
    let studies: BTreeSet<StudyId> = group
        .iter()
        .filter(|a| a.task == task)
        .map(|a| a.study)
        .collect();
    for study in studies {
        let Some(r) = rules.get(&study) else { continue };
        let mine: Vec<&AnnotatorRecord> = group
            .iter()
            .copied()
            .filter(|a| a.task == task && a.study == study)
            .collect();
        let mut scenarios = BTreeMap::new();
        // Per k: each annotator's (screening, test) S1, where every one of them has both.
        let mut screened: HashMap<u32, Vec<(f64, f64)>> = HashMap::new();
        for k in mine.iter().map(|a| a.k).collect::<BTreeSet<u32>>() {
            let annotators = scenario(&mine, task, k);
            scenarios.insert(k, human_matrix(&annotators, Scoring::Official));
            let pairs: Option<Vec<(f64, f64)>> = annotators
                .iter()
                .map(|a| {
                    let s = scored[&a.assignment];
                    Some((s.screening_s1?, s.test_s1?))
                })
                .collect();
            screened.extend(pairs.map(|p| (k, p)));
        }
        let (comparisons, fit) = inference::study_family(&inference::FamilyInput {
            task,
            study,
            family: &r.family,
            primary: r.primary.as_deref(),
            frozen: r.frozen.is_some(),
            alpha: r.alpha,
            scenarios: &scenarios,
            screened: &screened,
        });
        t.comparisons.extend(comparisons);
        match fit.as_ref().map(|f| inference::plan(f, r.alpha)) {
            Some(Ok(row)) => t.plan.push(row),
            Some(Err(refusal)) => t.plan_refused.push(refusal),
            None => {}
        }
    }
}

/// Test items skipped and submitted, apart for items whose gold is empty (where "no answer"
/// is right) and items whose gold is not.
fn skips_by_gold(data: &TaskData, annotators: &[&AnnotatorRecord]) -> SkipsByGold {
    let mut out = SkipsByGold::default();
    for i in annotators
        .iter()
        .flat_map(|a| a.items.iter())
        .filter(|i| i.phase == Phase::Test && i.submitted_at.is_some())
    {
        let empty = data
            .test_golds
            .get(&i.example_id)
            .is_some_and(|g| g.spans.is_empty());
        let side = if empty {
            &mut out.empty_gold
        } else {
            &mut out.with_gold
        };
        side.submitted += 1;
        side.skipped += usize::from(i.skipped);
    }
    out
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
    // the interval over annotators only, and no item-level comparison.
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
        skips_by_gold: skips_by_gold(data, annotators),
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
        splits: annotators
            .iter()
            .filter_map(|a| a.training_split)
            .collect::<BTreeSet<u32>>()
            .into_iter()
            .collect(),
    };
    Some((cell, per_item.then_some(items)))
}
