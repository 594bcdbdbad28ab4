//! Opening the database, SQLite (embedded default) or PostgreSQL, through sqlx's `Any` driver:
//! one pool type and one text per query for both, the few dialect differences named here.
//!
//! Why `Any` and not a trait per table family with two implementations: the queries are
//! written once in the SQL both engines share (`$1` parameters, `CASE` sums, `RETURNING`), so a
//! reader sees one statement per operation, and a change cannot land in one backend only.
//! What the dialects do not share is kept to [`Backend`]: how a write transaction starts, the
//! schema's migrations, how a JSON array is expanded into rows, and how rows are claimed.

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{MigrateDatabase, Migrator};
use sqlx::{Any, AnyConnection, AnyPool, ConnectOptions, Executor};
use std::str::FromStr;
use std::time::Duration;

/// The schema, once per dialect: migrations with the same version have the same meaning.
pub static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");
pub static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");

/// Every table, parents before children (the order a copy inserts them in), and whether its
/// key is an `id` that the database assigns.
pub const TABLES: &[(&str, bool)] = &[
    ("users", true),
    ("sessions", false),
    ("tasks", true),
    ("data_files", true),
    ("examples", true),
    ("quality_issues", true),
    ("studies", true),
    ("study_configs", true),
    ("analysis_plans", false),
    ("crowd_ids", false),
    ("assignments", true),
    ("assignment_items", false),
    ("consent_refusals", true),
    ("questionnaire_answers", false),
    ("attention_answers", false),
    ("crossfit_tasks", true),
    ("crossfit_files", true),
    ("crossfit_examples", true),
    ("crossfit_partitions", true),
    ("crossfit_runs", true),
    ("jobs", true),
    ("crossfit_jobs", false),
    ("upstream_jobs", false),
    ("machine_systems", true),
    ("grid_jobs", false),
    ("machine_runs", true),
    ("machine_predictions", false),
    ("machine_calls", false),
    ("workers", false),
];

/// Which engine a pool or connection talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Index 0 of per-backend tables such as the report's query texts.
    Sqlite = 0,
    /// Index 1.
    Postgres = 1,
}

impl Backend {
    /// From a URL scheme: `sqlite`, `postgres` or `postgresql`.
    fn of_scheme(scheme: &str) -> Option<Backend> {
        match scheme {
            "sqlite" => Some(Backend::Sqlite),
            "postgres" | "postgresql" => Some(Backend::Postgres),
            _ => None,
        }
    }

    /// From a database URL: `postgres://…`/`postgresql://…` or `sqlite:…`.
    pub fn of_url(url: &str) -> Result<Backend, String> {
        Backend::of_scheme(url.split(':').next().unwrap_or_default()).ok_or_else(|| {
            format!(
                "unsupported database URL {url:?}: use sqlite://PATH or postgres://USER@HOST/DB"
            )
        })
    }

    /// From the URL the pool was opened with (kept parsed by the pool; `open` accepted it).
    pub fn of(pool: &AnyPool) -> Backend {
        Backend::of_scheme(pool.connect_options().database_url.scheme()).unwrap_or(Backend::Sqlite)
    }

    pub fn of_conn(conn: &AnyConnection) -> Backend {
        if conn.backend_name().eq_ignore_ascii_case("postgresql") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }

    /// The statement that opens a write transaction. SQLite: `BEGIN IMMEDIATE` takes the one
    /// write lock at once. PostgreSQL: a plain `BEGIN`; what a transaction must serialise it
    /// names as locks (`tx::Lock`), so writers of different studies never queue together.
    pub fn begin_write(self) -> &'static str {
        match self {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN",
        }
    }

    /// The rows of the JSON array that `expr` (a parameter or a TEXT column) holds, one per
    /// element in a column named `value`: the one JSON function the queries need, spelled
    /// per dialect. The SQL around it casts `value` where it needs a type.
    pub fn json_elements(self, expr: &str) -> String {
        match self {
            Backend::Sqlite => format!("json_each({expr})"),
            Backend::Postgres => format!("jsonb_array_elements_text(CAST({expr} AS jsonb))"),
        }
    }

    /// What ends a `SELECT` of rows to claim: on PostgreSQL the rows are locked and rows that
    /// another transaction holds are passed over (`FOR UPDATE SKIP LOCKED`), so workers
    /// claiming at once never wait on each other; SQLite's one writer needs nothing.
    pub fn skip_locked(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    /// The migrations of this dialect.
    pub fn migrations(self) -> &'static Migrator {
        match self {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        }
    }
}

/// How a pool is opened.
#[derive(Clone, Debug)]
pub struct Open {
    /// Create the database when it does not exist (a PostgreSQL database on its server too).
    pub create: bool,
    /// Connections per process (PostgreSQL: mind `max_connections` over all instances).
    pub max_connections: u32,
    /// SQLite: commits never checkpoint (`wal_autocheckpoint = 0`); the process runs
    /// [`super::checkpoint::spawn`] instead. For `serve`; one-off commands keep SQLite's own.
    pub checkpoint_in_background: bool,
}

impl Default for Open {
    fn default() -> Self {
        Open {
            create: true,
            max_connections: 8,
            checkpoint_in_background: false,
        }
    }
}

/// Opens the database at `url` and brings its schema up to date.
pub async fn open(url: &str, how: Open) -> Result<AnyPool, OpenError> {
    sqlx::any::install_default_drivers();
    let backend = Backend::of_url(url).map_err(OpenError::Url)?;
    let memory = url.contains(":memory:");
    let background = how.checkpoint_in_background;
    // A server that cannot be reached is said as such, not as a missing database.
    if !memory && !Any::database_exists(url).await? {
        if !how.create {
            return Err(OpenError::Missing(url.to_string()));
        }
        // Another instance may be creating it at the same moment.
        if let Err(e) = Any::create_database(url).await {
            if !Any::database_exists(url).await? {
                return Err(e.into());
            }
        }
    }
    let options = AnyConnectOptions::from_str(url)?
        // An export streams its rows for as long as the client reads: not a slow statement.
        .log_slow_statements(log::LevelFilter::Debug, Duration::from_secs(1));
    let pool = AnyPoolOptions::new()
        // An in-memory SQLite database lives in one connection.
        .max_connections(if memory { 1 } else { how.max_connections })
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if backend == Backend::Sqlite {
                    conn.execute("PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000")
                        .await?;
                    if !memory {
                        conn.execute("PRAGMA journal_mode = WAL").await?;
                        if background {
                            conn.execute("PRAGMA wal_autocheckpoint = 0").await?;
                        }
                    }
                }
                Ok(())
            })
        })
        .after_release(|conn, _| Box::pin(out_of_transaction(conn)))
        .connect_with(options)
        .await?;
    let migrations = backend.migrations();
    // Several instances starting at once on a new database: one migrates, the others wait,
    // then find nothing left to do. A database already up to date (every command after the
    // first) takes no lock, so a command never waits for a server's startup; its migrations
    // are still checked against the applied ones (an edited migration is an error).
    let _lock = match up_to_date(&pool, migrations).await {
        true => None,
        false => Some(StartupLock::take(url).await?),
    };
    migrations.run(&pool).await?;
    Ok(pool)
}

/// Run before a connection goes back to the pool: a transaction still open on it is rolled
/// back, so the pool never hands one out inside a transaction. Why: on SQLite, sqlx's custom
/// `BEGIN IMMEDIATE` is acknowledged by the connection's thread before a second wait (its check
/// that the connection is in a transaction), and a future dropped between the two (a worker
/// stopped by SIGTERM, a browser that closed its tab) leaves no `Transaction` to roll it back:
/// the connection kept the database's write lock ("database is locked" for every other
/// writer) and took in its next autocommit writes uncommitted. A transaction only dropped has
/// its rollback queued: `ping` runs it first. Never fails the connection where this works.
async fn out_of_transaction(conn: &mut AnyConnection) -> Result<bool, sqlx::Error> {
    use sqlx::{Connection, TransactionManager};
    if !conn.is_in_transaction() {
        return Ok(true);
    }
    conn.ping().await?;
    if conn.is_in_transaction() {
        tracing::warn!("a connection came back to the pool inside a transaction that was dropped while it began: rolled back");
        while conn.is_in_transaction() {
            <Any as sqlx::Database>::TransactionManager::rollback(conn).await?;
        }
    }
    Ok(true)
}

/// Whether every migration is applied already (no `_sqlx_migrations` table yet: no).
async fn up_to_date(pool: &AnyPool, migrations: &Migrator) -> bool {
    let latest = migrations.iter().map(|m| m.version).max().unwrap_or(0);
    let applied: Result<Option<i64>, _> =
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(pool)
            .await;
    matches!(applied, Ok(Some(v)) if v >= latest)
}

/// Held while a process sets a database up (migrations, the demo's first load), so that
/// instances started together take turns instead of racing through check-then-create steps.
/// SQLite: an exclusive lock on an empty file beside the database, `<file>.startup-lock` (never
/// on the database file itself: closing any descriptor of it would drop the POSIX locks
/// SQLite holds on it in this process). PostgreSQL: a session advisory lock on a connection of its own,
/// released when the lock is dropped and that connection closes.
pub struct StartupLock {
    _file: Option<std::fs::File>,
    _conn: Option<AnyConnection>,
}

impl StartupLock {
    pub async fn take(url: &str) -> Result<StartupLock, OpenError> {
        sqlx::any::install_default_drivers();
        match Backend::of_url(url).map_err(OpenError::Url)? {
            Backend::Sqlite => {
                let path = sqlite_path(url);
                let file = match path {
                    Some(p) => Some(
                        tokio::task::spawn_blocking(move || {
                            let file = std::fs::OpenOptions::new()
                                .read(true)
                                .write(true)
                                .create(true)
                                .truncate(false)
                                .open(&p)?;
                            file.lock()?;
                            Ok::<_, std::io::Error>(file)
                        })
                        .await
                        .map_err(|e| OpenError::Url(format!("startup lock: {e}")))?
                        .map_err(|e| OpenError::Url(format!("cannot lock {url}: {e}")))?,
                    ),
                    None => None,
                };
                Ok(StartupLock {
                    _file: file,
                    _conn: None,
                })
            }
            Backend::Postgres => {
                use sqlx::Connection;
                let mut conn = AnyConnection::connect(url).await?;
                sqlx::query("SELECT pg_advisory_lock(4243)")
                    .execute(&mut conn)
                    .await?;
                Ok(StartupLock {
                    _file: None,
                    _conn: Some(conn),
                })
            }
        }
    }
}

/// The startup lock file of a `sqlite:` URL (`None` for an in-memory database).
fn sqlite_path(url: &str) -> Option<String> {
    if url.contains(":memory:") {
        return None;
    }
    let rest = url
        .strip_prefix("sqlite://")
        .or(url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty()).then(|| format!("{path}.startup-lock"))
}

/// Why a database could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Url(String),
    #[error("cannot open the database {0}: it does not exist yet (import data first)")]
    Missing(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// What the command line and the tools open: `connect` (creating if needed), `connect_existing`
/// and `memory`, with the pool size `CLUES_DB_CONNECTIONS` asks for.
pub mod cli {
    use super::{open, Open, OpenError};
    use crate::error::{Error, Result};
    use sqlx::AnyPool;

    /// Opens (creating if needed) the database at `url` (`sqlite://path`, `sqlite::memory:`,
    /// `postgres://user@host/db`) and brings its schema up to date. `CLUES_DB_CONNECTIONS` sets
    /// the pool size of this process (default 8).
    pub async fn connect(url: &str) -> Result<AnyPool> {
        opened(url, true, false).await
    }

    /// Opens a database that must already exist (commands that only read, such as `score --task`).
    pub async fn connect_existing(url: &str) -> Result<AnyPool> {
        opened(url, false, false).await
    }

    /// As [`connect`], for a long-lived server: on SQLite its commits leave checkpoints to a
    /// task of their own ([`crate::checkpoint`]), started here for as long as the runtime.
    pub async fn connect_serving(url: &str) -> Result<AnyPool> {
        let pool = opened(url, true, true).await?;
        crate::checkpoint::spawn(url);
        Ok(pool)
    }

    async fn opened(url: &str, create: bool, checkpoint_in_background: bool) -> Result<AnyPool> {
        let max_connections = match std::env::var("CLUES_DB_CONNECTIONS") {
            Ok(v) => v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                Error::Invalid(format!(
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
                checkpoint_in_background,
            },
        )
        .await
        .map_err(|e| match e {
            OpenError::Db(e) => Error::from(e),
            OpenError::Migrate(e) => Error::from(e),
            usage => Error::Invalid(usage.to_string()),
        })
    }

    /// A fresh, migrated in-memory database (tests and `score --gold`-style one-offs).
    pub async fn memory() -> Result<AnyPool> {
        connect("sqlite::memory:").await
    }
}
