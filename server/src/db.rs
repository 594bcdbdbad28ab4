//! Opening the embedded SQLite database and running the migrations in `migrations/`.
//! One pool per process, handed around in `AppState`.

use crate::error::{Result, ServerError};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::ConnectOptions;
use sqlx::SqlitePool;
use std::str::FromStr;

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Opens (creating if needed) the database at `url` (`sqlite://path` or `sqlite::memory:`)
/// and brings its schema up to date.
pub async fn connect(url: &str) -> Result<SqlitePool> {
    open(url, true).await
}

/// Opens a database that must already exist (commands that only read, such as `score --task`).
pub async fn connect_existing(url: &str) -> Result<SqlitePool> {
    open(url, false).await.map_err(|e| match e {
        ServerError::Db(sqlx::Error::Database(_)) => ServerError::Usage(format!(
            "cannot open the database {url}: it does not exist yet (import data first)"
        )),
        other => other,
    })
}

async fn open(url: &str, create: bool) -> Result<SqlitePool> {
    let memory = url.contains(":memory:");
    let opts = SqliteConnectOptions::from_str(url)?
        .create_if_missing(create)
        .foreign_keys(true)
        .busy_timeout(std::time::Duration::from_secs(10))
        // An export streams its rows for as long as the client reads: not a slow statement.
        .log_slow_statements(log::LevelFilter::Debug, std::time::Duration::from_secs(1));
    let opts = if memory {
        opts
    } else {
        opts.journal_mode(SqliteJournalMode::Wal)
    };
    // An in-memory database lives in one connection.
    let pool = SqlitePoolOptions::new()
        .max_connections(if memory { 1 } else { 8 })
        .connect_with(opts)
        .await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// A fresh, migrated in-memory database (tests and `score --gold`-style one-offs).
pub async fn memory() -> Result<SqlitePool> {
    connect("sqlite::memory:").await
}
