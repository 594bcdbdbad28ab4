//! Write transactions and what each one locks: on SQLite `BEGIN IMMEDIATE` (one writer at a
//! time, the engine's rule); on PostgreSQL only the [`Lock`]s a transaction names, so writes
//! of different studies, tasks and runs never wait on each other. Ended explicitly.
//!
//! Idempotency is not a lock's job: unique constraints and conditions in the statements
//! (`submitted_at IS NULL`, `consented_at IS NULL`, `COALESCE(shown_at, …)`) carry it, and
//! PostgreSQL's row locks make a second writer of the same row see the first one's result.
//! A lock serialises only check-then-insert steps that no constraint can state (at most N
//! places per scenario, a configuration frozen once workers started).

use crate::db::Backend;
use crate::error::Error;
use domain::ids::{StudyId, UserId};
use domain::platform::Platform;
use domain::wire::queue::Queue;
use sqlx::{Any, AnyConnection, AnyPool, Transaction};

/// What a write transaction protects, taken as a transaction-scoped PostgreSQL advisory lock
/// (released at commit or rollback, also when the connection dies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock<'a> {
    /// A study's places and configuration: taking a place, changing the configuration.
    Study(StudyId),
    /// A worker's account and places across studies: entering a study, declining consent.
    Worker(UserId),
    /// An external crowd identity (platform, id) while its account is made.
    CrowdId(Platform, &'a str),
    /// A CLUES or CrossFit task, by name, while it is imported.
    Task(&'a str),
    /// A system's run of one task and shot group (system, task, k, split) while it is stored.
    Run(&'a str, &'a str, u32, u32),
    /// The jobs of one kind for one system or method (kind, owner) while they are queued: a
    /// job is two rows (`jobs` and its key), so finding it and adding it is one step.
    Jobs(Queue, &'a str),
}

impl Lock<'_> {
    /// The lock's 64-bit key: the kind in the top byte, the id or a hash of the names below,
    /// so that keys of different kinds never meet.
    pub fn key(&self) -> i64 {
        let (kind, value): (u8, u64) = match *self {
            Lock::Study(id) => (1, id.0 as u64),
            Lock::Worker(id) => (2, id.0 as u64),
            Lock::CrowdId(platform, id) => (3, fnv1a(&[platform.as_str(), id])),
            Lock::Task(name) => (4, fnv1a(&[name])),
            Lock::Run(system, task, k, split) => (
                5,
                fnv1a(&[system, task, &k.to_string(), &split.to_string()]),
            ),
            Lock::Jobs(queue, owner) => (6, fnv1a(&[queue.as_str(), owner])),
        };
        ((u64::from(kind) << 56) | (value & 0x00FF_FFFF_FFFF_FFFF)) as i64
    }
}

/// FNV-1a over the parts, each followed by a 0 byte (names never contain one).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(&[0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Opens a write transaction holding `locks` (none: the statements' own conditions suffice).
pub async fn begin_write(
    pool: &AnyPool,
    locks: &[Lock<'_>],
) -> Result<Transaction<'static, Any>, Error> {
    Ok(begin_immediate(pool, locks).await?)
}

/// The same for callers with their own error type (the importers). Every write transaction
/// starts this way: on SQLite a deferred one that reads first and writes later fails with
/// "database is locked" when another writer got in between, instead of waiting its turn.
pub async fn begin_immediate(
    pool: &AnyPool,
    locks: &[Lock<'_>],
) -> Result<Transaction<'static, Any>, sqlx::Error> {
    let backend = Backend::of(pool);
    let mut tx = pool.begin_with(backend.begin_write()).await?;
    hold(&mut tx, backend, locks).await?;
    Ok(tx)
}

/// Opens a write transaction by hand on `conn` (the answer writer's group commits, which
/// hold no lock: each answer is protected by `submitted_at IS NULL`).
pub async fn begin_on(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    let begin = Backend::of_conn(conn).begin_write();
    sqlx::query(begin).execute(&mut *conn).await?;
    Ok(())
}

/// Takes the locks in the order of their keys, the same order in every transaction,
/// so two transactions that want the same locks cannot wait on each other in a circle.
async fn hold(
    conn: &mut AnyConnection,
    backend: Backend,
    locks: &[Lock<'_>],
) -> Result<(), sqlx::Error> {
    if backend != Backend::Postgres {
        return Ok(());
    }
    let mut keys: Vec<i64> = locks.iter().map(Lock::key).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(key)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Commits on `Ok`, rolls back at once on `Err`: a transaction only dropped would keep its
/// locks until its connection is next used.
pub async fn finish<T>(
    tx: Transaction<'static, Any>,
    result: Result<T, Error>,
) -> Result<T, Error> {
    match result {
        Ok(v) => {
            tx.commit().await?;
            Ok(v)
        }
        Err(e) => {
            if let Err(r) = tx.rollback().await {
                tracing::error!("rollback failed: {r}");
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lock;
    use domain::ids::{StudyId, UserId};
    use domain::platform::Platform;

    #[test]
    fn locks_of_different_kinds_or_names_have_different_keys() {
        let keys = [
            Lock::Study(StudyId(7)).key(),
            Lock::Worker(UserId(7)).key(),
            Lock::CrowdId(Platform::Prolific, "a").key(),
            Lock::CrowdId(Platform::Mturk, "a").key(),
            Lock::CrowdId(Platform::Prolific, "").key(),
            Lock::Task("SST-2").key(),
            Lock::Task("MNLI").key(),
            Lock::Run("m", "SST-2", 10, 1).key(),
            Lock::Run("m", "SST-2", 10, 2).key(),
            Lock::Run("m", "SST-2", 101, 0).key(),
        ];
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len(), "{keys:?}");
        assert_eq!(Lock::Study(StudyId(7)).key(), (1i64 << 56) | 7);
        assert_eq!(Lock::Task("SST-2").key(), Lock::Task("SST-2").key());
    }

    /// A worker stopped by SIGTERM, or a browser that closes its tab, drops a request's future
    /// wherever it is waiting, also while its write transaction begins. On SQLite sqlx's
    /// `BEGIN IMMEDIATE` is acknowledged before a second wait (its check that the connection is
    /// in a transaction): a future dropped between the two left the transaction open on a
    /// connection back in the pool, holding the database's write lock ("database is locked"
    /// for every other writer, once seen in the Slurm test) and taking in the pool's next
    /// writes uncommitted. Dropped here after 0 to 11 polls, hundreds of times.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_transaction_dropped_while_it_begins_leaves_no_lock_and_loses_no_write() {
        use sqlx::{Connection, Executor};
        use std::future::Future;
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let how = crate::db::Open {
            max_connections: 2,
            ..crate::db::Open::default()
        };
        let pool = crate::db::open(&url, how).await.unwrap();
        sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY)")
            .execute(&pool)
            .await
            .unwrap();
        // Another process: its writes wait at most 2 s for the lock.
        let mut other = sqlx::AnyConnection::connect(&url).await.unwrap();
        other.execute("PRAGMA busy_timeout = 2000").await.unwrap();
        let insert = |k: i64| sqlx::query("INSERT INTO t (k) VALUES ($1)").bind(k);
        let rounds = 300i64;
        for round in 0..rounds {
            let mut begin = Box::pin(super::begin_immediate(&pool, &[]));
            for _ in 0..round % 12 {
                let poll = |cx: &mut std::task::Context<'_>| {
                    std::task::Poll::Ready(begin.as_mut().poll(cx).is_ready())
                };
                if std::future::poll_fn(poll).await {
                    break;
                }
                tokio::task::yield_now().await;
            }
            drop(begin);
            let other_wrote = insert(round).execute(&mut other).await;
            assert!(other_wrote.is_ok(), "round {round}: {other_wrote:?}");
            let pool_wrote = insert(rounds + round).execute(&pool).await;
            assert!(pool_wrote.is_ok(), "round {round}: {pool_wrote:?}");
            let mut tx = super::begin_immediate(&pool, &[]).await.unwrap();
            insert(2 * rounds + round).execute(&mut *tx).await.unwrap();
            tx.commit().await.unwrap();
        }
        // Every write the pool acknowledged is there for another connection.
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(&mut other)
            .await
            .unwrap();
        assert_eq!(count, 3 * rounds);
    }
}
