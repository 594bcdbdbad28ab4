//! The one error type of the whole platform: what server functions and HTTP handlers answer,
//! what the command line prints. Server-side causes (the database, files, a model, a command's
//! bad data) exist on the server only; a client reads an error's public form (`AppError::public`),
//! and internal causes are logged when they are mapped to a response, never sent.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};
#[cfg(feature = "ssr")]
use std::sync::Arc;

#[derive(Clone, Debug, thiserror::Error, Serialize, Deserialize)]
#[serde(into = "Wire", from = "Wire")]
pub enum AppError {
    #[error("Please sign in first.")]
    NotSignedIn,
    #[error("Your role ({0}) may not do this.")]
    Forbidden(String),
    /// The single message for every failed login, whatever the cause.
    #[error("Unknown name or wrong password.")]
    BadLogin,
    #[error("{0}")]
    NotFound(String),
    /// Input that cannot be used: a bad argument, option or field.
    #[error("{0}")]
    Invalid(String),
    /// A well-formed request the protocol does not allow now (a full study, a locked answer).
    #[error("{0}")]
    Refused(String),
    #[error("Something went wrong on the server; it has been logged.")]
    Internal,
    #[error("The request could not be completed: {0}")]
    Request(String),
    /// Too many requests of one kind (sign-ins, new workers): wait this many seconds.
    #[error("Too many {1}; please try again in {0} s.")]
    Throttled(u64, String),
    /// A request body over the server's limit.
    #[error("The request is too large: {0}")]
    TooLarge(String),
    /// Bad input data: `file:line: message` (an import, a plan, an uploaded file).
    #[cfg(feature = "ssr")]
    #[error("{}", fmt_data(.file, .line, .message))]
    Data {
        file: String,
        line: Option<usize>,
        message: String,
    },
    /// A shared grid's job was taken over by another worker after this one's lease ran out.
    #[cfg(feature = "ssr")]
    #[error("{0}")]
    LeaseLost(String),
    /// A model, tokenizer or ONNX Runtime problem, said in words.
    #[cfg(feature = "ssr")]
    #[error("{0}")]
    Model(String),
    #[cfg(feature = "ssr")]
    #[error("database error: {0}")]
    Db(Arc<sqlx::Error>),
    #[cfg(feature = "ssr")]
    #[error("database migration failed: {0}")]
    Migrate(Arc<sqlx::migrate::MigrateError>),
    #[cfg(feature = "ssr")]
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: Arc<std::io::Error>,
    },
}

/// Two errors are equal when they are the same variant and read the same (every field of every
/// variant is in its message; a database or file error is compared by what it says).
impl PartialEq for AppError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for AppError {}

/// What every fallible function of the platform returns.
pub type Result<T, E = AppError> = std::result::Result<T, E>;

/// An error as it travels to the browser: the public variants only (see `AppError::public`).
#[derive(Serialize, Deserialize)]
enum Wire {
    NotSignedIn,
    Forbidden(String),
    BadLogin,
    NotFound(String),
    Invalid(String),
    Refused(String),
    Internal,
    Request(String),
    Throttled(u64, String),
    TooLarge(String),
}

impl From<Wire> for AppError {
    fn from(w: Wire) -> Self {
        match w {
            Wire::NotSignedIn => AppError::NotSignedIn,
            Wire::Forbidden(m) => AppError::Forbidden(m),
            Wire::BadLogin => AppError::BadLogin,
            Wire::NotFound(m) => AppError::NotFound(m),
            Wire::Invalid(m) => AppError::Invalid(m),
            Wire::Refused(m) => AppError::Refused(m),
            Wire::Internal => AppError::Internal,
            Wire::Request(m) => AppError::Request(m),
            Wire::Throttled(s, m) => AppError::Throttled(s, m),
            Wire::TooLarge(m) => AppError::TooLarge(m),
        }
    }
}

impl From<AppError> for Wire {
    fn from(e: AppError) -> Self {
        #[cfg(feature = "ssr")]
        let e = e.public();
        match e {
            AppError::NotSignedIn => Wire::NotSignedIn,
            AppError::Forbidden(m) => Wire::Forbidden(m),
            AppError::BadLogin => Wire::BadLogin,
            AppError::NotFound(m) => Wire::NotFound(m),
            AppError::Invalid(m) => Wire::Invalid(m),
            AppError::Refused(m) => Wire::Refused(m),
            AppError::Request(m) => Wire::Request(m),
            AppError::Throttled(s, m) => Wire::Throttled(s, m),
            AppError::TooLarge(m) => Wire::TooLarge(m),
            #[allow(unreachable_patterns)]
            _ => Wire::Internal,
        }
    }
}

#[cfg(feature = "ssr")]
fn fmt_data(file: &str, line: &Option<usize>, message: &str) -> String {
    match line {
        Some(n) => format!("{file}:{n}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        #[cfg(feature = "ssr")]
        if let Some(e) = malformed(&value) {
            // The framework answers 500 for any such error; the status that fits wins.
            if let Some(options) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
                options.set_status(e.status());
            }
            return e;
        }
        AppError::Request(value.to_string())
    }
}

/// On the server, a request whose arguments cannot be read (bad JSON or form data, a wrong
/// type, a number out of range, a missing field, a body over the limit) is the client's
/// error: 400 naming what is wrong, or 413.
#[cfg(feature = "ssr")]
fn malformed(e: &ServerFnErrorErr) -> Option<AppError> {
    let detail = match e {
        ServerFnErrorErr::Deserialization(d) | ServerFnErrorErr::Args(d) => d.clone(),
        ServerFnErrorErr::MissingArg(d) => format!("missing argument {d}"),
        _ => return None,
    };
    Some(if detail.contains("length limit exceeded") {
        AppError::TooLarge("the body is over the server's limit".into())
    } else {
        AppError::Invalid(format!("The request is malformed: {detail}."))
    })
}

#[cfg(feature = "ssr")]
impl AppError {
    /// Logs an internal failure and hides it from the client.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {cause}");
        AppError::Internal
    }

    /// Bad input data at `file` (and `line`, where there is one).
    pub fn data(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        AppError::Data {
            file: file.into(),
            line,
            message: message.into(),
        }
    }

    /// A file or directory that could not be read or written, with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        AppError::Io {
            context: context.into(),
            source: Arc::new(source),
        }
    }

    /// What a client may be told: bad data is the client's to fix (`Invalid`), a lost lease a
    /// refusal; a failure of the server itself (database, files, a model) is logged here and
    /// answered `Internal`. The one place where an error becomes public.
    pub fn public(self) -> AppError {
        match self {
            AppError::Data { .. } => AppError::Invalid(self.to_string()),
            AppError::LeaseLost(m) => AppError::Refused(m),
            AppError::Model(_) | AppError::Db(_) | AppError::Migrate(_) | AppError::Io { .. } => {
                AppError::internal(self)
            }
            public => public,
        }
    }

    /// Seconds for `Retry-After`, for a throttled request.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            AppError::Throttled(secs, _) => Some(*secs),
            _ => None,
        }
    }

    /// The HTTP status of the error's public form.
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode;
        match self {
            AppError::Data { .. } => StatusCode::BAD_REQUEST,
            AppError::LeaseLost(_) => StatusCode::CONFLICT,
            AppError::Model(_) | AppError::Db(_) | AppError::Migrate(_) | AppError::Io { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            AppError::NotSignedIn | AppError::BadLogin => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::Refused(_) => StatusCode::CONFLICT,
            AppError::Invalid(_) | AppError::Request(_) => StatusCode::BAD_REQUEST,
            AppError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::Throttled(..) => StatusCode::TOO_MANY_REQUESTS,
            AppError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Inside a server function: sets the HTTP status that fits the error (401, 403, 404, 400,
/// 500), so clients and logs see more than a bare 500; the body stays the serialised error.
#[cfg(feature = "ssr")]
pub fn respond<T>(result: Result<T, AppError>) -> Result<T, AppError> {
    let result = result.map_err(AppError::public);
    if let Err(e) = &result {
        if let Some(options) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
            options.set_status(e.status());
            if let Some(secs) = e.retry_after() {
                options.insert_header(http::header::RETRY_AFTER, secs.into());
            }
        }
    }
    result
}

#[cfg(feature = "ssr")]
impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        AppError::Db(Arc::new(e))
    }
}

#[cfg(feature = "ssr")]
impl From<sqlx::migrate::MigrateError> for AppError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        AppError::Migrate(Arc::new(e))
    }
}

#[cfg(feature = "ssr")]
impl axum::response::IntoResponse for AppError {
    /// For plain axum handlers: the status and the message people may see.
    fn into_response(self) -> axum::response::Response {
        let e = self.public();
        let mut response = (e.status(), e.to_string()).into_response();
        if let Some(secs) = e.retry_after() {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    fn over_the_wire(e: AppError) -> AppError {
        serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap()
    }

    #[test]
    fn a_client_reads_only_the_public_form_of_an_error() {
        // Bad data of a file is the client's to fix, named as it was.
        let data = AppError::data("preds.jsonl", Some(3), "unknown id \"x\"");
        assert_eq!(
            over_the_wire(data.clone()),
            AppError::Invalid("preds.jsonl:3: unknown id \"x\"".into())
        );
        assert_eq!(data.status(), http::StatusCode::BAD_REQUEST);
        // A lost lease is a refusal; the server's own failures say nothing of their cause.
        assert_eq!(
            over_the_wire(AppError::LeaseLost("taken over".into())),
            AppError::Refused("taken over".into())
        );
        let db = AppError::from(sqlx::Error::RowNotFound);
        assert!(db.to_string().starts_with("database error"), "{db}");
        assert_eq!(over_the_wire(db.clone()), AppError::Internal);
        assert_eq!(db.public(), AppError::Internal);
        let io = AppError::io("cannot read x", std::io::Error::other("secret path"));
        assert_eq!(over_the_wire(io), AppError::Internal);
        assert!(
            !serde_json::to_string(&AppError::Model("on /home/x".into()))
                .unwrap()
                .contains("/home/x")
        );
        // The public variants travel as they are.
        for e in [
            AppError::NotSignedIn,
            AppError::Forbidden("worker".into()),
            AppError::Throttled(3, "sign-ins".into()),
            AppError::TooLarge("the body".into()),
        ] {
            assert_eq!(over_the_wire(e.clone()), e);
        }
    }
}
