//! Helpers shared by the integration tests: the CLUES data location and database snapshots.
#![allow(dead_code, unused_imports)]

pub mod client;
pub mod families;
pub mod ports;
pub mod scripted_llm;
pub mod spawned;
pub mod stand_ins;
pub mod tiny_bert;
pub mod tiny_seq2seq;

use sqlx::AnyPool;
use std::path::{Path, PathBuf};
use store::db::cli as db;

/// The official CLUES data: `$CLUES_DATA`, else `../shared/data/clues` beside the project.
/// Prints a clear notice and returns `None` when it is absent, unless `CI` is set: CI has the
/// data, so its absence there fails the test instead of skipping it.
pub fn clues_data(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CLUES_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/clues")
        });
    if dir.join("SST-2").is_dir() {
        Some(dir)
    } else if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!(
            "{test}: the official CLUES data is not at {} (set CLUES_DATA); CI must have it",
            dir.display()
        );
    } else {
        eprintln!(
            "SKIPPED {test}: the official CLUES data is not at {} (set CLUES_DATA)",
            dir.display()
        );
        None
    }
}

/// The database of a test that keeps its files in `path`: `sqlite://path`, or, when
/// `CLUES_TEST_POSTGRES` names a PostgreSQL server (`postgres://user@host:port`), a database
/// on it named after the path (created on first connect; the same path gives the same one).
pub fn db_url(path: &std::path::Path) -> String {
    match std::env::var("CLUES_TEST_POSTGRES") {
        Ok(server) if !server.is_empty() => {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            path.hash(&mut h);
            format!("{}/t{:016x}", server.trim_end_matches('/'), h.finish())
        }
        _ => format!("sqlite://{}", path.display()),
    }
}

/// A fresh, empty, migrated database for one test (see `db_url`). Keep the directory alive as
/// long as the pool: dropping it deletes a SQLite file that new connections then cannot open.
pub async fn fresh_db() -> (tempfile::TempDir, AnyPool) {
    let dir = tempfile::tempdir().unwrap();
    let pool = db::connect(&db_url(&dir.path().join("t.db")))
        .await
        .unwrap();
    (dir, pool)
}

/// Row counts of every table, and the full contents of the tables a worker's requests
/// write to, to prove that a refused operation changed nothing.
pub async fn snapshot(pool: &AnyPool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in [
        "users",
        "sessions",
        "tasks",
        "data_files",
        "examples",
        "quality_issues",
        "studies",
        "study_configs",
        "crowd_ids",
        "assignments",
        "assignment_items",
        "crossfit_tasks",
        "crossfit_files",
        "crossfit_examples",
        "crossfit_partitions",
        "crossfit_runs",
        "jobs",
        "crossfit_jobs",
        "upstream_jobs",
        "machine_systems",
        "machine_runs",
        "machine_predictions",
        "machine_calls",
        "grid_jobs",
    ] {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {t}"))
            .fetch_one(pool)
            .await
            .unwrap();
        out.push((t.to_string(), n.to_string()));
    }
    for (t, cols) in [
        ("assignments", "id, k, status, last_activity, finished_at, abandoned_at"),
        (
            "assignment_items",
            "assignment_id, position, shown_at, submitted_at, acknowledged_at, client_id, answer_json, no_answer, skipped, confidence, s1",
        ),
        ("study_configs", "id, study_id, config_json"),
    ] {
        // Each row as text, the same way on both backends.
        let row = cols
            .split(", ")
            .map(|c| format!("COALESCE(CAST({c} AS TEXT), 'null')"))
            .collect::<Vec<_>>()
            .join(" || '|' || ");
        let rows: Vec<String> =
            sqlx::query_scalar(&format!("SELECT {row} FROM {t} ORDER BY 1"))
        .fetch_all(pool)
        .await
        .unwrap();
        out.push((format!("{t} rows"), rows.join("\n")));
    }
    out
}

/// The application state the router needs, over `pool`, with no site files.
pub fn app_state(pool: AnyPool) -> app::ssr::state::AppState {
    app::ssr::state::AppState::new(
        pool,
        leptos::config::LeptosOptions::builder()
            .output_name("clues-lab")
            .site_root("target/site")
            .build(),
    )
}

/// Adds users with the password `<name>-password`.
pub async fn add_users(pool: &AnyPool, users: &[(&str, domain::people::Role)]) {
    for (name, role) in users {
        store::auth::create_user(pool, name, *role, Some(format!("{name}-password")))
            .await
            .unwrap();
    }
}

/// Asserts that every acknowledged submission of a crowd load is stored, exactly once.
pub async fn stored_once(pool: &AnyPool, acks: &[server::load::crowd::Ack]) {
    for a in acks {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
             JOIN users u ON u.id = a.worker_id
             WHERE u.name = 'prolific:' || $1 AND i.position = $2 AND i.client_id = $3
               AND i.submitted_at IS NOT NULL",
        )
        .bind(&a.pid)
        .bind(a.position)
        .bind(&a.client_id)
        .fetch_one(pool)
        .await
        .unwrap();
        assert_eq!(n, 1, "{a:?}");
    }
}

/// `clues-lab --database url ARGS`: whether it succeeded, and its output (stdout then stderr).
pub fn clues(url: &str, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
        .args(["--database", url])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `clues-lab --database url ARGS` with the small BERT at `model` as the fine-tuning default
/// (and, exported, the frozen baseline's encoder), as every worker machine would have it.
pub fn clues_with_model(url: &str, model: &Path, args: &[&str]) -> std::process::Output {
    with_model(url, model, args).output().unwrap()
}

/// The command [`clues_with_model`] runs, to add to (an environment, where its output goes).
pub fn with_model(url: &str, model: &Path, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"));
    c.args(["--database", url])
        .args(args)
        .env("CLUES_FINETUNE_MODEL", model)
        .env("RUST_LOG", "error");
    c
}

/// [`clues_with_model`] started as a process that runs on (a worker), its stderr in `log`.
pub fn spawn_with_model(url: &str, model: &Path, log: &Path, args: &[&str]) -> std::process::Child {
    with_model(url, model, args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// Waits for a worker (`child`, its stderr in `log`) whose job `job` was cancelled by rita
/// while it ran: it ends well and says it stopped the job and stored nothing. Its words.
pub fn stopped_by_cancel(mut child: std::process::Child, log: &Path, job: i64) -> String {
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(log).unwrap();
    assert!(status.success(), "{said}");
    let stopped = format!("stopped job {job}: it was cancelled by rita; nothing was stored");
    assert!(said.contains(&stopped), "{said}");
    said
}

/// Stops a worker or a grid command (`child`, its stderr in `log`) holding job `job` with
/// `signal` (its name and number): it exits with the status a shell gives that signal (128 +
/// its number), says it handed the job back, and the job is queued again with the reason.
/// Its words.
pub async fn stopped_by(
    (name, signal): (&str, libc::c_int),
    mut child: std::process::Child,
    log: &Path,
    pool: &AnyPool,
    job: i64,
) -> String {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(log).unwrap();
    assert_eq!(status.code(), Some(128 + signal), "{said}");
    assert!(
        said.contains(&format!("was stopped ({name}) and handed")),
        "{said}"
    );
    let (state, error, attempts): (domain::run::JobStatus, Option<String>, i64) =
        sqlx::query_as("SELECT status, error, attempts FROM jobs WHERE id = $1")
            .bind(job)
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(
        (state, attempts),
        (domain::run::JobStatus::Queued, 1),
        "{said}"
    );
    assert!(
        error.as_deref().is_some_and(|e| e.contains(name)),
        "{error:?}"
    );
    said
}

/// Asks `f` every 5 ms until it answers something; fails after 2 minutes, saying `what` and
/// the worker's `log`.
pub async fn until<T, F, Fut>(what: &str, log: &Path, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "{what}: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// How many machine runs are `status` (running, done, failed).
pub async fn machine_runs(pool: &AnyPool, status: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs WHERE status = $1")
        .bind(status)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// The id of the task named `name`.
pub async fn task_id(pool: &AnyPool, name: &str) -> domain::ids::TaskId {
    sqlx::query_scalar("SELECT id FROM tasks WHERE name = $1")
        .bind(name)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// The Python with torch and transformers (`.ci/setup --bench` makes it); `None`, with a
/// notice naming `test`, where there is none.
pub fn hf_python(test: &str) -> Option<PathBuf> {
    let found = learners::runtime::hf_python(None);
    if found.is_none() {
        eprintln!(
            "SKIPPED {test}: no Python with torch and transformers (bash .ci/setup --bench makes \
             ~/.cache/clues-lab/hf-venv)"
        );
    }
    found
}

/// Asserts that every named weight received a gradient that is not all zero.
pub fn assert_gradients<'a>(
    grads: &candle_core::backprop::GradStore,
    names: impl IntoIterator<Item = &'a str>,
    get: &dyn Fn(&str) -> candle_core::Tensor,
    what: &str,
) {
    for name in names {
        let g = grads
            .get(&get(name))
            .unwrap_or_else(|| panic!("{what}: {name} received no gradient"));
        let size = g
            .abs()
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!(size > 0.0, "{what}: {name}: the gradient is all zero");
    }
}

/// A Python script that loads the folder `argv[1]` with transformers' `class` (every weight
/// found), reads the JSON `x` from `argv[2]`, runs `body` without gradients and prints `out`
/// as JSON.
pub fn hf_peer(class: &str, body: &str) -> String {
    format!(
        "import json, sys, torch\nfrom transformers import {class}\n\
         model, info = {class}.from_pretrained(sys.argv[1], output_loading_info=True)\n\
         assert not info['missing_keys'], info['missing_keys']\n\
         model.eval()\nx = json.load(open(sys.argv[2]))\nout = []\n\
         with torch.no_grad():\n{body}\nprint(json.dumps(out))\n"
    )
}
