//! The typed application state: one database pool (and its answer writer), the Leptos options.
//! Server functions reach it through Leptos context; axum handlers through `State`.

use crate::error::AppError;
use crate::ssr::limits::{self, Limiter, Limits};
use crate::ssr::reports::{Needs, Reports};
use http::HeaderMap;
use leptos::config::LeptosOptions;
use sqlx::AnyPool;
use std::net::IpAddr;
use std::sync::Arc;
use store::clock::Clock;
use store::machine::JobDoor;
use store::writer::Writer;

#[derive(Clone, Debug)]
pub struct AppState {
    pub pool: AnyPool,
    pub leptos_options: LeptosOptions,
    /// Add `Secure` to session cookies (set when served over HTTPS).
    pub secure_cookies: bool,
    /// Believe `X-Forwarded-For` and `X-Forwarded-Proto` (set when behind a reverse proxy).
    pub trust_proxy: bool,
    /// Sign-in and arrival limits, shared by every request.
    pub limiter: Arc<Limiter>,
    /// The crowd's answers, stored with group commit.
    pub writer: Writer,
    /// Origins besides MTurk's that may show the worker's pages in a frame
    /// (`serve --frame-ancestors`; see `domain::platform::frame_policy`).
    pub frame_ancestors: Arc<[String]>,
    /// The model track's door, through which the machines page queues learners; `None` where
    /// the binary installed none (the page then says so).
    pub door: Option<Arc<dyn JobDoor>>,
    /// The server's clock, the one authority on the crowd's times (an item's showing, an
    /// answer's arrival): the system's when serving; a manual one in tests and in the
    /// simulated sessions of `load authenticity`.
    pub clock: Clock,
    /// The reports built, one per scope and data version (see `reports`).
    pub reports: Arc<Reports>,
    /// The crowd platforms' accounts the operator gave `serve` (never stored; see `platforms`).
    pub platforms: Arc<crate::ssr::platforms::Platforms>,
}

impl AppState {
    /// A state with the default limits, no proxy and plain cookies.
    pub fn new(pool: AnyPool, leptos_options: LeptosOptions) -> Self {
        AppState {
            writer: Writer::new(pool.clone()),
            pool,
            leptos_options,
            secure_cookies: false,
            trust_proxy: false,
            limiter: Arc::new(Limiter::new(Limits::default())),
            frame_ancestors: Arc::from([]),
            door: None,
            clock: Clock::System,
            reports: Arc::default(),
            platforms: Arc::default(),
        }
    }

    /// The client address of a request (see `limits::client_addr`).
    pub fn client(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> IpAddr {
        limits::client_addr(headers, peer, self.trust_proxy)
    }

    /// Whether a session cookie for this request is marked `Secure`: always when configured,
    /// else when a trusted proxy says the request came over HTTPS.
    pub fn secure_cookie_for(&self, headers: &HeaderMap) -> bool {
        self.secure_cookies || limits::forwarded_https(headers, self.trust_proxy)
    }

    /// What the report builds need of this state.
    pub fn report_needs(&self) -> Needs {
        Needs {
            pool: self.pool.clone(),
            limiter: self.limiter.clone(),
            clock: self.clock.clone(),
        }
    }

    /// Now on the server's clock, in unix ms.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

impl axum::extract::FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// The state inside a server function.
pub fn app_state() -> Result<AppState, AppError> {
    leptos::prelude::use_context::<AppState>()
        .ok_or_else(|| AppError::internal("AppState missing from context"))
}
