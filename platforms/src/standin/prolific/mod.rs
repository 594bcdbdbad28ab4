//! A stand-in of Prolific's researcher API (the shapes of `prolific::wire`, read with unknown
//! fields refused, checked as the reference documents them), with a participant's side: a
//! study's link taken (`GET /take/{study}?pid=`), its completion (`/submissions/complete?cc=`),
//! a return or time-out (`/control/return/{id}`, `/control/time-out/{id}`), and hooks signed as
//! Prolific signs them to a target set by `POST /control/hooks`.

use crate::prolific::wire::*;
use crate::standin::{controlled, fresh_id};
use crate::standin::{Ledger, Shared};
use api::*;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;
use submissions::*;

mod api;
mod submissions;

/// A study as the stand-in keeps it.
#[derive(Clone, Debug)]
pub struct StudyRec {
    pub id: String,
    pub made: CreateStudy,
    pub status: String,
    pub places: u32,
}

/// A submission as the stand-in keeps it.
#[derive(Clone, Debug)]
pub struct SubRec {
    pub id: String,
    pub study: String,
    pub participant: String,
    pub status: SubmissionStatus,
    pub code: Option<String>,
    pub bonuses: Vec<i64>,
}

/// A bulk bonus: its id, its study, and each (participant or submission id, cents).
#[derive(Clone, Debug)]
pub struct Bulk {
    pub id: String,
    pub study: String,
    pub lines: Vec<(String, i64)>,
}

/// Everything the stand-in knows.
#[derive(Debug, Default)]
pub struct World {
    pub token: String,
    pub workspace: String,
    pub ledger: Ledger,
    pub studies: Vec<StudyRec>,
    /// Participant groups: id, name, members.
    pub groups: Vec<(String, String, Vec<String>)>,
    pub submissions: Vec<SubRec>,
    pub bulks: Vec<Bulk>,
    /// Where hooks go, and the secret they are signed with.
    pub hook: Option<(String, String)>,
}

type S = State<Shared<World>>;

/// The stand-in's router; `token`: the one API token it takes.
pub fn router(world: Shared<World>) -> Router {
    let routes = Router::new()
        .route("/api/v1/users/me/", get(me))
        .route("/api/v1/workspaces/", get(workspaces))
        .route("/api/v1/study-cost-calculator/", post(cost))
        .route("/api/v1/participant-groups/", get(groups).post(make_group))
        .route(
            "/api/v1/participant-groups/{id}/participants/",
            post(add_members),
        )
        .route("/api/v1/studies/", get(studies).post(make_study))
        .route("/api/v1/studies/{id}/", get(study).patch(patch_study))
        .route("/api/v1/studies/{id}/transition/", post(study_transition))
        .route("/api/v1/studies/{id}/submissions/", get(submissions))
        .route("/api/v1/submissions/{id}/", get(submission))
        .route("/api/v1/submissions/{id}/transition/", post(decide))
        .route("/api/v1/submissions/bonus-payments/", post(make_bonus))
        .route("/api/v1/bulk-bonus-payments/{id}/pay/", post(pay_bonus))
        .route("/take/{study}", get(take))
        .route("/submissions/complete", get(complete))
        .route("/control/hooks", post(control_hooks))
        .route("/control/return/{id}", post(control_return))
        .route("/control/time-out/{id}", post(control_time_out));
    controlled(routes, world)
}

#[derive(Deserialize)]
struct Pid {
    pid: String,
}

/// A participant takes a study's place through its link, where they may.
async fn take(State(w): S, Path(study): Path<String>, Query(q): Query<Pid>) -> Response {
    let mut w = w.lock();
    let Some(s) = w.studies.iter().find(|s| s.id == study).cloned() else {
        return (StatusCode::NOT_FOUND, "No such study.").into_response();
    };
    let blocked = s
        .made
        .filters
        .iter()
        .filter(|f| f.filter_id == "participant_group_blocklist")
        .flat_map(|f| f.selected_values.iter())
        .any(|g| {
            w.groups
                .iter()
                .any(|(id, _, members)| id == g && members.contains(&q.pid))
        });
    let before = w
        .submissions
        .iter()
        .any(|x| x.study == study && x.participant == q.pid);
    let holding = w
        .submissions
        .iter()
        .filter(|x| x.study == study)
        .filter(|x| {
            !matches!(
                x.status,
                SubmissionStatus::Returned
                    | SubmissionStatus::TimedOut
                    | SubmissionStatus::ScreenedOut
            )
        })
        .count() as u32;
    if s.status != "ACTIVE" || blocked || before || holding >= s.places {
        return (StatusCode::FORBIDDEN, "This study is not available to you.").into_response();
    }
    let id = fresh_id(HEX, 24);
    w.submissions.push(SubRec {
        id: id.clone(),
        study: study.clone(),
        participant: q.pid.clone(),
        status: SubmissionStatus::Active,
        code: None,
        bonuses: Vec::new(),
    });
    let url = s
        .made
        .external_study_url
        .replace("{{%PROLIFIC_PID%}}", &q.pid)
        .replace("{{%STUDY_ID%}}", &study)
        .replace("{{%SESSION_ID%}}", &id);
    (
        [(header::SET_COOKIE, format!("standin_pid={}; Path=/", q.pid))],
        Redirect::to(&url),
    )
        .into_response()
}

#[derive(Deserialize)]
struct Code {
    cc: String,
    pid: Option<String>,
}

/// The completion link: the participant's active submission is handed in with the code.
async fn complete(State(w): S, h: HeaderMap, Query(c): Query<Code>) -> Response {
    let cookie = h
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let pid = c.pid.or_else(|| {
        cookie
            .split(';')
            .find_map(|kv| kv.trim().strip_prefix("standin_pid=").map(str::to_string))
    });
    let mut world = w.lock();
    let Some(s) = world
        .submissions
        .iter_mut()
        .rev()
        .find(|s| Some(&s.participant) == pid.as_ref() && s.status == SubmissionStatus::Active)
    else {
        return (StatusCode::NOT_FOUND, "You have no study in progress.").into_response();
    };
    s.status = SubmissionStatus::AwaitingReview;
    s.code = Some(c.cc.clone());
    let event = (s.id.clone(), s.participant.clone(), s.status);
    drop(world);
    send_hook(&w, event);
    (
        StatusCode::OK,
        format!("Submission handed in with the code {}. Thank you!", c.cc),
    )
        .into_response()
}

/// Sends `submission.status.change` to the hook's target, signed, where one is set.
fn send_hook(w: &Shared<World>, (id, participant, status): (String, String, SubmissionStatus)) {
    let Some((target, secret)) = w.lock().hook.clone() else {
        return;
    };
    let body = json!({ "resource_id": id, "event_type": "submission.status.change",
        "participant_id": participant, "status": status })
    .to_string();
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .to_string();
    let signature = crate::prolific::hook_signature(&secret, &ts, &body);
    tokio::task::spawn_blocking(move || {
        let sent = ureq::post(&target)
            .header("X-Prolific-Request-Signature", &signature)
            .header("X-Prolific-Request-Timestamp", &ts)
            .header("X-Event-ID", &fresh_id(HEX, 24))
            .header("Content-Type", "application/json")
            .send(&body);
        if let Err(e) = sent {
            tracing::warn!("the Prolific stand-in's hook to {target} failed: {e}");
        }
    });
}

async fn control_hooks(State(w): S, Json(h): Json<HashMap<String, String>>) -> StatusCode {
    match (h.get("target"), h.get("secret")) {
        (Some(t), Some(s)) => {
            w.lock().hook = Some((t.clone(), s.clone()));
            StatusCode::NO_CONTENT
        }
        _ => StatusCode::BAD_REQUEST,
    }
}

/// A participant gives the place back, or the study's time runs out on it.
fn give_back(w: &Shared<World>, id: &str, to: SubmissionStatus) -> StatusCode {
    let mut world = w.lock();
    let Some(s) = world
        .submissions
        .iter_mut()
        .find(|s| s.id == id && s.status == SubmissionStatus::Active)
    else {
        return StatusCode::NOT_FOUND;
    };
    s.status = to;
    let event = (s.id.clone(), s.participant.clone(), s.status);
    drop(world);
    send_hook(w, event);
    StatusCode::NO_CONTENT
}

async fn control_return(State(w): S, Path(id): Path<String>) -> StatusCode {
    give_back(&w, &id, SubmissionStatus::Returned)
}

async fn control_time_out(State(w): S, Path(id): Path<String>) -> StatusCode {
    give_back(&w, &id, SubmissionStatus::TimedOut)
}

/// The pace layer and the control routes read the ledger of Prolific's stand-in here.
impl crate::standin::Paced for World {
    fn ledger(&mut self) -> &mut Ledger {
        &mut self.ledger
    }
}
