//! The typed application state: one database pool and the Leptos options.
//! Server functions reach it through Leptos context; axum handlers through `State`.

use leptos::config::LeptosOptions;
use sqlx::SqlitePool;

#[derive(Clone, Debug)]
pub struct AppState {
    pub pool: SqlitePool,
    pub leptos_options: LeptosOptions,
    /// Add `Secure` to session cookies (set when served over HTTPS).
    pub secure_cookies: bool,
}

impl axum::extract::FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// The state inside a server function.
pub fn app_state() -> Result<AppState, crate::error::AppError> {
    leptos::prelude::use_context::<AppState>()
        .ok_or_else(|| crate::error::AppError::internal("AppState missing from context"))
}
