//! What every request passes before its handler: no change sent by a page of another site, a
//! server function's body only in its own content type, and staff pages for staff alone.

use app::error::AppError;
use app::ssr::limits::from_another_site;
use app::ssr::request::{Ctx, Visitor};
use app::ssr::state::AppState;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use domain::people::Role;

/// The middleware: refuses a change (any method but GET, HEAD, OPTIONS) that a browser says a
/// page of another site sent, a server function called in a content type it does not take, and
/// a staff page to a signed-in crowd worker.
pub async fn gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let changes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if changes && from_another_site(req.headers()) {
        let e = AppError::Forbidden(format!("a change to {path} sent by a page of another site"));
        return refuse(&path, StatusCode::FORBIDDEN, e);
    }
    if changes && path.starts_with("/api/") {
        if let Err(e) = content_type_fits(&path, req.headers()) {
            return refuse(&path, StatusCode::UNSUPPORTED_MEDIA_TYPE, e);
        }
    }
    if !changes && is_staff_page(&path) && crowd_worker(&state, req.headers().clone()).await {
        let css = app::ssr::assets::stylesheet(&state.leptos_options);
        let page = crate::join::pages::refusal_html(
            "Staff pages",
            "This page is for researchers and admins, and you are signed in as a crowd worker. \
             Your study's link takes you back to your study.",
            &css,
        );
        return (StatusCode::FORBIDDEN, Html(page)).into_response();
    }
    next.run(req).await
}

/// A server function's body must be in its input's content type: JSON for `json_calls`, a
/// URL-encoded form for the rest (parameters such as `; charset=utf-8` aside).
fn content_type_fits(path: &str, headers: &header::HeaderMap) -> Result<(), AppError> {
    let wanted = if app::api::json_calls().contains(&path) {
        "application/json"
    } else {
        "application/x-www-form-urlencoded"
    };
    let given = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = given.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(wanted) {
        Ok(())
    } else {
        let given = if essence.is_empty() { "none" } else { essence };
        Err(AppError::Invalid(format!(
            "{path} takes a body of type {wanted}, not {given}"
        )))
    }
}

/// A refusal: to a server function as its errors are sent (the error as JSON, which its client
/// reads), to anything else as text.
fn refuse(path: &str, status: StatusCode, e: AppError) -> Response {
    if path.starts_with("/api/") {
        match serde_json::to_string(&e) {
            Ok(json) => {
                (status, [(header::CONTENT_TYPE, "application/json")], json).into_response()
            }
            Err(_) => (status, e.to_string()).into_response(),
        }
    } else {
        (status, e.to_string()).into_response()
    }
}

/// The staff pages (the crowd worker's are `/join/…` and `/study/…`; the home page signs in).
fn is_staff_page(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    ["/dashboard", "/crossfit", "/machines", "/studies"].contains(&path)
        || path.starts_with("/studies/")
        || path.starts_with("/tasks/")
}

/// Whether the request's session is a crowd worker's (no session, or staff: no).
async fn crowd_worker(state: &AppState, headers: header::HeaderMap) -> bool {
    if !headers.contains_key(header::COOKIE) {
        return false;
    }
    match Ctx::<Visitor>::of(state.clone(), headers).await {
        Ok(c) => c.who.0.is_some_and(|u| u.role == Role::Worker),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_function_takes_its_own_content_type() {
        let with = |t: &str| {
            let mut h = header::HeaderMap::new();
            h.insert(header::CONTENT_TYPE, t.parse().unwrap());
            h
        };
        let json = "/api/submit_answer";
        assert!(content_type_fits(json, &with("application/json")).is_ok());
        assert!(content_type_fits(json, &with("Application/JSON; charset=utf-8")).is_ok());
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            let e = content_type_fits(json, &with(bad)).unwrap_err().to_string();
            assert!(
                e.contains("takes a body of type application/json, not"),
                "{e}"
            );
        }
        let form = "/api/continue_study";
        assert!(content_type_fits(form, &with("application/x-www-form-urlencoded")).is_ok());
        assert!(content_type_fits(form, &with("text/plain;charset=UTF-8")).is_err());
        assert!(content_type_fits(form, &header::HeaderMap::new()).is_err());
    }

    #[test]
    fn staff_pages_are_named_by_their_paths() {
        for p in [
            "/dashboard",
            "/dashboard/",
            "/studies",
            "/studies/3",
            "/tasks/SST-2",
            "/machines",
        ] {
            assert!(is_staff_page(p), "{p}");
        }
        for p in [
            "/",
            "/study/3",
            "/join/3",
            "/api/dashboard",
            "/export/scores.csv",
            "/pkg/a.js",
        ] {
            assert!(!is_staff_page(p), "{p}");
        }
    }
}
