//! The study link crowd platforms send workers to: `/join/{study}?PROLIFIC_PID=..` (or MTurk's
//! `workerId`/`assignmentId`). `GET` shows a start page and changes nothing (link previews and
//! prefetchers take no place); its `POST` signs the worker in, takes a place, and goes on.

use app::domain::crowd::validate_turk_submit_to;
use app::domain::ids::StudyId;
use app::domain::people::{validate_crowd_id, Role};
use app::domain::study::Refusal;
use app::error::AppError;
use app::ssr::auth::{self, User};
use app::ssr::state::AppState;
use app::ssr::study::{self, CrowdInfo, Study};
use axum::extract::{ConnectInfo, Path, Query, RawQuery, State};
use axum::http::{header, Extensions, HeaderMap};
use axum::response::{Html, IntoResponse, Redirect, Response};
use std::collections::HashMap;
use std::net::SocketAddr;

/// Reads the crowd parameters of a study link. Every one given must be a valid crowd id (see
/// `validate_crowd_id`): they end up in exports, where nothing but an id belongs.
pub fn crowd_info(q: &HashMap<String, String>) -> Result<Option<CrowdInfo>, AppError> {
    let get = |k: &str| -> Result<Option<String>, AppError> {
        match q.get(k).filter(|v| !v.is_empty()) {
            Some(v) => validate_crowd_id(k, v)
                .map(|()| Some(v.clone()))
                .map_err(AppError::Invalid),
            None => Ok(None),
        }
    };
    if let Some(pid) = get("PROLIFIC_PID")? {
        return Ok(Some(CrowdInfo {
            platform: Some("prolific".into()),
            worker: Some(pid),
            study: get("STUDY_ID")?,
            session: get("SESSION_ID")?,
            assignment: None,
            submit_to: None,
        }));
    }
    // MTurk previews a HIT with assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE and no workerId.
    let Some(w) = get("workerId")? else {
        return Ok(None);
    };
    let submit_to = match q.get("turkSubmitTo").filter(|v| !v.is_empty()) {
        Some(host) => Some(
            validate_turk_submit_to(host)
                .map(|()| host.trim_end_matches('/').to_string())
                .map_err(AppError::Invalid)?,
        ),
        None => None,
    };
    Ok(Some(CrowdInfo {
        platform: Some("mturk".into()),
        worker: Some(w),
        study: get("hitId")?,
        session: None,
        assignment: get("assignmentId")?,
        submit_to,
    }))
}

/// What a link leads to before anything is written: the study (404 when missing), the crowd
/// worker it names (400 when malformed), and whether that worker may enter (a closed study
/// lets back only those who started; 409 for the rest).
async fn check_link(
    state: &AppState,
    study_id: StudyId,
    q: &HashMap<String, String>,
) -> Result<(Study, Option<(CrowdInfo, bool)>), AppError> {
    let crowd = crowd_info(q)?;
    let s = study::load(&state.pool, study_id).await?;
    let crowd = match crowd {
        Some(c) => {
            let platform = c.platform.as_deref().unwrap_or_default();
            let worker = c.worker.as_deref().unwrap_or_default();
            let known = auth::crowd_worker_known(&state.pool, platform, worker).await?;
            if !s.config.open && !known {
                return Err(AppError::Refused(Refusal::Closed.to_string()));
            }
            Some((c, known))
        }
        None => None,
    };
    Ok((s, crowd))
}

/// `GET /join/{study}`: the start page, with a Start button that posts the same link. Without
/// a crowd id, a signed-in worker gets the page too; anyone else goes to the study page.
pub async fn start_page(
    State(state): State<AppState>,
    Path(study_id): Path<StudyId>,
    Query(q): Query<HashMap<String, String>>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (s, crowd) = match check_link(&state, study_id, &q).await {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    if crowd.is_none() && signed_in_worker(&state, &headers).await.is_none() {
        return Redirect::to(&format!("/study/{study_id}")).into_response();
    }
    let action = match raw.filter(|r| !r.is_empty()) {
        Some(r) => format!("/join/{study_id}?{r}"),
        None => format!("/join/{study_id}"),
    };
    let css = app::ssr::assets::stylesheet(&state.leptos_options);
    // While the worker reads this page, the browser fetches the study page's bundle.
    let preload = match app::ssr::assets::worker_bundle(&state.leptos_options) {
        Some((js, wasm)) => format!(
            r#"<link rel="modulepreload" href="{js}"><link rel="preload" href="{wasm}" as="fetch" type="application/wasm" crossorigin>"#
        ),
        None => String::new(),
    };
    Html(start_html(&s.name, &action, &css, &preload)).into_response()
}

/// `POST /join/{study}`: signs the crowd worker in (no password step), takes a place, and
/// sends the browser to the study page, which shows the step or the refusal. Refused when
/// posted from another site (login CSRF) and when one address brings too many new workers.
pub async fn join(
    State(state): State<AppState>,
    Path(study_id): Path<StudyId>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
    extensions: Extensions,
) -> Response {
    if from_another_site(&headers) {
        return AppError::Forbidden("a study link posted from another site".into()).into_response();
    }
    let peer = extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let result: Result<Option<(User, Option<String>)>, AppError> = async {
        let pool = &state.pool;
        let (s, crowd) = check_link(&state, study_id, &q).await?;
        let user = match &crowd {
            Some((c, known)) => {
                if !known {
                    state.guards.new_worker(state.client(&headers, peer))?;
                }
                let platform = c.platform.as_deref().unwrap_or_default();
                let worker = c.worker.as_deref().unwrap_or_default();
                let user = auth::crowd_worker(pool, platform, worker).await?;
                let token = auth::open_session(pool, user.id).await?;
                Some((user, Some(token)))
            }
            None => signed_in_worker(&state, &headers).await.map(|u| (u, None)),
        };
        if let Some((user, _)) = &user {
            // A refusal is shown by the study page; the place is what matters here.
            let _ = study::enter(pool, &s, user.id, crowd.as_ref().map(|(c, _)| c)).await;
        }
        Ok(user)
    }
    .await;
    let target = format!("/study/{study_id}");
    match result {
        Ok(Some((_, Some(token)))) => (
            [(
                header::SET_COOKIE,
                auth::session_cookie(&token, state.secure_cookie_for(&headers)),
            )],
            Redirect::to(&target),
        )
            .into_response(),
        Ok(_) => Redirect::to(&target).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn signed_in_worker(state: &AppState, headers: &HeaderMap) -> Option<User> {
    let token = auth::session_token(headers)?;
    let user = auth::user_for_token(&state.pool, &token).await.ok()??;
    (user.role == Role::Worker).then_some(user)
}

/// A browser says where a form was posted from: `Sec-Fetch-Site` (every current browser), else
/// an `Origin` whose host is not ours. Clients that send neither (scripts) are not browsers
/// that another site could drive.
fn from_another_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site.eq_ignore_ascii_case("cross-site");
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    match headers
        .get(header::ORIGIN)
        .map(|v| v.to_str().unwrap_or("null"))
    {
        Some(origin) => {
            let origin_host = origin.split_once("://").map(|(_, h)| h);
            origin_host.is_none() || origin_host != host
        }
        None => false,
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The start page: plain HTML with no script, so it is quick on any phone; `preload` holds
/// the links that fetch the study page's bundle meanwhile.
fn start_html(study: &str, action: &str, css: &str, preload: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Start: {study}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="{css}">{preload}</head>
<body><main class="start-page">
<h1>{study}</h1>
<p>You are about to start this study. Depending on your group, you first answer a few practice
items, each followed by its correct answer, and then the test items. Your time is recorded, and
you are paid by the hour.</p>
<form method="post" action="{action}"><button type="submit" class="primary">Start</button></form>
</main></body></html>"#,
        study = escape(study),
        action = escape(action),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posts_from_other_sites_are_told_apart() {
        let h = |pairs: &[(&'static str, &'static str)]| {
            let mut m = HeaderMap::new();
            for (k, v) in pairs {
                m.insert(*k, v.parse().unwrap());
            }
            m
        };
        assert!(from_another_site(&h(&[("sec-fetch-site", "cross-site")])));
        assert!(!from_another_site(&h(&[("sec-fetch-site", "same-origin")])));
        assert!(!from_another_site(&h(&[("sec-fetch-site", "none")])));
        let ours = [
            ("host", "lab.example:3000"),
            ("origin", "https://lab.example:3000"),
        ];
        assert!(!from_another_site(&h(&ours)));
        assert!(from_another_site(&h(&[
            ("host", "lab.example"),
            ("origin", "https://evil.example")
        ])));
        assert!(from_another_site(&h(&[
            ("host", "lab.example"),
            ("origin", "null")
        ])));
        assert!(!from_another_site(&h(&[("host", "lab.example")])));
    }

    #[test]
    fn the_start_page_escapes_the_study_name_and_link() {
        let page = start_html(
            "<b>\"x\"</b>",
            "/join/1?PROLIFIC_PID=a&STUDY_ID=b",
            "/pkg/a.css",
            "",
        );
        assert!(page.contains("&lt;b&gt;&quot;x&quot;&lt;/b&gt;"));
        assert!(page.contains(r#"action="/join/1?PROLIFIC_PID=a&amp;STUDY_ID=b""#));
        assert!(!page.contains("<script"));
    }
}
