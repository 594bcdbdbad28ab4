//! Shot groups as nesting chains, and skips, through the real protocol: on the official SQuAD
//! v2 files a study on split 1 trains its 10-, 20- and 30-shot workers on 10_1 ⊂ 20_5 ⊂ 30_5;
//! a study whose sets do not nest is refused unless allowed, and then the report says so; a
//! skipped item is stored and reported with S1 0, also where "no answer" would be right.
use crate::common;

use common::client::*;
use domain::shots;
use domain::study::StudyConfig;
use sqlx::AnyPool;
use std::collections::HashSet;
use store::{catalog, report, study};

/// (k, training file, content key) of every training item of a study's workers, in order.
async fn training_items(pool: &AnyPool, study: domain::ids::StudyId) -> Vec<(i64, String, String)> {
    sqlx::query_as(
        "SELECT a.k, f.file_name, e.content_key FROM assignments a
         JOIN assignment_items i ON i.assignment_id = a.id
         JOIN examples e ON e.id = i.example_id JOIN data_files f ON f.id = e.file_id
         WHERE a.study_id = $1 AND i.phase = 'training' ORDER BY a.k, i.position",
    )
    .bind(study)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn squad_v2_studies_train_on_a_nesting_chain() {
    let Some(dir) = common::clues_data("squad_v2_studies_train_on_a_nesting_chain") else {
        return;
    };
    let env = env().await;
    let (s, pool) = (&env.state, &env.state.pool);
    server::clues::import_dir(pool, &dir.join("SQuAD-v2"))
        .await
        .unwrap();
    // The test's own look at the files: 10_1's rows are all in 20_5 and 30_5, not in 20_1.
    let rows = |name: &str| -> HashSet<(String, String)> {
        std::fs::read_to_string(dir.join("SQuAD-v2").join(name))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["context"].to_string(), v["question"].to_string())
            })
            .collect()
    };
    let ten = rows("squad-v2_train_10_1.jsonl");
    assert!(ten.is_subset(&rows("squad-v2_train_20_5.jsonl")));
    assert!(ten.is_subset(&rows("squad-v2_train_30_5.jsonl")));
    assert!(!ten.is_subset(&rows("squad-v2_train_20_1.jsonl")));

    let (task_id, ..) = catalog::load_spec(pool, "SQuAD-v2").await.unwrap();
    let chains = shots::chains(&catalog::shot_sets(pool, task_id).await.unwrap());
    assert_eq!(chains.len(), 5, "{chains:?}");
    assert_eq!(chains[0], vec![(10, 1), (20, 5), (30, 5)]);

    // A study on split 1 takes the chain; each k-shot worker trains on its file, in order.
    let id = new_study(s, "SQuAD-v2", &[0, 10, 20, 30], 1).await;
    let made = study::summary_of(pool, id).await.unwrap();
    assert_eq!(made.config.shot_group, vec![(10, 1), (20, 5), (30, 5)]);
    assert_eq!(
        (made.shot_group.as_str(), made.nested),
        ("10_1 ⊂ 20_5 ⊂ 30_5", true)
    );
    for pid in ["w0", "w10", "w20", "w30"] {
        let cookie = arrive(s, id, pid).await;
        parse(&state_of(s, id, &cookie).await);
    }
    let items = training_items(pool, id).await;
    for (k, file) in [
        (10, "squad-v2_train_10_1.jsonl"),
        (20, "squad-v2_train_20_5.jsonl"),
        (30, "squad-v2_train_30_5.jsonl"),
    ] {
        let of_k: Vec<&(i64, String, String)> = items.iter().filter(|i| i.0 == k).collect();
        assert_eq!(of_k.len(), k as usize);
        assert!(of_k.iter().all(|i| i.1 == file), "k={k}: {of_k:?}");
    }
    let keys = |k: i64| -> HashSet<&str> {
        items
            .iter()
            .filter(|i| i.0 == k)
            .map(|i| i.2.as_str())
            .collect()
    };
    assert!(keys(10).is_subset(&keys(20)) && keys(20).is_subset(&keys(30)));
    let loaded = report::load(pool, &[id]).await.unwrap();
    let first = {
        use futures_util::TryStreamExt;
        let mut rows = store::annotations::annotation_rows(
            pool,
            &loaded.studies,
            false,
            store::heavy::Kind::Rows,
        );
        rows.try_next().await.unwrap().unwrap()
    };
    assert_eq!(first.shot_group, "10_1,20_5,30_5");
    let r = loaded.report();
    assert_eq!(r.shot_groups[0].files, vec![(10, 1), (20, 5), (30, 5)]);
    assert!(r.shot_groups[0].nested && r.notes.is_empty());

    // The same split number for every k is not nested: refused, and nothing is stored ...
    let same_split = StudyConfig {
        scenarios: vec![10, 20],
        shot_group: vec![(10, 1), (20, 1)],
        open: true,
        ..StudyConfig::default()
    };
    let before = common::snapshot(pool).await;
    let err = study::create(pool, None, "SQuAD-v2", "unnested", same_split.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the 10-shot training set (10_1) is not within the 20-shot set (20_1)"),
        "{err}"
    );
    assert_eq!(common::snapshot(pool).await, before);
    // ... unless the admin allows it; then the study page and the report say so.
    let allowed = StudyConfig {
        allow_unnested: true,
        ..same_split
    };
    let id2 = study::create(pool, None, "SQuAD-v2", "unnested", allowed)
        .await
        .unwrap();
    let made = study::summary_of(pool, id2).await.unwrap();
    assert_eq!(
        (made.shot_group.as_str(), made.nested),
        ("10_1, 20_1 (not nested)", false)
    );
    let cookie = arrive(s, id2, "u10").await;
    parse(&state_of(s, id2, &cookie).await);
    let r = report::load(pool, &[id2]).await.unwrap().report();
    assert!(!r.shot_groups[0].nested);
    assert!(
        r.notes[0].contains("10_1 is not within 20_1"),
        "{:?}",
        r.notes
    );
    // The command line takes a chain by its files, and `--split` by its first file.
    let tmp = tempfile::tempdir().unwrap();
    let url = common::db_url(&tmp.path().join("cli.db"));
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &url])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(
        cli(&["import", "clues", dir.join("SQuAD-v2").to_str().unwrap()])
            .status
            .success()
    );
    let out = cli(&[
        "study", "create", "--task", "SQuAD-v2", "--name", "by split", "--split", "2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("training sets: 10_2 ⊂ 20_3 ⊂ 30_1"), "{text}");
    let unnested = [
        "study",
        "create",
        "--task",
        "SQuAD-v2",
        "--name",
        "x",
        "--shot-group",
        "10_1,20_1,30_1",
    ];
    let out = cli(&unnested);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not within"));
    let out = cli(&[&unnested[..], &["--allow-unnested"]].concat());
    assert!(String::from_utf8_lossy(&out.stdout).contains("10_1, 20_1, 30_1 (not nested)"));
    // The command line checks a study's numbers with the admin form's rules and messages.
    let by_split = [
        "study", "create", "--task", "SQuAD-v2", "--name", "y", "--split", "2",
    ];
    for (flag, value, message) in [
        (
            "--timeout",
            "-60",
            "Time-out: -60 is not allowed; it must be a whole number from 60 to 604800 seconds",
        ),
        (
            "--margin",
            "7",
            "Training filter margin: 7 is not allowed; it must be from 0 to 1",
        ),
        (
            "--annotators",
            "0",
            "Annotators per scenario: 0 is not allowed",
        ),
        (
            "--code",
            "my code <b>",
            "Completion code: \"my code <b>\" is not allowed",
        ),
    ] {
        let out = cli(&[&by_split[..], &[flag, value]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(message),
            "{flag} {value}: {err}"
        );
    }
}

#[tokio::test]
async fn a_skip_scores_zero_where_no_answer_would_be_right() {
    let env = env().await;
    let (s, pool) = (&env.state, &env.state.pool);
    let id = new_study(s, "demo-SQuAD-v2", &[0], 1).await;
    let cookie = arrive(s, id, "skipper").await;
    skip_to_the_end(s, id, &cookie).await;
    let stored: Vec<(i64, f64, f64, String)> = sqlx::query_as(
        "SELECT i.skipped, i.s1, i.s1_any_of, e.gold_official FROM assignment_items i
         JOIN assignments a ON a.id = i.assignment_id JOIN examples e ON e.id = i.example_id
         WHERE a.study_id = $1",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .unwrap();
    // Some of these items have no answer in their text, where "no answer" would score 1.
    assert!(stored.iter().any(|r| r.3 == "[]"), "{stored:?}");
    assert!(
        stored.iter().all(|r| r.0 == 1 && r.1 == 0.0 && r.2 == 0.0),
        "{stored:?}"
    );
    let r = report::load(pool, &[id]).await.unwrap().report();
    let a = &r.annotators[0];
    assert_eq!((a.test_s1, a.test_s1_answered), (Some(0.0), None));
    let cell = &r.all.main[0];
    assert_eq!((cell.skip_rate(), cell.official.mean), (1.0, 0.0));
}
