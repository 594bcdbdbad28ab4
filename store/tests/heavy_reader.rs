//! Heavy reading (`store::heavy::reading`) on an SQLite file: its own read-only connection, whose
//! SQLite thread runs at the heavy threads' priority. A test binary of its own: it counts the
//! process's SQLite threads, which other tests' pools would add to.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use store::heavy::{reading, NICE};

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
async fn rows_are_read_through_a_read_only_connection_whose_thread_runs_at_the_lower_priority() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let pool = store::db::open(&url, store::db::Open::default())
        .await
        .unwrap();
    let main = sqlite_threads();
    assert!(!main.is_empty() && main.iter().all(|n| *n == 0), "{main:?}");
    let (nice, seen, write_refused, during) = reading(&pool, |reader| async move {
        // SAFETY: reads this thread's priority.
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users")
            .fetch_one(&reader)
            .await?;
        let write = sqlx::query("DELETE FROM users").execute(&reader).await;
        Ok((nice, seen, write.is_err(), sqlite_threads()))
    })
    .await
    .unwrap();
    assert_eq!((nice, seen, write_refused), (NICE, 0, true));
    assert_eq!(during.len(), main.len() + 1, "{during:?}");
    assert!(during.contains(&i64::from(NICE)), "{during:?}");
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
