//! The stand-in's researcher API: each call's token and injected fault checked first, its body
//! read in the documented shape (unknown fields refused), what the reference asks of it
//! checked, and Prolific's own error body where it is refused.

use super::{StudyRec, SubRec, World};
use crate::prolific::wire::*;
use crate::standin::{fresh_id, lost, FaultKind, Shared};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

pub(super) const HEX: &[u8] = b"0123456789abcdef";

pub(super) type S = State<Shared<World>>;

/// A call the stand-in answers with an error (Prolific's body), in place of its work.
pub(super) struct Refused(Box<Response>);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// What a call of the researcher API answers.
pub(super) type Reply = Result<Response, Refused>;

/// Prolific's error body.
fn refused(status: StatusCode, detail: impl Into<Value>) -> Refused {
    let body = json!({ "error": { "status": status.as_u16(), "error_code": status.as_u16(),
        "title": status.canonical_reason().unwrap_or("Error"), "detail": detail.into() } });
    Refused(Box::new((status, Json(body)).into_response()))
}

/// Prolific's error body, as the call's answer.
pub(super) fn refuse(status: StatusCode, detail: impl Into<Value>) -> Reply {
    Err(refused(status, detail))
}

/// The call's authorisation and fault: `Err` is the answer to give instead of doing it.
pub(super) fn enter(
    w: &mut World,
    headers: &HeaderMap,
    op: &str,
) -> Result<Option<FaultKind>, Refused> {
    let token = format!("Token {}", w.token);
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if given != Some(token.as_str()) {
        return Err(refused(StatusCode::UNAUTHORIZED, "Invalid token."));
    }
    match w.ledger.call(op) {
        Some(FaultKind::Busy) => Err(refused(
            StatusCode::TOO_MANY_REQUESTS,
            "Request was throttled.",
        )),
        Some(FaultKind::Broken) => Err(refused(StatusCode::INTERNAL_SERVER_ERROR, "Server error.")),
        other => Ok(other),
    }
}

/// A request body in its documented shape, or Prolific's 400 naming what is wrong.
pub(super) fn read<T: serde::de::DeserializeOwned>(body: &Bytes) -> Result<T, Refused> {
    serde_json::from_slice(body).map_err(|e| refused(StatusCode::BAD_REQUEST, e.to_string()))
}

/// The answer, or a lost one where that fault was injected (the work is done either way).
pub(super) fn answer(fault: Option<FaultKind>, status: StatusCode, body: Value) -> Reply {
    Ok(match fault {
        Some(FaultKind::Lost) => lost(),
        Some(FaultKind::Busy | FaultKind::Broken) | None => (status, Json(body)).into_response(),
    })
}

pub(super) fn study_json(s: &StudyRec) -> Value {
    json!({ "id": s.id, "status": s.status, "internal_name": s.made.internal_name,
        "total_available_places": s.places, "metadata": s.made.metadata,
        "reward": s.made.reward, "name": s.made.name })
}

pub(super) fn sub_json(s: &SubRec) -> Value {
    json!({ "id": s.id, "participant_id": s.participant, "participant": s.participant,
        "status": s.status, "study_id": s.study, "study_code": s.code,
        "started_at": "2026-12-07T10:00:00Z", "completed_at": s.code.as_ref().map(|_| "2026-12-07T10:30:00Z"),
        "bonus_payments": s.bonuses })
}

pub(super) async fn me(State(w): S, h: HeaderMap) -> Reply {
    let mut w = w.lock();
    match enter(&mut w, &h, "me") {
        Err(r) => Err(r),
        Ok(f) => answer(
            f,
            StatusCode::OK,
            json!({ "id": "standin-researcher", "email": "lab@example.org",
            "currency_code": "GBP", "balance": 100_000, "available_balance": 100_000 }),
        ),
    }
}

pub(super) async fn workspaces(State(w): S, h: HeaderMap) -> Reply {
    let mut w = w.lock();
    match enter(&mut w, &h, "workspaces") {
        Err(r) => Err(r),
        Ok(f) => answer(
            f,
            StatusCode::OK,
            json!({ "results": [{ "id": w.workspace, "title": "Lab" }] }),
        ),
    }
}

pub(super) async fn cost(State(w): S, h: HeaderMap, body: Bytes) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "cost")?;
    let c: CostRequest = read(&body)?;
    // 33.3% fee and 20% VAT on it, as an academic UK account pays.
    let rewards = c.reward * i64::from(c.total_available_places);
    let fee = (rewards * 333 + 500) / 1000;
    answer(
        f,
        StatusCode::OK,
        json!({ "total_cost": rewards + fee + (fee * 20 + 50) / 100 }),
    )
}

pub(super) async fn groups(State(w): S, h: HeaderMap) -> Reply {
    let mut w = w.lock();
    match enter(&mut w, &h, "groups") {
        Err(r) => Err(r),
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

pub(super) async fn make_group(State(w): S, h: HeaderMap, body: Bytes) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "group")?;
    let g: CreateGroup = read(&body)?;
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

pub(super) async fn add_members(
    State(w): S,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "grant")?;
    let a: AddParticipants = read(&body)?;
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

pub(super) async fn studies(State(w): S, h: HeaderMap) -> Reply {
    let mut w = w.lock();
    match enter(&mut w, &h, "studies") {
        Err(r) => Err(r),
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

pub(super) async fn make_study(State(w): S, h: HeaderMap, body: Bytes) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "create-study")?;
    let c: CreateStudy = read(&body)?;
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

pub(super) async fn study(State(w): S, h: HeaderMap, Path(id): Path<String>) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "study")?;
    match w.studies.iter().find(|s| s.id == id) {
        Some(s) => answer(f, StatusCode::OK, study_json(s)),
        None => refuse(StatusCode::NOT_FOUND, "No such study."),
    }
}

/// A change to one study, under the call's token and fault: the body read, the study found,
/// `change` applied (or its refusal answered) and the study answered as it now is.
fn change_study<T: serde::de::DeserializeOwned>(
    State(w): S,
    h: &HeaderMap,
    (op, id, body): (&str, &str, &Bytes),
    change: impl FnOnce(&mut StudyRec, T) -> Result<(), Refused>,
) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, h, op)?;
    let asked: T = read(body)?;
    let Some(s) = w.studies.iter_mut().find(|s| s.id == id) else {
        return refuse(StatusCode::NOT_FOUND, "No such study.");
    };
    change(s, asked)?;
    let out = study_json(s);
    answer(f, StatusCode::OK, out)
}

pub(super) async fn patch_study(w: S, h: HeaderMap, Path(id): Path<String>, body: Bytes) -> Reply {
    change_study(w, &h, ("places", &id, &body), |s, m: MorePlaces| {
        if s.status != "UNPUBLISHED" && m.total_available_places < s.places {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "total_available_places: can only be increased",
            ));
        }
        s.places = m.total_available_places;
        if s.status == "COMPLETED" {
            s.status = "ACTIVE".into();
        }
        Ok(())
    })
}

pub(super) async fn study_transition(
    w: S,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply {
    change_study(w, &h, ("publish", &id, &body), |s, t: StudyTransition| {
        let next = match (s.status.as_str(), t.action.as_str()) {
            ("UNPUBLISHED", "PUBLISH") | ("PAUSED", "START") => "ACTIVE",
            ("ACTIVE", "PAUSE") => "PAUSED",
            ("ACTIVE" | "PAUSED", "STOP") => "COMPLETED",
            (from, action) => {
                return Err(refused(
                    StatusCode::BAD_REQUEST,
                    format!("A study cannot {action} from {from}."),
                ))
            }
        };
        s.status = next.into();
        Ok(())
    })
}
