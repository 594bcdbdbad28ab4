//! A stand-in of MTurk's requester API as the SDK speaks it (`POST /`, AWS JSON 1.1, the
//! operation in `X-Amz-Target`, every request's SigV4 signature checked against the one key
//! pair it knows), with `UniqueRequestToken`s remembered as MTurk remembers them, and a
//! worker's side: a HIT accepted through `GET /work/{hit}?workerId=` (its qualification
//! requirements checked), handed in at `POST /mturk/externalSubmit`, returned through
//! `POST /control/return/{assignment}`.

use crate::standin::{controlled, fresh_id};
use crate::standin::{Ledger, Shared};
use axum::extract::{Form, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

mod api;

pub(super) const ID: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub(super) const TARGET: &str = "MTurkRequesterServiceV20170117.";
/// The stand-in hands its workers over as MTurk's sandbox does: `turkSubmitTo` is the sandbox's
/// worker site, where the study's end page posts the HIT (a test routes it to `hand_in`).
const SUBMIT_TO: &str = "https%3A%2F%2Fworkersandbox.mturk.com";

#[derive(Clone, Debug)]
pub struct HitRec {
    pub id: String,
    pub type_id: String,
    pub annotation: String,
    pub max: u32,
    pub reward_cents: i64,
    pub url: String,
    /// The qualifications a worker must not have.
    pub excluded: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct AssignmentRec {
    pub id: String,
    pub hit: String,
    pub worker: String,
    /// Accepted, Submitted, Approved, Rejected, Returned.
    pub status: String,
}

#[derive(Debug, Default)]
pub struct World {
    pub access_key: String,
    pub secret_key: String,
    pub ledger: Ledger,
    /// Qualification types: id, name, the workers who have it.
    pub quals: Vec<(String, String, Vec<String>)>,
    pub hits: Vec<HitRec>,
    pub assignments: Vec<AssignmentRec>,
    /// Request tokens seen: token, and what the call answered.
    pub tokens: HashMap<String, Value>,
}

type S = State<Shared<World>>;

pub fn router(world: Shared<World>) -> Router {
    let routes = Router::new()
        .route("/", post(api::api))
        .route("/work/{hit}", get(work))
        .route("/mturk/externalSubmit", post(hand_in))
        .route("/control/return/{id}", post(control_return));
    controlled(routes, world)
}

#[derive(Deserialize)]
struct WorkerQuery {
    #[serde(rename = "workerId")]
    worker_id: String,
}

/// A worker accepts the HIT where they may, and is sent to its ExternalQuestion.
async fn work(State(w): S, Path(hit): Path<String>, Query(q): Query<WorkerQuery>) -> Response {
    let mut guard = w.lock();
    let w = &mut *guard;
    let Some(h) = w.hits.iter().find(|x| x.id == hit).cloned() else {
        return (StatusCode::NOT_FOUND, "No such HIT.").into_response();
    };
    let barred = h.excluded.iter().any(|qid| {
        w.quals
            .iter()
            .any(|(id, _, who)| id == qid && who.contains(&q.worker_id))
    });
    let taken = w
        .assignments
        .iter()
        .filter(|a| a.hit == hit && a.status != "Returned")
        .count() as u32;
    let before = w
        .assignments
        .iter()
        .any(|a| a.hit == hit && a.worker == q.worker_id);
    if barred || before || taken >= h.max {
        return (StatusCode::FORBIDDEN, "This HIT is not available to you.").into_response();
    }
    let id = fresh_id(ID, 30);
    w.assignments.push(AssignmentRec {
        id: id.clone(),
        hit: hit.clone(),
        worker: q.worker_id.clone(),
        status: "Accepted".into(),
    });
    let sep = if h.url.contains('?') { '&' } else { '?' };
    Redirect::to(&format!(
        "{}{sep}assignmentId={id}&hitId={hit}&workerId={}&turkSubmitTo={SUBMIT_TO}",
        h.url, q.worker_id
    ))
    .into_response()
}

/// The ExternalQuestion's hand-in: the assignment is submitted.
async fn hand_in(State(w): S, Form(f): Form<HashMap<String, String>>) -> Response {
    let mut w = w.lock();
    let id = f.get("assignmentId").cloned().unwrap_or_default();
    match w
        .assignments
        .iter_mut()
        .find(|a| a.id == id && a.status == "Accepted")
    {
        Some(a) => {
            a.status = "Submitted".into();
            (StatusCode::OK, "HIT submitted. Thank you!").into_response()
        }
        None => (StatusCode::NOT_FOUND, "No such assignment in progress.").into_response(),
    }
}

/// A worker returns the HIT: MTurk offers the assignment again.
async fn control_return(State(w): S, Path(id): Path<String>) -> StatusCode {
    let mut w = w.lock();
    match w
        .assignments
        .iter_mut()
        .find(|a| a.id == id && a.status == "Accepted")
    {
        Some(a) => {
            a.status = "Returned".into();
            StatusCode::NO_CONTENT
        }
        None => StatusCode::NOT_FOUND,
    }
}

/// The pace layer and the control routes read the ledger of MTurk's stand-in here.
impl crate::standin::Paced for World {
    fn ledger(&mut self) -> &mut Ledger {
        &mut self.ledger
    }
}
