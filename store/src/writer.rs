//! Group commit for the crowd's answers: submissions queue for one writer task, which stores
//! everything queued in one transaction (one fsync for many answers), each submission in its
//! own savepoint so that a refused one rolls back alone. A caller hears back only after the
//! commit, so an acknowledged answer is as durable as with a commit of its own.
//!
//! A worker's other writes (joining, an item's first showing, moving on after a reveal) take
//! the same path on SQLite ([`Writer::write`]): the engine has one writer, and a transaction of
//! their own polled for the lock behind the group commits (joins waited seconds under load).

use crate::db::Backend;
use crate::error::Error;
use crate::tx::{self, Lock};
use futures_util::future::BoxFuture;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// Work done inside the shared transaction: whether it failed (its savepoint is rolled back),
/// and how to deliver its result once the transaction's fate is known.
type Delivery = Box<dyn FnOnce(Option<Error>) + Send>;
type Job = Box<dyn for<'c> FnOnce(&'c mut AnyConnection) -> BoxFuture<'c, (bool, Delivery)> + Send>;

/// At most this many submissions share a commit (bounds the time one transaction holds the
/// write lock).
const MAX_BATCH: usize = 128;
/// Submissions waiting for the writer; beyond this, callers wait to queue (back-pressure).
const QUEUE: usize = 1024;

/// The handle every request shares; the writer task starts with the first submission.
#[derive(Clone)]
pub struct Writer {
    pool: AnyPool,
    queue: Arc<Mutex<Option<mpsc::Sender<Job>>>>,
    /// Transactions committed so far (answers per commit = answers / commits).
    commits: Arc<AtomicU64>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writer")
    }
}

impl Writer {
    pub fn new(pool: AnyPool) -> Self {
        Writer {
            pool,
            queue: Arc::new(Mutex::new(None)),
            commits: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The pool the writer writes to.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Runs `work` in a write transaction: on SQLite in the next group commit (queued behind
    /// the answers already waiting, not polling for the lock); on PostgreSQL, where writers
    /// of different rows do not wait on each other, in a transaction of its own holding
    /// `locks` (advisory locks held by a shared transaction could wait in a circle with
    /// another instance's).
    pub async fn write<T, F>(&self, locks: &[Lock<'_>], work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut AnyConnection) -> BoxFuture<'c, Result<T, Error>>
            + Send
            + 'static,
    {
        if Backend::of(&self.pool) != Backend::Postgres {
            return self.run(work).await;
        }
        let mut tx = tx::begin_write(&self.pool, locks).await?;
        let result = work(&mut tx).await;
        tx::finish(tx, result).await
    }

    /// How many group transactions were committed.
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Runs `work` in the next shared transaction and answers its result after the commit
    /// (an error of `work` rolls back its own writes only; a failed commit fails everyone).
    pub async fn run<T, F>(&self, work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut AnyConnection) -> BoxFuture<'c, Result<T, Error>>
            + Send
            + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<T, Error>>();
        let job: Job = Box::new(move |conn| {
            Box::pin(async move {
                let result = work(conn).await;
                let failed = result.is_err();
                let deliver: Delivery = Box::new(move |commit: Option<Error>| {
                    let _ = tx.send(match commit {
                        Some(e) => Err(e),
                        None => result,
                    });
                });
                (failed, deliver)
            })
        });
        self.queue()
            .send(job)
            .await
            .map_err(|_| Error::internal("the writer stopped"))?;
        rx.await
            .map_err(|_| Error::internal("the writer dropped a submission"))?
    }
}

impl Writer {
    /// The writer task's queue, starting the task when there is none (first use, or after
    /// the task ended with a panic).
    fn queue(&self) -> mpsc::Sender<Job> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        match &*queue {
            Some(q) if !q.is_closed() => q.clone(),
            _ => {
                let (send, receive) = mpsc::channel(QUEUE);
                tokio::spawn(writer_loop(
                    self.pool.clone(),
                    receive,
                    self.commits.clone(),
                ));
                *queue = Some(send.clone());
                send
            }
        }
    }
}

async fn writer_loop(pool: AnyPool, mut queue: mpsc::Receiver<Job>, commits: Arc<AtomicU64>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (deliveries, failure) = run_batch(&pool, std::mem::take(&mut batch)).await;
        if failure.is_none() {
            commits.fetch_add(1, Ordering::Relaxed);
        }
        for deliver in deliveries {
            deliver(failure.clone());
        }
    }
}

/// One transaction for `jobs`, each in a savepoint: the deliveries of the jobs that ran, and
/// the error that undid them all (`None`: committed). Jobs that never ran are dropped, and
/// their callers hear that the writer dropped them.
async fn run_batch(pool: &AnyPool, jobs: Vec<Job>) -> (Vec<Delivery>, Option<Error>) {
    let mut deliveries = Vec::with_capacity(jobs.len());
    let conn = match pool.acquire().await {
        Ok(c) => c,
        Err(e) => return (deliveries, Some(logged("no connection for the writer", e))),
    };
    let mut open = InTransaction(Some(conn));
    let failure = match open.0.as_mut() {
        Some(conn) => in_one_transaction(conn, jobs, &mut deliveries).await,
        None => None,
    };
    // Committed or rolled back: the connection goes back to the pool as it is.
    open.0.take();
    (deliveries, failure)
}

/// [`run_batch`]'s transaction on `conn`, begun and ended here: the error that undid it.
async fn in_one_transaction(
    conn: &mut AnyConnection,
    jobs: Vec<Job>,
    deliveries: &mut Vec<Delivery>,
) -> Option<Error> {
    if let Err(e) = crate::tx::begin_on(conn).await {
        return Some(logged("group transaction", e));
    }
    for job in jobs {
        let step = async {
            sqlx::query("SAVEPOINT answer").execute(&mut *conn).await?;
            let (failed, deliver) = job(conn).await;
            if failed {
                sqlx::query("ROLLBACK TO answer")
                    .execute(&mut *conn)
                    .await?;
            }
            sqlx::query("RELEASE answer").execute(&mut *conn).await?;
            Ok::<_, sqlx::Error>(deliver)
        };
        match step.await {
            Ok(d) => deliveries.push(d),
            Err(e) => {
                let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
                return Some(logged("savepoint", e));
            }
        }
    }
    match sqlx::query("COMMIT").execute(&mut *conn).await {
        Ok(_) => None,
        Err(e) => {
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            Some(logged("group commit", e))
        }
    }
}

/// The group transaction's connection while the transaction may be open. Dropped so (the
/// writer task ended by a job's panic), its transaction is rolled back before the connection
/// goes back to the pool, or the connection is closed where that fails: sqlx knows nothing of
/// a transaction begun by hand, and the connection would keep the write lock (every other
/// writer "database is locked") and take in its next user's writes uncommitted.
struct InTransaction(Option<PoolConnection<Any>>);

impl Drop for InTransaction {
    fn drop(&mut self) {
        let Some(mut conn) = self.0.take() else {
            return;
        };
        tracing::error!("the writer stopped inside its transaction: rolled back");
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(e) = sqlx::query("ROLLBACK").execute(&mut *conn).await {
                        tracing::error!("the writer's transaction could not be rolled back: {e}");
                        conn.close_on_drop();
                    }
                });
            }
            Err(_) => conn.close_on_drop(),
        }
    }
}

fn logged(what: &str, e: sqlx::Error) -> Error {
    tracing::error!("{what} failed: {e}");
    Error::from(e)
}

#[cfg(test)]
mod tests {
    use super::Writer;
    use crate::db::{open, Open};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn submissions_share_commits_and_a_refused_one_rolls_back_alone() {
        let pool = open("sqlite::memory:", Open::default()).await.unwrap();
        sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT UNIQUE)")
            .execute(&pool)
            .await
            .unwrap();
        let writer = Writer::new(pool.clone());
        let sends = (0..40i64).map(|i| {
            let w = writer.clone();
            tokio::spawn(async move {
                w.run(move |c| {
                    Box::pin(async move {
                        // Two writes each: a refusal must undo both, and only its own.
                        sqlx::query("INSERT INTO t (k, v) VALUES ($1, $2)")
                            .bind(i)
                            .bind(format!("first {i}"))
                            .execute(&mut *c)
                            .await?;
                        let v = if i % 10 == 3 {
                            "same".to_string()
                        } else {
                            format!("v{i}")
                        };
                        sqlx::query("INSERT INTO t (k, v) VALUES ($1, $2)")
                            .bind(1000 + i)
                            .bind(v)
                            .execute(&mut *c)
                            .await?;
                        Ok(i)
                    })
                })
                .await
            })
        });
        let mut ok = 0;
        for s in sends.collect::<Vec<_>>() {
            if s.await.unwrap().is_ok() {
                ok += 1;
            }
        }
        // Of the four sends writing "same", one was stored; the other three left nothing.
        assert_eq!(ok, 37);
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(rows, 2 * 37);
        assert!(
            writer.commits() >= 1 && writer.commits() <= 40,
            "{}",
            writer.commits()
        );
    }

    /// A bug that panics inside a job ends the writer task within its transaction: the
    /// transaction is rolled back (nothing of it stored, nobody told it was), no lock is left
    /// behind for other writers, and the next submission starts the writer again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_job_that_panics_leaves_no_transaction_open() {
        use sqlx::{Connection, Executor};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("w.db").display());
        let pool = open(&url, Open::default()).await.unwrap();
        sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY)")
            .execute(&pool)
            .await
            .unwrap();
        let writer = Writer::new(pool.clone());
        let insert = |k: i64| {
            writer.run(move |c| {
                Box::pin(async move {
                    sqlx::query("INSERT INTO t (k) VALUES ($1)")
                        .bind(k)
                        .execute(&mut *c)
                        .await?;
                    assert!(k != 1, "a bug in a job");
                    Ok(k)
                })
            })
        };
        assert!(
            insert(1).await.is_err(),
            "the panicked job was not answered"
        );
        // Another process writes at once (waiting at most 2 s for the lock).
        let mut other = sqlx::AnyConnection::connect(&url).await.unwrap();
        other.execute("PRAGMA busy_timeout = 2000").await.unwrap();
        let wrote = sqlx::query("INSERT INTO t (k) VALUES (2)")
            .execute(&mut other)
            .await;
        assert!(wrote.is_ok(), "{wrote:?}");
        assert_eq!(insert(3).await.unwrap(), 3);
        let kept: Vec<i64> = sqlx::query_scalar("SELECT k FROM t ORDER BY k")
            .fetch_all(&mut other)
            .await
            .unwrap();
        assert_eq!(kept, vec![2, 3]);
    }
}
