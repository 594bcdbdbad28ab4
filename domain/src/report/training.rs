//! The paper's Tables 8 and 9: the training step of the two largest shot groups on the items
//! they share and on the items only the larger set has, each annotator on their study's chain.

use super::annotator::{item_mean, submitted};
use super::{
    scenario, AnnotatorRecord, ItemRecord, StudyRules, Subset, SubsetCell, Tables, TaskData,
};
use crate::ids::StudyId;
use crate::place::Phase;
use crate::s1::{spread, Scoring};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Tables 8 and 9 for one task: with the two largest training sizes `mid < max` (20 and 30
/// in the paper), S1 of the mid and max groups on the mid-shot items, and of the max group on
/// the max-shot items not in the mid-shot set. Each annotator on the files of their study's
/// shot group (e.g. 20_5 and 30_5 for SQuAD v2's chain 10_1 ⊂ 20_5 ⊂ 30_5).
pub(super) fn training_tables(
    t: &mut Tables,
    data: &TaskData,
    task: &str,
    ks: &BTreeSet<u32>,
    group: &[&AnnotatorRecord],
    rules: &HashMap<StudyId, StudyRules>,
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
                let items: Vec<&ItemRecord> = submitted(a, Phase::Training)
                    .into_iter()
                    .filter(|i| in_subset(a, &i.content_key))
                    .collect();
                item_mean(&items, |i| i.score(Scoring::Official))
            })
            .collect();
        // Each annotator's own count: a cell may pool studies whose chains differ.
        let counts: Vec<usize> = annotators
            .iter()
            .map(|a| {
                a.items
                    .iter()
                    .filter(|i| i.phase == Phase::Training && in_subset(a, &i.content_key))
                    .count()
            })
            .collect();
        Some(SubsetCell {
            task: task.to_string(),
            group_k,
            spread: spread(&scores)?,
            subset,
            items: counts.iter().copied().min().unwrap_or(0),
            items_max: counts.iter().copied().max().unwrap_or(0),
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
