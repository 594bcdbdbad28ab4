//! Heavy work (building a report, reading the rows of an export, spooling and writing a bundle)
//! on threads of its own at a lower scheduling priority per kind: the crowd's answers get the
//! cores first, and a report's build goes before the rows of downloads.

use crate::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// The kinds of heavy work. Each has its turns (the server's limiter, indexed by the kind) and a
/// priority of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A report's build, with the reading of its rows: the dashboard and every file made from
    /// the report wait for it.
    Build = 0,
    /// The rows of a row file (`annotations.csv`, `annotations.jsonl`), read and handed on.
    Rows = 1,
    /// A bundle: its members spooled, its rows read, its archive written.
    Bundle = 2,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Build, Kind::Rows, Kind::Bundle];

    /// The nice value of the kind's threads (the crowd's run at 0). Under contention the kernel
    /// shares the cores by weight: a thread at 0 gets about nine times the time of one at 10,
    /// which gets three times the time of one at 15. So a report's build goes before the rows
    /// of downloads (minutes long on a big study), and both after the crowd.
    pub fn nice(self) -> i32 {
        match self {
            Kind::Build => 10,
            Kind::Rows | Kind::Bundle => 15,
        }
    }
}

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

/// Runs `work` on a new thread at the nice value of `kind`; threads it starts (SQLite's thread
/// of a connection it opens) inherit that value. Each heavy job is seconds long and few run at
/// once (their turns are bounded), so a thread each costs nothing worth pooling; a pooled
/// thread could not be given its priority back without privileges.
pub fn spawn<T: Send + 'static>(
    kind: Kind,
    work: impl FnOnce() -> T + Send + 'static,
) -> Handle<T> {
    let (tx, rx) = oneshot::channel();
    let started = std::thread::Builder::new()
        .name("clues-heavy".into())
        .spawn(move || {
            lower_priority(kind.nice());
            let _ = tx.send(work());
        });
    Handle {
        rx: started.map(|_| rx).map_err(|e| e.to_string()),
    }
}

/// Lowers this thread's priority (Linux: nice is per thread). Elsewhere, a no-op.
fn lower_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority changes the scheduling priority of this thread only.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

#[cfg(test)]
mod tests {
    use super::Kind;

    fn nice() -> i32 {
        // SAFETY: reads this thread's priority.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[tokio::test]
    async fn heavy_work_runs_at_its_kinds_priority_and_gives_its_result() {
        for kind in Kind::ALL {
            // The thread's own priority, and that of a thread it starts (SQLite's, for one).
            let (own, started) =
                super::spawn(kind, || (nice(), std::thread::spawn(nice).join().unwrap()))
                    .await
                    .unwrap();
            assert_eq!((own, started), (kind.nice(), kind.nice()), "{kind:?}");
        }
        // A build goes before rows, and both after the crowd (nice 0).
        assert!(0 < Kind::Build.nice() && Kind::Build.nice() < Kind::Rows.nice());
        let failed = super::spawn(Kind::Build, || -> u8 { panic!("on purpose") }).await;
        assert!(failed.is_err());
    }
}
