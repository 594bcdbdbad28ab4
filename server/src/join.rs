//! The study link crowd platforms send workers to: `/join/{study}?PROLIFIC_PID=..` (or MTurk's
//! `workerId`/`assignmentId`). Finds or creates the worker, opens a session, takes a place.

use app::domain::crowd::validate_turk_submit_to;
use app::domain::people::validate_crowd_id;
use app::domain::study::Refusal;
use app::error::AppError;
use app::ssr::auth::{self, User};
use app::ssr::state::AppState;
use app::ssr::study::{self, CrowdInfo};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Redirect, Response};
use std::collections::HashMap;

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

/// `GET /join/{study}`: with a crowd id, signs that worker in (no password step) and takes a
/// place; then sends the browser to the study page, which shows the step or the refusal.
pub async fn join(
    State(state): State<AppState>,
    Path(study_id): Path<i64>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let target = format!("/study/{study_id}");
    let crowd = match crowd_info(&q) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let result: Result<Option<(User, Option<String>)>, app::error::AppError> = async {
        let pool = &state.pool;
        // A missing study is 404, and nothing is created for it.
        let s = study::load(pool, study_id).await?;
        let user = match &crowd {
            Some(c) => {
                let platform = c.platform.as_deref().unwrap_or_default();
                let worker = c.worker.as_deref().unwrap_or_default();
                // A closed study creates no new worker; those who started may come back.
                if !s.config.open && !auth::crowd_worker_known(pool, platform, worker).await? {
                    return Err(AppError::Refused(Refusal::Closed.to_string()));
                }
                let user = auth::crowd_worker(pool, platform, worker).await?;
                let token = auth::open_session(pool, user.id).await?;
                Some((user, Some(token)))
            }
            None => match auth::session_token(&headers) {
                Some(t) => auth::user_for_token(pool, &t).await?.map(|u| (u, None)),
                None => None,
            },
        };
        if let Some((user, _)) = &user {
            if user.role == app::domain::people::Role::Worker {
                // A refusal is shown by the study page; the place is what matters here.
                let _ = study::enter(pool, &s, user.id, crowd.as_ref()).await;
            }
        }
        Ok(user)
    }
    .await;
    match result {
        Ok(Some((_, Some(token)))) => (
            [(
                header::SET_COOKIE,
                auth::session_cookie(&token, state.secure_cookies),
            )],
            Redirect::to(&target),
        )
            .into_response(),
        Ok(_) => Redirect::to(&target).into_response(),
        Err(e) => e.into_response(),
    }
}
