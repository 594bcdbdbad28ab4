//! The import's checks, pure over data already read: duplicate ids, labels missing from
//! their question, shot-group nesting (10 within 20 within 30), disjoint splits, and training
//! contexts that also appear in the test set. Findings become notes; nothing is changed.

use super::files::{FileKind, LoadedFile, LoadedRow};
use domain::shots::{self, ShotFile, ShotSets};
use domain::task::{Family, TaskSpec};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// One finding of the data-quality report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// File name within the task, `None` for findings across files.
    pub file: Option<String>,
    pub line: Option<usize>,
    pub kind: &'static str,
    pub detail: String,
}

impl Note {
    pub fn at(file: &str, line: usize, kind: &'static str, detail: String) -> Self {
        Note {
            file: Some(file.to_string()),
            line: Some(line),
            kind,
            detail,
        }
    }
    fn in_file(file: &str, kind: &'static str, detail: String) -> Self {
        Note {
            file: Some(file.to_string()),
            line: None,
            kind,
            detail,
        }
    }
    fn across(kind: &'static str, detail: String) -> Self {
        Note {
            file: None,
            line: None,
            kind,
            detail,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nesting {
    pub split: u32,
    pub small_k: u32,
    pub big_k: u32,
    /// Rows of the small group that the big group lacks.
    pub missing: usize,
    pub rows: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitOverlap {
    pub k: u32,
    pub split_a: u32,
    pub split_b: u32,
    pub shared_rows: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestOverlap {
    pub k: u32,
    pub split: u32,
    /// Training rows whose context is also the context of a test row.
    pub rows: usize,
    pub total: usize,
}

/// What the shot-group checks found, passed or not, for the import's summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShotSummary {
    pub ks: Vec<u32>,
    pub splits: Vec<u32>,
    pub missing_files: Vec<(u32, u32)>,
    pub nesting: Vec<Nesting>,
    /// Every nesting chain of files (one per k, each within the next), e.g. 10_1 ⊂ 20_5 ⊂ 30_5.
    pub chains: Vec<Vec<ShotFile>>,
    pub split_overlaps: Vec<SplitOverlap>,
    pub test_overlaps: Vec<TestOverlap>,
}

/// The context of a row as a comparable key (both parts of a pair).
fn context_key(row: &LoadedRow) -> (&str, Option<&str>) {
    let c = &row.example.context;
    (c.primary(), c.second())
}

fn duplicate_ids(file: &LoadedFile, notes: &mut Vec<Note>) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for row in &file.rows {
        if let Some(prev) = first.insert(&row.example.id, row.line) {
            notes.push(Note::at(
                &file.name,
                row.line,
                "duplicate_id",
                format!("id {:?} also on line {prev}", row.example.id),
            ));
            first.insert(&row.example.id, prev);
        }
    }
}

/// Labels that the worker (or a span model) cannot find in the question text.
fn labels_missing_from_question(spec: &TaskSpec, files: &[LoadedFile], notes: &mut Vec<Note>) {
    if spec.family != Family::Classification {
        return;
    }
    let mut missing: BTreeMap<(String, String), usize> = BTreeMap::new();
    for row in files.iter().flat_map(|f| &f.rows) {
        for label in &row.example.gold.official {
            if !row.example.question.contains(label.as_str()) {
                *missing
                    .entry((label.clone(), row.example.question.clone()))
                    .or_default() += 1;
            }
        }
    }
    for ((label, question), n) in missing {
        notes.push(Note::across(
            "label_not_in_question",
            format!("label {label:?} does not occur in the question {question:?} ({n} rows)"),
        ));
    }
}

/// Runs every check over a task's files, adding notes; returns the shot-group summary.
pub fn check_task(spec: &TaskSpec, files: &[LoadedFile], notes: &mut Vec<Note>) -> ShotSummary {
    for f in files {
        duplicate_ids(f, notes);
    }
    labels_missing_from_question(spec, files, notes);
    let train: BTreeMap<(u32, u32), &LoadedFile> = files
        .iter()
        .filter_map(|f| match f.kind {
            FileKind::Train { k, split } => Some(((k, split), f)),
            FileKind::Test => None,
        })
        .collect();
    let sorted_distinct = |it: &mut dyn Iterator<Item = u32>| {
        it.collect::<BTreeSet<_>>().into_iter().collect::<Vec<_>>()
    };
    // Each training file's content keys, built once for all the comparisons below.
    let keys: BTreeMap<(u32, u32), HashSet<&str>> = train
        .iter()
        .map(|(&ks, f)| (ks, f.rows.iter().map(|r| r.content_key.as_str()).collect()))
        .collect();
    let g = TrainFiles {
        ks: sorted_distinct(&mut train.keys().map(|(k, _)| *k)),
        splits: sorted_distinct(&mut train.keys().map(|(_, s)| *s)),
        train,
        keys,
    };
    let mut summary = ShotSummary {
        ks: g.ks.clone(),
        splits: g.splits.clone(),
        ..Default::default()
    };
    let sets: ShotSets = g
        .keys
        .iter()
        .map(|(&f, k)| (f, k.iter().map(|x| x.to_string()).collect()))
        .collect();
    summary.chains = shots::chains(&sets);
    if summary.chains.is_empty() && g.ks.len() > 1 {
        notes.push(Note::across(
            "no_nesting_chain",
            format!(
                "no k={} file lies within a k={} file with everything above it: a study of several shot sizes needs the admin to allow training sets that are not nested",
                g.ks[0], g.ks[1]
            ),
        ));
    }
    missing_files(&g, &mut summary, notes);
    nesting(&g, &mut summary, notes);
    split_overlaps(&g, &mut summary, notes);
    if let Some(test) = files.iter().find(|f| f.kind == FileKind::Test) {
        test_overlaps(&g, test, &mut summary, notes);
    }
    summary
}

/// A task's training files by (k, split), their content keys, and the ks and splits there are.
struct TrainFiles<'a> {
    train: BTreeMap<(u32, u32), &'a LoadedFile>,
    keys: BTreeMap<(u32, u32), HashSet<&'a str>>,
    ks: Vec<u32>,
    splits: Vec<u32>,
}

/// Every (k, split) with no file.
fn missing_files(g: &TrainFiles, summary: &mut ShotSummary, notes: &mut Vec<Note>) {
    for &k in &g.ks {
        for &s in &g.splits {
            if !g.train.contains_key(&(k, s)) {
                summary.missing_files.push((k, s));
                notes.push(Note::across(
                    "missing_file",
                    format!("no training file for k={k}, split {s}"),
                ));
            }
        }
    }
}

/// Whether each split's smaller file lies within its next larger one.
fn nesting(g: &TrainFiles, summary: &mut ShotSummary, notes: &mut Vec<Note>) {
    for &s in &g.splits {
        for pair in g.ks.windows(2) {
            let (Some(small), true) = (
                g.train.get(&(pair[0], s)),
                g.train.contains_key(&(pair[1], s)),
            ) else {
                continue;
            };
            let big_keys = &g.keys[&(pair[1], s)];
            let missing = small
                .rows
                .iter()
                .filter(|r| !big_keys.contains(r.content_key.as_str()))
                .count();
            if missing > 0 {
                notes.push(Note::across(
                    "not_nested",
                    format!(
                        "split {s}: {missing} of {} rows of k={} are not in k={} of the same split number (see the nesting chains)",
                        small.rows.len(),
                        pair[0],
                        pair[1]
                    ),
                ));
            }
            summary.nesting.push(Nesting {
                split: s,
                small_k: pair[0],
                big_k: pair[1],
                missing,
                rows: small.rows.len(),
            });
        }
    }
}

/// The rows two splits of the same k share.
fn split_overlaps(g: &TrainFiles, summary: &mut ShotSummary, notes: &mut Vec<Note>) {
    for &k in &g.ks {
        for (i, &a) in g.splits.iter().enumerate() {
            for &b in &g.splits[i + 1..] {
                let (Some(ka), Some(kb)) = (g.keys.get(&(k, a)), g.keys.get(&(k, b))) else {
                    continue;
                };
                let shared = ka.intersection(kb).count();
                if shared > 0 {
                    notes.push(Note::across(
                        "splits_overlap",
                        format!("k={k}: splits {a} and {b} share {shared} rows"),
                    ));
                }
                summary.split_overlaps.push(SplitOverlap {
                    k,
                    split_a: a,
                    split_b: b,
                    shared_rows: shared,
                });
            }
        }
    }
}

/// The training rows whose context is also a test row's.
fn test_overlaps(
    g: &TrainFiles,
    test: &LoadedFile,
    summary: &mut ShotSummary,
    notes: &mut Vec<Note>,
) {
    let test_contexts: HashSet<_> = test.rows.iter().map(context_key).collect();
    for (&(k, split), f) in &g.train {
        let rows = f
            .rows
            .iter()
            .filter(|r| test_contexts.contains(&context_key(r)))
            .count();
        if rows > 0 {
            notes.push(Note::in_file(
                &f.name,
                "train_test_overlap",
                format!(
                    "{rows} of {} rows share their context with a test row",
                    f.rows.len()
                ),
            ));
        }
        summary.test_overlaps.push(TestOverlap {
            k,
            split,
            rows,
            total: f.rows.len(),
        });
    }
}
