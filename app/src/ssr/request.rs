//! The one request context of every entry point: the application state, the request's
//! headers and who is asking, admitted by the role the entry point allows. Server functions
//! get it through `serve`; axum handlers take `Ctx<Staff>` (or another guard) as an argument,
//! and their query strings as typed structs (`Params<T>`).

use super::auth::session_token;
use super::state::{app_state, AppState};
use crate::error::{respond, AppError};
use axum::extract::{FromRequestParts, Query};
use domain::people::Role;
use http::request::Parts;
use http::HeaderMap;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use sqlx::AnyPool;
use std::future::Future;
use std::str::FromStr;
use store::auth::{user_for_token, User};

/// Who may pass an entry point: each guard admits the session's user (or its absence).
pub trait Access: Sized + Send {
    fn admit(user: Option<User>) -> Result<Self, AppError>;
}

/// The signed-in user if their role is allowed.
fn with_role(user: Option<User>, allowed: impl Fn(Role) -> bool) -> Result<User, AppError> {
    let user = user.ok_or(AppError::NotSignedIn)?;
    if allowed(user.role) {
        Ok(user)
    } else {
        Err(AppError::Forbidden(user.role.as_str().to_string()))
    }
}

/// A researcher or an admin.
pub struct Staff(pub User);
/// An admin.
pub struct Admin(pub User);
/// A crowd worker.
pub struct Worker(pub User);
/// Anyone, signed in or not (sign-in, sign-out, who am I).
pub struct Visitor(pub Option<User>);

impl Access for Staff {
    fn admit(user: Option<User>) -> Result<Self, AppError> {
        with_role(user, Role::is_staff).map(Staff)
    }
}

impl Access for Admin {
    fn admit(user: Option<User>) -> Result<Self, AppError> {
        with_role(user, |r| r == Role::Admin).map(Admin)
    }
}

impl Access for Worker {
    fn admit(user: Option<User>) -> Result<Self, AppError> {
        with_role(user, |r| r == Role::Worker).map(Worker)
    }
}

impl Access for Visitor {
    fn admit(user: Option<User>) -> Result<Self, AppError> {
        Ok(Visitor(user))
    }
}

/// A request that passed its guard `A`.
pub struct Ctx<A> {
    pub state: AppState,
    pub headers: HeaderMap,
    pub who: A,
}

impl<A: Access> Ctx<A> {
    /// The context of a request with these headers: its session's user, admitted by `A`.
    pub async fn of(state: AppState, headers: HeaderMap) -> Result<Self, AppError> {
        let user = match session_token(&headers) {
            Some(token) => user_for_token(&state.pool, &token).await?,
            None => None,
        };
        Ok(Ctx {
            who: A::admit(user)?,
            state,
            headers,
        })
    }
}

impl<A> Ctx<A> {
    pub fn pool(&self) -> &AnyPool {
        &self.state.pool
    }

    /// Refuses a request that a page of another site sent (a form posted across sites):
    /// `what` names it in the refusal.
    pub fn same_site(&self, what: &str) -> Result<(), AppError> {
        if super::limits::from_another_site(&self.headers) {
            return Err(AppError::Forbidden(format!(
                "{what} posted from another site"
            )));
        }
        Ok(())
    }
}

impl<A: Access> FromRequestParts<AppState> for Ctx<A> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        Ctx::of(state.clone(), parts.headers.clone()).await
    }
}

/// The envelope of every server function: the request's context under guard `A`, then `body`;
/// an error gets the HTTP status that fits it (see `respond`). The state is taken from the
/// request's context before the first await, as Leptos requires.
pub async fn serve<A, T, F, Fut>(body: F) -> Result<T, AppError>
where
    A: Access,
    F: FnOnce(Ctx<A>) -> Fut,
    Fut: Future<Output = Result<T, AppError>>,
{
    let state = app_state();
    respond(
        async move {
            let headers: HeaderMap = leptos_axum::extract().await.map_err(AppError::internal)?;
            body(Ctx::of(state?, headers).await?).await
        }
        .await,
    )
}

/// A query string read into `T`: a malformed one is answered 400 naming the parameter and
/// what is wrong with it (`k: must be a number, not "x"`).
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AppError> {
        Query::<T>::try_from_uri(&parts.uri)
            .map(|q| Params(q.0))
            .map_err(|e| {
                let text = e.body_text();
                let why = text
                    .strip_prefix("Failed to deserialize query string: ")
                    .unwrap_or(&text);
                AppError::Invalid(format!("The query is malformed: {why}."))
            })
    }
}

/// A query parameter that is a number; absent or empty reads as `None`. For
/// `#[serde(default, deserialize_with = "number")]`.
pub fn number<'de, D: Deserializer<'de>, T: FromStr>(d: D) -> Result<Option<T>, D::Error> {
    let v = String::deserialize(d)?;
    if v.is_empty() {
        return Ok(None);
    }
    v.parse()
        .map(Some)
        .map_err(|_| D::Error::custom(format!("must be a number, not {v:?}")))
}

/// A query parameter that is a yes or no: `true`/`1` or `false`/`0`/empty. For
/// `#[serde(default, deserialize_with = "flag")]`.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match String::deserialize(d)?.as_str() {
        "" | "0" | "false" => Ok(false),
        "1" | "true" => Ok(true),
        other => Err(D::Error::custom(format!(
            "must be true or false, not {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Q {
        #[serde(default, deserialize_with = "number")]
        k: Option<u32>,
        #[serde(default, deserialize_with = "flag")]
        filtered: bool,
    }

    async fn read(query: &str) -> Result<Q, AppError> {
        let req = http::Request::get(format!("/x?{query}")).body(()).unwrap();
        let (mut parts, ()) = req.into_parts();
        Params::<Q>::from_request_parts(&mut parts, &())
            .await
            .map(|p| p.0)
    }

    #[tokio::test]
    async fn a_query_reads_into_its_struct_or_names_what_is_wrong() {
        let q = read("k=10&filtered=1&other=x").await.unwrap();
        assert_eq!((q.k, q.filtered), (Some(10), true));
        let q = read("k=&filtered=").await.unwrap();
        assert_eq!((q.k, q.filtered), (None, false));
        let q = read("").await.unwrap();
        assert_eq!((q.k, q.filtered), (None, false));
        let e = read("k=ten").await.unwrap_err().to_string();
        assert!(e.contains("k: must be a number, not \"ten\""), "{e}");
        let e = read("filtered=yes").await.unwrap_err().to_string();
        assert!(e.contains("filtered: must be true or false"), "{e}");
    }
}
