//! Limits that keep one client, or one flood, from starving everyone else: sign-in attempts per
//! account and per client (an account's owner at an address they signed in from before is not
//! held back by a flood on their name), a bound on concurrent password checks, and new places
//! per client.

use crate::error::AppError;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use http::HeaderMap;
use std::collections::HashSet;
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::heavy::Kind;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The limits a server runs with (see `serve --help`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Sign-in attempts per account name: a burst, then one more per period.
    pub login_per_account: (u32, Duration),
    /// Sign-in attempts per client address.
    pub login_per_client: (u32, Duration),
    /// New crowd workers (first arrival with a crowd id) per client address.
    pub joins_per_client: (u32, Duration),
    /// Password checks (argon2id, ~19 MiB each) running at once; the rest wait in turn.
    pub password_checks: usize,
    /// Sign-ins allowed to wait for a password check; beyond that, 429 at once.
    pub password_queue: usize,
    /// Reports built at once (each takes a core for seconds on a large study); the rest wait in
    /// turn, so crowd workers keep the other cores. Row exports and bundles have lanes of their
    /// own (`store::heavy::Kind`), so a small file never waits behind them.
    pub heavy_work: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            login_per_account: (10, Duration::from_secs(30)),
            login_per_client: (20, Duration::from_secs(3)),
            joins_per_client: (30, Duration::from_secs(10)),
            password_checks: std::thread::available_parallelism().map_or(2, |n| n.get()),
            password_queue: 64,
            heavy_work: std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
        }
    }
}

/// The limiters of one server (one per `AppState`).
pub struct Limiter {
    limits: Limits,
    login_account: Keyed<String>,
    login_client: Keyed<IpAddr>,
    joins_client: Keyed<IpAddr>,
    password_checks: Arc<Semaphore>,
    waiting: AtomicUsize,
    /// The owners' own lane (see `Lane`): one check at a time, its own bounded queue.
    owner_checks: Arc<Semaphore>,
    owner_waiting: AtomicUsize,
    /// The turns of each kind of heavy work (`Kind` as index).
    heavy: [Arc<Semaphore>; 3],
    /// (account, address) pairs that signed in successfully: the owner's own addresses, which
    /// a flood on the account name from elsewhere cannot lock out. Bounded: emptied when full.
    known_signins: Mutex<HashSet<(String, IpAddr)>>,
}

/// Successful (account, address) pairs remembered before the set is emptied.
const KNOWN_SIGNINS: usize = 10_000;

/// Sign-ins of owners at their known addresses allowed to wait in their own lane.
const OWNER_QUEUE: usize = 16;

/// Which queue a sign-in waits in for its password check: an account's owner at an address it
/// signed in from before has a lane of its own, which a flood of made-up names or of the
/// owner's name from elsewhere cannot fill; everyone else shares the common queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Owner,
    Anyone,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter")
            .field("limits", &self.limits)
            .finish()
    }
}

/// A keyed limiter whose table is pruned of keys back at full allowance once it grows, so made-up
/// names and addresses cannot grow it without bound.
struct Keyed<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
}

/// Keys kept before the table is pruned.
const PRUNE_AT: usize = 10_000;

impl<K: Hash + Eq + Clone> Keyed<K> {
    fn new((burst, period): (u32, Duration)) -> Self {
        // A zero period would allow everything at once: one a millisecond at most.
        let quota = Quota::with_period(period.max(Duration::from_millis(1)))
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
        Keyed {
            limiter: DefaultKeyedRateLimiter::keyed(quota),
        }
    }

    /// Takes one from the key's allowance, or says how long until the next one (whole seconds,
    /// at least 1, for `Retry-After`).
    fn take(&self, key: &K) -> Result<(), u64> {
        if self.limiter.len() > PRUNE_AT {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter.check_key(key).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
        })
    }
}

impl Limiter {
    pub fn new(limits: Limits) -> Self {
        Limiter {
            limits,
            login_account: Keyed::new(limits.login_per_account),
            login_client: Keyed::new(limits.login_per_client),
            joins_client: Keyed::new(limits.joins_per_client),
            password_checks: Arc::new(Semaphore::new(limits.password_checks.max(1))),
            waiting: AtomicUsize::new(0),
            owner_checks: Arc::new(Semaphore::new(1)),
            owner_waiting: AtomicUsize::new(0),
            heavy: Kind::ALL.map(|kind| {
                Arc::new(Semaphore::new(match kind {
                    Kind::Build => limits.heavy_work.max(1),
                    Kind::Rows => ROW_STREAMS,
                    Kind::Bundle => BUNDLES,
                }))
            }),
            known_signins: Mutex::new(HashSet::new()),
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// One sign-in attempt for `name` from `client`: refused with 429 when either has used up
    /// its allowance (an attempt counts whether or not the password is right). An address that
    /// signed into this account before uses only its own allowance: a flood on the name from
    /// other addresses does not lock the owner out. Says which lane its password check takes.
    pub fn login_attempt(&self, client: IpAddr, name: &str) -> Result<Lane, AppError> {
        let known = self
            .known_signins
            .lock()
            .is_ok_and(|k| k.contains(&(name.to_string(), client)));
        self.login_client
            .take(&client)
            .and_then(|()| match known {
                true => Ok(()),
                false => self.login_account.take(&name.to_string()),
            })
            .map(|()| if known { Lane::Owner } else { Lane::Anyone })
            .map_err(|secs| AppError::Throttled(secs, "sign-in attempts".into()))
    }

    /// Remembers that `name` signed in from `client` (see `login_attempt`).
    pub fn signed_in(&self, client: IpAddr, name: &str) {
        if let Ok(mut known) = self.known_signins.lock() {
            if known.len() >= KNOWN_SIGNINS {
                known.clear();
            }
            known.insert((name.to_string(), client));
        }
    }

    /// A new crowd worker arriving from `client`.
    pub fn new_worker(&self, client: IpAddr) -> Result<(), AppError> {
        self.joins_client
            .take(&client)
            .map_err(|secs| AppError::Throttled(secs, "new workers from your address".into()))
    }

    /// Waits for a turn to check a password in `lane`; at most `password_checks` run at once
    /// (one more in the owners' lane), and when more than `password_queue` (`OWNER_QUEUE`)
    /// already wait, the sign-in is refused at once. The turn is owned, so that a check can
    /// keep it until its hash is done even where the request was dropped meanwhile; a request
    /// dropped while it waits leaves the queue (`Waiting`).
    pub async fn password_turn(&self, lane: Lane) -> Result<OwnedSemaphorePermit, AppError> {
        let (checks, waiting, bound) = match lane {
            Lane::Anyone => (
                &self.password_checks,
                &self.waiting,
                self.limits.password_queue,
            ),
            Lane::Owner => (&self.owner_checks, &self.owner_waiting, OWNER_QUEUE),
        };
        if let Ok(permit) = checks.clone().try_acquire_owned() {
            return Ok(permit);
        }
        let queued = Waiting::join(waiting);
        if queued.ahead >= bound {
            return Err(AppError::Throttled(1, "sign-ins at once".into()));
        }
        checks
            .clone()
            .acquire_owned()
            .await
            .map_err(AppError::internal)
    }
}

/// A sign-in counted in a lane's queue until dropped: when it has its turn, is refused, or its
/// request is dropped while it waits (a client that hung up would otherwise stay counted, and
/// enough of them refuse every sign-in).
struct Waiting<'a> {
    count: &'a AtomicUsize,
    /// How many were waiting before this one.
    ahead: usize,
}

impl<'a> Waiting<'a> {
    fn join(count: &'a AtomicUsize) -> Waiting<'a> {
        let ahead = count.fetch_add(1, Ordering::SeqCst);
        Waiting { count, ahead }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Row exports streamed at once (each holds a database read, its memory bounded by the stream's
/// pieces in flight).
const ROW_STREAMS: usize = 2;
/// Bundles spooled at once (each spools to a file on disk).
const BUNDLES: usize = 1;

impl Limiter {
    /// Waits for a turn of heavy work of `kind` (each kind has turns of its own: a report's
    /// build, shared by the dashboard and every file made from the report; a stream of
    /// annotation rows; a bundle). The turn lasts as long as the permit (moved into the task
    /// that streams a download).
    pub async fn heavy_turn(&self, kind: Kind) -> Result<OwnedSemaphorePermit, AppError> {
        self.heavy[kind as usize]
            .clone()
            .acquire_owned()
            .await
            .map_err(AppError::internal)
    }
}

/// How long a refused sign-in waits before its 429 goes out. A flood's connections then make
/// one attempt a second each instead of thousands, and a waiting request costs a few bytes.
pub const TARPIT: Duration = Duration::from_secs(1);

/// The address a request comes from: with `trust_proxy`, the last address of
/// `X-Forwarded-For` (the one the proxy in front of us added); else the socket's peer; else
/// (a request made in process, as in tests) the unspecified address.
pub fn client_addr(headers: &HeaderMap, peer: Option<IpAddr>, trust_proxy: bool) -> IpAddr {
    let forwarded = trust_proxy
        .then(|| {
            headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .filter_map(|a| a.trim().parse::<IpAddr>().ok())
                .next_back()
        })
        .flatten();
    forwarded
        .or(peer)
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

/// Whether the request reached us over HTTPS, as a trusted proxy says (`X-Forwarded-Proto`).
pub fn forwarded_https(headers: &HeaderMap, trust_proxy: bool) -> bool {
    trust_proxy
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

/// Whether a browser says the request was sent by a page of another site (login CSRF, a study
/// link posted by someone else's form): `Sec-Fetch-Site` (every current browser) other than
/// `same-origin` or `none` (a sibling subdomain's page, `same-site`, is another site too), else
/// an `Origin` whose host is not ours (`null` included). Clients that send neither (scripts)
/// are not browsers that another site could drive.
pub fn from_another_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        let ours = site.eq_ignore_ascii_case("same-origin") || site.eq_ignore_ascii_case("none");
        return !ours;
    }
    let host = headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok());
    match headers
        .get(http::header::ORIGIN)
        .map(|v| v.to_str().unwrap_or("null"))
    {
        Some(origin) => {
            let origin_host = origin.split_once("://").map(|(_, h)| h);
            origin_host.is_none() || origin_host != host
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
