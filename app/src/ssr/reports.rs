//! The reports a server has built: one build per scope and data version, shared by the
//! dashboard and every export made from the report, kept while it is used and bounded in number.

use crate::error::AppError;
use crate::ssr::limits::Heavy;
use crate::ssr::state::AppState;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use store::report::{self, Built, Scope};

/// Builds kept at most (each the size of its scope's answers: ~100 MB for 300,000 rows); the
/// least recently used goes first.
const KEPT: usize = 3;

/// A build nobody asked for in this long is let go (and its memory with it).
pub const IDLE: Duration = Duration::from_secs(300);

/// The builds of every scope asked for.
#[derive(Debug, Default)]
pub struct Reports {
    slots: Mutex<HashMap<Scope, Arc<Slot>>>,
    /// Builds made since the server started (for tests and the log).
    builds: AtomicU64,
}

/// One scope: its latest build, and the lock its builds take turns on.
#[derive(Debug, Default)]
struct Slot {
    /// Held while the scope is built: a request that finds a build under way waits for it and
    /// takes it if it is new enough, so requests arriving together cost one build.
    building: tokio::sync::Mutex<()>,
    /// A rebuild runs in the background for a page that was shown the last build.
    refreshing: AtomicBool,
    latest: Mutex<Option<Kept>>,
}

struct Kept {
    built: Arc<Built>,
    /// When it was made, on the server's clock (unix ms).
    made_ms: i64,
    used: Instant,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kept(version {}, made {})", self.built.version, self.made_ms)
    }
}

/// How old the build a page shows is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Freshness {
    /// Built from the data as it is now.
    Current,
    /// Built at `made_ms` (unix ms, the server's clock); the data has changed since, and a new
    /// build is under way.
    Behind { made_ms: i64 },
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Slot {
    /// The latest build if it is at least `version`, marked as used.
    fn at_least(&self, version: i64) -> Option<Arc<Built>> {
        let mut latest = lock(&self.latest);
        let kept = latest.as_mut().filter(|k| k.built.version >= version)?;
        kept.used = Instant::now();
        Some(kept.built.clone())
    }
}

impl Reports {
    fn slot(&self, scope: &Scope) -> Arc<Slot> {
        lock(&self.slots).entry(scope.clone()).or_default().clone()
    }

    /// The scope's report as the data stands now: the kept build if nothing changed since it
    /// was made, else a new one (built in the heavy turn; requests for the same scope that
    /// arrive meanwhile wait for it and take it).
    pub async fn current(&self, state: &AppState, scope: &Scope) -> Result<Arc<Built>, AppError> {
        let version = report::version(&state.pool).await?;
        let slot = self.slot(scope);
        if let Some(b) = slot.at_least(version) {
            return Ok(b);
        }
        let _building = slot.building.lock().await;
        if let Some(b) = slot.at_least(version) {
            return Ok(b);
        }
        let built = {
            let _turn = state.limiter.heavy_turn(Heavy::Build).await?;
            Arc::new(Built::of(&state.pool, scope).await?)
        };
        self.builds.fetch_add(1, Ordering::Relaxed);
        *lock(&slot.latest) = Some(Kept {
            built: built.clone(),
            made_ms: state.now_ms(),
            used: Instant::now(),
        });
        self.bound();
        Ok(built)
    }

    /// For a page: the kept build at once, even if the data has changed since (a live study
    /// changes with every answer), with a new build started in the background; the first
    /// time, the build itself.
    pub async fn recent(
        &self,
        state: &AppState,
        scope: &Scope,
    ) -> Result<(Arc<Built>, Freshness), AppError> {
        let version = report::version(&state.pool).await?;
        let slot = self.slot(scope);
        let kept = lock(&slot.latest).as_mut().map(|k| {
            k.used = Instant::now();
            (k.built.clone(), k.made_ms)
        });
        let Some((built, made_ms)) = kept else {
            return Ok((self.current(state, scope).await?, Freshness::Current));
        };
        if built.version >= version {
            return Ok((built, Freshness::Current));
        }
        if !slot.refreshing.swap(true, Ordering::SeqCst) {
            let (state, scope) = (state.clone(), scope.clone());
            tokio::spawn(async move {
                if let Err(e) = state.reports.current(&state, &scope).await {
                    tracing::warn!("rebuilding a report in the background failed: {e}");
                }
                state.reports.slot(&scope).refreshing.store(false, Ordering::SeqCst);
            });
        }
        Ok((built, Freshness::Behind { made_ms }))
    }

    /// Lets go of the builds beyond `KEPT`, least recently used first (freed after the locks
    /// are released: a large build takes a while to free).
    fn bound(&self) {
        let mut gone = Vec::new();
        {
            let slots = lock(&self.slots);
            let mut kept: Vec<(Instant, &Arc<Slot>)> = slots
                .values()
                .filter_map(|s| lock(&s.latest).as_ref().map(|k| (k.used, s)))
                .collect();
            kept.sort_by_key(|(used, _)| std::cmp::Reverse(*used));
            for (_, s) in kept.iter().skip(KEPT) {
                gone.extend(lock(&s.latest).take());
            }
        }
        drop(gone);
    }

    /// Lets go of the builds unused for `idle`, and forgets scopes with nothing kept or under
    /// way. Returns whether anything was let go (the heaps are then worth trimming).
    /// Blocking while a large build is freed: call it off the async workers.
    pub fn sweep(&self, idle: Duration) -> bool {
        let mut gone = Vec::new();
        {
            let mut slots = lock(&self.slots);
            for s in slots.values() {
                let mut latest = lock(&s.latest);
                if latest.as_ref().is_some_and(|k| k.used.elapsed() >= idle) {
                    gone.extend(latest.take());
                }
            }
            slots.retain(|_, s| Arc::strong_count(s) > 1 || lock(&s.latest).is_some());
        }
        !gone.is_empty()
    }

    /// Sweeps every `every` while the server runs.
    pub fn sweep_periodically(self: Arc<Self>, every: Duration) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let reports = self.clone();
                let _ = tokio::task::spawn_blocking(move || reports.sweep(IDLE)).await;
            }
        });
    }

    /// Builds made since the server started.
    pub fn builds(&self) -> u64 {
        self.builds.load(Ordering::Relaxed)
    }

    /// The scopes with a build kept (for tests and the log).
    pub fn kept(&self) -> usize {
        lock(&self.slots)
            .values()
            .filter(|s| lock(&s.latest).is_some())
            .count()
    }
}
