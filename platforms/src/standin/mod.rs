//! Stand-ins of Prolific's and MTurk's APIs on loopback, for the tests and for a rehearsal of a
//! study before any money moves (`clues-lab platform stand-in`): each keeps studies or HITs,
//! lets workers arrive through its links, and records every payment it makes. Faults are
//! injected per operation through `POST /control/fault`: 429 or a throttling error, a 5xx, or
//! an answer lost after the work was done; `GET /control/paid` lists what was paid.

pub mod mturk;
pub mod prolific;
pub mod sigv4;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// A fault to inject into the next calls of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// "Too many requests" (Prolific's 429, MTurk's ThrottlingException): nothing is done.
    Busy,
    /// A 500 before anything is done.
    Broken,
    /// The work is done, then the answer is cut off mid-body (a time-out, as the caller sees it).
    Lost,
}

/// `POST /control/fault`: the next `times` calls of `op` meet `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRule {
    pub op: String,
    pub kind: FaultKind,
    pub times: u32,
}

/// One payment a stand-in made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paid {
    /// `reward` (on approval) or `bonus`.
    pub kind: String,
    pub worker: String,
    /// The submission or assignment it pays for.
    pub submission: String,
    pub cents: i64,
}

/// What both stand-ins keep beside their own state: faults to inject, payments made, calls seen.
#[derive(Debug, Default)]
pub struct Ledger {
    pub faults: Vec<FaultRule>,
    pub paid: Vec<Paid>,
    /// Every operation called, in order.
    pub calls: Vec<String>,
    /// Milliseconds each API call waits before its work and again after it (`/control/pace`):
    /// a caller killed meanwhile dies before, during or after a call.
    pub pace_ms: u64,
}

/// A stand-in's world, as the pace layer reads it.
pub trait Paced: Send + 'static {
    fn ledger(&mut self) -> &mut Ledger;
}

/// The pace layer: waits `pace_ms` before a request and again after its answer is made.
pub async fn pace<W: Paced>(
    axum::extract::State(w): axum::extract::State<Shared<W>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let ms = w.lock().ledger().pace_ms;
    let wait = std::time::Duration::from_millis(ms);
    tokio::time::sleep(wait).await;
    let res = next.run(req).await;
    tokio::time::sleep(wait).await;
    res
}

/// `POST /control/fault`: a fault for the next calls of an operation.
pub async fn control_fault<W: Paced>(
    axum::extract::State(w): axum::extract::State<Shared<W>>,
    axum::Json(rule): axum::Json<FaultRule>,
) -> StatusCode {
    w.lock().ledger().faults.push(rule);
    StatusCode::NO_CONTENT
}

/// `GET /control/paid`: every payment made.
pub async fn control_paid<W: Paced>(
    axum::extract::State(w): axum::extract::State<Shared<W>>,
) -> axum::Json<Vec<Paid>> {
    axum::Json(w.lock().ledger().paid.clone())
}

/// `GET /control/calls`: every operation called, in order.
pub async fn control_calls<W: Paced>(
    axum::extract::State(w): axum::extract::State<Shared<W>>,
) -> axum::Json<Vec<String>> {
    axum::Json(w.lock().ledger().calls.clone())
}

/// `POST /control/pace` with `{"ms": N}`.
pub async fn control_pace<W: Paced>(
    axum::extract::State(w): axum::extract::State<Shared<W>>,
    axum::Json(p): axum::Json<std::collections::HashMap<String, u64>>,
) -> StatusCode {
    w.lock().ledger().pace_ms = p.get("ms").copied().unwrap_or(0);
    StatusCode::NO_CONTENT
}

impl Ledger {
    /// Notes a call of `op` and takes the fault it meets, if any.
    pub fn call(&mut self, op: &str) -> Option<FaultKind> {
        self.calls.push(op.to_string());
        let rule = self.faults.iter_mut().find(|f| f.op == op && f.times > 0)?;
        rule.times -= 1;
        Some(rule.kind)
    }
}

/// A stand-in's state behind one lock.
pub struct Shared<T>(Arc<Mutex<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> Shared<T> {
    pub fn new(t: T) -> Self {
        Shared(Arc::new(Mutex::new(t)))
    }

    /// The state (a panic elsewhere while it was held leaves it as it was).
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// An answer whose work was done and whose body is cut off: the caller cannot read it.
pub fn lost() -> Response {
    let cut = futures_util::stream::once(async {
        Err::<Vec<u8>, _>(std::io::Error::other("the stand-in cut the answer off"))
    });
    (StatusCode::OK, Body::from_stream(cut)).into_response()
}

/// A stand-in's routes with the control ones both have (faults, payments, calls, pace) and
/// the pace layer, over `world`.
pub fn controlled<W: Paced>(routes: axum::Router<Shared<W>>, world: Shared<W>) -> axum::Router {
    use axum::routing::{get, post};
    routes
        .route("/control/fault", post(control_fault::<W>))
        .route("/control/paid", get(control_paid::<W>))
        .route("/control/calls", get(control_calls::<W>))
        .route("/control/pace", post(control_pace::<W>))
        .layer(axum::middleware::from_fn_with_state(
            world.clone(),
            pace::<W>,
        ))
        .with_state(world)
}

/// Binds `addr` (port 0: a free one) and serves `app` there in the background; its address.
pub async fn serve(app: axum::Router, addr: SocketAddr) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("a stand-in stopped: {e}");
        }
    });
    Ok(bound)
}

/// A fresh id of `len` characters from `alphabet`.
pub fn fresh_id(alphabet: &[u8], len: usize) -> String {
    (0..len)
        .map(|_| alphabet[rand::random::<usize>() % alphabet.len()] as char)
        .collect()
}

/// Both stand-ins, running.
pub struct Running {
    pub prolific: SocketAddr,
    pub mturk: SocketAddr,
    pub prolific_world: Shared<prolific::World>,
    pub mturk_world: Shared<mturk::World>,
}

/// The credentials the stand-ins take: a Prolific token, an MTurk key pair.
#[derive(Clone, Debug)]
pub struct Keys {
    pub prolific_token: String,
    pub mturk_access_key: String,
    pub mturk_secret_key: String,
}

/// Starts both stand-ins on `addrs` (port 0: free ones).
pub async fn start(keys: &Keys, addrs: (SocketAddr, SocketAddr)) -> std::io::Result<Running> {
    let prolific_world = Shared::new(prolific::World {
        token: keys.prolific_token.clone(),
        workspace: fresh_id(b"0123456789abcdef", 24),
        ..prolific::World::default()
    });
    let mturk_world = Shared::new(mturk::World {
        access_key: keys.mturk_access_key.clone(),
        secret_key: keys.mturk_secret_key.clone(),
        ..mturk::World::default()
    });
    Ok(Running {
        prolific: serve(prolific::router(prolific_world.clone()), addrs.0).await?,
        mturk: serve(mturk::router(mturk_world.clone()), addrs.1).await?,
        prolific_world,
        mturk_world,
    })
}
