//! CrossFit's upstream learning queued from the machines page: checked as `crossfit upstream`
//! checks it (each refusal stores nothing), one job that the page lists, shares when asked
//! again, cancels and retries; a `clues-lab worker` learns the partition upstream, queues the
//! test tasks' seeds and runs them, so the runs land under the method with no further step.
use crate::common;

use axum::http::StatusCode;
use common::client::{form, machines_page, parse, post_json};
use common::tiny_seq2seq::{write_seq2seq_dir, Kind};
use serde_json::{json, Value};

fn upstream(partition: &str, model: &str, method: &str, out: &str, steps: u32) -> Value {
    json!({ "learner": "crossfit-upstream", "model": model, "partition": partition,
            "method": method, "out": out, "name": null, "upstream_steps": steps, "steps": 2 })
}

fn queue(tasks: &[&str], learner: Value) -> Value {
    json!({ "request": { "tasks": tasks, "group": null, "learner": learner, "replace": false } })
}

async fn count(pool: &sqlx::AnyPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn upstream_learning_queued_from_the_page_is_learned_then_its_test_tasks_fine_tuned() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::db_url(&tmp.path().join("up.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let (state, rita, wendy) = machines_page(&pool).await;
    let s = &state;
    let bart = tmp.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 6);
    let m = bart.display().to_string();
    let out = tmp.path().join("up-demo");
    let o = out.display().to_string();

    // The form offers the partitions.
    let r = form(s, "learner_choices", "", Some(&rita)).await;
    assert!(
        parse(&r)["partitions"]
            .as_array()
            .unwrap()
            .contains(&json!("demo")),
        "{}",
        r.body
    );

    let taken = tmp.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("notes.txt"), "mine").unwrap();
    let before = common::snapshot(&pool).await;
    let refused: Vec<(Value, Option<&str>, StatusCode, &str)> = vec![
        (
            queue(&["demo-xf-topic"], upstream("demo", &m, "reptile", &o, 2)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "takes its tasks from the partition",
        ),
        (
            queue(&[], upstream("nope", &m, "reptile", &o, 2)),
            Some(&rita),
            StatusCode::NOT_FOUND,
            "no partition named",
        ),
        (
            queue(&[], upstream("demo", &m, "sgd", &o, 2)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "invalid value 'sgd'",
        ),
        (
            queue(&[], upstream("demo", &m, "reptile", &o, 0)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "--upstream-steps",
        ),
        (
            queue(&[], upstream("demo", &m, "reptile", "up-demo", 2)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "absolute path",
        ),
        (
            queue(&[], upstream("demo", "/no/such/bart", "reptile", &o, 2)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "/no/such/bart",
        ),
        (
            queue(
                &[],
                upstream("demo", &m, "reptile", &taken.display().to_string(), 2),
            ),
            Some(&rita),
            StatusCode::CONFLICT,
            "is not a finished upstream folder",
        ),
        (
            queue(&[], upstream("demo", &m, "reptile", &o, 2)),
            Some(&wendy),
            StatusCode::FORBIDDEN,
            "Forbidden",
        ),
    ];
    for (body, who, status, says) in &refused {
        let r = post_json(s, "queue_learner", body, *who).await;
        assert_eq!(r.status, *status, "{body}: {}", r.body);
        assert!(r.body.contains(says), "{body}: {}", r.body);
        assert_eq!(common::snapshot(&pool).await, before, "{body} stored rows");
    }

    // Queued: one job, listed with the seeds' queue; asked again, the same job.
    let body = queue(&[], upstream("demo", &m, "reptile", &o, 2));
    for _ in 0..2 {
        let r = post_json(s, "queue_learner", &body, Some(&rita)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert!(
            parse(&r)["said"]
                .as_str()
                .unwrap()
                .starts_with("1 job of upstream learning of up-demo fine-tuning queued"),
            "{}",
            r.body
        );
    }
    assert_eq!(
        count(&pool, "SELECT COUNT(*) FROM jobs WHERE kind = 'upstream'").await,
        1
    );
    let r = form(s, "crossfit_learning", "", Some(&rita)).await;
    let open = parse(&r)["open"].clone();
    assert_eq!(open.as_array().unwrap().len(), 1, "{open}");
    assert_eq!(
        (&open[0]["queue"], &open[0]["task"], &open[0]["seed"]),
        (&json!("upstream"), &json!("upstream on demo"), &Value::Null),
        "{open}"
    );
    // Another folder under the same method name is refused.
    let other = tmp.path().join("elsewhere").display().to_string();
    let mut clash = upstream("demo", &m, "fomaml", &other, 2);
    clash["name"] = json!("up-demo fine-tuning");
    let r = post_json(s, "queue_learner", &queue(&[], clash), Some(&rita)).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.body.contains("stores its runs as"), "{}", r.body);

    // Cancelled, then retried from the page; a worker that takes only seeds leaves it queued.
    let id = open[0]["id"].as_i64().unwrap();
    let r = form(
        s,
        "cancel_job",
        &format!("queue=upstream&id={id}"),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = form(
        s,
        "retry_job",
        &format!("queue=upstream&id={id}"),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let worker = |kinds: &str| {
        common::clues(
            &url,
            &[
                "worker",
                "--exit-when-idle",
                "--device",
                "cpu",
                "--kinds",
                kinds,
            ],
        )
    };
    let (ok, said) = worker("crossfit");
    assert!(ok && said.contains("no job left; 0 run here"), "{said}");

    // A worker learns upstream, queues the test tasks' seeds and runs them.
    let (ok, said) = worker("crossfit-upstream,crossfit");
    assert!(ok, "{said}");
    assert!(said.contains("upstream learning of demo into"), "{said}");
    assert!(out.join("upstream.json").is_file(), "{said}");
    assert_eq!(
        count(
            &pool,
            "SELECT COUNT(*) FROM jobs WHERE kind = 'upstream' AND status = 'done'"
        )
        .await,
        1
    );
    let runs: Vec<String> = sqlx::query_scalar(
        "SELECT settings_json FROM crossfit_runs WHERE method = 'up-demo fine-tuning'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(runs.len(), 15, "three test tasks, five seeds: {said}");
    assert!(runs[0].contains(r#""method":"reptile""#), "{}", runs[0]);
    let r = form(s, "crossfit_learning", "", Some(&rita)).await;
    assert_eq!(parse(&r)["open"], json!([]), "{said}");
    // A done job is shared, not learned again.
    let r = post_json(s, "queue_learner", &body, Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let (ok, said) = worker("crossfit-upstream,crossfit");
    assert!(ok && said.contains("no job left; 0 run here"), "{said}");
}

/// Upstream learning cancelled from the page while a worker learns it: the worker stops it
/// within a second or two, says that it was cancelled and by whom, queues no seed and leaves
/// no folder behind.
#[tokio::test(flavor = "multi_thread")]
async fn upstream_learning_cancelled_while_it_learns_stops_and_queues_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::db_url(&tmp.path().join("cancel.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let bart = tmp.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 6);
    let out = tmp.path().join("up-long");
    let line: Vec<String> = [
        "--model",
        bart.to_str().unwrap(),
        "--partition",
        "demo",
        "--method",
        "fomaml",
        "--out",
        out.to_str().unwrap(),
        "--upstream-steps",
        "1000000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let now = store::lease::Clock::System;
    let (id, method) = learners::crossfit::upstream_job::queue_upstream(&pool, line, &now)
        .await
        .unwrap();
    assert_eq!(method, "up-long fine-tuning");
    let log = tmp.path().join("worker.log");
    let args = [
        "worker",
        "--device",
        "cpu",
        "--exit-when-idle",
        "--kinds",
        "crossfit-upstream,crossfit",
        "--lease-seconds",
        "2",
    ];
    let child = common::spawn_with_model(&url, &bart, &log, &args);
    let sql = "SELECT done_updates FROM jobs WHERE id = $1 AND status = 'claimed'";
    common::until("no upstream update made", &log, || async {
        let done: Option<i64> = sqlx::query_scalar(sql)
            .bind(id)
            .fetch_optional(&pool)
            .await
            .unwrap();
        done.filter(|d| *d > 0)
    })
    .await;
    store::queues::cancel(
        &pool,
        store::lease::Queue::Upstream,
        id,
        "rita",
        &store::lease::Clock::System,
    )
    .await
    .unwrap();
    let said = common::stopped_by_cancel(child, &log, id);
    assert_eq!(
        count(&pool, "SELECT COUNT(*) FROM jobs WHERE kind = 'crossfit'").await,
        0,
        "{said}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("up-long"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
