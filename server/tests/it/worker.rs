//! `clues-lab worker` on a small random BERT and BART: jobs of every kind queued with
//! `--queue-only` (nothing run, nothing stored) are run by workers from the recipes the jobs
//! carry, `--kinds` and the machine (a worker without ONNX Runtime) limit what one takes,
//! `--exit-when-idle` ends it, and a worker stopped by
//! SIGTERM mid-job hands the job back at once; the next worker stores it, once.
use crate::common;

use axum::http::StatusCode;
use common::client::{form, machines_page, parse};
use common::clues;
use common::tiny_seq2seq::{write_seq2seq_dir, Kind};
use domain::run::JobStatus;
use serde_json::json;
use std::path::Path;
use std::process::{Child, Command, Output};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

async fn jobs_by_status(pool: &sqlx::AnyPool, kind: &str) -> Vec<(JobStatus, i64)> {
    sqlx::query_as(
        "SELECT status, COUNT(*) FROM jobs WHERE kind = $1 GROUP BY status ORDER BY status",
    )
    .bind(kind)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The runs of the two systems the queued grid jobs store (the demo brings runs of its own).
async fn machine_runs(pool: &sqlx::AnyPool) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name IN ($1, $2)",
    )
    .bind(learners::baseline::SYSTEM)
    .bind(learners::tune::SYSTEM)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// The CrossFit runs of the queued method.
const SEED_RUNS: &str =
    "SELECT COUNT(*) FROM crossfit_runs WHERE method = 'tiny-bart direct fine-tuning'";

async fn count(pool: &sqlx::AnyPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// CrossFit's grid for the tiny BART: one setting of `steps` updates.
fn learn<'a>(model: &'a str, steps: &'a str) -> Vec<&'a str> {
    vec![
        "crossfit",
        "learn",
        "--model",
        model,
        "--task",
        "demo-xf-sentiment",
        "--learning-rates",
        "0.003",
        "--batch-sizes",
        "2",
        "--steps",
        steps,
        "--warmup",
        "2",
        "--eval-every",
        steps,
        "--max-output-tokens",
        "6",
        "--queue-only",
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn queued_jobs_of_every_kind_are_run_by_workers_from_their_recipes() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("worker", 5).await;
    let bart = dir.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 5);
    let task = ["--task", "demo-SST-2", "--device", "cpu", "--queue-only"];
    for args in [
        [&["baseline", "--finetune"][..], &task].concat(),
        [&["baseline"][..], &task].concat(),
        learn(bart.to_str().unwrap(), "6"),
    ] {
        let out = common::clues_with_model(&url, &model, &args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("queued"), "{}", text(&out));
    }
    // Queued, nothing run or stored.
    let groups = count(
        &pool,
        "SELECT COUNT(*) FROM (SELECT DISTINCT f.k, f.split FROM data_files f
         JOIN tasks t ON t.id = f.task_id WHERE t.name = 'demo-SST-2' AND f.kind = 'train') g",
    )
    .await;
    assert!(groups >= 2, "{groups} groups");
    assert_eq!(
        jobs_by_status(&pool, "grid").await,
        vec![(JobStatus::Queued, groups + 1)],
        "a fine-tuning job per group and one frozen-baseline job for the task"
    );
    assert_eq!(
        jobs_by_status(&pool, "crossfit").await,
        vec![(JobStatus::Queued, 5)]
    );
    assert_eq!(machine_runs(&pool).await, 0);
    assert_eq!(count(&pool, SEED_RUNS).await, 0);
    let recipe: String = sqlx::query_scalar(
        "SELECT recipe_json FROM jobs WHERE kind = 'grid' AND recipe_json LIKE '%fine-tuning%' LIMIT 1",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(recipe.contains(&format!("{}", model.display())), "{recipe}");

    // A worker on a machine without ONNX Runtime: asked only for kinds that need it, it does
    // not start; asked for every kind, it leaves those to other machines (claiming none of
    // them, failing none) and runs the rest, and ends when none of what it takes is left.
    let worker = [
        "worker",
        "--exit-when-idle",
        "--device",
        "cpu",
        "--poll-seconds",
        "1",
    ];
    let without_onnx = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_clues-lab"));
        c.args(["--database", &url])
            .args(worker)
            .args(extra)
            .env("CLUES_FINETUNE_MODEL", &model)
            .env("ORT_DYLIB_PATH", dir.path().join("no-onnxruntime.so"))
            .env("RUST_LOG", "error");
        c.output().unwrap()
    };
    let out = without_onnx(&["--kinds", "frozen-baseline,fine-tuning"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("can run none of the kinds of job asked for")
            && text(&out).contains("no-onnxruntime.so"),
        "{}",
        text(&out)
    );
    let out = without_onnx(&[]);
    assert!(out.status.success(), "{}", text(&out));
    for kind in ["FrozenBaseline", "FineTuning", "Onnx"] {
        let said = format!("leaves {kind} jobs to other machines: ORT_DYLIB_PATH: no such file");
        assert!(text(&out).contains(&said), "{}", text(&out));
    }
    assert!(text(&out).contains("5 run here"), "{}", text(&out));
    assert_eq!(
        jobs_by_status(&pool, "crossfit").await,
        vec![(JobStatus::Done, 5)]
    );
    assert_eq!(count(&pool, SEED_RUNS).await, 5);
    assert_eq!(
        jobs_by_status(&pool, "grid").await,
        vec![(JobStatus::Queued, groups + 1)]
    );
    let tried = count(
        &pool,
        "SELECT COUNT(*) FROM jobs WHERE kind = 'grid' AND attempts > 0",
    );
    assert_eq!(tried.await, 0, "no grid job was claimed");

    // Every other kind, by a worker started from another folder.
    let out = Command::new(env!("CARGO_BIN_EXE_clues-lab"))
        .args(["--database", &url])
        .args(worker)
        .env("CLUES_FINETUNE_MODEL", &model)
        .env("RUST_LOG", "error")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        jobs_by_status(&pool, "grid").await,
        vec![(JobStatus::Done, groups + 1)]
    );
    let runs: Vec<(String, i64)> = sqlx::query_as(
        "SELECT s.name, COUNT(*) FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE r.status = 'done' AND s.name IN ($1, $2) GROUP BY s.name ORDER BY s.name",
    )
    .bind(learners::baseline::SYSTEM)
    .bind(learners::tune::SYSTEM)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        runs,
        vec![
            (learners::tune::SYSTEM.to_string(), groups),
            (learners::baseline::SYSTEM.to_string(), groups)
        ],
        "{}",
        text(&out)
    );
    assert_eq!(machine_runs(&pool).await, 2 * groups);
}

/// A worker process (`worker --device cpu` and `extra`) writing its stderr to `log`.
fn spawn_worker(url: &str, model: &Path, log: &Path, extra: &[&str]) -> Child {
    let mut args = vec!["worker", "--device", "cpu"];
    args.extend(extra);
    common::spawn_with_model(url, model, log, &args)
}

/// The CrossFit job a worker has trained on a while (waits up to 2 minutes for one).
async fn seed_under_way(pool: &sqlx::AnyPool, log: &Path) -> i64 {
    common::until("no job under way", log, || async {
        sqlx::query_scalar(
            "SELECT id FROM jobs WHERE kind = 'crossfit' AND status = 'claimed' AND done_updates > 0",
        )
        .fetch_optional(pool)
        .await
        .unwrap()
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_stopped_by_sigterm_hands_its_job_back_and_the_next_one_stores_it_once() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("sigterm", 6).await;
    let bart = dir.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 6);
    let (ok, out) = clues(&url, &learn(bart.to_str().unwrap(), "800"));
    assert!(ok, "{out}");
    let log = dir.path().join("stopped.log");
    let child = spawn_worker(&url, &model, &log, &[]);
    // Once it has trained a while on its first seed, the machines page lists it (the kinds its
    // machine runs, where its models run and why, the seed it holds); then SIGTERM.
    let held = seed_under_way(&pool, &log).await;
    let (page, rita, wendy) = machines_page(&pool).await;
    let r = form(&page, "live_workers", "", Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let live = parse(&r);
    assert_eq!(live.as_array().map(Vec::len), Some(1), "{live}");
    let w = &live[0];
    let pid = format!(":{}", child.id());
    assert!(w["name"].as_str().is_some_and(|n| n.ends_with(&pid)), "{w}");
    assert!(
        w["kinds"].as_array().unwrap().contains(&json!("crossfit")),
        "{w}"
    );
    assert!(
        w["device"]
            .as_str()
            .is_some_and(|d| d.contains("candle trains on CPU (--device cpu)")),
        "{w}"
    );
    assert_eq!(w["holds"], json!(format!("crossfit job {held}")), "{w}");
    let r = form(&page, "live_workers", "", Some(&wendy)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let said = common::stopped_by(("SIGTERM", libc::SIGTERM), child, &log, &pool, held).await;
    assert_eq!(
        count(
            &pool,
            "SELECT COUNT(*) FROM jobs WHERE kind = 'crossfit' AND status = 'claimed'"
        )
        .await,
        0,
        "nothing is left held by the stopped worker"
    );
    // A worker that has ended is no longer listed.
    let r = form(&page, "live_workers", "", Some(&rita)).await;
    assert_eq!(parse(&r), json!([]), "{said}");

    // The next worker runs every seed; the handed-back one is claimed a second time.
    let out = common::clues_with_model(
        &url,
        &model,
        &[
            "worker",
            "--exit-when-idle",
            "--device",
            "cpu",
            "--kinds",
            "crossfit",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        jobs_by_status(&pool, "crossfit").await,
        vec![(JobStatus::Done, 5)]
    );
    let per_seed: Vec<i64> = sqlx::query_scalar(
        "SELECT COUNT(*) FROM crossfit_runs WHERE method = 'tiny-bart direct fine-tuning'
         GROUP BY task_id, seed ORDER BY seed",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(per_seed, vec![1; 5], "each seed stored once");
    let attempts: i64 = sqlx::query_scalar("SELECT attempts FROM jobs WHERE id = $1")
        .bind(held)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(attempts, 2);
}

/// A seed cancelled from the machines page while its worker trains it: the worker stops it at
/// its next renewal, says that it was cancelled and by whom (not that another worker took it
/// over), stores nothing of it and goes on to the other seeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_running_job_cancelled_from_the_page_stops_and_its_worker_says_so() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("cancel", 6).await;
    let bart = dir.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 6);
    let (ok, out) = clues(&url, &learn(bart.to_str().unwrap(), "800"));
    assert!(ok, "{out}");
    let log = dir.path().join("cancelled.log");
    let extra = [
        "--exit-when-idle",
        "--kinds",
        "crossfit",
        "--lease-seconds",
        "2",
    ];
    let child = spawn_worker(&url, &model, &log, &extra);
    let held = seed_under_way(&pool, &log).await;
    store::queues::cancel(
        &pool,
        store::lease::Queue::Crossfit,
        held,
        "rita",
        &store::lease::Clock::System,
    )
    .await
    .unwrap();
    let said = common::stopped_by_cancel(child, &log, held);
    assert!(!said.contains("took it over"), "{said}");
    assert_eq!(
        jobs_by_status(&pool, "crossfit").await,
        vec![(JobStatus::Done, 4), (JobStatus::Failed, 1)]
    );
    let (error, runs): (Option<String>, i64) = sqlx::query_as(
        "SELECT j.error, (SELECT COUNT(*) FROM crossfit_runs r
           WHERE r.method = c.method AND r.task_id = c.task_id AND r.seed = c.seed)
         FROM crossfit_jobs c JOIN jobs j ON j.id = c.id WHERE j.id = $1",
    )
    .bind(held)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((error.as_deref(), runs), (Some("cancelled by rita"), 0));
    assert_eq!(count(&pool, SEED_RUNS).await, 4);
}

#[test]
fn bad_worker_arguments_are_refused_before_anything_is_claimed() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::db_url(&tmp.path().join("w.db"));
    let (ok, out) = clues(&url, &["worker", "--kinds", "everything"]);
    assert!(!ok && out.contains("invalid value 'everything'"), "{out}");
    let (ok, out) = clues(
        &url,
        &["eval", "--model", "m", "--task", "t", "--queue-only"],
    );
    assert!(
        !ok && out.contains("--queue-only queues the evaluations of a --plan"),
        "{out}"
    );
}
