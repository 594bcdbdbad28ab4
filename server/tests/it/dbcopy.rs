//! Moving a study database between backends (`db copy`) and backing one up (`db backup`):
//! nothing lost or altered (row counts and content hashes), ids go on after the copied ones,
//! and a destination that holds data is refused untouched.
use crate::common;

use domain::people::Role;
use domain::study::StudyConfig;
use server::dbcopy;
use store::db::cli as db;

/// A SQLite database with every table in use: the demo (tasks, CrossFit), a study with answers,
/// a crowd worker, a session, a baseline run (its answers' probabilities are reals) and a
/// shared grid's jobs.
async fn filled(path: &std::path::Path) -> sqlx::AnyPool {
    let pool = db::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let config = StudyConfig {
        scenarios: vec![0],
        open: true,
        ..StudyConfig::default()
    };
    let id = store::study::create(&pool, None, "demo-SQuAD-v2", "moved", config)
        .await
        .unwrap();
    store::study::fill(&pool, id, 40, "c").await.unwrap();
    // The study pages' tables: a consent accepted and one refused, a questionnaire, a check.
    let config_id: i64 = sqlx::query_scalar("SELECT config_id FROM studies WHERE id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    let assignment: i64 = sqlx::query_scalar("SELECT MIN(id) FROM assignments WHERE study_id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    for (sql, binds) in [
        ("UPDATE assignments SET consent_hash = 'ab12', consented_at = 5 WHERE id = $1", vec![assignment]),
        ("INSERT INTO consent_refusals (study_id, config_id, consent_hash, platform, refused_at) VALUES ($1, $2, 'ab12', 'mturk', 7)", vec![id.0, config_id]),
        ("INSERT INTO questionnaire_answers (assignment_id, stage, shown_at, submitted_at, answers_json) VALUES ($1, 'before', 5, 9, '{\"age\":33.5}')", vec![assignment]),
        ("INSERT INTO attention_answers (assignment_id, check_index, shown_at, submitted_at, client_id, answer_json, skipped, passed) VALUES ($1, 0, 10, 12, 'c', '[\"x\"]', 0, 1)", vec![assignment]),
        // The plan a first arrival freezes (`load fill` makes no arrival).
        ("INSERT INTO analysis_plans (study_id, plan_json, sha256, frozen_at) VALUES ($1, '{\"version\":1}', 'cd34', 3)", vec![id.0]),
    ] {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = q.bind(b);
        }
        q.execute(&pool).await.unwrap();
    }
    let worker = store::auth::crowd_worker(&pool, domain::platform::Platform::Prolific, "moved1")
        .await
        .unwrap();
    store::auth::open_session(&pool, worker.id).await.unwrap();
    learners::jobs::run_baseline(
        &pool,
        "demo-SST-2",
        Some(vec![(2, 1)]),
        false,
        None,
        learners::runtime::Device::Cpu,
        false,
    )
    .await
    .unwrap();
    // A language model's call, as `icl` stores them (here on the baseline's run).
    sqlx::query(
        "INSERT INTO machine_calls (run_id, example_id, prompt, reply, reading_json)
         SELECT MIN(id), (SELECT MIN(id) FROM examples), 'Answer:', ' positive', '{\"answer\":[\"positive\"],\"parts\":[]}' FROM machine_runs",
    )
    .execute(&pool)
    .await
    .unwrap();
    // A shared grid: one group done (its run the baseline's), one held by a worker.
    let task = common::task_id(&pool, "demo-SST-2").await;
    use learners::jobs::grid;
    let jobs = grid::enqueue(
        &pool,
        "grid",
        grid::Learner::Onnx,
        Some("models/x"),
        &[(task, 2, 1), (task, 2, 2)],
        (false, &store::lease::Clock::System),
    )
    .await
    .unwrap();
    let lease = std::time::Duration::from_secs(60);
    let held = store::lease::claim::<store::machine::grid::GridKind>(
        &pool,
        &jobs,
        "box:1",
        (lease, &store::lease::Clock::System),
    )
    .await
    .unwrap()
    .unwrap();
    let run: domain::ids::RunId = sqlx::query_scalar("SELECT MIN(id) FROM machine_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE machine_runs SET grid_job_id = $1 WHERE id = $2")
        .bind(held.lease.job)
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
    store::lease::claim::<store::machine::grid::GridKind>(
        &pool,
        &jobs,
        "box:2",
        (lease, &store::lease::Clock::System),
    )
    .await
    .unwrap()
    .unwrap();
    // The worker holding them, as the machines page lists it.
    let kinds = ["crossfit".to_string()];
    let arrival = store::machine::workers::Arrival {
        name: "box:3",
        host: "box",
        kinds: &kinds,
        device: "candle trains on CPU (--device cpu)",
    };
    store::machine::workers::arrived(&pool, arrival)
        .await
        .unwrap();
    // CrossFit's shared fine-tuning: one seed held by a worker, one queued.
    use store::crossfit as xf;
    let seeds = xf::seeds_of(&pool, "demo-xf-sentiment").await.unwrap();
    let clock = store::lease::Clock::System;
    let tiny = ("tiny", "demo-xf-sentiment");
    let jobs = xf::jobs::enqueue(&pool, tiny, &seeds[..2], "{}", &clock)
        .await
        .unwrap();
    store::lease::claim::<xf::jobs::SeedKind>(
        &pool,
        &jobs,
        "box:3",
        (lease, &store::lease::Clock::System),
    )
    .await
    .unwrap()
    .unwrap();
    xf::upstream::enqueue(
        &pool,
        "demo",
        ("/models/up", "up fine-tuning"),
        "[]",
        &clock,
    )
    .await
    .unwrap();
    pool
}

#[tokio::test]
async fn a_study_database_goes_to_the_other_backend_and_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let source = filled(&dir.path().join("source.db")).await;
    // There: PostgreSQL when the suite runs on it, else another SQLite file.
    let there = db::connect(&common::db_url(&dir.path().join("there.db")))
        .await
        .unwrap();
    let out = dbcopy::copy(&source, &there).await.unwrap();
    assert!(out.iter().all(|t| t.agrees()), "{out:#?}");
    let answers = out.iter().find(|t| t.table == "assignment_items").unwrap();
    assert!(answers.rows >= 40, "{answers:?}");
    assert!(out.iter().all(|t| t.rows > 0), "{out:#?}");
    // New rows take ids after the copied ones.
    let before: domain::ids::UserId = sqlx::query_scalar("SELECT MAX(id) FROM users")
        .fetch_one(&there)
        .await
        .unwrap();
    let id = store::auth::create_user(&there, "newcomer", Role::Worker, None)
        .await
        .unwrap();
    assert!(id > before, "{id} after {before}");
    sqlx::query("DELETE FROM users WHERE id = $1")
        .bind(id)
        .execute(&there)
        .await
        .unwrap();
    // And back: the same contents as the source, table by table.
    let back = db::connect(&format!(
        "sqlite://{}",
        dir.path().join("back.db").display()
    ))
    .await
    .unwrap();
    let again = dbcopy::copy(&there, &back).await.unwrap();
    assert!(again.iter().all(|t| t.agrees()), "{again:#?}");
    let hashes = |r: &[dbcopy::TableCopy]| {
        r.iter()
            .map(|t| (t.table, t.rows, t.hash.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(hashes(&again), hashes(&out));
}

#[tokio::test]
async fn a_destination_with_data_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let source = filled(&dir.path().join("a.db")).await;
    let busy = filled(&dir.path().join("b.db")).await;
    let before = common::snapshot(&busy).await;
    let e = dbcopy::copy(&source, &busy).await.unwrap_err().to_string();
    assert!(e.contains("already holds data"), "{e}");
    assert_eq!(common::snapshot(&busy).await, before);
}

#[tokio::test]
async fn a_backup_of_a_live_sqlite_database_has_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.db");
    let live = filled(&path).await;
    let file = dir.path().join("backup.db");
    let url = format!("sqlite://{}", path.display());
    dbcopy::backup(&live, &url, &file).await.unwrap();
    // A second backup to the same file is refused.
    let e = dbcopy::backup(&live, &url, &file).await.unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    let restored = db::connect_existing(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    assert_eq!(
        common::snapshot(&restored).await,
        common::snapshot(&live).await
    );
}
