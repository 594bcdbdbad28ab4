//! The server as a process under hostile load: a login flood from many addresses, exports of
//! 300k rows, and kill -9 in the middle of crowd load. Assertions are on memory and on data,
//! never on time (the figures are printed by `clues-lab load`, see server/bench/load.sh).
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::spawned::{Spawned, MB};
use domain::people::Role;
use domain::study::StudyConfig;
use server::load::client::{Client, RssSampler};
use server::load::crowd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use store::db::cli as db;

/// A file database with the demo, a researcher `rita` and an open zero-shot study of the demo's
/// SST-2 with room for `places` workers; returns its id.
async fn prepare(db: &std::path::Path, places: u32) -> domain::ids::StudyId {
    let pool = db::connect(&common::db_url(db)).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let config = StudyConfig {
        scenarios: vec![0],
        annotators: places,
        open: true,
        ..StudyConfig::default()
    };
    let id = store::study::create(&pool, None, "demo-SST-2", "load", config)
        .await
        .unwrap();
    pool.close().await;
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn a_login_flood_is_throttled_and_memory_stays_bounded_and_returns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flood.db");
    prepare(&db, 3).await;
    let server = Spawned::start(&db, &["--trust-proxy"]);
    let c = Client::new(&server.base);
    // Warm up (one sign-in of each kind), then the idle size.
    c.login("rita", "rita-password").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let idle = server.rss();
    let rss = RssSampler::start(server.pid());
    let base = server.base.clone();
    let statuses = tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..150)
                .map(|i| {
                    let c = Client::new(&base);
                    scope.spawn(move || {
                        let addr = format!("10.1.{}.{}", i / 256, i % 256);
                        (0..3)
                            .map(|n| {
                                c.post(
                                    "/api/login",
                                    "application/x-www-form-urlencoded",
                                    &format!("name=nobody-{i}-{n}&password=wrong-password"),
                                    &[("x-forwarded-for", &addr)],
                                )
                                .map(|r| r.status)
                                .unwrap_or_else(|e| panic!("no answer to a login: {e}"))
                            })
                            .collect::<Vec<u16>>()
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|t| t.join().unwrap())
                .collect::<Vec<u16>>()
        })
    })
    .await
    .unwrap();
    let peak = rss.peak();
    drop(rss);
    std::thread::sleep(Duration::from_secs(6));
    let after = server.rss();
    eprintln!(
        "login flood: idle {} MB, peak {} MB, after {} MB",
        idle / MB,
        peak / MB,
        after / MB
    );
    let count = |s: u16| statuses.iter().filter(|&&x| x == s).count();
    assert_eq!(count(401) + count(429), 450, "{statuses:?}");
    assert!(count(401) > 0 && count(429) > 0, "{statuses:?}");
    assert!(peak < 200 * MB, "peak RSS {} MB", peak / MB);
    assert!(
        after < idle + 40 * MB,
        "RSS {} MB after, {} MB idle",
        after / MB,
        idle / MB
    );

    // One account: ten attempts, then even the right password waits (429 + Retry-After) from
    // any address the account never signed in from.
    let from = [("x-forwarded-for", "10.9.9.9")];
    let attempt = |password: &str| {
        c.post(
            "/api/login",
            "application/x-www-form-urlencoded",
            &format!("name=rita&password={password}"),
            &from,
        )
        .unwrap()
    };
    // (The warm-up above was the account's first attempt.)
    for _ in 0..9 {
        assert_eq!(attempt("wrong-password").status, 401);
    }
    let r = attempt("rita-password");
    assert_eq!(r.status, 429, "{}", r.body);
    let wait: u64 = r.retry_after.expect("Retry-After").parse().unwrap();
    assert!((1..=30).contains(&wait), "{wait}");
    assert!(r.body.contains(r#"{"Throttled":["#), "{}", r.body);
    // Its owner, at the address they signed in from (the warm-up's), is not locked out.
    c.login("rita", "rita-password").unwrap();
}

/// An SST-2-shaped task of 300 test reviews (written here), a zero-shot study of it and 1000
/// synthetic workers who answered every item: 300k annotation rows. Returns the study; the
/// next one (its id + 1) is an open study of the task with room for a crowd.
async fn three_hundred_thousand_rows(
    dir: &std::path::Path,
    db: &std::path::Path,
) -> domain::ids::StudyId {
    let sst = dir.join("data/SST-2");
    std::fs::create_dir_all(&sst).unwrap();
    let line = |id: usize, label: &str| {
        serde_json::json!({"answer": [label], "question": "positive or negative?", "id": id,
            "context": format!("review {id}: a {} film", if label == "positive" { "bright, moving" } else { "dull, tired" })})
            .to_string() + "\n"
    };
    let labels = ["positive", "negative"];
    let test: String = (0..300).map(|i| line(1000 + i, labels[i % 2])).collect();
    let train: String = (0..10).map(|i| line(i, labels[i % 2])).collect();
    std::fs::write(sst.join("sst_test.jsonl"), test).unwrap();
    std::fs::write(sst.join("sst_train_10_1.jsonl"), train).unwrap();
    let pool = db::connect(&common::db_url(db)).await.unwrap();
    server::clues::import_dir(&pool, &dir.join("data"))
        .await
        .unwrap();
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let config = StudyConfig {
        scenarios: vec![0],
        open: true,
        ..StudyConfig::default()
    };
    let study = store::study::create(&pool, None, "SST-2", "big", config)
        .await
        .unwrap();
    let room = StudyConfig {
        scenarios: vec![0],
        open: true,
        annotators: 100_000,
        ..StudyConfig::default()
    };
    store::study::create(&pool, None, "SST-2", "crowd", room)
        .await
        .unwrap();
    let (workers, rows) = store::study::fill(&pool, study, 300_000, "t")
        .await
        .unwrap();
    assert_eq!((workers, rows), (1000, 300_000));
    pool.close().await;
    study
}

/// Four crowd workers answering `study` beside the exports, each leaving after 50 answers for a
/// new one, and each pausing 50 ms after an answer. A person takes seconds an item, so this is a
/// crowd of hundreds (up to 80 answers a second). Exports run at a lower priority than the
/// crowd (`store::heavy`); four workers answering at once take every cycle a debug build on two
/// cores has, and the exports beside them outlasted the test's ten-minute downloads.
fn paced_crowd(
    base: &str,
    study: i64,
    tag: &str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<crowd::CrowdStats> {
    crowd::run_paced(
        base,
        study,
        4,
        tag,
        stop,
        Some(50),
        Duration::from_millis(50),
    )
}

/// Answers were acknowledged all through an export that ran from `started` to `ended` (ms):
/// no crowd errors, and no gap between stored answers longer than the stall an export on the
/// async workers caused (4.5-7 s in a release build, far more in a debug one).
async fn acknowledged_all_through(
    db: &std::path::Path,
    started: i64,
    ended: i64,
    crowd: &crowd::CrowdStats,
    file: &str,
) {
    assert!(crowd.errors.is_empty(), "{file}: {:?}", &crowd.errors[..1]);
    let pool = db::connect(&common::db_url(db)).await.unwrap();
    let mut times: Vec<i64> = sqlx::query_scalar(
        "SELECT submitted_at FROM assignment_items WHERE submitted_at BETWEEN $1 AND $2
         AND assignment_id IN (SELECT id FROM assignments WHERE study_id = (SELECT MAX(id) FROM studies))",
    )
    .bind(started)
    .bind(ended)
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    times.push(started);
    times.push(ended);
    times.sort_unstable();
    let gap = times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    eprintln!(
        "{file}: {} answers acknowledged during the {} ms export, longest gap {gap} ms, slowest answer {:.0} ms",
        times.len() - 2,
        ended - started,
        crowd.slowest_ms()
    );
    assert!(times.len() - 2 >= 20, "{file}: {} answers", times.len() - 2);
    assert!(
        gap < 4000,
        "{file}: no answer stored for {gap} ms during the export"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exports_of_300k_rows_stream_in_bounded_memory_and_give_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.db");
    let study = three_hundred_thousand_rows(dir.path(), &db).await;
    let server = Spawned::start(&db, &["--no-demo", "--new-workers-per-address", "1000000"]);
    let c = Client::new(&server.base);
    let cookie = c.login("rita", "rita-password").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let idle = server.rss();
    let mut after_rounds = Vec::new();
    // The bundle once (it is the slowest), the row files twice: memory must not grow.
    for files in [
        &[
            ("annotations.csv", 40),
            ("annotations.jsonl", 100),
            ("bundle.tar", 150),
        ][..],
        &[("annotations.csv", 40), ("annotations.jsonl", 100)][..],
    ] {
        for &(file, min_mb) in files {
            let rss = RssSampler::start(server.pid());
            // Crowd workers of the other study answer all through the export.
            let stop = Arc::new(AtomicBool::new(false));
            let tag = format!("r{}-{}", after_rounds.len(), file.replace('.', "-"));
            let crowd = paced_crowd(&server.base, study.0 + 1, &tag, stop.clone());
            let started = store::auth::now_ms();
            let (status, bytes) = c
                .download(
                    &format!("/export/{file}?studies={study}&synthetic=1"),
                    &cookie,
                )
                .unwrap();
            let ended = store::auth::now_ms();
            stop.store(true, Ordering::Relaxed);
            let crowd = crowd.join().unwrap();
            let peak = rss.peak();
            drop(rss);
            acknowledged_all_through(&db, started, ended, &crowd, file).await;
            // The log's file keeps the size it grew to (a restart reuses it from the start).
            let wal = std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len());
            eprintln!(
                "{file}: {} MB, server peak {} MB (idle {} MB), write-ahead log {} MB",
                bytes / MB,
                peak / MB,
                idle / MB,
                wal / MB
            );
            // Reads of a page each, so the log is restarted all through an export: one read
            // over every row grew it to 549 MB during a bundle.
            assert!(wal < 128 * MB, "{file}: write-ahead log of {} MB", wal / MB);
            assert_eq!(status, 200, "{file}");
            assert!(bytes > min_mb * MB, "{file}: {bytes} bytes");
            assert!(
                peak < idle + 200 * MB,
                "{file}: peak {} MB, idle {} MB",
                peak / MB,
                idle / MB
            );
        }
        // The server trims its heaps every 5 s.
        std::thread::sleep(Duration::from_secs(6));
        after_rounds.push(server.rss());
    }
    // A second round does not grow memory, and it comes back: the bundle's build of the study
    // (~110 MB) is kept while the study's own data is unchanged (answers to the other study
    // leave its version as it was), and let go once its data moves on and it has gone unused
    // for 15 s (swept every 10 s, the heaps trimmed every 5 s).
    let (first, second) = (after_rounds[0], after_rounds[1]);
    eprintln!("after the rounds: {} MB, {} MB", first / MB, second / MB);
    assert!(
        second < first + 20 * MB,
        "{} MB then {} MB",
        first / MB,
        second / MB
    );
    let pool = db::connect(&common::db_url(&db)).await.unwrap();
    sqlx::query("UPDATE studies SET name = name WHERE id = $1")
        .bind(study)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let mut back = server.rss();
    for _ in 0..30 {
        if back < idle + 100 * MB {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
        back = server.rss();
    }
    eprintln!("once the study's data moved on: {} MB", back / MB);
    assert!(
        back < idle + 100 * MB,
        "{} MB, idle {} MB",
        back / MB,
        idle / MB
    );
    every_export_at_once(&server, &c, &cookie, study, idle);
}

/// Every format twice (the bundle, minutes long in a debug build, once), all started together
/// while the crowd answers: one report build is shared by the files made from it, rows and the
/// bundle keep to their lanes, and memory stays under 200 MB above idle.
fn every_export_at_once(
    server: &Spawned,
    c: &Client,
    cookie: &str,
    study: domain::ids::StudyId,
    idle: u64,
) {
    let twice = [
        "annotations.csv",
        "annotations.jsonl",
        "scores.json",
        "scores.csv",
        "scores.md",
        "pay.csv",
    ];
    let rss = RssSampler::start(server.pid());
    let stop = Arc::new(AtomicBool::new(false));
    let crowd = paced_crowd(&server.base, study.0 + 1, "all", stop.clone());
    let downloads: Vec<_> = twice
        .iter()
        .chain(twice.iter())
        .chain(&["bundle.tar"])
        .map(|file| {
            let (c, cookie) = (Client::new(&c.base), cookie.to_string());
            let path = format!("/export/{file}?studies={study}&synthetic=1");
            std::thread::spawn(move || (path.clone(), c.download(&path, &cookie)))
        })
        .collect();
    for d in downloads {
        let (path, got) = d.join().unwrap();
        let (status, bytes) = got.unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(status, 200, "{path}");
        assert!(bytes > 0, "{path}");
    }
    stop.store(true, Ordering::Relaxed);
    let crowd = crowd.join().unwrap();
    assert!(crowd.errors.is_empty(), "{:?}", &crowd.errors[..1]);
    let peak = rss.peak();
    eprintln!(
        "every export twice at once: server peak {} MB (idle {} MB), slowest answer {:.0} ms",
        peak / MB,
        idle / MB,
        crowd.slowest_ms()
    );
    assert!(
        peak < idle + 200 * MB,
        "peak {} MB, idle {} MB",
        peak / MB,
        idle / MB
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_acknowledged_submission_survives_kill_9_under_crowd_load() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let study = prepare(&db, 5000).await;
    let mut acks = Vec::new();
    for round in 0..3 {
        let server = Spawned::start(&db, &["--new-workers-per-address", "100000"]);
        let stop = Arc::new(AtomicBool::new(false));
        let load = crowd::run(
            &server.base,
            study.0,
            16,
            &format!("r{round}"),
            stop.clone(),
        );
        tokio::time::sleep(Duration::from_millis(2500)).await;
        server.kill9();
        stop.store(true, Ordering::Relaxed);
        let stats = tokio::task::spawn_blocking(move || load.join().unwrap())
            .await
            .unwrap();
        assert!(
            stats.acks.len() > 20,
            "round {round}: {} acks",
            stats.acks.len()
        );
        acks.extend(stats.acks);
    }
    // The server comes back on the same database ...
    let server = Spawned::start(&db, &[]);
    Client::new(&server.base)
        .login("rita", "rita-password")
        .unwrap();
    drop(server);
    // ... and every acknowledged submission is there, once.
    let pool = db::connect_existing(&common::db_url(&db)).await.unwrap();
    common::stored_once(&pool, &acks).await;
    let stored: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM assignment_items WHERE submitted_at IS NOT NULL")
            .fetch_one(&pool)
            .await
            .unwrap();
    eprintln!(
        "{} acknowledged, {stored} stored after 3 kill -9",
        acks.len()
    );
    assert!(stored as usize >= acks.len());
}
