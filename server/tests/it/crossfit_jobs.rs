//! CrossFit's fine-tuning shared by workers (`crossfit_jobs`, on SQLite, or PostgreSQL with
//! `CLUES_TEST_POSTGRES`): the lease rules on their own, then `crossfit learn` processes on a
//! small random BART, one killed with kill -9 while it trains a seed: every seed stored once,
//! the killed worker's seed taken over once its lease runs out, progress on the job meanwhile.
use crate::common;

use common::tiny_seq2seq::{write_seq2seq_dir, Kind};
use domain::run::JobStatus;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use store::crossfit::jobs::SeedKind;
use store::crossfit::{self as xf, jobs};
use store::lease::{self, Clock};

const TASK: &str = "demo-xf-sentiment";

async fn stored(pool: &sqlx::AnyPool, method: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM crossfit_runs WHERE method = $1")
        .bind(method)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// A job queued twice is one job, and a method's jobs share one recipe; a claim whose lease
/// ran out is taken over, and the worker that lost it can neither store its run nor write its
/// progress; the machines page's summary follows.
#[tokio::test]
async fn a_job_is_stored_once_and_a_worker_that_lost_its_lease_stores_nothing() {
    let (_dir, pool) = common::fresh_db().await;
    server::demo::ensure_demo(&pool).await.unwrap();
    let seeds = xf::seeds_of(&pool, TASK).await.unwrap();
    let recipe = r#"{"model":"tiny"}"#;
    let ids = jobs::enqueue(&pool, ("m", TASK), &seeds[..2], recipe, &Clock::System)
        .await
        .unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        jobs::enqueue(&pool, ("m", TASK), &seeds[..2], recipe, &Clock::System)
            .await
            .unwrap(),
        ids
    );
    let e = jobs::enqueue(
        &pool,
        ("m", TASK),
        &seeds[..1],
        r#"{"model":"other"}"#,
        &Clock::System,
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("another recipe"), "{e}");
    // All or nothing: the new seed before the refused one is not queued either.
    let e = jobs::enqueue(
        &pool,
        ("m", TASK),
        &[seeds[2], seeds[0]],
        r#"{"model":"other"}"#,
        &Clock::System,
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("another recipe"), "{e}");
    let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM crossfit_jobs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(queued, 2);

    // A clock of the test's: a's lease runs out when the test moves it on, not by sleeping.
    // It starts a minute and 2 ms back, so b's claim falls just before the system's now (which
    // the machines page reads).
    let minute = Duration::from_secs(60);
    let clock = Clock::manual(store::auth::now_ms() - 60_002);
    let a = lease::claim::<SeedKind>(&pool, &ids[..1], "a:1", (minute, &clock))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            a.seed,
            a.task.as_str(),
            a.settings.as_str(),
            a.lease.attempt
        ),
        (seeds[0], TASK, recipe, 1)
    );
    jobs::progress(&pool, &a, 3, 18, "setting 1 of 2, update 3 of 9")
        .await
        .unwrap();
    clock.advance(minute + Duration::from_millis(1));
    let b = lease::claim::<SeedKind>(&pool, &ids[..1], "b:2", (minute, &clock))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (b.lease.attempt, b.lease.took_over_from.as_deref()),
        (2, Some("a:1"))
    );

    let lines = xf::split_lines(&pool, TASK, seeds[0], "test")
        .await
        .unwrap();
    let preds: Vec<String> = lines.iter().map(|_| "great".to_string()).collect();
    let e = jobs::finish(&pool, &a, &preds, "{}").await.unwrap_err();
    assert!(e.to_string().contains("lost its lease"), "{e}");
    jobs::progress(&pool, &a, 9, 18, "late").await.unwrap();
    let e = jobs::finish(&pool, &b, &preds[1..], "{}")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("predictions for the"), "{e}");
    assert_eq!(stored(&pool, "m").await, 0, "nothing stored");

    // The machines page: the running job first, with its new holder and no progress yet.
    let q = jobs::queue(&pool, &Clock::System).await.unwrap();
    assert_eq!(q.open.len(), 2);
    let first = &q.open[0];
    assert_eq!(
        (
            first.status,
            first.worker.as_deref(),
            first.done,
            first.attempts
        ),
        (JobStatus::Claimed, Some("b:2"), 0, 2)
    );
    assert_eq!(q.open[1].status, JobStatus::Queued);
    assert_eq!(
        (
            q.methods[0].queued,
            q.methods[0].claimed,
            q.methods[0].workers.clone()
        ),
        (1, 1, vec!["b:2".to_string()])
    );
    jobs::progress(&pool, &b, 6, 18, "setting 1 of 2, update 6 of 9")
        .await
        .unwrap();
    let q = jobs::queue(&pool, &Clock::System).await.unwrap();
    let first = &q.open[0];
    assert_eq!(
        (first.done, first.total, first.progress.as_deref()),
        (6, 18, Some("setting 1 of 2, update 6 of 9"))
    );
    assert!(first.left_seconds.is_some_and(|s| s >= 0.0), "{first:?}");

    jobs::finish(&pool, &b, &preds, r#"{"chosen":1}"#)
        .await
        .unwrap();
    assert_eq!(stored(&pool, "m").await, 1);
    assert_eq!(
        lease::unfinished::<SeedKind>(&pool, &ids).await.unwrap().0,
        1
    );
    // Queued again: the stored seed stays done, the other stays queued.
    jobs::enqueue(&pool, ("m", TASK), &seeds[..2], recipe, &Clock::System)
        .await
        .unwrap();
    assert_eq!(
        lease::unfinished::<SeedKind>(&pool, &ids).await.unwrap().0,
        1
    );
    let q = jobs::queue(&pool, &Clock::System).await.unwrap();
    assert_eq!((q.methods[0].done, q.open.len()), (1, 1));
}

/// `clues-lab crossfit learn` as one worker, its stderr in `log`.
fn worker(url: &str, model: &str, log: &std::path::Path) -> Child {
    learner(url, model, log, "8")
}

/// The same with `steps` updates per setting.
fn learner(url: &str, model: &str, log: &std::path::Path, steps: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_clues-lab"))
        .args(["--database", url, "crossfit", "learn", "--model", model])
        .args([
            "--task",
            TASK,
            "--learning-rates",
            "0.003",
            "--batch-sizes",
            "2,4",
        ])
        .args(["--steps", steps, "--warmup", "2", "--eval-every", "4"])
        .args(["--max-output-tokens", "6", "--lease-seconds", "2"])
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn workers_share_the_seeds_and_a_killed_ones_seed_is_taken_over_and_stored_once() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("tiny-bart");
    write_seq2seq_dir(&model, Kind::Bart, 1, 5);
    let m = model.to_str().unwrap();
    let url = common::db_url(&tmp.path().join("shared.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let method = "tiny-bart direct fine-tuning";

    // The first worker is killed once it trains a seed and has written its progress.
    let first_log = tmp.path().join("first.log");
    let mut first = worker(&url, m, &first_log);
    let victim = format!(":{}", first.id());
    let started = Instant::now();
    let (job, progress) = loop {
        let held: Vec<(i64, String, Option<String>)> = sqlx::query_as(
            "SELECT id, worker, progress FROM jobs WHERE kind = 'crossfit' AND status = 'claimed' AND progress IS NOT NULL",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        if let Some((id, _, p)) = held.into_iter().find(|(_, w, _)| w.ends_with(&victim)) {
            break (id, p.unwrap());
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the first worker never trained a seed: {}",
            std::fs::read_to_string(&first_log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        progress == "starting"
            || progress.starts_with("setting ")
            || progress.starts_with("decoding"),
        "{progress}"
    );

    // While its seeds are queued, the method is not run with another recipe.
    let before = stored(&pool, method).await;
    let (ok, text) = common::clues(
        &url,
        &[
            "crossfit", "learn", "--model", m, "--task", TASK, "--steps", "3",
        ],
    );
    assert!(!ok && text.contains("another recipe"), "{text}");
    assert_eq!(stored(&pool, method).await, before);

    // Two more workers share the rest; one of them takes the killed worker's seed over.
    let logs: Vec<_> = (0..2)
        .map(|i| tmp.path().join(format!("w{i}.log")))
        .collect();
    let mut rest: Vec<Child> = logs.iter().map(|l| worker(&url, m, l)).collect();
    let names: Vec<String> = rest.iter().map(|c| format!(":{}", c.id())).collect();
    let mut said = String::new();
    for (child, log) in rest.iter_mut().zip(&logs) {
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(log).unwrap();
        assert!(status.success(), "{status}\n{text}");
        said.push_str(&text);
    }
    assert!(said.contains("taken over from"), "{said}");

    let seeds = xf::seeds_of(&pool, TASK).await.unwrap().len() as i64;
    assert_eq!(stored(&pool, method).await, seeds, "every seed stored once");
    let jobs: Vec<(i64, JobStatus, String, i64)> = sqlx::query_as(
        "SELECT id, status, worker, attempts FROM jobs WHERE kind = 'crossfit' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(jobs.len() as i64, seeds);
    for (id, status, w, attempts) in &jobs {
        assert_eq!(*status, JobStatus::Done);
        assert!(names.iter().any(|n| w.ends_with(n)), "{w}");
        assert_eq!(*attempts, if *id == job { 2 } else { 1 });
    }
    // Each run says which worker made it, and the recipe all of them shared.
    let settings: Vec<String> =
        sqlx::query_scalar("SELECT settings_json FROM crossfit_runs WHERE method = $1")
            .bind(method)
            .fetch_all(&pool)
            .await
            .unwrap();
    for s in settings {
        let s: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert!(
            names
                .iter()
                .any(|n| s["worker"].as_str().unwrap().ends_with(n)),
            "{s}"
        );
        assert_eq!(s["grid"]["batch_sizes"], serde_json::json!([2, 4]), "{s}");
    }

    // Started again once every seed is stored: nothing is queued or trained.
    let (ok, text) = common::clues(
        &url,
        &[
            "crossfit", "learn", "--model", m, "--task", TASK, "--steps", "3",
        ],
    );
    assert!(ok && text.contains("already have a run"), "{text}");
    assert_eq!(stored(&pool, method).await, seeds);
}

/// A worker that finds on renewing its lease that another worker took its seed over stops
/// training that seed within seconds, says so, and stores nothing for it.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_whose_seed_was_taken_over_stops_training_it() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("tiny-bart");
    write_seq2seq_dir(&model, Kind::Bart, 1, 5);
    let url = common::db_url(&tmp.path().join("stolen.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let log = tmp.path().join("slow.log");
    let mut child = learner(&url, model.to_str().unwrap(), &log, "1000000");
    let started = Instant::now();
    let job: i64 = loop {
        let training: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM jobs WHERE kind = 'crossfit' AND status = 'claimed' AND done_updates > 0",
        )
        .fetch_optional(&pool)
        .await
        .unwrap();
        if let Some(id) = training {
            break id;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no progress: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Another worker holds it now (as after this one's lease ran out).
    sqlx::query("UPDATE jobs SET worker = 'thief:1', lease_until = $1 WHERE id = $2")
        .bind(store::auth::now_ms() + 3_600_000)
        .bind(job)
        .execute(&pool)
        .await
        .unwrap();
    let stolen = Instant::now();
    let said = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("lost its lease") {
            break text;
        }
        assert!(
            stolen.elapsed() < Duration::from_secs(30),
            "it trained on: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        said.contains("its training stopped and nothing was stored"),
        "{said}"
    );
    let (status, worker): (JobStatus, String) =
        sqlx::query_as("SELECT status, worker FROM jobs WHERE id = $1")
            .bind(job)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((status, worker.as_str()), (JobStatus::Claimed, "thief:1"));
    assert_eq!(stored(&pool, "tiny-bart direct fine-tuning").await, 0);
}
