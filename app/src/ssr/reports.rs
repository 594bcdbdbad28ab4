//! The reports a server has built: one build per scope and data version, shared by the
//! dashboard and every export made from the report, kept while it is used and bounded in number.

use crate::error::AppError;
use crate::ssr::limits::Limiter;
use crate::wire::report::DashboardData;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use store::clock::Clock;
use store::report::{self, Built, Scope};
use store::study::Study;

/// Builds kept at most (each the size of its scope's answers: ~100 MB for 300,000 rows); the
/// least recently used goes first.
const KEPT: usize = 3;

/// A build or page nobody asked for in this long is let go (and its memory with it).
pub const IDLE: Duration = Duration::from_secs(300);

/// How long a page waits for a new build when the data has moved on, before it shows the
/// last one, where the last build took less: a small study's build takes milliseconds, a large
/// one's seconds (its page is shown at once, saying how old it is).
pub const PAGE_WAIT: Duration = Duration::from_millis(250);

/// A build is taken again for at most this long after it was made, whatever the version says:
/// on PostgreSQL the version moves as a change commits, a moment before the change is seen, so
/// a build begun in that moment could otherwise miss it for as long as nothing else changes.
/// (Counted from its end: a build slower than this, a large study on a loaded machine, was
/// never taken again, and every request built anew beside the one still in use.)
pub const TRUSTED: Duration = Duration::from_secs(60);

/// A build older than the data, unused for this long, is let go: an export would build anew,
/// and the page drawn from it is kept apart.
pub const STALE: Duration = Duration::from_secs(15);

/// The builds and drawn pages of every scope asked for.
#[derive(Default)]
pub struct Reports {
    slots: Mutex<HashMap<Scope, Arc<Slot>>>,
    /// Builds made since the server started (for tests and the log).
    builds: AtomicU64,
}

impl std::fmt::Debug for Reports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reports({} builds kept)", self.kept())
    }
}

/// What a build needs of the server: its database, the turns of heavy work and its clock.
#[derive(Clone)]
pub struct Needs {
    pub pool: AnyPool,
    pub limiter: Arc<Limiter>,
    pub clock: Clock,
}

/// What a page shows of a scope, drawn from a build: small next to the build, so it is kept
/// while the build is let go.
pub struct Drawn {
    /// The page's data, its studies' progress left out (that is read per request).
    pub data: DashboardData,
    pub studies: Vec<Study>,
}

/// One scope: its latest build and page, and the lock its builds take turns on.
#[derive(Default)]
struct Slot {
    /// Held while the scope is built: a request that finds a build under way waits for it and
    /// takes it if it is new enough, so requests arriving together cost one build.
    building: tokio::sync::Mutex<()>,
    /// A page is drawn anew in the background for a request that was shown the last one.
    refreshing: AtomicBool,
    /// Told when a page is drawn (a request waiting a moment for it takes it).
    drawn: tokio::sync::Notify,
    latest: Mutex<Option<Kept<Built>>>,
    page: Mutex<Option<Kept<Drawn>>>,
}

/// When a build was made: a page drawn from it carries the same.
#[derive(Clone, Copy)]
struct Made {
    /// When it was made, on the server's clock (unix ms).
    ms: i64,
    /// When it began (before it read the version): a request that arrived earlier takes it
    /// whatever the version says.
    began: Instant,
    /// How long it took (a page waits for the next build only if this one was quick).
    took: Duration,
}

impl Made {
    /// Whether it is taken again when the version says so (see `TRUSTED`).
    fn trusted(&self) -> bool {
        self.began.elapsed() < self.took + TRUSTED
    }

    /// How long before a dashboard drawn from this build may start the next one, now that the
    /// data has moved on: a build quicker than `PAGE_WAIT` at once (a small study's page
    /// follows every answer), a slower one after a rest of `REST_FACTOR` times its length, at
    /// most `REST_MOST`. So a live study whose build takes seconds is rebuilt for its watchers
    /// at most every few tens of seconds, and watching it costs about a tenth of a core however
    /// fast its crowd answers (its progress above the tables is read per request). Exports
    /// still build as of their request.
    fn until_due(&self) -> Duration {
        if self.took < PAGE_WAIT {
            return Duration::ZERO;
        }
        let rest = (self.took * REST_FACTOR).min(REST_MOST);
        (self.took + rest).saturating_sub(self.began.elapsed())
    }
}

/// A scope's dashboard rests this many times its last build's length before the next.
pub const REST_FACTOR: u32 = 9;

/// The longest a scope's dashboard rests between builds while its data moves.
pub const REST_MOST: Duration = Duration::from_secs(30);

/// A build or a page, with the data version it was built from.
struct Kept<T> {
    value: Arc<T>,
    version: i64,
    made: Made,
    used: Instant,
}

impl<T> Kept<T> {
    /// Its value, marked as used.
    fn take(&mut self) -> (Arc<T>, i64, Made) {
        self.used = Instant::now();
        (self.value.clone(), self.version, self.made)
    }

    /// Whether a sweep lets it go: unused for `idle`, or older than `version` and unused for
    /// `stale`.
    fn spent(&self, idle: Duration, stale: Duration, version: i64) -> bool {
        let unused = self.used.elapsed();
        unused >= idle || (self.version < version && unused >= stale)
    }
}

/// How old the page shown is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Freshness {
    /// Drawn from the data as it is now.
    Current,
    /// Built at `made_ms` (unix ms, the server's clock); the data has changed since, and a new
    /// build is under way.
    Behind { made_ms: i64 },
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long a new build waits for the scope's last one to be let go by whoever draws from it
/// (a file or page from the build: seconds on a large scope), before it is built beside it.
pub const LET_GO: Duration = Duration::from_secs(60);

/// Waits until nobody holds `build` any more, or `LET_GO` has passed. (Polled: an `Arc` tells
/// nobody when its last holder lets go, and its holders are pages and files drawn on heavy
/// threads, a few seconds each.)
async fn let_go<T>(build: &Weak<T>) {
    let deadline = Instant::now() + LET_GO;
    while build.strong_count() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The latest value kept if it is at least `version` or began after `asked`: built from the
/// data as it stood when the request came, or later.
fn at_least<T>(
    kept: &Mutex<Option<Kept<T>>>,
    version: i64,
    asked: Instant,
) -> Option<(Arc<T>, Made)> {
    let mut kept = lock(kept);
    let k = kept
        .as_mut()
        .filter(|k| (k.version >= version || k.made.began >= asked) && k.made.trusted())?;
    let (value, _, made) = k.take();
    Some((value, made))
}

impl Reports {
    fn slot(&self, scope: &Scope) -> Arc<Slot> {
        lock(&self.slots).entry(scope.clone()).or_default().clone()
    }

    /// The scope's report as the data stands now: the kept build if nothing changed since it
    /// was made, else a new one (built in the heavy turn; requests for the same scope that
    /// arrive meanwhile wait for it and take it).
    pub async fn current(
        self: &Arc<Self>,
        n: &Needs,
        scope: &Scope,
    ) -> Result<Arc<Built>, AppError> {
        Ok(self.current_made(n, scope).await?.0)
    }

    /// `current`, with when the build was made. A build runs on a task of its own, which
    /// holds the scope's build lock and the turn of builds until the build is kept: a request
    /// dropped meanwhile (a reload, a closed tab) lets no second build start beside it, and
    /// the next request takes it.
    async fn current_made(
        self: &Arc<Self>,
        n: &Needs,
        scope: &Scope,
    ) -> Result<(Arc<Built>, Made), AppError> {
        let asked = Instant::now();
        let version = report::version(&n.pool, &scope.studies).await?;
        let slot = self.slot(scope);
        if let Some(b) = at_least(&slot.latest, version, asked) {
            return Ok(b);
        }
        let (me, n, scope) = (self.clone(), n.clone(), scope.clone());
        let build = async move { me.build(&n, &scope, &slot, (version, asked)).await };
        tokio::spawn(build).await.map_err(AppError::internal)?
    }

    /// [`Self::current_made`]'s build, where the data has changed since the kept one.
    async fn build(
        &self,
        n: &Needs,
        scope: &Scope,
        slot: &Slot,
        (version, asked): (i64, Instant),
    ) -> Result<(Arc<Built>, Made), AppError> {
        let _building = slot.building.lock().await;
        if let Some(b) = at_least(&slot.latest, version, asked) {
            return Ok(b);
        }
        // An older build is let go first (no export takes it again), freed off the async
        // workers, and the new one waits until whoever still draws from the old has finished:
        // two builds of a large scope (each ~120 MB for 300,000 rows) are never held at once.
        let old = lock(&slot.latest).take();
        if let Some(old) = old {
            let last = Arc::downgrade(&old.value);
            tokio::task::spawn_blocking(move || drop(old));
            let_go(&last).await;
        }
        let (built, began) = {
            let _turn = n.limiter.heavy_turn(store::heavy::Kind::Build).await?;
            let began = Instant::now();
            (Arc::new(Built::of(&n.pool, scope).await?), began)
        };
        self.builds.fetch_add(1, Ordering::Relaxed);
        let made = Made {
            ms: n.clock.now_ms(),
            began,
            took: began.elapsed(),
        };
        *lock(&slot.latest) = Some(Kept {
            value: built.clone(),
            version: built.version,
            made,
            used: Instant::now(),
        });
        self.bound();
        Ok((built, made))
    }

    /// A page of the scope: the kept one if the data has not changed since; else a new one is
    /// drawn in the background, and taken if it comes within `PAGE_WAIT`, else the kept one is
    /// shown (a live study changes with every answer); the first time, drawn from the current
    /// build.
    pub async fn page(
        self: &Arc<Self>,
        n: &Needs,
        scope: &Scope,
        draw: fn(&Built, &Scope) -> Drawn,
    ) -> Result<(Arc<Drawn>, Freshness), AppError> {
        let version = report::version(&n.pool, &scope.studies).await?;
        let slot = self.slot(scope);
        let kept = lock(&slot.page)
            .as_mut()
            .map(|k| (k.take(), k.made.trusted()));
        match kept {
            Some(((drawn, v, _), true)) if v >= version => Ok((drawn, Freshness::Current)),
            Some(((drawn, _, made), _)) => {
                // A small scope is built in milliseconds: wait a moment for the new page. A
                // scope whose last build was slow shows the last page at once.
                let wait = if made.took < PAGE_WAIT {
                    PAGE_WAIT
                } else {
                    Duration::ZERO
                };
                // The next build starts once the last one has rested (at once for a small
                // scope), and the page waits for it only if it comes within the wait; until
                // then the last page is shown.
                let due = made.until_due();
                let coming = due <= wait;
                if coming && !slot.refreshing.swap(true, Ordering::SeqCst) {
                    let (me, n, scope) = (self.clone(), n.clone(), scope.clone());
                    tokio::spawn(async move {
                        tokio::time::sleep(due).await;
                        if let Err(e) = me.draw(&n, &scope, draw).await {
                            tracing::warn!("drawing a report in the background failed: {e}");
                        }
                        me.slot(&scope).refreshing.store(false, Ordering::SeqCst);
                    });
                }
                let waited = if coming { due + wait } else { Duration::ZERO };
                let deadline = tokio::time::Instant::now() + waited;
                loop {
                    let told = slot.drawn.notified();
                    let new = lock(&slot.page)
                        .as_ref()
                        .filter(|k| k.version >= version && k.made.trusted())
                        .map(|k| k.value.clone());
                    if let Some(new) = new {
                        return Ok((new, Freshness::Current));
                    }
                    if tokio::time::timeout_at(deadline, told).await.is_err() {
                        return Ok((drawn, Freshness::Behind { made_ms: made.ms }));
                    }
                }
            }
            None => Ok((self.draw(n, scope, draw).await?, Freshness::Current)),
        }
    }

    /// Draws the page of the current build (on a heavy thread) and keeps it.
    async fn draw(
        self: &Arc<Self>,
        n: &Needs,
        scope: &Scope,
        draw: fn(&Built, &Scope) -> Drawn,
    ) -> Result<Arc<Drawn>, AppError> {
        let (built, made) = self.current_made(n, scope).await?;
        let version = built.version;
        let s = scope.clone();
        let drawn = Arc::new(report::off_runtime(move || draw(&built, &s)).await?);
        *lock(&self.slot(scope).page) = Some(Kept {
            value: drawn.clone(),
            version,
            made,
            used: Instant::now(),
        });
        self.slot(scope).drawn.notify_waiters();
        Ok(drawn)
    }

    /// Lets go of the builds beyond `KEPT`, least recently used first (freed off the async
    /// workers: a large build takes a while to free).
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
        if !gone.is_empty() {
            tokio::task::spawn_blocking(move || drop(gone));
        }
    }

    /// Lets go of the builds and pages unused for `idle`, and of the builds older than their
    /// scope's data (`versions`: a scope missing there counts as unchanged) unused for `STALE`;
    /// forgets scopes with nothing kept or under way. Returns whether a build was let go.
    /// Blocking while a large build is freed: call it off the async workers.
    pub fn sweep(&self, idle: Duration, versions: &HashMap<Scope, i64>) -> bool {
        let mut gone = Vec::new();
        {
            let mut slots = lock(&self.slots);
            for (scope, s) in slots.iter() {
                let version = versions.get(scope).copied().unwrap_or(i64::MIN);
                let mut latest = lock(&s.latest);
                if latest
                    .as_ref()
                    .is_some_and(|k| k.spent(idle, STALE, version))
                {
                    gone.extend(latest.take());
                }
                let mut page = lock(&s.page);
                if page.as_ref().is_some_and(|k| k.spent(idle, idle, version)) {
                    *page = None;
                }
            }
            slots.retain(|_, s| {
                Arc::strong_count(s) > 1 || lock(&s.latest).is_some() || lock(&s.page).is_some()
            });
        }
        !gone.is_empty()
    }

    /// The data version of every scope kept (a scope whose version cannot be read is left
    /// out, so nothing of it is let go as stale).
    pub async fn versions(&self, pool: &AnyPool) -> HashMap<Scope, i64> {
        let scopes: Vec<Scope> = lock(&self.slots).keys().cloned().collect();
        let mut out = HashMap::with_capacity(scopes.len());
        for scope in scopes {
            if let Ok(v) = report::version(pool, &scope.studies).await {
                out.insert(scope, v);
            }
        }
        out
    }

    /// Sweeps every `every` while the server runs, and prunes the database's log of changes
    /// (PostgreSQL) to what the versions read.
    pub fn sweep_periodically(self: Arc<Self>, pool: sqlx::AnyPool, every: Duration) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = report::prune_versions(&pool).await {
                    tracing::warn!("pruning the log of report changes failed: {e}");
                }
                let versions = self.versions(&pool).await;
                let reports = self.clone();
                let _ = tokio::task::spawn_blocking(move || reports.sweep(IDLE, &versions)).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_is_trusted_for_a_while_after_it_was_made_however_long_it_took() {
        let ago = |s: u64| Instant::now() - Duration::from_secs(s);
        let made = |began: Instant, took: u64| Made {
            ms: 0,
            began,
            took: Duration::from_secs(took),
        };
        // Begun 90 s ago: a build of 80 s was made 10 s ago; one of 20 s, 70 s ago.
        assert!(made(ago(90), 80).trusted());
        assert!(!made(ago(90), 20).trusted());
        assert!(made(ago(1), 0).trusted());
    }

    #[test]
    fn a_slow_dashboard_rests_nine_times_its_last_builds_length_at_most_thirty_seconds() {
        let made = |ago_ms: u64, took_ms: u64| Made {
            ms: 0,
            began: Instant::now() - Duration::from_millis(ago_ms),
            took: Duration::from_millis(took_ms),
        };
        let due = |m: Made| m.until_due().is_zero();
        // A build quicker than the page's wait: due at once.
        assert!(due(made(6, 5)));
        assert!(due(made(250, 240)));
        // A build of 2 s: due 20 s after it began, not 10 s.
        assert!(!due(made(10_000, 2_000)));
        assert!(due(made(20_500, 2_000)));
        // A build of 60 s rests 30 s, not nine minutes.
        assert!(!due(made(80_000, 60_000)));
        assert!(due(made(90_500, 60_000)));
    }

    #[tokio::test]
    async fn a_new_build_waits_until_the_last_one_is_let_go() {
        let old = Arc::new(vec![0u8; 1024]);
        let last = Arc::downgrade(&old);
        let held = old.clone();
        drop(old);
        let started = Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            drop(held);
        });
        let_go(&last).await;
        assert_eq!(last.strong_count(), 0);
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(200) && waited < LET_GO,
            "{waited:?}"
        );
    }
}
