//! Heavy work (building a report, spooling and writing a bundle) on threads of its own at a
//! lower scheduling priority, so that on a busy machine the crowd's answers get the cores first.

use crate::db::Backend;
use crate::error::Error;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// The nice value of a heavy thread (the crowd's threads run at 0): under contention the
/// kernel gives a thread at 0 about nine times the time of one at 10.
pub const NICE: i32 = 10;

/// A heavy thread's result, once it ends.
pub struct Handle<T> {
    rx: Result<oneshot::Receiver<T>, String>,
}

impl<T> Future for Handle<T> {
    type Output = Result<T, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.rx {
            Ok(rx) => Pin::new(rx).poll(cx).map(|r| {
                r.map_err(|_| {
                    Error::internal("a heavy thread ended without its result (it panicked)")
                })
            }),
            Err(e) => Poll::Ready(Err(Error::internal(format!("cannot start a thread: {e}")))),
        }
    }
}

/// Runs `work` on a new thread at nice `NICE`. Each heavy job is seconds long and few run at
/// once (their turns are bounded), so a thread each costs nothing worth pooling; a pooled
/// thread could not be given its priority back without privileges.
pub fn spawn<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Handle<T> {
    on_thread(true, work)
}

/// Runs `work` on a new thread, at nice `NICE` when `lower`, else at the caller's priority.
fn on_thread<T: Send + 'static>(
    lower: bool,
    work: impl FnOnce() -> T + Send + 'static,
) -> Handle<T> {
    let (tx, rx) = oneshot::channel();
    let started = std::thread::Builder::new()
        .name("clues-heavy".into())
        .spawn(move || {
            if lower {
                lower_priority();
            }
            let _ = tx.send(work());
        });
    Handle {
        rx: started.map(|_| rx).map_err(|e| e.to_string()),
    }
}

/// Runs `work`, which reads many rows (a report's, an export's), off the async workers and off
/// the crowd's pool: on an SQLite file it runs on a thread with a runtime and a read-only
/// connection of its own, opened there, so that the rows are read by SQLite's thread for that
/// connection and formatted on this one, and the pool the crowd writes through keeps its
/// connections. At the crowd's priority, not at `NICE`: at nice 10 a debug build's exports
/// beside a crowd outlasted the tests' ten-minute downloads (every format at once, 300k rows:
/// the report waited behind four row files and a bundle for the few cycles the crowd left).
/// PostgreSQL reads in its own processes, and an in-memory database lives in one connection:
/// `work` gets `pool` and runs here.
pub async fn reading<T, F, Fut>(pool: &AnyPool, work: F) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce(AnyPool) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send,
{
    let options = AnyConnectOptions::clone(&pool.connect_options());
    if Backend::of(pool) == Backend::Postgres || options.database_url.as_str().contains(":memory:")
    {
        return work(pool.clone()).await;
    }
    spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::internal)?;
        runtime.block_on(async move {
            let reader = reader(options).await?;
            let out = work(reader.clone()).await;
            reader.close().await;
            out
        })
    })
    .await?
}

/// A pool of one read-only SQLite connection, opened by the calling thread.
async fn reader(options: AnyConnectOptions) -> Result<AnyPool, Error> {
    Ok(AnyPoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute("PRAGMA query_only = 1; PRAGMA busy_timeout = 10000")
                    .await
                    .map(drop)
            })
        })
        .connect_with(options)
        .await?)
}

/// Lowers this thread's priority (Linux: nice is per thread). Elsewhere, a no-op.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority changes the scheduling priority of this thread only.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, NICE);
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn heavy_work_runs_at_a_lower_priority_and_gives_its_result() {
        let nice = super::spawn(|| {
            // SAFETY: reads this thread's priority.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
        })
        .await
        .unwrap();
        assert_eq!(nice, super::NICE);
        let failed = super::spawn(|| -> u8 { panic!("on purpose") }).await;
        assert!(failed.is_err());
    }
}
