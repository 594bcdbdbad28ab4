//! The stand-in's requester API: every request's signature checked, the operation read from
//! `X-Amz-Target`, its injected fault met, a `UniqueRequestToken` seen before answered as MTurk
//! answers it, and each operation's required fields checked.

use super::{AssignmentRec, HitRec, World, ID, TARGET};
use crate::standin::{fresh_id, lost, sigv4, FaultKind, Paid, Shared};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

type S = State<Shared<World>>;

fn error(status: StatusCode, kind: &str, message: impl Into<String>) -> Response {
    let body = json!({ "__type": kind, "Message": message.into(), "TurkErrorCode": format!("AWS.MechanicalTurk.{kind}") });
    (
        status,
        [(header::CONTENT_TYPE, "application/x-amz-json-1.1")],
        body.to_string(),
    )
        .into_response()
}

fn refuse(message: impl Into<String>) -> Response {
    error(StatusCode::BAD_REQUEST, "RequestError", message)
}

fn ok(fault: Option<FaultKind>, body: Value) -> Response {
    match fault {
        Some(FaultKind::Lost) => lost(),
        _ => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/x-amz-json-1.1")],
            body.to_string(),
        )
            .into_response(),
    }
}

/// Checks the request's signature against the one key pair the stand-in knows.
fn signed(w: &World, h: &HeaderMap, body: &[u8]) -> Result<(), String> {
    let text = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
    let auth_header = text("authorization").ok_or("no Authorization header")?;
    let auth =
        sigv4::parse(&auth_header).ok_or("the Authorization header is not AWS4-HMAC-SHA256")?;
    if auth.access_key != w.access_key
        || auth.service != "mturk-requester"
        || auth.region != "us-east-1"
    {
        return Err(format!(
            "unknown key or scope: {}/{}/{}",
            auth.access_key, auth.region, auth.service
        ));
    }
    for needed in ["host", "x-amz-date", "x-amz-target"] {
        if !auth.signed_headers.contains(&needed) {
            return Err(format!("{needed} is not signed"));
        }
    }
    let date = text("x-amz-date").ok_or("no X-Amz-Date")?;
    let want = sigv4::signature(&auth, &w.secret_key, text, &date, body)
        .ok_or("a signed header is missing")?;
    if want != auth.signature {
        return Err(
            "The request signature we calculated does not match the signature you provided.".into(),
        );
    }
    Ok(())
}

fn s(v: &Value, field: &str) -> String {
    v[field].as_str().unwrap_or_default().to_string()
}

fn cents(amount: &str) -> Option<i64> {
    let (whole, frac) = amount.split_once('.').unwrap_or((amount, ""));
    (frac.len() <= 2).then_some(())?;
    Some(whole.parse::<i64>().ok()? * 100 + format!("{frac:0<2}").parse::<i64>().ok()?)
}

fn hit_json(h: &HitRec, w: &World) -> Value {
    let taken = w
        .assignments
        .iter()
        .filter(|a| a.hit == h.id && a.status != "Returned")
        .count() as u32;
    json!({ "HITId": h.id, "HITTypeId": h.type_id, "RequesterAnnotation": h.annotation,
        "MaxAssignments": h.max, "Reward": format!("{}.{:02}", h.reward_cents / 100, h.reward_cents % 100),
        "HITStatus": if taken < h.max { "Assignable" } else { "Unassignable" },
        "NumberOfAssignmentsAvailable": h.max.saturating_sub(taken), "CreationTime": 1_796_600_000.5 })
}

fn asg_json(a: &AssignmentRec) -> Value {
    json!({ "AssignmentId": a.id, "WorkerId": a.worker, "HITId": a.hit, "AssignmentStatus": a.status,
        "AcceptTime": 1_796_600_100.0, "SubmitTime": 1_796_600_900.25 })
}

pub(super) async fn api(State(world): S, h: HeaderMap, body: Bytes) -> Response {
    let mut guard = world.lock();
    let w = &mut *guard;
    if let Err(why) = signed(w, &h, &body) {
        return error(StatusCode::FORBIDDEN, "InvalidSignatureException", why);
    }
    let op = h
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim_start_matches(TARGET)
        .to_string();
    let fault = match w.ledger.call(&op) {
        Some(FaultKind::Busy) => {
            return error(
                StatusCode::BAD_REQUEST,
                "ThrottlingException",
                "Rate exceeded",
            )
        }
        Some(FaultKind::Broken) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "ServiceFault",
                "We are temporarily unable to process your request. Try your call again.",
            )
        }
        f => f,
    };
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return refuse("The request body is not JSON.");
    };
    let token = v["UniqueRequestToken"].as_str().map(str::to_string);
    if let Some(t) = &token {
        if w.tokens.contains_key(t) {
            let what = if op == "CreateHIT" {
                format!(
                    "The HIT with ID \"{}\" already exists. (HitAlreadyExists)",
                    s(&w.tokens[t], "HITId")
                )
            } else {
                format!("The request with token \"{t}\" has already been processed.")
            };
            return refuse(what);
        }
    }
    let answered = operate(w, &op, &v);
    match answered {
        Ok(out) => {
            if let Some(t) = token {
                w.tokens.insert(t, out["HIT"].clone());
            }
            ok(fault, out)
        }
        Err(why) => refuse(why),
    }
}

/// What an operation answers, or the `RequestError` it meets.
fn operate(w: &mut World, op: &str, v: &Value) -> Result<Value, String> {
    match op {
        "GetAccountBalance" => Ok(json!({ "AvailableBalance": "10000.00" })),
        "CreateQualificationType" => create_qualification(w, v),
        "ListQualificationTypes" => {
            let q = s(v, "Query");
            let found: Vec<Value> = w
                .quals
                .iter()
                .filter(|(_, n, _)| n.contains(&q))
                .map(|(id, n, _)| json!({ "QualificationTypeId": id, "Name": n }))
                .collect();
            Ok(json!({ "NumResults": found.len(), "QualificationTypes": found }))
        }
        "AssociateQualificationWithWorker" => {
            let (q, worker) = (s(v, "QualificationTypeId"), s(v, "WorkerId"));
            match w.quals.iter_mut().find(|x| x.0 == q) {
                Some(x) if !worker.is_empty() => {
                    if !x.2.contains(&worker) {
                        x.2.push(worker);
                    }
                    Ok(json!({}))
                }
                _ => Err(format!("No qualification type {q}, or no WorkerId")),
            }
        }
        "CreateHIT" => create_hit(w, v),
        "ListHITs" => {
            let all: Vec<Value> = w.hits.iter().map(|x| hit_json(x, w)).collect();
            Ok(json!({ "NumResults": all.len(), "HITs": all }))
        }
        "ListAssignmentsForHIT" => {
            let hit = s(v, "HITId");
            let all: Vec<Value> = w
                .assignments
                .iter()
                .filter(|a| a.hit == hit)
                .filter(|a| ["Submitted", "Approved", "Rejected"].contains(&a.status.as_str()))
                .map(asg_json)
                .collect();
            Ok(json!({ "NumResults": all.len(), "Assignments": all }))
        }
        "GetAssignment" => match w.assignments.iter().find(|a| a.id == s(v, "AssignmentId")) {
            Some(a) => Ok(json!({ "Assignment": asg_json(a) })),
            None => Err("No such assignment.".into()),
        },
        "ApproveAssignment" | "RejectAssignment" => decide(w, op, v),
        "SendBonus" => send_bonus(w, v),
        "CreateAdditionalAssignmentsForHIT" => {
            let n = v["NumberOfAdditionalAssignments"].as_u64().unwrap_or(0) as u32;
            match w.hits.iter_mut().find(|x| x.id == s(v, "HITId")) {
                Some(x) if n > 0 && (x.max >= 10 || x.max + n < 10) => { x.max += n; Ok(json!({})) }
                Some(_) if n > 0 => Err("A HIT created with fewer than 10 assignments cannot be extended to 10 or more. (InvalidMaximumAssignmentsIncrease)".into()),
                _ => Err("No such HIT, or no assignments to add.".into()),
            }
        }
        other => Err(format!("The stand-in does not offer {other}.")),
    }
}

fn create_qualification(w: &mut World, v: &Value) -> Result<Value, String> {
    let name = s(v, "Name");
    if name.is_empty()
        || s(v, "Description").is_empty()
        || s(v, "QualificationTypeStatus") != "Active"
    {
        return Err("Name, Description and QualificationTypeStatus are required.".into());
    }
    if w.quals.iter().any(|q| q.1 == name) {
        return Err(format!(
            "You have already created a QualificationType with this name: {name}"
        ));
    }
    let id = fresh_id(ID, 30);
    w.quals.push((id.clone(), name.clone(), Vec::new()));
    Ok(
        json!({ "QualificationType": { "QualificationTypeId": id, "Name": name, "QualificationTypeStatus": "Active" } }),
    )
}

fn create_hit(w: &mut World, v: &Value) -> Result<Value, String> {
    let question = s(v, "Question");
    let url = question
        .split("<ExternalURL>")
        .nth(1)
        .and_then(|r| r.split("</ExternalURL>").next())
        .map(|u| u.replace("&amp;", "&"))
        .ok_or("Question must be an ExternalQuestion")?;
    let reward = cents(&s(v, "Reward")).ok_or("Reward must be an amount such as 1.50")?;
    for needed in ["Title", "Description"] {
        if s(v, needed).is_empty() {
            return Err(format!("{needed} is required."));
        }
    }
    for needed in [
        "LifetimeInSeconds",
        "AssignmentDurationInSeconds",
        "MaxAssignments",
    ] {
        if v[needed].as_i64().unwrap_or(0) <= 0 {
            return Err(format!("{needed} is required."));
        }
    }
    let mut excluded = Vec::new();
    for r in v["QualificationRequirements"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let q = s(r, "QualificationTypeId");
        if s(r, "Comparator") != "DoesNotExist" || !w.quals.iter().any(|x| x.0 == q) {
            return Err(format!("unknown qualification {q} or comparator"));
        }
        excluded.push(q);
    }
    let hit = HitRec {
        id: fresh_id(ID, 30),
        type_id: fresh_id(ID, 30),
        annotation: s(v, "RequesterAnnotation"),
        max: v["MaxAssignments"].as_u64().unwrap_or(1) as u32,
        reward_cents: reward,
        url,
        excluded,
    };
    let out = json!({ "HIT": hit_json(&hit, w) });
    w.hits.push(hit);
    Ok(out)
}

fn decide(w: &mut World, op: &str, v: &Value) -> Result<Value, String> {
    let id = s(v, "AssignmentId");
    let reward = |hit: &str| {
        w.hits
            .iter()
            .find(|x| x.id == hit)
            .map_or(0, |x| x.reward_cents)
    };
    let Some(a) = w.assignments.iter_mut().find(|a| a.id == id) else {
        return Err("No such assignment.".into());
    };
    if a.status != "Submitted" {
        return Err(format!(
            "This operation can be called with a status of: Submitted (it is {}).",
            a.status
        ));
    }
    if op == "RejectAssignment" {
        if s(v, "RequesterFeedback").is_empty() {
            return Err("RequesterFeedback is required.".into());
        }
        a.status = "Rejected".into();
    } else {
        a.status = "Approved".into();
        let paid = Paid {
            kind: "reward".into(),
            worker: a.worker.clone(),
            submission: a.id.clone(),
            cents: reward(&a.hit.clone()),
        };
        w.ledger.paid.push(paid);
    }
    Ok(json!({}))
}

fn send_bonus(w: &mut World, v: &Value) -> Result<Value, String> {
    let (worker, id) = (s(v, "WorkerId"), s(v, "AssignmentId"));
    let amount = cents(&s(v, "BonusAmount"))
        .filter(|c| *c > 0)
        .ok_or("BonusAmount must be an amount such as 0.25")?;
    if s(v, "Reason").is_empty() {
        return Err("Reason is required.".into());
    }
    if !w
        .assignments
        .iter()
        .any(|a| a.id == id && a.worker == worker && a.status != "Accepted")
    {
        return Err("The worker has no submitted assignment with this id.".into());
    }
    w.ledger.paid.push(Paid {
        kind: "bonus".into(),
        worker,
        submission: id,
        cents: amount,
    });
    Ok(json!({}))
}
