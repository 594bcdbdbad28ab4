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

/// An upload of predictions cut off at any moment (a client that hangs up, a proxy's time
/// limit) or refused leaves nothing: never a run that stays "running", which the machines page
/// would show, and poll for, for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_cut_off_at_any_moment_leaves_nothing_or_the_whole_run() {
    use std::future::Future;
    let (_dir, pool) = common::fresh_db().await;
    server::demo::ensure_demo(&pool).await.unwrap();
    let task = "demo-SQuAD-v2";
    let (tid, spec, _) = store::catalog::load_spec(&pool, task).await.unwrap();
    let test = store::catalog::test_examples(&pool, tid).await.unwrap();
    let gold: serde_json::Map<String, serde_json::Value> = test
        .iter()
        .map(|e| {
            let spans = spec.from_official(&e.gold.official);
            let first: Vec<_> = spans.first().cloned().into_iter().collect();
            (e.id.clone(), serde_json::json!(first))
        })
        .collect();
    let text = serde_json::Value::Object(gold).to_string();
    let target = Target {
        system: "uploaded".into(),
        kind: SystemKind::Imported,
        task: task.into(),
        k: 0,
        split: 0,
        replace: false,
    };
    let runs = |status| common::machine_runs(&pool, status);
    // Cut off after 0, 1, 2, ... polls (more apart from 40 on), until one is stored.
    // On PostgreSQL a whole poll can finish an import (the runtime's other thread reads the
    // replies as they come), so what must hold is that some import was cut off mid-way.
    let (mut polls, mut cut_midway) = (0usize, 0usize);
    loop {
        let mut import = Box::pin(learners::jobs::import(
            &pool,
            "up.json",
            &text,
            target.clone(),
        ));
        let mut finished = false;
        for i in 0..polls {
            let poll = |cx: &mut std::task::Context<'_>| {
                std::task::Poll::Ready(import.as_mut().poll(cx).map(|r| r.map(drop)))
            };
            match std::future::poll_fn(poll).await {
                std::task::Poll::Ready(done) => {
                    // Or refused: one cut off after its commit was sent was stored whole.
                    let earlier = matches!(&done, Err(e) if e.to_string().contains("already has a finished evaluation"));
                    assert!(done.is_ok() || earlier, "after {i} polls: {done:?}");
                    finished = true;
                    break;
                }
                std::task::Poll::Pending => tokio::task::yield_now().await,
            }
        }
        drop(import);
        assert_eq!(runs("running").await, 0, "cut off after {polls} polls");
        if finished {
            break;
        }
        cut_midway += usize::from(polls > 0);
        polls = if polls < 40 { polls + 1 } else { polls * 5 / 4 };
        assert!(polls < 10_000_000, "the import never finished");
    }
    assert!(cut_midway > 0, "no import was cut off after a poll");
    assert_eq!(runs("done").await, 1);
}
