//! A run that two processes go on with at once (two `icl` starts resuming the same unfinished
//! run, on SQLite or PostgreSQL with `CLUES_TEST_POSTGRES`): each item keeps the first reply
//! stored, both score with it, and the run is stored once; the second finish is refused and
//! leaves the run done.
use crate::common;

use domain::ids::{ExampleId, TaskId};
use domain::run::SystemKind;
use store::machine::calls;
use store::machine::write::{fail, finish, refuse_if_done, start, Scored, Target};

#[tokio::test]
async fn each_item_keeps_its_first_reply_and_the_run_is_stored_once() {
    let (_dir, pool) = common::fresh_db().await;
    server::demo::ensure_demo(&pool).await.unwrap();
    let task: TaskId = sqlx::query_scalar("SELECT id FROM tasks WHERE name = 'demo-SST-2'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let t = Target {
        system: "LLM in-context (tiny)".into(),
        kind: SystemKind::Imported,
        task: "demo-SST-2".into(),
        k: 0,
        split: 0,
        replace: false,
    };
    let run = start(&pool, task, &t, "http://x", "{}", "model server", None)
        .await
        .unwrap();
    let example: ExampleId = sqlx::query_scalar(
        "SELECT e.id FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = 'test' ORDER BY e.line_no LIMIT 1",
    )
    .bind(task)
    .fetch_one(&pool)
    .await
    .unwrap();
    // Two processes ask the same item; the server answers each differently (sampling).
    let first = calls::store(&pool, run, example, "p", " positive", "{}")
        .await
        .unwrap();
    let second = calls::store(&pool, run, example, "p", " negative", "{}")
        .await
        .unwrap();
    assert_eq!(
        (first.as_str(), second.as_str()),
        (" positive", " positive")
    );
    assert_eq!(
        calls::replies(&pool, run).await.unwrap()[&example],
        " positive"
    );

    let items = vec![Scored {
        example,
        official: vec!["positive".into()],
        spans_json: "[]".into(),
        probability: None,
        s1: 1.0,
        s1_any_of: 1.0,
    }];
    finish(&pool, run, &t, "tiny", &items, None).await.unwrap();
    let e = finish(&pool, run, &t, "tiny", &items, None)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("is done already"), "{e}");
    // The second process marks its run failed on that error, as every learner does: the run
    // another process finished stays done, and the same command is then refused at the door
    // (before, it was resumed as a failed run and stopped on a UNIQUE constraint).
    fail(&pool, &[run], &e.to_string()).await;
    let status: String = sqlx::query_scalar("SELECT status FROM machine_runs WHERE id = $1")
        .bind(run)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "done");
    let again = refuse_if_done(&pool, task, &t).await.unwrap_err();
    assert!(
        again
            .to_string()
            .contains("already has a finished evaluation"),
        "{again}"
    );
    assert_eq!(
        calls::resume(&pool, task, &t, "{}").await.unwrap(),
        None,
        "a finished run is not resumed"
    );
    let stored: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM machine_predictions WHERE run_id = $1")
            .bind(run)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(stored, 1);
}
