//! A served SQLite database: its commits never checkpoint (a long export used to leave the
//! first commit after it copying the whole log), and the checkpointer keeps the log bounded,
//! copying past a long reader only once it ends. SQLite only (PostgreSQL has no such log).
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use sqlx::{AnyConnection, AnyPool, Connection, Executor};
use store::checkpoint::{Checkpointer, RESTART_FRAMES};
use store::db::{self, Open};

/// A page of text a row, so that each commit adds frames to the log.
async fn write(pool: &AnyPool, rows: usize) {
    for i in 0..rows {
        sqlx::query("INSERT INTO filler (x) VALUES ($1)")
            .bind(format!("{i:0>4000}"))
            .execute(pool)
            .await
            .unwrap();
    }
}

fn log_bytes(file: &std::path::Path) -> u64 {
    std::fs::metadata(file.with_extension("db-wal"))
        .map(|m| m.len())
        .unwrap_or(0)
}

/// A SQLite file in a folder of its own (the folder, the file, its URL); none on PostgreSQL.
fn sqlite_file() -> Option<(tempfile::TempDir, std::path::PathBuf, String)> {
    if std::env::var("CLUES_TEST_POSTGRES").is_ok_and(|s| !s.is_empty()) {
        eprintln!("checkpoints: SQLite only, skipped on PostgreSQL");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.db");
    let url = format!("sqlite://{}", file.display());
    Some((dir, file, url))
}

/// A pool opened as `serve` opens it (its commits never checkpoint), with the table `filler`.
async fn served_pool(url: &str) -> AnyPool {
    let how = Open {
        checkpoint_in_background: true,
        ..Open::default()
    };
    let pool = db::open(url, how).await.unwrap();
    pool.execute("CREATE TABLE filler (x TEXT NOT NULL)")
        .await
        .unwrap();
    pool
}

#[tokio::test]
async fn a_served_log_is_checkpointed_apart_from_commits_and_stays_bounded() {
    let Some((_dir, file, url)) = sqlite_file() else {
        return;
    };
    let pool = served_pool(&url).await;
    let autocheckpoint: i64 = sqlx::query_scalar("PRAGMA wal_autocheckpoint")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        autocheckpoint, 0,
        "a served pool's commits must not checkpoint"
    );
    let mut c = Checkpointer::connect(&url).await.unwrap();

    // Past the restart mark (about two frames a row): copied and restarted in one round.
    write(&pool, RESTART_FRAMES as usize).await;
    let grown = log_bytes(&file);
    assert!(
        grown > 4096 * RESTART_FRAMES as u64,
        "log {grown} B: commits checkpointed it"
    );
    assert!(c.step().await.unwrap(), "a wholly copied long log restarts");
    // The restarted log is written from its start again: the file does not double.
    write(&pool, RESTART_FRAMES as usize).await;
    let again = log_bytes(&file);
    assert!(again < grown + grown / 10, "log {again} B after {grown} B");
    assert!(c.step().await.unwrap());

    // A long reader (an export) pins the log: nothing past its snapshot is copied, and no
    // restart is attempted; the round after it ends copies and restarts.
    let mut reader = AnyConnection::connect(&url).await.unwrap();
    reader.execute("BEGIN").await.unwrap();
    let _: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM filler")
        .fetch_one(&mut reader)
        .await
        .unwrap();
    write(&pool, RESTART_FRAMES as usize).await;
    assert!(!c.step().await.unwrap(), "restarted under a reader");
    write(&pool, RESTART_FRAMES as usize).await;
    assert!(!c.step().await.unwrap());
    let pinned = log_bytes(&file);
    assert!(
        pinned > again + grown / 2,
        "the log grows while a reader pins it"
    );
    reader.execute("COMMIT").await.unwrap();
    assert!(
        c.step().await.unwrap(),
        "copied and restarted once the reader ended"
    );
    write(&pool, RESTART_FRAMES as usize).await;
    assert_eq!(log_bytes(&file), pinned, "written from its start again");
    pool.close().await;
}

/// `serve` opens its pool this way and starts the checkpointer itself: after a burst of
/// writes the log is restarted within a few seconds without any call.
#[tokio::test(flavor = "multi_thread")]
async fn the_serving_pool_starts_its_own_checkpointer() {
    let Some((_dir, file, url)) = sqlite_file() else {
        return;
    };
    let pool = db::cli::connect_serving(&url).await.unwrap();
    pool.execute("CREATE TABLE filler (x TEXT NOT NULL)")
        .await
        .unwrap();
    write(&pool, RESTART_FRAMES as usize).await;
    // Restarted by the task: writes go to the log's start again, and the file stops growing
    // (with no checkpointer it grows with every write, the commits never checkpointing).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let before = log_bytes(&file);
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        write(&pool, 200).await;
        if log_bytes(&file) == before {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the log was not restarted: {} B",
            log_bytes(&file)
        );
    }
    pool.close().await;
}

/// Readers that overlap (exports and report builds reading pages one after another) keep a
/// snapshot on the log at every moment, so no round copies it whole: the checkpointer holds
/// their page reads back for one copy past its hold mark, and the log stays within about
/// twice that mark while they read and a crowd writes (it grew through the whole run before).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_that_overlap_cannot_keep_the_log_past_its_bound() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    let Some((_dir, file, url)) = sqlite_file() else {
        return;
    };
    let pool = served_pool(&url).await;
    let hold = RESTART_FRAMES + 1000;
    let mut c = Checkpointer::connect(&url)
        .await
        .unwrap()
        .holding_past(hold);
    let stop = Arc::new(AtomicBool::new(false));
    // Two readers, each a snapshot of 40 ms under a page read, 20 ms apart: at every moment
    // one of them reads.
    let mut readers = Vec::new();
    for r in 0..2u64 {
        let (url, stop) = (url.clone(), stop.clone());
        readers.push(tokio::spawn(async move {
            let mut conn = AnyConnection::connect(&url).await.unwrap();
            tokio::time::sleep(Duration::from_millis(20 * r)).await;
            while !stop.load(Ordering::Relaxed) {
                let page = store::checkpoint::page_read().await;
                conn.execute("BEGIN").await.unwrap();
                let _: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM filler")
                    .fetch_one(&mut conn)
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(40)).await;
                conn.execute("COMMIT").await.unwrap();
                drop(page);
            }
        }));
    }
    // About four times the hold mark written, a round of the checkpointer every 100 rows.
    let mut largest = 0;
    let mut restarts = 0;
    for _ in 0..(4 * hold as usize / 200) {
        write(&pool, 100).await;
        restarts += usize::from(c.step().await.unwrap());
        largest = largest.max(log_bytes(&file));
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.await.unwrap();
    }
    let bound = 2 * 4096 * hold as u64;
    assert!(restarts > 0, "never restarted; the log is {largest} B");
    assert!(
        largest < bound,
        "the log reached {largest} B, over {bound} B"
    );
    pool.close().await;
}
