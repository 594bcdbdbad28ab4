//! Where the server reads the time, in unix ms: the system's clock, or one that moves only when
//! a test or a simulation moves it (a lease runs out, a simulated worker reads for 20 s, without
//! anyone sleeping). The serving binary always runs on the system's.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub enum Clock {
    #[default]
    System,
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// A clock that stands at `start` until [`Clock::advance`] moves it.
    pub fn manual(start: i64) -> Self {
        Clock::Manual(Arc::new(AtomicI64::new(start)))
    }

    /// Now, in unix ms.
    pub fn now_ms(&self) -> i64 {
        match self {
            Clock::System => crate::auth::now_ms(),
            Clock::Manual(t) => t.load(Ordering::SeqCst),
        }
    }

    /// Moves a manual clock on by `by` (the system's clock moves by itself).
    pub fn advance(&self, by: Duration) {
        if let Clock::Manual(t) = self {
            t.fetch_add(by.as_millis() as i64, Ordering::SeqCst);
        }
    }
}
