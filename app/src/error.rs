//! The error a client reads: what server functions and HTTP handlers answer. The server
//! side's causes (the database, files, a model, a command's bad data) are `store::Error`; it
//! becomes an `AppError` in one place (`From<store::Error>`), where internal causes are logged,
//! never sent.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
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
}

/// What the client side's fallible functions return.
pub type Result<T, E = AppError> = std::result::Result<T, E>;

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

/// What a client may be told of a server-side error: bad data is the client's to fix
/// (`Invalid`), a lost lease a refusal; a failure of the server itself (database, files, a
/// model) is logged here and answered `Internal`. The one place where an error becomes public.
#[cfg(feature = "ssr")]
impl From<store::Error> for AppError {
    fn from(e: store::Error) -> Self {
        use store::Error as E;
        match e {
            E::Forbidden(m) => AppError::Forbidden(m),
            E::NotFound(m) => AppError::NotFound(m),
            E::Invalid(m) => AppError::Invalid(m),
            E::Refused(m) | E::LeaseLost(m) | E::Later(m) => AppError::Refused(m),
            E::Request(m) => AppError::Request(m),
            E::Data { .. } => AppError::Invalid(e.to_string()),
            E::Internal => AppError::Internal,
            E::Model(_)
            | E::Unfit(_)
            | E::Stopped { .. }
            | E::Db(_)
            | E::Migrate(_)
            | E::Io { .. } => AppError::internal(e),
        }
    }
}

#[cfg(feature = "ssr")]
impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        store::Error::from(e).into()
    }
}

#[cfg(feature = "ssr")]
impl AppError {
    /// Logs an internal failure and hides it from the client.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {cause}");
        AppError::Internal
    }

    /// Seconds for `Retry-After`, for a throttled request.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            AppError::Throttled(secs, _) => Some(*secs),
            _ => None,
        }
    }

    /// The HTTP status of the error.
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode;
        match self {
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
pub fn respond<T>(result: Result<T, impl Into<AppError>>) -> Result<T, AppError> {
    let result = result.map_err(Into::into);
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
impl axum::response::IntoResponse for AppError {
    /// For plain axum handlers: the status and the message people may see.
    fn into_response(self) -> axum::response::Response {
        let e = self;
        let mut response = (e.status(), e.to_string()).into_response();
        if let Some(secs) = e.retry_after() {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}

#[cfg(test)]
#[cfg(feature = "ssr")]
mod tests {
    use super::*;

    fn over_the_wire(e: AppError) -> AppError {
        serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap()
    }

    #[test]
    fn a_client_reads_only_the_public_form_of_an_error() {
        // Bad data of a file is the client's to fix, named as it was.
        let data = AppError::from(store::Error::data(
            "preds.jsonl",
            Some(3),
            "unknown id \"x\"",
        ));
        assert_eq!(
            over_the_wire(data.clone()),
            AppError::Invalid("preds.jsonl:3: unknown id \"x\"".into())
        );
        assert_eq!(data.status(), http::StatusCode::BAD_REQUEST);
        // A lost lease is a refusal; the server's own failures say nothing of their cause.
        assert_eq!(
            AppError::from(store::Error::LeaseLost("taken over".into())),
            AppError::Refused("taken over".into())
        );
        let db = store::Error::from(sqlx::Error::RowNotFound);
        assert!(db.to_string().starts_with("database error"), "{db}");
        assert_eq!(AppError::from(db), AppError::Internal);
        let io = store::Error::io("cannot read x", std::io::Error::other("secret path"));
        assert_eq!(AppError::from(io), AppError::Internal);
        let model = AppError::from(store::Error::Model("on /home/x".into()));
        assert!(!serde_json::to_string(&model).unwrap().contains("/home/x"));
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
