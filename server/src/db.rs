//! Opening the database (SQLite by default, PostgreSQL for a `postgres://` URL) with the
//! schema brought up to date: the CLI's side of `app::ssr::db`, one pool per process.

use app::error::{AppError, Result};
use app::ssr::db::{open, Open, OpenError};
use sqlx::AnyPool;

/// Opens (creating if needed) the database at `url` (`sqlite://path`, `sqlite::memory:`,
/// `postgres://user@host/db`) and brings its schema up to date. `CLUES_DB_CONNECTIONS` sets
/// the pool size of this process (default 8).
pub async fn connect(url: &str) -> Result<AnyPool> {
    opened(url, true).await
}

/// Opens a database that must already exist (commands that only read, such as `score --task`).
pub async fn connect_existing(url: &str) -> Result<AnyPool> {
    opened(url, false).await
}

async fn opened(url: &str, create: bool) -> Result<AnyPool> {
    let max_connections = match std::env::var("CLUES_DB_CONNECTIONS") {
        Ok(v) => v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            AppError::Invalid(format!(
                "CLUES_DB_CONNECTIONS={v:?}: give a positive number of connections"
            ))
        })?,
        Err(_) => Open::default().max_connections,
    };
    open(
        url,
        Open {
            create,
            max_connections,
        },
    )
    .await
    .map_err(|e| match e {
        OpenError::Db(e) => AppError::from(e),
        OpenError::Migrate(e) => AppError::from(e),
        usage => AppError::Invalid(usage.to_string()),
    })
}

/// A fresh, migrated in-memory database (tests and `score --gold`-style one-offs).
pub async fn memory() -> Result<AnyPool> {
    connect("sqlite::memory:").await
}
