//! Importing the official CLUES data and the demo: counts, the quality report, idempotence,
//! and bad input that names file and line and leaves the database unchanged.
use crate::common;

use server::clues::{import_dir, write::Outcome};
use server::demo;
use std::io::Write;
use std::path::Path;

#[tokio::test]
async fn imports_all_six_tasks_once() {
    let Some(dir) = common::clues_data("imports_all_six_tasks_once") else {
        return;
    };
    let (_db, pool) = common::fresh_db().await;
    let first = import_dir(&pool, &dir).await.unwrap();
    assert_eq!(first.tasks.len(), 6);
    assert!(first.outcomes.iter().all(|o| *o == Outcome::Imported));
    let report = first.report();
    assert!(
        report.contains("total: 6 tasks, 2020 test items, 90 training files"),
        "{report}"
    );
    // The official NER files hold answers no human can highlight; the report names them.
    assert!(report.contains("gold_not_in_context"), "{report}");
    assert!(
        report.contains("label \"contradiction\" does not occur in the question"),
        "{report}"
    );
    let test_items: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM examples e JOIN data_files f ON f.id = e.file_id WHERE f.kind = 'test'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(test_items, 2020);
    let train_files: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM data_files WHERE kind = 'train'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(train_files, 90);
    // SST-2 ids restart at 1 in every file: all rows are kept.
    let sst_rows: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM examples e JOIN data_files f ON f.id = e.file_id JOIN tasks t ON t.id = f.task_id
         WHERE t.name = 'SST-2' AND e.ext_id = '1'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(sst_rows, 16);

    let before = common::snapshot(&pool).await;
    let second = import_dir(&pool, &dir).await.unwrap();
    assert!(second.outcomes.iter().all(|o| *o == Outcome::Unchanged));
    assert_eq!(common::snapshot(&pool).await, before);
}

fn copy_task(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn append(path: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

#[tokio::test]
async fn bad_input_names_file_and_line_and_changes_nothing() {
    let Some(dir) = common::clues_data("bad_input_names_file_and_line_and_changes_nothing") else {
        return;
    };
    let (_db, pool) = common::fresh_db().await;
    demo::ensure_demo(&pool).await.unwrap();
    let before = common::snapshot(&pool).await;
    let tmp = tempfile::tempdir().unwrap();

    // A malformed JSON line in SST-2's test file (after a valid MNLI that would import fine).
    let root = tmp.path().join("malformed");
    copy_task(&dir.join("MNLI"), &root.join("MNLI"));
    copy_task(&dir.join("SST-2"), &root.join("SST-2"));
    let test_file = root.join("SST-2/sst_test.jsonl");
    append(&test_file, "{\"id\": 999, \"answer\": [\"positive\"\n");
    let err = import_dir(&pool, &root).await.err().unwrap().to_string();
    assert!(err.contains("sst_test.jsonl:211: malformed JSON"), "{err}");
    assert_eq!(common::snapshot(&pool).await, before);

    // An answer offset that does not match its context.
    let root = tmp.path().join("offset");
    copy_task(&dir.join("SQuAD-v2"), &root.join("SQuAD-v2"));
    let f = root.join("SQuAD-v2/squad-v2_train_10_1.jsonl");
    let text = std::fs::read_to_string(&f).unwrap();
    let first = text.lines().next().unwrap();
    let mut row: serde_json::Value = serde_json::from_str(first).unwrap();
    let start = row["answer"][0]["answer_start"].as_u64().unwrap();
    row["answer"][0]["answer_start"] = (start + 1).into();
    let changed = text.replacen(first, &row.to_string(), 1);
    std::fs::write(&f, changed).unwrap();
    let err = import_dir(&pool, &root).await.err().unwrap().to_string();
    assert!(
        err.contains("squad-v2_train_10_1.jsonl:1: answer 1") && err.contains("does not match"),
        "{err}"
    );
    assert_eq!(common::snapshot(&pool).await, before);

    // An unknown task directory, and a missing directory.
    let root = tmp.path().join("unknown");
    copy_task(&dir.join("SST-2"), &root.join("SST-3"));
    let err = import_dir(&pool, &root).await.err().unwrap().to_string();
    assert!(err.contains("unknown task directory \"SST-3\""), "{err}");
    let err = import_dir(&pool, &tmp.path().join("nope"))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("nope: no such directory"), "{err}");
    assert_eq!(common::snapshot(&pool).await, before);

    // A changed file of an already imported task is refused.
    import_dir(&pool, &dir.join("SST-2")).await.unwrap();
    let after_sst = common::snapshot(&pool).await;
    let root = tmp.path().join("changed");
    copy_task(&dir.join("SST-2"), &root.join("SST-2"));
    append(&root.join("SST-2/sst_train_10_1.jsonl"), "{\"answer\": [\"positive\"], \"question\": \"positive or negative?\", \"id\": 11, \"context\": \"x\"}\n");
    let err = import_dir(&pool, &root).await.err().unwrap().to_string();
    assert!(
        err.contains("already imported from different files (sst_train_10_1.jsonl)"),
        "{err}"
    );
    assert_eq!(common::snapshot(&pool).await, after_sst);
}

#[tokio::test]
async fn demo_study_loads_once_with_nested_shot_groups() {
    let (_db, pool) = common::fresh_db().await;
    let imported = demo::ensure_demo(&pool).await.unwrap().expect("first load");
    let report = imported.report();
    assert!(report.contains("total: 6 tasks"), "{report}");
    for t in &imported.tasks {
        assert!(
            t.shots.nesting.iter().all(|n| n.missing == 0),
            "{}",
            t.spec.name
        );
        assert_eq!(t.shots.ks, vec![2, 4]);
        // The demo is written to be clean: nothing to report but the MNLI label spelling.
        assert!(
            t.notes.iter().all(|n| n.kind == "label_not_in_question"),
            "{}: {:?}",
            t.spec.name,
            t.notes
        );
    }
    assert!(demo::ensure_demo(&pool).await.unwrap().is_none());
}
