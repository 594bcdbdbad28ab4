//! PostgreSQL with several instances: a write locks only what it protects. Workers of one study
//! never wait on another study's arrivals, on an import or on an export, while arrivals at one
//! study still take turns. SQLite has one writer by design, so this file needs
//! `CLUES_TEST_POSTGRES` and says so when it is absent.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::spawned::Spawned;
use domain::ids::StudyId;
use domain::people::Role;
use domain::study::StudyConfig;
use server::load::client::Client;
use server::load::crowd;
use sqlx::AnyPool;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::db::cli as db;
use store::tx::{begin_write, Lock};

/// Whether the suite runs on PostgreSQL; prints why not otherwise.
fn on_postgres(test: &str) -> bool {
    let on = std::env::var("CLUES_TEST_POSTGRES").is_ok_and(|s| !s.is_empty());
    if !on {
        eprintln!("{test}: skipped, it needs PostgreSQL (set CLUES_TEST_POSTGRES); SQLite has one writer by design");
    }
    on
}

async fn new_study(pool: &AnyPool, name: &str) -> StudyId {
    let config = StudyConfig {
        scenarios: vec![0],
        annotators: 5000,
        open: true,
        ..StudyConfig::default()
    };
    store::study::create(pool, None, "demo-SST-2", name, config)
        .await
        .unwrap()
}

/// Lock requests that are waiting right now: their kind and, for an advisory lock, its key.
async fn waiting(pool: &AnyPool) -> Vec<(String, Option<i64>)> {
    sqlx::query_as(
        "SELECT locktype, CASE WHEN locktype = 'advisory'
             THEN (CAST(classid AS BIGINT) << 32) | CAST(objid AS BIGINT) END
         FROM pg_locks WHERE NOT granted",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Two instances on one database with studies A and B. While a transaction holds study A's
/// guard (as an arrival at A does while it counts the places), B's workers arrive and answer,
/// and A's arrivals wait for the guard (seen waiting in `pg_locks`) and get in once it is free.
/// Then, under crowd load on B, study A is exported and tasks are imported over and over, and
/// `pg_locks` never shows a lock request waiting, except B's own arrivals taking turns.
#[tokio::test(flavor = "multi_thread")]
async fn two_studies_workers_never_wait_on_each_other_nor_on_imports_and_exports() {
    if !on_postgres("two_studies_workers_never_wait_on_each_other") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locks.db");
    let servers: Vec<Spawned> = (0..2)
        .map(|_| Spawned::start(&db, &["--new-workers-per-address", "1000000"]))
        .collect();
    let base = format!("{},{}", servers[0].base, servers[1].base);
    let pool = db::connect_existing(&common::db_url(&db)).await.unwrap();
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let (a, b) = (new_study(&pool, "A").await, new_study(&pool, "B").await);

    // Study A's guard held by another transaction.
    let held = begin_write(&pool, &[Lock::Study(a)]).await.unwrap();
    let stop_b = Arc::new(AtomicBool::new(false));
    let crowd_b = crowd::run(&base, b.0, 4, "b", stop_b.clone());
    let stop_a = Arc::new(AtomicBool::new(false));
    let crowd_a = crowd::run(&base, a.0, 2, "a", stop_a.clone());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let waits = waiting(&pool).await;
    let during: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignment_items i JOIN assignments p ON p.id = i.assignment_id
         WHERE p.study_id = $1 AND i.submitted_at IS NOT NULL",
    )
    .bind(b)
    .fetch_one(&pool)
    .await
    .unwrap();
    let places_a: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM assignments WHERE study_id = $1")
        .bind(a)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(
        during > 20,
        "B's workers answered {during} items while A was held"
    );
    assert_eq!(
        places_a, 0,
        "no place is taken in A while its guard is held"
    );
    assert!(
        waits.contains(&("advisory".into(), Some(Lock::Study(a).key()))),
        "A's arrivals wait for A's guard: {waits:?}"
    );
    held.rollback().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop_a.store(true, Ordering::Relaxed);
    let stats_a = tokio::task::spawn_blocking(move || crowd_a.join().unwrap())
        .await
        .unwrap();
    assert!(
        !stats_a.acks.is_empty(),
        "A's workers get in once the guard is free"
    );

    // An export of A and imports, over and over, under crowd load on B.
    store::study::fill(&pool, a, 3_000, "big").await.unwrap();
    let watching = Arc::new(AtomicBool::new(true));
    let watcher = tokio::spawn({
        let (pool, watching) = (pool.clone(), watching.clone());
        async move {
            let (mut samples, mut seen) = (0u32, Vec::new());
            while watching.load(Ordering::Relaxed) {
                // B's own arrivals take turns on B's guard; anything else is a wait on A,
                // on the export or on an import.
                let b_arrivals = Some(Lock::Study(b).key());
                seen.extend(
                    waiting(&pool)
                        .await
                        .into_iter()
                        .filter(|w| w.1 != b_arrivals),
                );
                samples += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            (samples, seen)
        }
    });
    let exports = std::thread::spawn({
        let base = servers[1].base.clone();
        move || {
            let client = Client::new(&base);
            let cookie = client.login("rita", "rita-password").unwrap();
            let path = format!("/export/annotations.jsonl?studies={}&synthetic=1", a.0);
            // At least 4 s and at least two whole exports, however slow a loaded machine is.
            let start = Instant::now();
            let mut bytes = Vec::new();
            while start.elapsed() < Duration::from_secs(4) || bytes.len() < 2 {
                let (status, n) = client.download(&path, &cookie).unwrap();
                assert_eq!(status, 200);
                bytes.push(n);
            }
            bytes
        }
    });
    // Imports go on for as long as the exports do, and at least twice.
    let mut imported = 0;
    while !exports.is_finished() || imported < 2 {
        let mut tasks = server::demo::demo_tasks().unwrap();
        for t in &mut tasks {
            t.spec.name = format!("bulk-{imported}-{}", t.spec.name);
        }
        server::clues::import_tasks(&pool, tasks, "own")
            .await
            .unwrap();
        imported += 1;
    }
    let bytes = tokio::task::spawn_blocking(move || exports.join().unwrap())
        .await
        .unwrap();
    watching.store(false, Ordering::Relaxed);
    let (samples, seen) = watcher.await.unwrap();
    stop_b.store(true, Ordering::Relaxed);
    let stats_b = tokio::task::spawn_blocking(move || crowd_b.join().unwrap())
        .await
        .unwrap();
    assert!(
        imported >= 2 && bytes.len() >= 2,
        "{imported} imports, {} exports",
        bytes.len()
    );
    assert!(bytes.iter().all(|&n| n > 200_000), "{bytes:?}");
    assert!(samples > 100, "{samples} samples of pg_locks");
    assert!(
        seen.is_empty(),
        "lock requests waited during exports and imports: {seen:?}"
    );
    common::stored_once(&pool, &stats_b.acks).await;
    eprintln!(
        "B: {} answers acknowledged; {imported} imports and {} exports of A meanwhile; {samples} samples of pg_locks, no wait",
        stats_b.acks.len(),
        bytes.len()
    );
}
