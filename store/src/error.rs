//! The server side's one error type: what the data layer, the learners and the command line
//! return, with every cause kept (the database, files, a model, a command's bad data). What a
//! browser may read of it is `app::error::Error`, made from it in one place.

use std::sync::Arc;

#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    #[error("Your role ({0}) may not do this.")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// Input that cannot be used: a bad argument, option or field.
    #[error("{0}")]
    Invalid(String),
    /// A well-formed request the protocol does not allow now (a full study, a locked answer).
    #[error("{0}")]
    Refused(String),
    /// A failure of the server itself, already logged where it happened.
    #[error("Something went wrong on the server; it has been logged.")]
    Internal,
    /// A request that ended before it was served (a download the client cancelled).
    #[error("The request could not be completed: {0}")]
    Request(String),
    /// Bad input data: `file:line: message` (an import, a plan, an uploaded file).
    #[error("{}", fmt_data(.file, .line, .message))]
    Data {
        file: String,
        line: Option<usize>,
        message: String,
    },
    /// A shared grid's job was taken over by another worker after this one's lease ran out.
    #[error("{0}")]
    LeaseLost(String),
    /// A model, tokenizer or ONNX Runtime problem, said in words.
    #[error("{0}")]
    Model(String),
    /// This machine cannot run the work, whatever its input: ONNX Runtime or the baseline's
    /// encoder missing, a device it cannot use. A worker hands such a job back to the queue
    /// for another machine, and stops taking its kind.
    #[error("{0}")]
    Unfit(String),
    /// A command that runs jobs was stopped by a signal (Ctrl-C, SIGTERM) and handed the job it
    /// held back to the queue (`said`); the process ends with `status`, the one a shell gives a
    /// process that signal ended (130, 143).
    #[error("{said}")]
    Stopped { said: String, status: i32 },
    /// A passing fault of a service this server calls (a crowd platform timed out, answered
    /// 429 or 5xx): the job that called it goes back to its queue and is tried again later.
    #[error("{0}")]
    Later(String),
    #[error("database error: {0}")]
    Db(Arc<sqlx::Error>),
    #[error("database migration failed: {0}")]
    Migrate(Arc<sqlx::migrate::MigrateError>),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: Arc<std::io::Error>,
    },
}

/// Two errors are equal when they are the same variant and read the same (every field of every
/// variant is in its message; a database or file error is compared by what it says).
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for Error {}

/// What every fallible function of the server side returns.
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn fmt_data(file: &str, line: &Option<usize>, message: &str) -> String {
    match line {
        Some(n) => format!("{file}:{n}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl Error {
    /// Logs an internal failure and hides its cause from whoever reads the error.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {cause}");
        Error::Internal
    }

    /// Bad input data at `file` (and `line`, where there is one).
    pub fn data(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Error::Data {
            file: file.into(),
            line,
            message: message.into(),
        }
    }

    /// A file or directory that could not be read or written, with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source: Arc::new(source),
        }
    }
}

/// A whole text file, or an `Io` error that names it ("cannot read PATH").
pub fn read_text(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        Error::Db(Arc::new(e))
    }
}

impl From<sqlx::migrate::MigrateError> for Error {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        Error::Migrate(Arc::new(e))
    }
}

/// A unique constraint as both dialects name it when it is violated: PostgreSQL by its name,
/// SQLite by its columns (`table.column, ...` in "UNIQUE constraint failed: ...").
#[derive(Clone, Copy, Debug)]
pub struct Unique {
    pub postgres: &'static str,
    pub sqlite: &'static str,
}

impl Unique {
    fn violated_by(self, e: &sqlx::Error) -> bool {
        let sqlx::Error::Database(db) = e else {
            return false;
        };
        db.is_unique_violation()
            && (db.constraint() == Some(self.postgres)
                || db
                    .message()
                    .ends_with(&format!("UNIQUE constraint failed: {}", self.sqlite)))
    }
}

/// `users.name`.
pub const USER_NAME: Unique = Unique {
    postgres: "users_name_key",
    sqlite: "users.name",
};
/// `crossfit_partitions.name`.
pub const PARTITION_NAME: Unique = Unique {
    postgres: "crossfit_partitions_name_key",
    sqlite: "crossfit_partitions.name",
};
/// One run of a CrossFit method on a task's seed.
pub const CROSSFIT_RUN: Unique = Unique {
    postgres: "crossfit_runs_method_task_id_seed_key",
    sqlite: "crossfit_runs.method, crossfit_runs.task_id, crossfit_runs.seed",
};
/// One client id per item of an assignment (`assignment_items_client`).
pub const CLIENT_ID: Unique = Unique {
    postgres: "assignment_items_client",
    sqlite: "assignment_items.assignment_id, assignment_items.client_id",
};

/// A statement's result with the violation of one named unique constraint said in words
/// (`refusal`), as realworld-axum-sqlx's `on_constraint` does; any other error as it is.
pub trait OnUnique<T> {
    fn on_unique(self, constraint: Unique, refusal: impl FnOnce() -> Error) -> Result<T>;
}

impl<T> OnUnique<T> for std::result::Result<T, sqlx::Error> {
    fn on_unique(self, constraint: Unique, refusal: impl FnOnce() -> Error) -> Result<T> {
        self.map_err(|e| match constraint.violated_by(&e) {
            true => refusal(),
            false => e.into(),
        })
    }
}
