//! A stand-in of Prolific's researcher API (the shapes of `prolific::wire`, read with unknown
//! fields refused, checked as the reference documents them), with a participant's side: a
//! study's link taken (`GET /take/{study}?pid=`), its completion (`/submissions/complete?cc=`),
//! a return or time-out (`/control/return/{id}`, `/control/time-out/{id}`), and hooks signed as
//! Prolific signs them to a target set by `POST /control/hooks`.

use super::{fresh_id, lost, FaultKind, FaultRule, Ledger, Paid, Shared};
use crate::prolific::wire::*;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;

const HEX: &[u8] = b"0123456789abcdef";

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
    /// Bulk bonuses: id, study, (participant or submission id, cents).
    pub bulks: Vec<(String, String, Vec<(String, i64)>)>,
    /// Where hooks go, and the secret they are signed with.
    pub hook: Option<(String, String)>,
}

type S = State<Shared<World>>;

impl super::Paced for World {
    fn ledger(&mut self) -> &mut Ledger {
        &mut self.ledger
    }
}

/// Prolific's error body.
fn refuse(status: StatusCode, detail: impl Into<Value>) -> Response {
    let body = json!({ "error": { "status": status.as_u16(), "error_code": status.as_u16(),
        "title": status.canonical_reason().unwrap_or("Error"), "detail": detail.into() } });
    (status, Json(body)).into_response()
}

/// The call's authorisation and fault: `Err` is the answer to give instead of doing it.
fn enter(w: &mut World, headers: &HeaderMap, op: &str) -> Result<Option<FaultKind>, Response> {
    let token = format!("Token {}", w.token);
    if headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        != Some(token.as_str())
    {
        return Err(refuse(StatusCode::UNAUTHORIZED, "Invalid token."));
    }
    match w.ledger.call(op) {
        Some(FaultKind::Busy) => Err(refuse(
            StatusCode::TOO_MANY_REQUESTS,
            "Request was throttled.",
        )),
        Some(FaultKind::Broken) => Err(refuse(StatusCode::INTERNAL_SERVER_ERROR, "Server error.")),
        other => Ok(other),
    }
}

/// A request body in its documented shape, or Prolific's 400 naming what is wrong.
fn read<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, Response> {
    serde_json::from_slice(body).map_err(|e| refuse(StatusCode::BAD_REQUEST, e.to_string()))
}

/// The answer, or a lost one where that fault was injected (the work is done either way).
fn answer(fault: Option<FaultKind>, status: StatusCode, body: Value) -> Response {
    match fault {
        Some(FaultKind::Lost) => lost(),
        _ => (status, Json(body)).into_response(),
    }
}

fn study_json(s: &StudyRec) -> Value {
    json!({ "id": s.id, "status": s.status, "internal_name": s.made.internal_name,
        "total_available_places": s.places, "metadata": s.made.metadata,
        "reward": s.made.reward, "name": s.made.name })
}

fn sub_json(s: &SubRec) -> Value {
    json!({ "id": s.id, "participant_id": s.participant, "participant": s.participant,
        "status": s.status, "study_id": s.study, "study_code": s.code,
        "started_at": "2026-12-07T10:00:00Z", "completed_at": s.code.as_ref().map(|_| "2026-12-07T10:30:00Z"),
        "bonus_payments": s.bonuses })
}

/// The stand-in's router; `token`: the one API token it takes.
pub fn router(world: Shared<World>) -> Router {
    Router::new()
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
        .route("/control/fault", post(control_fault))
        .route("/control/paid", get(control_paid))
        .route("/control/calls", get(control_calls))
        .route("/control/hooks", post(control_hooks))
        .route("/control/return/{id}", post(control_return))
        .route("/control/time-out/{id}", post(control_time_out))
        .route("/control/pace", post(super::control_pace::<World>))
        .layer(axum::middleware::from_fn_with_state(
            world.clone(),
            super::pace::<World>,
        ))
        .with_state(world)
}

async fn me(State(w): S, h: HeaderMap) -> Response {
    let mut w = w.lock();
    match enter(&mut w, &h, "me") {
        Err(r) => r,
        Ok(f) => answer(
            f,
            StatusCode::OK,
            json!({ "id": "standin-researcher", "email": "lab@example.org",
            "currency_code": "GBP", "balance": 100_000, "available_balance": 100_000 }),
        ),
    }
}

async fn workspaces(State(w): S, h: HeaderMap) -> Response {
    let mut w = w.lock();
    match enter(&mut w, &h, "workspaces") {
        Err(r) => r,
        Ok(f) => answer(
            f,
            StatusCode::OK,
            json!({ "results": [{ "id": w.workspace, "title": "Lab" }] }),
        ),
    }
}

async fn cost(State(w): S, h: HeaderMap, body: Bytes) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "cost") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let c: CostRequest = match read(&body) {
        Ok(c) => c,
        Err(r) => return r,
    };
    // 33.3% fee and 20% VAT on it, as an academic UK account pays.
    let rewards = c.reward * i64::from(c.total_available_places);
    let fee = (rewards * 333 + 500) / 1000;
    answer(
        f,
        StatusCode::OK,
        json!({ "total_cost": rewards + fee + (fee * 20 + 50) / 100 }),
    )
}

async fn groups(State(w): S, h: HeaderMap) -> Response {
    let mut w = w.lock();
    match enter(&mut w, &h, "groups") {
        Err(r) => r,
        Ok(f) => {
            let all: Vec<Value> = w
                .groups
                .iter()
                .map(|(id, name, _)| json!({ "id": id, "name": name }))
                .collect();
            answer(f, StatusCode::OK, json!({ "results": all }))
        }
    }
}

async fn make_group(State(w): S, h: HeaderMap, body: Bytes) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "group") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let g: CreateGroup = match read(&body) {
        Ok(g) => g,
        Err(r) => return r,
    };
    if g.workspace_id != w.workspace {
        return refuse(StatusCode::BAD_REQUEST, "workspace_id: no such workspace");
    }
    let id = fresh_id(HEX, 24);
    w.groups.push((id.clone(), g.name.clone(), Vec::new()));
    answer(
        f,
        StatusCode::CREATED,
        json!({ "id": id, "name": g.name, "participant_count": 0 }),
    )
}

async fn add_members(State(w): S, h: HeaderMap, Path(id): Path<String>, body: Bytes) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "grant") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let a: AddParticipants = match read(&body) {
        Ok(a) => a,
        Err(r) => return r,
    };
    let Some(g) = w.groups.iter_mut().find(|g| g.0 == id) else {
        return refuse(StatusCode::NOT_FOUND, "No such participant group.");
    };
    for p in a.participant_ids {
        if !g.2.contains(&p) {
            g.2.push(p);
        }
    }
    let members: Vec<Value> = g.2.iter().map(|p| json!({ "participant_id": p })).collect();
    answer(f, StatusCode::OK, json!({ "results": members }))
}

async fn studies(State(w): S, h: HeaderMap) -> Response {
    let mut w = w.lock();
    match enter(&mut w, &h, "studies") {
        Err(r) => r,
        Ok(f) => {
            let all: Vec<Value> = w.studies.iter().map(study_json).collect();
            answer(f, StatusCode::OK, json!({ "results": all }))
        }
    }
}

/// What the reference asks of a new study beyond its shape.
fn check_study(c: &CreateStudy) -> Vec<String> {
    let mut out = Vec::new();
    let t = f64::from(c.estimated_completion_time);
    if f64::from(c.maximum_allowed_time) < 2.0 + 2.0 * t + 2.0 * t.sqrt() {
        out.push("maximum_allowed_time: must be at least 2 + 2T + 2 sqrt(T) minutes".to_string());
    }
    if c.reward <= 0 || c.total_available_places == 0 || c.estimated_completion_time == 0 {
        out.push(
            "reward, total_available_places and estimated_completion_time must be positive".into(),
        );
    }
    if !["question", "url_parameters", "not_required"].contains(&c.prolific_id_option.as_str()) {
        out.push("prolific_id_option: not a valid choice".into());
    }
    if c.completion_codes.is_empty()
        || c.completion_codes
            .iter()
            .any(|k| k.actions.is_empty() && k.actor != "participant")
    {
        out.push("completion_codes: specify at least one completion code".into());
    }
    out
}

async fn make_study(State(w): S, h: HeaderMap, body: Bytes) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "create-study") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let c: CreateStudy = match read(&body) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let problems = check_study(&c);
    if !problems.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, problems);
    }
    let rec = StudyRec {
        id: fresh_id(HEX, 24),
        places: c.total_available_places,
        made: c,
        status: "UNPUBLISHED".into(),
    };
    let out = study_json(&rec);
    w.studies.push(rec);
    answer(f, StatusCode::CREATED, out)
}

async fn study(State(w): S, h: HeaderMap, Path(id): Path<String>) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "study") {
        Ok(f) => f,
        Err(r) => return r,
    };
    match w.studies.iter().find(|s| s.id == id) {
        Some(s) => answer(f, StatusCode::OK, study_json(s)),
        None => refuse(StatusCode::NOT_FOUND, "No such study."),
    }
}

async fn patch_study(State(w): S, h: HeaderMap, Path(id): Path<String>, body: Bytes) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "places") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let m: MorePlaces = match read(&body) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let Some(s) = w.studies.iter_mut().find(|s| s.id == id) else {
        return refuse(StatusCode::NOT_FOUND, "No such study.");
    };
    if s.status != "UNPUBLISHED" && m.total_available_places < s.places {
        return refuse(
            StatusCode::BAD_REQUEST,
            "total_available_places: can only be increased",
        );
    }
    s.places = m.total_available_places;
    if s.status == "COMPLETED" {
        s.status = "ACTIVE".into();
    }
    let out = study_json(s);
    answer(f, StatusCode::OK, out)
}

async fn study_transition(
    State(w): S,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "publish") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let t: StudyTransition = match read(&body) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let Some(s) = w.studies.iter_mut().find(|s| s.id == id) else {
        return refuse(StatusCode::NOT_FOUND, "No such study.");
    };
    let next = match (s.status.as_str(), t.action.as_str()) {
        ("UNPUBLISHED", "PUBLISH") | ("PAUSED", "START") => "ACTIVE",
        ("ACTIVE", "PAUSE") => "PAUSED",
        ("ACTIVE" | "PAUSED", "STOP") => "COMPLETED",
        (from, action) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("A study cannot {action} from {from}."),
            )
        }
    };
    s.status = next.into();
    let out = study_json(s);
    answer(f, StatusCode::OK, out)
}

#[derive(Deserialize)]
struct Page {
    limit: Option<usize>,
    offset: Option<usize>,
}

async fn submissions(
    State(w): S,
    h: HeaderMap,
    Path(id): Path<String>,
    Query(p): Query<Page>,
) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "submissions") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let all: Vec<Value> = w
        .submissions
        .iter()
        .filter(|s| s.study == id)
        .map(sub_json)
        .collect();
    let count = all.len();
    let page: Vec<Value> = all
        .into_iter()
        .skip(p.offset.unwrap_or(0))
        .take(p.limit.unwrap_or(20))
        .collect();
    answer(
        f,
        StatusCode::OK,
        json!({ "results": page, "meta": { "count": count } }),
    )
}

async fn submission(State(w): S, h: HeaderMap, Path(id): Path<String>) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "submission") {
        Ok(f) => f,
        Err(r) => return r,
    };
    match w.submissions.iter().find(|s| s.id == id) {
        Some(s) => answer(f, StatusCode::OK, sub_json(s)),
        None => refuse(StatusCode::NOT_FOUND, "No such submission."),
    }
}

const CATEGORIES: [&str; 12] = [
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
];

async fn decide(State(w): S, h: HeaderMap, Path(id): Path<String>, body: Bytes) -> Response {
    let mut guard = w.lock();
    let w = &mut *guard;
    let op = if body.windows(6).any(|b| b == b"REJECT") {
        "reject"
    } else {
        "approve"
    };
    let f = match enter(w, &h, op) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let t: SubmissionTransition = match read(&body) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let reward = |study: &str| {
        w.studies
            .iter()
            .find(|s| s.id == study)
            .map_or(0, |s| s.made.reward)
    };
    let Some(s) = w.submissions.iter_mut().find(|s| s.id == id) else {
        return refuse(StatusCode::NOT_FOUND, "No such submission.");
    };
    let next = match (s.status, t.action.as_str()) {
        // The reference: "this endpoint is idempotent".
        (SubmissionStatus::Approved, "APPROVE") | (SubmissionStatus::Rejected, "REJECT") => {
            s.status
        }
        (SubmissionStatus::AwaitingReview, "APPROVE") => SubmissionStatus::Approved,
        (SubmissionStatus::AwaitingReview, "REJECT") => {
            if t.message.as_deref().map_or(0, |m| m.chars().count()) < 100 {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    json!({ "message": ["must be at least 100 chars long"] }),
                );
            }
            if !t
                .rejection_category
                .as_deref()
                .is_some_and(|c| CATEGORIES.contains(&c))
            {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    json!({ "rejection_category": ["is not a valid choice"] }),
                );
            }
            SubmissionStatus::Rejected
        }
        (from, action) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("A submission cannot {action} from {from:?}."),
            )
        }
    };
    let paid = next == SubmissionStatus::Approved && s.status != SubmissionStatus::Approved;
    s.status = next;
    let out = json!({ "id": s.id, "status": s.status, "participant": s.participant, "study_id": s.study });
    if paid {
        let (worker, submission, cents) = (
            s.participant.clone(),
            s.id.clone(),
            reward(&s.study.clone()),
        );
        w.ledger.paid.push(Paid {
            kind: "reward".into(),
            worker,
            submission,
            cents,
        });
    }
    answer(f, StatusCode::OK, out)
}

/// Major units ("4.25") as minor units.
fn minor(amount: &str) -> Option<i64> {
    let (whole, frac) = amount.split_once('.').unwrap_or((amount, ""));
    if frac.len() > 2 || whole.is_empty() {
        return None;
    }
    Some(whole.parse::<i64>().ok()? * 100 + format!("{frac:0<2}").parse::<i64>().ok()?)
}

async fn make_bonus(State(w): S, h: HeaderMap, body: Bytes) -> Response {
    let mut w = w.lock();
    let f = match enter(&mut w, &h, "bonus") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let b: BonusRequest = match read(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut lines = Vec::new();
    for line in b.csv_bonuses.lines().filter(|l| !l.trim().is_empty()) {
        let Some((who, amount)) = line.split_once(',') else {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("csv_bonuses: {line:?} is not id,amount"),
            );
        };
        let took_part = w
            .submissions
            .iter()
            .any(|s| s.study == b.study_id && (s.id == who || s.participant == who));
        match (took_part, minor(amount.trim())) {
            (true, Some(cents)) if cents > 0 => lines.push((who.to_string(), cents)),
            (false, _) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    format!("csv_bonuses: {who} did not take part in the study"),
                )
            }
            (true, _) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    format!("csv_bonuses: {amount:?} is not an amount"),
                )
            }
        }
    }
    let id = fresh_id(HEX, 24);
    let total: i64 = lines.iter().map(|(_, c)| c).sum();
    w.bulks.push((id.clone(), b.study_id.clone(), lines));
    answer(
        f,
        StatusCode::CREATED,
        json!({ "id": id, "study": b.study_id, "amount": total as f64, "total_amount": total as f64 }),
    )
}

/// Pays a bulk bonus: again on every call, as the reference warns.
async fn pay_bonus(State(w): S, h: HeaderMap, Path(id): Path<String>) -> Response {
    let mut guard = w.lock();
    let w = &mut *guard;
    let f = match enter(w, &h, "pay") {
        Ok(f) => f,
        Err(r) => return r,
    };
    let Some((_, study, lines)) = w.bulks.iter().find(|b| b.0 == id).cloned() else {
        return refuse(StatusCode::NOT_FOUND, "No such bulk bonus payment.");
    };
    for (who, cents) in lines {
        if let Some(s) = w
            .submissions
            .iter_mut()
            .find(|s| s.study == study && (s.id == who || s.participant == who))
        {
            s.bonuses.push(cents);
            let p = Paid {
                kind: "bonus".into(),
                worker: s.participant.clone(),
                submission: s.id.clone(),
                cents,
            };
            w.ledger.paid.push(p);
        }
    }
    match f {
        Some(FaultKind::Lost) => lost(),
        _ => (
            StatusCode::ACCEPTED,
            Json(json!("Bonus payment is being processed")),
        )
            .into_response(),
    }
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

async fn control_fault(State(w): S, Json(rule): Json<FaultRule>) -> StatusCode {
    w.lock().ledger.faults.push(rule);
    StatusCode::NO_CONTENT
}

async fn control_paid(State(w): S) -> Json<Vec<Paid>> {
    Json(w.lock().ledger.paid.clone())
}

async fn control_calls(State(w): S) -> Json<Vec<String>> {
    Json(w.lock().ledger.calls.clone())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_in_major_units() {
        assert_eq!(minor("4.25"), Some(425));
        assert_eq!(minor("30"), Some(3000));
        assert_eq!(minor("1.5"), Some(150));
        assert_eq!(minor("1.505"), None);
    }
}
