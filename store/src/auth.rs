//! Users, passwords (argon2id, hashed on blocking threads) and sessions in the database; the
//! request side (cookies, sign-in throttling, role checks) is in `app::ssr`. Session tokens are random 256-bit
//! values; only their SHA-256 is stored.

use crate::error::{Error, OnUnique, USER_NAME};
use crate::tx::Lock;
use argon2::password_hash::{rand_core::OsRng, SaltString};
use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier};
use domain::ids::UserId;
use domain::people::{validate_user_name, Role};
use domain::platform::Platform;
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::AnyPool;
use std::sync::OnceLock;

pub const SESSION_COOKIE: &str = "clues_session";
pub const SESSION_SECONDS: i64 = 7 * 24 * 3600;
const MIN_PASSWORD: usize = 8;
/// Longer passwords are refused when set, and fail at sign-in without being hashed.
pub const MAX_PASSWORD: usize = 1024;

/// A signed-in user as the server knows them (a `users` row without its password hash).
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct User {
    pub id: UserId,
    pub name: String,
    pub role: Role,
}

/// Server time in unix milliseconds (item timings).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Server time in unix seconds (sessions).
pub fn now_unix() -> i64 {
    now_ms() / 1000
}

/// Hashes a password with argon2id (default parameters) off the async threads.
pub async fn hash_password(password: String) -> Result<String, Error> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
    })
    .await
    .map_err(Error::internal)?
    .map_err(Error::internal)
}

/// Verifies a password against a stored PHC string off the async threads.
pub async fn verify_password(hash: String, password: String) -> bool {
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

/// A hash to verify against when the user does not exist, so that both failures take as long.
async fn dummy_hash() -> String {
    static DUMMY: OnceLock<String> = OnceLock::new();
    if let Some(h) = DUMMY.get() {
        return h.clone();
    }
    let h = hash_password("no such user, no such password".into())
        .await
        .unwrap_or_default();
    DUMMY.get_or_init(|| h).clone()
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Creates a user. Staff accounts need a password of at least 8 characters; workers may have
/// none (they enter through a study link).
pub async fn create_user(
    pool: &AnyPool,
    name: &str,
    role: Role,
    password: Option<String>,
) -> Result<UserId, Error> {
    validate_user_name(name).map_err(Error::Invalid)?;
    let hash = match password {
        Some(p) if p.len() > MAX_PASSWORD => {
            return Err(Error::Invalid(format!(
                "a password has at most {MAX_PASSWORD} bytes"
            )))
        }
        Some(p) if p.chars().count() >= MIN_PASSWORD => Some(hash_password(p).await?),
        Some(_) => {
            return Err(Error::Invalid(format!(
                "a password needs at least {MIN_PASSWORD} characters"
            )))
        }
        None if role.is_staff() => {
            return Err(Error::Invalid(format!(
                "a {} account needs a password",
                role.as_str()
            )))
        }
        None => None,
    };
    let res = sqlx::query_scalar::<_, UserId>(
        "INSERT INTO users (name, role, password_hash) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(name)
    .bind(role.as_str())
    .bind(hash)
    .fetch_one(pool)
    .await;
    res.on_unique(USER_NAME, || {
        Error::Invalid(format!("a user named {name:?} already exists"))
    })
}

/// The user whose name and password these are, or `None`: one password check whatever the
/// cause (an unknown name costs the same check as a wrong password; a name or password no
/// account can have needs none). Throttling and the session are the caller's
/// (`app::ssr::auth::login`).
pub async fn check_password(
    pool: &AnyPool,
    name: &str,
    password: &str,
) -> Result<Option<User>, Error> {
    if validate_user_name(name).is_err() || password.len() > MAX_PASSWORD {
        return Ok(None);
    }
    let row: Option<(UserId, String, Role, Option<String>)> =
        sqlx::query_as("SELECT id, name, role, password_hash FROM users WHERE name = $1")
            .bind(name)
            .fetch_optional(pool)
            .await?;
    Ok(match row {
        Some((id, name, role, Some(hash))) => verify_password(hash, password.to_string())
            .await
            .then_some(User { id, name, role }),
        _ => {
            verify_password(dummy_hash().await, password.to_string()).await;
            None
        }
    })
}

/// The sessions one user keeps at most (devices, sign-ins again, re-joins through a study link,
/// which each open one): opening one more ends the oldest (sessions are stamped in seconds;
/// among those of the same second, which go is arbitrary, never the new one), so a known id
/// cannot grow the table.
pub const SESSIONS_PER_USER: i64 = 10;

/// Opens a session for a user; returns the token for the cookie.
pub async fn open_session(pool: &AnyPool, user_id: UserId) -> Result<String, Error> {
    let mut tx = crate::tx::begin_write(pool, &[]).await?;
    let result = open_session_in(&mut tx, user_id).await;
    crate::tx::finish(tx, result).await
}

/// `open_session` inside a write transaction of the caller's (a new crowd worker's account,
/// place and session are one transaction).
pub async fn open_session_in(
    conn: &mut sqlx::AnyConnection,
    user_id: UserId,
) -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = hex::encode(bytes);
    let now = now_unix();
    // Expired sessions are of no use to anyone: each new one clears them out.
    sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
        .bind(now)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(token_hash(&token))
    .bind(user_id)
    .bind(now)
    .bind(now + SESSION_SECONDS)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "DELETE FROM sessions WHERE user_id = $1 AND token_hash <> $2 AND token_hash NOT IN
           (SELECT token_hash FROM sessions WHERE user_id = $1 AND token_hash <> $2
            ORDER BY created_at DESC, token_hash LIMIT $3)",
    )
    .bind(user_id)
    .bind(token_hash(&token))
    .bind(SESSIONS_PER_USER - 1)
    .execute(&mut *conn)
    .await?;
    Ok(token)
}

/// The worker behind a crowd id, if it has arrived before.
pub async fn known_crowd_worker(
    pool: &AnyPool,
    platform: Platform,
    external_id: &str,
) -> Result<Option<UserId>, Error> {
    Ok(
        sqlx::query_scalar(
            "SELECT user_id FROM crowd_ids WHERE platform = $1 AND external_id = $2",
        )
        .bind(platform)
        .bind(external_id)
        .fetch_optional(pool)
        .await?,
    )
}

/// Whether the account is a crowd worker's (made by a study link, with a platform id): such a
/// session takes a place only through a study link that names it.
pub async fn is_crowd_account(pool: &AnyPool, user: UserId) -> Result<bool, Error> {
    let found: Option<i64> = sqlx::query_scalar("SELECT user_id FROM crowd_ids WHERE user_id = $1")
        .bind(user)
        .fetch_optional(pool)
        .await?;
    Ok(found.is_some())
}

/// The password-less worker behind an external crowd id, created on first arrival as user
/// `<platform>:<id>` (`prolific:…`, `mturk:…`).
pub async fn crowd_worker(
    pool: &AnyPool,
    platform: Platform,
    external_id: &str,
) -> Result<User, Error> {
    let mut tx = crate::tx::begin_write(pool, &[Lock::CrowdId(platform, external_id)]).await?;
    let result = crowd_worker_in(&mut tx, platform, external_id).await;
    crate::tx::finish(tx, result).await
}

/// `crowd_worker` inside a write transaction of the caller's that holds
/// `Lock::CrowdId(platform, external_id)` (a new worker's account is made with its place, or
/// not at all).
pub async fn crowd_worker_in(
    conn: &mut sqlx::AnyConnection,
    platform: Platform,
    external_id: &str,
) -> Result<User, Error> {
    domain::people::validate_crowd_id(&format!("{} id", platform.as_str()), external_id)
        .map_err(Error::Invalid)?;
    let found: Option<User> = sqlx::query_as(
        "SELECT u.id, u.name, u.role FROM crowd_ids c JOIN users u ON u.id = c.user_id
         WHERE c.platform = $1 AND c.external_id = $2",
    )
    .bind(platform)
    .bind(external_id)
    .fetch_optional(&mut *conn)
    .await?;
    match found {
        Some(u) if u.role == Role::Worker => return Ok(u),
        Some(_) => return Err(Error::Forbidden("staff".into())),
        None => {}
    }
    let name = format!("{}:{external_id}", platform.as_str());
    let taken: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE name = $1")
        .bind(&name)
        .fetch_optional(&mut *conn)
        .await?;
    if taken.is_some() {
        return Err(Error::Invalid(format!(
            "the user name {name:?} is taken by an account that is not this crowd worker"
        )));
    }
    let id = sqlx::query_scalar::<_, UserId>(
        "INSERT INTO users (name, role) VALUES ($1, 'worker') RETURNING id",
    )
    .bind(&name)
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query("INSERT INTO crowd_ids (platform, external_id, user_id) VALUES ($1, $2, $3)")
        .bind(platform)
        .bind(external_id)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(User {
        id,
        name,
        role: Role::Worker,
    })
}

pub async fn logout(pool: &AnyPool, token: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
        .bind(token_hash(token))
        .execute(pool)
        .await?;
    Ok(())
}

/// The user of a live session token.
pub async fn user_for_token(pool: &AnyPool, token: &str) -> Result<Option<User>, Error> {
    Ok(sqlx::query_as(
        "SELECT u.id, u.name, u.role FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > $2",
    )
    .bind(token_hash(token))
    .bind(now_unix())
    .fetch_optional(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn argon2id_hashes_verify() {
        let h = hash_password("correct horse".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password(h.clone(), "correct horse".into()).await);
        assert!(!verify_password(h, "wrong horse".into()).await);
        assert!(!verify_password("not a hash".into(), "x".into()).await);
    }
}
