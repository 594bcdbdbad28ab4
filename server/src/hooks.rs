//! `POST /hooks/prolific`: Prolific's hooks (a submission's or a study's status changed),
//! checked by their signature and age before anything is done. A hook is a prompt and no more:
//! it queues a sync of the account's Prolific publications, which reads the platform itself,
//! so a duplicate changes nothing and a forged one is refused without a write.

use app::error::AppError;
use app::ssr::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use domain::platform::Platform;

/// The largest hook body taken.
const HOOK_BODY_MAX: usize = 64 * 1024;

pub async fn prolific(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(secret) = state
        .platforms
        .accounts
        .prolific
        .as_ref()
        .and_then(|a| a.hook_secret.as_ref())
    else {
        let why = "Prolific's hooks are not taken here: no PROLIFIC_HOOK_SECRET is configured";
        return AppError::NotFound(why.into()).into_response();
    };
    if body.len() > HOOK_BODY_MAX {
        return AppError::TooLarge("the hook's body is over 64 KiB".into()).into_response();
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(timestamp), Some(signature)) = (
        header("x-prolific-request-timestamp"),
        header("x-prolific-request-signature"),
    ) else {
        let why = "a hook carries X-Prolific-Request-Timestamp and X-Prolific-Request-Signature";
        return (StatusCode::UNAUTHORIZED, why).into_response();
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return AppError::Invalid("the hook's body is not UTF-8".into()).into_response();
    };
    let now_s = state.now_ms() / 1000;
    let checked =
        platforms::prolific::verify_hook(secret.expose(), (timestamp, signature), text, now_s);
    if let Err(why) = checked {
        tracing::warn!("a Prolific hook was refused: {why}");
        return (StatusCode::UNAUTHORIZED, why).into_response();
    }
    match sync_prolific(&state).await {
        Ok(n) => {
            tracing::info!("a Prolific hook queued a sync of {n} publications");
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => AppError::from(e).into_response(),
    }
}

/// Queues a sync of every published Prolific publication; how many.
async fn sync_prolific(state: &AppState) -> store::Result<usize> {
    let mut n = 0;
    for p in store::platform::publications(&state.pool).await? {
        if p.platform() == Platform::Prolific && p.remote_id.is_some() {
            store::platform::ledger::request_sync(&state.pool, &p, &state.clock).await?;
            n += 1;
        }
    }
    Ok(n)
}
