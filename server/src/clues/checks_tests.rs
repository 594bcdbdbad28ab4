//! The quality checks of an import (nesting, overlap, duplicates, labels) on small files read
//! through `load`, as an import reads them.

use super::files::SourceFile;
use super::load::load_task;
use crate::clues::spec::clues_task;

fn row(id: u32, text: &str, label: &str) -> String {
    format!(
        r#"{{"answer": ["{label}"], "question": "positive or negative?", "id": {id}, "context": "{text}"}}"#
    )
}

fn file(name: &str, rows: &[String]) -> SourceFile {
    SourceFile {
        name: name.into(),
        label: name.into(),
        bytes: rows.join("\n").into_bytes(),
    }
}

#[test]
fn nesting_overlap_and_duplicates_are_reported() {
    let a = row(1, "good", "positive");
    let b = row(2, "bad", "negative");
    let c = row(3, "fine", "positive");
    let d = row(4, "awful", "negative");
    let t = row(1, "fine", "positive"); // test context equals a training context
    let files = vec![
        file("sst_test.jsonl", &[t.clone(), row(1, "other", "negative")]),
        file("sst_train_1_1.jsonl", std::slice::from_ref(&a)),
        file("sst_train_2_1.jsonl", &[a.clone(), b.clone()]),
        file("sst_train_1_2.jsonl", std::slice::from_ref(&c)),
        file("sst_train_2_2.jsonl", &[d.clone(), a.clone()]), // does not contain c: not nested
    ];
    let task = load_task(clues_task("SST-2").unwrap(), "SST-2", files).unwrap();
    let kinds: Vec<&str> = task.notes.iter().map(|n| n.kind).collect();
    assert!(kinds.contains(&"duplicate_id"), "{kinds:?}");
    let nest = &task.shots.nesting;
    assert_eq!(nest.len(), 2);
    assert_eq!((nest[0].split, nest[0].missing), (1, 0));
    assert_eq!((nest[1].split, nest[1].missing), (2, 1));
    assert!(task
        .notes
        .iter()
        .any(|n| n.kind == "not_nested" && n.detail.contains("split 2")));
    // k=2 splits 1 and 2 share row `a`.
    assert!(task
        .shots
        .split_overlaps
        .iter()
        .any(|o| o.k == 2 && o.shared_rows == 1));
    assert!(task.notes.iter().any(
        |n| n.kind == "train_test_overlap" && n.file.as_deref() == Some("sst_train_1_2.jsonl")
    ));
    assert!(task.shots.missing_files.is_empty());
    // Split 1's row `a` is in both 2-shot files; split 2's row `c` is in neither.
    assert_eq!(
        task.shots.chains,
        vec![vec![(1, 1), (2, 1)], vec![(1, 1), (2, 2)]]
    );
}

#[test]
fn chains_across_split_numbers_are_found() {
    let (a, b, c, d) = (
        row(1, "good", "positive"),
        row(2, "bad", "negative"),
        row(3, "fine", "positive"),
        row(4, "awful", "negative"),
    );
    let files = vec![
        file("sst_test.jsonl", &[row(1, "x", "positive")]),
        file("sst_train_1_1.jsonl", std::slice::from_ref(&a)),
        file("sst_train_1_2.jsonl", std::slice::from_ref(&c)),
        file("sst_train_2_1.jsonl", &[c.clone(), d.clone()]),
        file("sst_train_2_2.jsonl", &[a.clone(), b.clone()]),
    ];
    let task = load_task(clues_task("SST-2").unwrap(), "SST-2", files).unwrap();
    assert_eq!(
        task.shots.chains,
        vec![vec![(1, 1), (2, 2)], vec![(1, 2), (2, 1)]]
    );
    let unnested = vec![
        file("sst_test.jsonl", &[row(1, "x", "positive")]),
        file("sst_train_1_1.jsonl", std::slice::from_ref(&a)),
        file("sst_train_2_1.jsonl", &[c, d]),
    ];
    let task = load_task(clues_task("SST-2").unwrap(), "SST-2", unnested).unwrap();
    assert!(task.shots.chains.is_empty());
    assert!(task.notes.iter().any(|n| n.kind == "no_nesting_chain"));
}

#[test]
fn a_missing_grid_file_is_reported() {
    let a = row(1, "good", "positive");
    let files = vec![
        file("sst_test.jsonl", &[row(1, "x", "positive")]),
        file("sst_train_1_1.jsonl", std::slice::from_ref(&a)),
        file("sst_train_2_2.jsonl", &[a]),
    ];
    let task = load_task(clues_task("SST-2").unwrap(), "SST-2", files).unwrap();
    assert_eq!(task.shots.missing_files, vec![(1, 2), (2, 1)]);
}
