//! Heavy work (building a report, spooling and writing a bundle) on threads of its own at a
//! lower scheduling priority, so that on a busy machine the crowd's answers get the cores first.

use crate::error::Error;
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
    let (tx, rx) = oneshot::channel();
    let started = std::thread::Builder::new()
        .name("clues-heavy".into())
        .spawn(move || {
            lower_priority();
            let _ = tx.send(work());
        });
    Handle {
        rx: started.map(|_| rx).map_err(|e| e.to_string()),
    }
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
