//! Several server processes on one database, as behind a load balancer: started at the same
//! moment on an empty database, 300 simultaneous arrivals for a handful of places, and crowd
//! load spread over four processes with one killed by kill -9. Runs on the backend the suite
//! runs on (SQLite's file locks, or PostgreSQL with `CLUES_TEST_POSTGRES`).
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::spawned::Spawned;
use domain::people::Role;
use domain::study::StudyConfig;
use server::load::client::Client;
use server::load::crowd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;
use store::db::cli as db;

const INSTANCES: usize = 4;

/// `INSTANCES` servers started together on `db`, each letting many workers in from one address.
fn start_all(db: &std::path::Path) -> Vec<Spawned> {
    let handles: Vec<_> = (0..INSTANCES)
        .map(|_| {
            let db = db.to_path_buf();
            std::thread::spawn(move || {
                Spawned::start(&db, &["--new-workers-per-address", "1000000"])
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

async fn study(db: &std::path::Path, scenarios: Vec<u32>, annotators: u32) -> i64 {
    let pool = db::connect_existing(&common::db_url(db)).await.unwrap();
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let config = StudyConfig {
        scenarios,
        annotators,
        open: true,
        ..StudyConfig::default()
    };
    let id = store::study::create(&pool, None, "demo-SST-2", "instances", config)
        .await
        .unwrap();
    pool.close().await;
    id.0
}

#[tokio::test(flavor = "multi_thread")]
async fn four_instances_fill_exactly_n_places_from_300_simultaneous_arrivals() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("many.db");
    // Four first starts at once: one migration, one demo import.
    let servers = start_all(&db);
    let pool = db::connect_existing(&common::db_url(&db)).await.unwrap();
    let demo_tasks: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE name = 'demo-SST-2'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(demo_tasks, 1);
    let demo_studies: Vec<(String, i64)> = sqlx::query_as(
        "SELECT t.name, COUNT(*) FROM studies s JOIN tasks t ON t.id = s.task_id
         WHERE t.source = 'demo' GROUP BY t.name ORDER BY t.name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(
        demo_studies.iter().all(|(_, n)| *n == 1),
        "{demo_studies:?}"
    );
    let id = study(&db, vec![0, 2], 3).await;
    let bases: Vec<String> = servers.iter().map(|s| s.base.clone()).collect();
    let go = Arc::new(Barrier::new(300));
    let arrivals: Vec<_> = (0..300)
        .map(|i| {
            let (base, go) = (bases[i % INSTANCES].clone(), go.clone());
            std::thread::spawn(move || {
                let client = Client::new(&base);
                go.wait();
                let cookie = client.join(id, &format!("many{i:03}"))?;
                client.study_state(id, &cookie).map(|_| ())
            })
        })
        .collect();
    let results: Vec<Result<(), String>> =
        arrivals.into_iter().map(|t| t.join().unwrap()).collect();
    let placed = results.iter().filter(|r| r.is_ok()).count();
    // Everyone else heard that the study is full, nobody got a server error.
    for r in &results {
        if let Err(e) = r {
            assert!(e.contains("409"), "{e}");
        }
    }
    let per_scenario: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT k, COUNT(*) FROM assignments WHERE study_id = $1 AND status != 'abandoned'
         GROUP BY k ORDER BY k",
    )
    .bind(id)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(per_scenario, vec![(0, 3), (2, 3)]);
    assert_eq!(placed, 6);
}

#[tokio::test(flavor = "multi_thread")]
async fn crowd_load_over_four_instances_keeps_every_acknowledged_answer_through_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crowd.db");
    let mut servers = start_all(&db);
    let id = study(&db, vec![0], 5000).await;
    let stop = Arc::new(AtomicBool::new(false));
    let loads: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| crowd::run(&s.base, id, 6, &format!("i{i}"), stop.clone()))
        .collect();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    servers.remove(0).kill9();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::Relaxed);
    let mut acks = Vec::new();
    for load in loads {
        let stats = tokio::task::spawn_blocking(move || load.join().unwrap())
            .await
            .unwrap();
        acks.extend(stats.acks);
    }
    drop(servers);
    assert!(acks.len() > 50, "{} acknowledged", acks.len());
    let pool = db::connect_existing(&common::db_url(&db)).await.unwrap();
    common::stored_once(&pool, &acks).await;
    eprintln!(
        "{} acknowledged over {INSTANCES} instances, one killed",
        acks.len()
    );
}

/// While one process holds the startup lock (a server loading the demo), a command on a
/// database whose schema is up to date opens it at once; a database that still needs its
/// migrations waits for the lock, then migrates.
#[tokio::test(flavor = "multi_thread")]
async fn only_a_database_with_pending_migrations_waits_for_the_startup_lock() {
    use store::db::{open, Open, StartupLock};
    let dir = tempfile::tempdir().unwrap();
    let ready = common::db_url(&dir.path().join("ready.db"));
    open(&ready, Open::default()).await.unwrap().close().await;
    let held = StartupLock::take(&ready).await.unwrap();
    let pool = tokio::time::timeout(Duration::from_secs(10), open(&ready, Open::default()))
        .await
        .expect("an up-to-date database opens while the startup lock is held")
        .unwrap();
    pool.close().await;
    drop(held);

    let new = common::db_url(&dir.path().join("new.db"));
    if new.starts_with("postgres") {
        // An advisory lock lives in one database: create it, empty, to lock it.
        use sqlx::migrate::MigrateDatabase;
        sqlx::any::install_default_drivers();
        if !sqlx::Any::database_exists(&new).await.unwrap() {
            sqlx::Any::create_database(&new).await.unwrap();
        }
    }
    let held = StartupLock::take(&new).await.unwrap();
    let opening = tokio::spawn({
        let new = new.clone();
        async move { open(&new, Open::default()).await }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !opening.is_finished(),
        "a database to migrate waits for the lock"
    );
    drop(held);
    let pool = tokio::time::timeout(Duration::from_secs(30), opening)
        .await
        .expect("it migrates once the lock is free")
        .unwrap()
        .unwrap();
    let versions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(versions > 0);
}
