//! Signing in and out, and who is signed in.
//! The session cookie is HttpOnly and SameSite=Lax; every login failure reads the same; a
//! sign-in sent by another site's page is refused.

use crate::error::AppError;
use crate::wire::auth::UserInfo;
use leptos::prelude::*;
#[cfg(feature = "ssr")]
use {
    crate::ssr::auth,
    crate::ssr::request::{serve, Ctx, Visitor},
    store::auth as users,
};

#[server(endpoint = "login", output = crate::api::TextJson)]
pub async fn login(name: String, password: String) -> Result<UserInfo, AppError> {
    serve(|c: Ctx<Visitor>| async move {
        // A form on another site must not sign its visitor into an account of its choosing
        // (login CSRF).
        c.same_site("a sign-in")?;
        let state = &c.state;
        let client = state.client(&c.headers, auth::peer_addr().await);
        let (user, token) =
            auth::login(&state.pool, &state.limiter, client, name.trim(), &password).await?;
        expect_context::<leptos_axum::ResponseOptions>().insert_header(
            http::header::SET_COOKIE,
            auth::session_cookie(&token, state.secure_cookie_for(&c.headers)),
        );
        Ok(UserInfo {
            name: user.name,
            role: user.role,
        })
    })
    .await
}

#[server(endpoint = "logout", output = crate::api::TextJson)]
pub async fn logout() -> Result<(), AppError> {
    serve(|c: Ctx<Visitor>| async move {
        if let Some(token) = auth::session_token(&c.headers) {
            users::logout(c.pool(), &token).await?;
        }
        expect_context::<leptos_axum::ResponseOptions>()
            .insert_header(http::header::SET_COOKIE, auth::clear_cookie());
        Ok(())
    })
    .await
}

#[server(endpoint = "whoami", output = crate::api::TextJson)]
pub async fn whoami() -> Result<Option<UserInfo>, AppError> {
    serve(|c: Ctx<Visitor>| async move {
        Ok(c.who.0.map(|u| UserInfo {
            name: u.name,
            role: u.role,
        }))
    })
    .await
}
