//! Heavy reading (`store::heavy::reading`) on an SQLite file: a thread and a read-only connection
//! of its own, gone with the work. A test binary of its own: it counts the process's SQLite
//! threads, which other tests' pools would add to.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use store::heavy::reading;

/// The nice values of this process's SQLite connection threads.
fn sqlite_threads() -> Vec<i64> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // After the name in parentheses: the state is field 3 and nice field 19.
        let after = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        if comm.starts_with("sqlx-sqlite") {
            out.push(after.split_whitespace().nth(16).unwrap().parse().unwrap());
        }
    }
    out
}

#[tokio::test]
async fn rows_are_read_on_a_thread_and_a_read_only_connection_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let pool = store::db::open(&url, store::db::Open::default())
        .await
        .unwrap();
    let main = sqlite_threads();
    assert!(!main.is_empty() && main.iter().all(|n| *n == 0), "{main:?}");
    let caller = std::thread::current().id();
    let (own_thread, seen, write_refused, during) = reading(&pool, move |reader| async move {
        let own_thread = std::thread::current().id() != caller;
        let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users")
            .fetch_one(&reader)
            .await?;
        let write = sqlx::query("DELETE FROM users").execute(&reader).await;
        Ok((own_thread, seen, write.is_err(), sqlite_threads()))
    })
    .await
    .unwrap();
    assert_eq!((own_thread, seen, write_refused), (true, 0, true));
    // One SQLite thread more while it reads: its own connection's.
    assert_eq!(during.len(), main.len() + 1, "{during:?}");
    // The reader's thread ends with its work (a moment after); the crowd's pool is as it was.
    let mut after = sqlite_threads();
    for _ in 0..100 {
        if after == main {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        after = sqlite_threads();
    }
    assert_eq!(after, main);
}
