//! Signing in and out, and who is signed in.
//! The session cookie is HttpOnly and SameSite=Lax; every login failure reads the same; a
//! sign-in sent by another site's page is refused.

use crate::error::AppError;
use crate::wire::auth::UserInfo;
use leptos::prelude::*;

#[server(endpoint = "login")]
pub async fn login(name: String, password: String) -> Result<UserInfo, AppError> {
    use crate::ssr::{auth, state::app_state};
    crate::error::respond(
        async {
            let state = app_state()?;
            let headers: http::HeaderMap =
                leptos_axum::extract().await.map_err(AppError::internal)?;
            // A form on another site must not sign its visitor into an account of its
            // choosing (login CSRF).
            if crate::ssr::guard::from_another_site(&headers) {
                return Err(AppError::Forbidden(
                    "a sign-in posted from another site".into(),
                ));
            }
            let client = state.client(&headers, auth::peer_addr().await);
            let (user, token) =
                auth::login(&state.pool, &state.guards, client, name.trim(), &password).await?;
            let response = expect_context::<leptos_axum::ResponseOptions>();
            response.insert_header(
                http::header::SET_COOKIE,
                auth::session_cookie(&token, state.secure_cookie_for(&headers)),
            );
            Ok(UserInfo {
                name: user.name,
                role: user.role,
            })
        }
        .await,
    )
}

#[server(endpoint = "logout")]
pub async fn logout() -> Result<(), AppError> {
    use crate::ssr::{auth, state::app_state};
    let state = app_state()?;
    let headers: http::HeaderMap = leptos_axum::extract().await.map_err(AppError::internal)?;
    if let Some(token) = auth::session_token(&headers) {
        auth::logout(&state.pool, &token).await?;
    }
    expect_context::<leptos_axum::ResponseOptions>()
        .insert_header(http::header::SET_COOKIE, auth::clear_cookie());
    Ok(())
}

#[server(endpoint = "whoami")]
pub async fn whoami() -> Result<Option<UserInfo>, AppError> {
    let user = crate::ssr::auth::current_user().await?;
    Ok(user.map(|u| UserInfo {
        name: u.name,
        role: u.role,
    }))
}
