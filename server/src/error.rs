//! The one error type of the server side (CLI, import, scoring, startup).
//! Data errors always name the file and, where there is one, the line.

use app::error::AppError;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Bad input data: `file:line: message`.
    #[error("{}", fmt_data(.file, .line, .message))]
    Data {
        file: String,
        line: Option<usize>,
        message: String,
    },
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Conflict(String),
    /// A shared grid's job was taken over by another worker after this one's lease ran out.
    #[error("{0}")]
    LeaseLost(String),
    /// A model, tokenizer or ONNX Runtime problem, said in words.
    #[error("{0}")]
    Model(String),
    #[error(transparent)]
    App(#[from] AppError),
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

fn fmt_data(file: &str, line: &Option<usize>, message: &str) -> String {
    match line {
        Some(n) => format!("{file}:{n}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl ServerError {
    pub fn data(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        ServerError::Data {
            file: file.into(),
            line,
            message: message.into(),
        }
    }
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ServerError::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T, E = ServerError> = std::result::Result<T, E>;
