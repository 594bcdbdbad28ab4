//! Reference answers: each task's trivial answers computed from its own data (never drawn at
//! random), scored by the same S1 as humans and machines and shown beside them.

use super::machine::{add_columns, group_runs, MachineCell, MachineRun};
use super::vote::plurality;
use super::Report;
use crate::ids::ExampleId;
use crate::s1::{spread, Scoring};
use crate::task::{Example, Family, TaskSpec};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A trivial way of answering every test item of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// "No answer" on every item (span tasks, where it is an answer).
    NoAnswer,
    /// The label most of the k training shots have (ties: the task's label order), on every item.
    MajorityLabel,
    /// The entity an item lists most often (its mentions counted; ties: the first mentioned).
    ListedEntity,
    /// Every string the k shots gave as an entity of the question's type, wherever it occurs
    /// in the item's text as a whole word.
    Gazetteer,
}

impl Reference {
    pub const ALL: [Reference; 4] = [
        Reference::NoAnswer,
        Reference::MajorityLabel,
        Reference::ListedEntity,
        Reference::Gazetteer,
    ];

    /// The name its rows carry in every table, chart and export.
    pub fn name(self) -> &'static str {
        match self {
            Reference::NoAnswer => "Reference: always no answer",
            Reference::MajorityLabel => "Reference: majority label of the k shots",
            Reference::ListedEntity => "Reference: most often listed entity",
            Reference::Gazetteer => "Reference: gazetteer of the k shots' entities",
        }
    }

    /// Its definition, for the report's notes.
    pub fn describe(self) -> &'static str {
        match self {
            Reference::NoAnswer => "always no answer: the empty set on every item (span tasks whose items do not all list their candidate entities)",
            Reference::MajorityLabel => "the majority label of the k training shots (ties broken by the task's label order), the same label on every test item",
            Reference::ListedEntity => "on each item that lists its candidate entities (ReCoRD), the entity mentioned most often in its list (ties: the first mentioned)",
            Reference::Gazetteer => "every string the k training shots gave as an entity of the question's type, wherever it occurs in the test sentence as a whole word (NER)",
        }
    }

    /// Whether it depends on the k training shots (otherwise it is one answer per item).
    pub fn uses_shots(self) -> bool {
        matches!(self, Reference::MajorityLabel | Reference::Gazetteer)
    }

    /// The references that make sense on a task with these test items.
    pub fn of_task(spec: &TaskSpec, test: &[Example]) -> Vec<Reference> {
        Reference::ALL
            .into_iter()
            .filter(|r| match r {
                // Not where every item's answer is one of its listed entities (ReCoRD).
                Reference::NoAnswer => {
                    matches!(
                        spec.family,
                        Family::SequenceLabelling | Family::ReadingComprehension
                    ) && !test.iter().all(|e| !e.listed_entities().is_empty())
                }
                Reference::MajorityLabel => {
                    spec.family == Family::Classification && !spec.labels.is_empty()
                }
                Reference::ListedEntity => test.iter().any(|e| !e.listed_entities().is_empty()),
                Reference::Gazetteer => spec.family == Family::SequenceLabelling,
            })
            .collect()
    }

    /// Its answer to each test item (internal encoding: empty for "no answer"), the shots
    /// being the k training examples of one shot group (ignored where it uses none).
    pub fn answers(self, spec: &TaskSpec, shots: &[Example], test: &[Example]) -> Vec<Vec<String>> {
        match self {
            Reference::NoAnswer => vec![Vec::new(); test.len()],
            Reference::MajorityLabel => {
                let owned: Vec<Vec<String>> = shots
                    .iter()
                    .map(|s| spec.from_official(&s.gold.official))
                    .filter(|a| !a.is_empty())
                    .collect();
                let ballots: Vec<&[String]> = owned.iter().map(Vec::as_slice).collect();
                let label = plurality(&ballots, &spec.label_names()).answer;
                vec![label; test.len()]
            }
            Reference::ListedEntity => test.iter().map(most_listed).collect(),
            Reference::Gazetteer => {
                let list = gazetteer(spec, shots);
                test.iter()
                    .map(|e| {
                        let Some(names) = list.get(&question_key(e)) else {
                            return Vec::new();
                        };
                        names
                            .iter()
                            .filter(|n| has_word(e.context.primary(), n))
                            .cloned()
                            .collect()
                    })
                    .collect()
            }
        }
    }
}

/// The type of question an item asks (NER: the entity type).
fn question_key(e: &Example) -> String {
    e.question_type
        .clone()
        .unwrap_or_else(|| e.question.clone())
}

/// Per question type, the distinct entity strings the shots gave, in order of first appearance.
fn gazetteer(spec: &TaskSpec, shots: &[Example]) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for s in shots {
        let names = out.entry(question_key(s)).or_default();
        for n in spec.from_official(&s.gold.official) {
            if !n.trim().is_empty() && !names.contains(&n) {
                names.push(n);
            }
        }
    }
    out
}

/// Does `word` occur in `text` with no letter or digit right before or after it?
fn has_word(text: &str, word: &str) -> bool {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(word).any(|(b, _)| {
        !alnum(text[..b].chars().next_back()) && !alnum(text[b + word.len()..].chars().next())
    })
}

/// The entity an item lists most often; none for an item that lists none.
fn most_listed(e: &Example) -> Vec<String> {
    let mentions = e.listed_entities();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for m in mentions {
        match counts.iter_mut().find(|(s, _)| *s == m) {
            Some(c) => c.1 += 1,
            None => counts.push((m, 1)),
        }
    }
    // The first of the most mentioned: `max_by_key` keeps the last maximum, so reverse.
    counts
        .iter()
        .rev()
        .max_by_key(|(_, n)| *n)
        .map(|(s, _)| vec![s.to_string()])
        .unwrap_or_default()
}

/// Every reference of a task scored on its test set: a run per shot group `(k, split)` for
/// those that use the shots, and one run (split 0) at k = 0 and at each k of the groups for
/// those that do not. Text-to-text tasks have none (CrossFit's own baselines cover them).
pub fn runs(
    spec: &TaskSpec,
    test: &[(ExampleId, Example)],
    groups: &BTreeMap<(u32, u32), Vec<Example>>,
) -> Vec<MachineRun> {
    if spec.family == Family::TextToText || test.is_empty() {
        return Vec::new();
    }
    let examples: Vec<Example> = test.iter().map(|(_, e)| e.clone()).collect();
    let mut ks: Vec<u32> = groups.keys().map(|g| g.0).collect();
    ks.insert(0, 0);
    ks.dedup();
    let mut out = Vec::new();
    for reference in Reference::of_task(spec, &examples) {
        if reference.uses_shots() {
            for (&(k, split), shots) in groups {
                let answers = reference.answers(spec, shots, &examples);
                out.push(scored(reference, spec, test, &answers, k, split));
            }
        } else {
            let answers = reference.answers(spec, &[], &examples);
            for &k in &ks {
                out.push(scored(reference, spec, test, &answers, k, 0));
            }
        }
    }
    out
}

/// A reference's answers as a scored run.
fn scored(
    reference: Reference,
    spec: &TaskSpec,
    test: &[(ExampleId, Example)],
    answers: &[Vec<String>],
    k: u32,
    split: u32,
) -> MachineRun {
    let items: Vec<(ExampleId, f64, f64)> = test
        .iter()
        .zip(answers)
        .map(|((id, e), a)| {
            let official = spec.to_official(a);
            (
                *id,
                spec.score(&e.gold, &official, Scoring::Official),
                spec.score(&e.gold, &official, Scoring::AnyOf),
            )
        })
        .collect();
    let mean = |pick: fn(&(ExampleId, f64, f64)) -> f64| {
        items.iter().map(pick).sum::<f64>() / items.len().max(1) as f64
    };
    MachineRun {
        system: reference.name().to_string(),
        task: spec.name.clone(),
        family: spec.family,
        k,
        split,
        official: mean(|i| i.1),
        any_of: mean(|i| i.2),
        device: "computed by the report from the task's data (no model)".into(),
        items,
    }
}

/// Adds the reference cells (mean and std over the shot groups' splits) to a report, only
/// where it already has the task and the k: references add no columns and no rows.
pub fn attach(r: &mut Report, runs: &[MachineRun]) {
    r.references = group_runs(runs)
        .into_iter()
        .filter(|((_, task, k), _)| r.shots.contains(k) && r.tasks.iter().any(|c| &c.name == task))
        .filter_map(|((system, task, k), rs)| {
            let of = |pick: fn(&MachineRun) -> f64| {
                spread(&rs.iter().map(|r| pick(r)).collect::<Vec<_>>())
            };
            Some(MachineCell {
                splits: rs.iter().map(|r| r.split).collect(),
                devices: rs.iter().map(|r| r.device.clone()).collect(),
                official: of(|r| r.official)?,
                any_of: of(|r| r.any_of)?,
                official_ci: None,
                any_of_ci: None,
                system,
                task,
                k,
            })
        })
        .collect();
}

/// A report of the references alone: a column per task (in the report's order), a row per k.
pub fn alone(runs: &[MachineRun]) -> Report {
    let mut r = Report::default();
    add_columns(&mut r, runs);
    attach(&mut r, runs);
    r
}

#[cfg(test)]
mod tests;
