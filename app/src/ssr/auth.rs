//! Sign-in (throttled) and the session cookie of a request (read, set, cleared), and the
//! connection's peer address; who is asking, and whether they may, is `ssr::request`.

use crate::error::AppError;
use crate::ssr::limits::{Limiter, TARPIT};
use http::{header, HeaderMap, HeaderValue};
use std::net::IpAddr;
use store::auth::{
    check_password, open_session, User, MAX_PASSWORD, SESSION_COOKIE, SESSION_SECONDS,
};

/// Checks a name and password and opens a session; returns the user and the cookie token.
/// Every failure gives the same `BadLogin`. An attempt first counts against the account's and
/// the client's allowance (429 when used up; an address the account signed in from before
/// counts against its own only), then waits its turn for a password check (at most
/// `Limits::password_checks` at once, so a flood costs a bounded amount of memory and CPU).
pub async fn login(
    pool: &sqlx::AnyPool,
    limiter: &Limiter,
    client: IpAddr,
    name: &str,
    password: &str,
) -> Result<(User, String), AppError> {
    if domain::people::validate_user_name(name).is_err() || password.len() > MAX_PASSWORD {
        // No account can have such a name or password: no check is needed to say so.
        return Err(AppError::BadLogin);
    }
    let allowed = match limiter.login_attempt(client, name) {
        Ok(lane) => limiter.password_turn(lane).await,
        Err(e) => Err(e),
    };
    let turn = match allowed {
        Ok(turn) => turn,
        Err(refused) => {
            tokio::time::sleep(TARPIT).await;
            return Err(refused);
        }
    };
    // On a task of its own, which keeps the turn until the hash is done: a client that hangs
    // up mid-check must not free its turn while its hash still runs (the bound on checks at
    // once is one on their memory and CPU).
    let (db, who, secret) = (pool.clone(), name.to_string(), password.to_string());
    let user = tokio::spawn(async move {
        let user = check_password(&db, &who, &secret).await;
        drop(turn);
        user
    })
    .await
    .map_err(AppError::internal)?;
    let user = user?.ok_or(AppError::BadLogin)?;
    limiter.signed_in(client, name);
    let token = open_session(pool, user.id).await?;
    Ok((user, token))
}

/// The session token from a request's `Cookie` headers.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == SESSION_COOKIE)
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}

/// `Set-Cookie` value for a new session (HttpOnly, SameSite=Lax, Secure when configured).
pub fn session_cookie(token: &str, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    cookie(token, &format!("SameSite=Lax{secure}"))
}

/// `Set-Cookie` value for a crowd worker's session, which must also work inside a crowd
/// platform's frame on another site (MTurk's ExternalQuestion). Over HTTPS it is a partitioned
/// cookie (`SameSite=None; Secure; Partitioned`, CHIPS): browsers that block third-party
/// cookies keep it for the frame's top-level site, so it signs nobody in anywhere else. Over
/// plain HTTP it is the ordinary Lax cookie (and a frame cannot keep a session).
pub fn worker_session_cookie(token: &str, secure: bool) -> HeaderValue {
    if secure {
        cookie(token, "SameSite=None; Secure; Partitioned")
    } else {
        session_cookie(token, false)
    }
}

#[expect(
    clippy::expect_used,
    reason = "a session token is hex and the attributes are constants: a valid header"
)]
fn cookie(token: &str, attributes: &str) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}={token}; Path=/; HttpOnly; Max-Age={SESSION_SECONDS}; {attributes}"
    ))
    .expect("token is hex")
}

/// `Set-Cookie` value that removes the session cookie.
#[expect(clippy::expect_used, reason = "a constant, valid header")]
pub fn clear_cookie() -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"
    ))
    .expect("a constant cookie")
}

/// Inside a server function: the peer address of the connection (absent for requests made in
/// process, as tests do).
pub async fn peer_addr() -> Option<IpAddr> {
    leptos_axum::extract::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .await
        .ok()
        .map(|info| info.0.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_session_cookie_among_others() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; clues_session=abc; b=2"),
        );
        assert_eq!(session_token(&h).as_deref(), Some("abc"));
        let mut empty = HeaderMap::new();
        empty.append(header::COOKIE, HeaderValue::from_static("clues_session="));
        assert_eq!(session_token(&empty), None);
    }

    #[test]
    fn cookie_is_http_only_and_same_site() {
        let c = session_cookie("ff", false);
        let c = c.to_str().unwrap();
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Lax") && !c.contains("Secure"));
        assert!(session_cookie("ff", true)
            .to_str()
            .unwrap()
            .ends_with("; Secure"));
        let framed = worker_session_cookie("ff", true);
        let framed = framed.to_str().unwrap();
        assert!(framed.contains("HttpOnly") && framed.contains("Path=/"));
        assert!(framed.ends_with("SameSite=None; Secure; Partitioned"));
        assert_eq!(
            worker_session_cookie("ff", false),
            session_cookie("ff", false)
        );
    }
}
