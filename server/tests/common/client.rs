//! Driving the router like a browser or a crowd worker, without a socket: requests with
//! cookies, server functions (form and JSON input), study links, answers.
use super::app_state;
use app::ssr::state::AppState;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use domain::ids::StudyId;
use domain::people::Role;
use domain::study::StudyConfig;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use server::{demo, router};
use store::db::cli as db;
use store::study;
use tower::ServiceExt;

pub struct Env {
    pub state: AppState,
    _dir: tempfile::TempDir,
}

/// A file database (so concurrent requests really run on several connections) with the demo
/// tasks, an admin and a researcher.
pub async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let url = super::db_url(&dir.path().join("t.db"));
    let pool = db::connect(&url).await.unwrap();
    demo::ensure_demo(&pool).await.unwrap();
    super::add_users(&pool, &[("ada", Role::Admin), ("rita", Role::Researcher)]).await;
    Env {
        state: app_state(pool),
        _dir: dir,
    }
}

pub struct Resp {
    pub status: StatusCode,
    pub body: String,
    pub cookie: Option<String>,
    pub location: Option<String>,
    pub headers: header::HeaderMap,
}

pub async fn send(state: &AppState, req: Request<Body>) -> Resp {
    let what = format!("{} {}", req.method(), req.uri());
    tokio::time::timeout(std::time::Duration::from_secs(20), send_inner(state, req))
        .await
        .unwrap_or_else(|_| panic!("no complete answer to {what} within 20 s"))
}

pub async fn send_inner(state: &AppState, req: Request<Body>) -> Resp {
    let res = router::app(state.clone()).oneshot(req).await.unwrap();
    let (cookie, location) = {
        let header_of = |name| {
            res.headers()
                .get(name)
                .map(|v: &header::HeaderValue| v.to_str().unwrap().to_string())
        };
        (
            header_of(header::SET_COOKIE).map(|c| c.split(';').next().unwrap().to_string()),
            header_of(header::LOCATION),
        )
    };
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    Resp {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
        cookie,
        location,
        headers,
    }
}

pub async fn get(state: &AppState, path: &str, cookie: Option<&str>) -> Resp {
    let mut req = Request::get(path);
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    send(state, req.body(Body::empty()).unwrap()).await
}

/// A server function called with `content_type` input.
pub async fn call_fn(
    state: &AppState,
    name: &str,
    content_type: &str,
    body: String,
    cookie: Option<&str>,
) -> Resp {
    let mut req = Request::post(format!("/api/{name}"))
        .header(header::CONTENT_TYPE, content_type)
        .header(header::ACCEPT, "application/json");
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    send(state, req.body(Body::from(body)).unwrap()).await
}

pub async fn form(state: &AppState, name: &str, body: &str, cookie: Option<&str>) -> Resp {
    call_fn(
        state,
        name,
        "application/x-www-form-urlencoded",
        body.to_string(),
        cookie,
    )
    .await
}

pub async fn post_json(state: &AppState, name: &str, body: &Value, cookie: Option<&str>) -> Resp {
    call_fn(state, name, "application/json", body.to_string(), cookie).await
}

pub async fn login(state: &AppState, name: &str, password: &str) -> String {
    let r = form(
        state,
        "login",
        &format!("name={name}&password={password}"),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.cookie.unwrap()
}

/// The machines page's server as a researcher sees it: the app with the model track's door,
/// researcher `rita` and worker `wendy` added and signed in (their cookies).
pub async fn machines_page(pool: &sqlx::AnyPool) -> (AppState, String, String) {
    use domain::people::Role;
    super::add_users(pool, &[("rita", Role::Researcher), ("wendy", Role::Worker)]).await;
    let mut state = super::app_state(pool.clone());
    state.door = Some(std::sync::Arc::new(learners::queue::Door));
    let rita = login(&state, "rita", "rita-password").await;
    let wendy = login(&state, "wendy", "wendy-password").await;
    (state, rita, wendy)
}

pub async fn new_study(
    state: &AppState,
    task: &str,
    scenarios: &[u32],
    annotators: u32,
) -> StudyId {
    let config = StudyConfig {
        scenarios: scenarios.to_vec(),
        annotators,
        open: true,
        completion_code: "DONE-1234".into(),
        ..StudyConfig::default()
    };
    study::create(&state.pool, None, task, "test study", config)
        .await
        .unwrap()
}

/// Follows a study link as a browser does: the start page (GET), then its Start button (POST).
/// Returns the start page's answer when it is not 200. (That the GET changes nothing is
/// tested on its own, in tests/it/hostile.rs: with arrivals at once, others' writes interleave.)
pub async fn join_link(state: &AppState, path: &str) -> Resp {
    let page = get(state, path, None).await;
    if page.status != StatusCode::OK {
        return page;
    }
    let action = format!(r#"action="{}""#, path.replace('&', "&amp;"));
    assert!(page.body.contains(&action), "{}", page.body);
    join_post(state, path).await
}

/// The Start button of a study link alone (for many arrivals at once), as the start page's
/// script sends it (`script=1`; without it no place is taken).
pub async fn join_post(state: &AppState, path: &str) -> Resp {
    let req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("script=1"))
        .unwrap();
    send(state, req).await
}

/// A crowd worker arrives through the study link; returns their session cookie.
pub async fn arrive(state: &AppState, study_id: StudyId, pid: &str) -> String {
    let r = join_link(
        state,
        &format!("/join/{study_id}?PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=x{pid}"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(r.location.as_deref(), Some(&*format!("/study/{study_id}")));
    r.cookie.expect("a session for the crowd worker")
}

pub async fn state_of(state: &AppState, study_id: StudyId, cookie: &str) -> Resp {
    form(
        state,
        "study_state",
        &format!("study_id={study_id}"),
        Some(cookie),
    )
    .await
}

pub fn parse(r: &Resp) -> Value {
    assert!(r.status.is_success(), "{} {}", r.status, r.body);
    serde_json::from_str(&r.body).unwrap()
}

pub async fn places(state: &AppState, study_id: StudyId) -> Vec<(i64, String)> {
    sqlx::query_as("SELECT k, status FROM assignments WHERE study_id = $1 ORDER BY id")
        .bind(study_id)
        .fetch_all(&state.pool)
        .await
        .unwrap()
}

/// An answer as the study page sends it, with the page's record of the item: here one with
/// nothing in it (no time on the clock, so it fits any interval the server saw). A test of
/// answers without the record removes `signals`.
pub fn submit_body(study_id: StudyId, position: i64, client_id: &str, answer: Value) -> Value {
    json!({"study_id": study_id, "position": position, "client_id": client_id, "answer": answer,
        "signals": quiet_item()})
}

/// The page's record of an item where nothing happened and no time passed.
pub fn quiet_item() -> Value {
    json!({"away_count": 0, "away_ms": 0, "copy_count": 0, "copy_chars": 0, "copy_from_item": 0,
        "paste_count": 0, "paste_chars": 0, "first_input_ms": null, "active_ms": 0, "wall_ms": 0,
        "hidden_ms": 0, "away_after_copy_ms": 0})
}

pub fn label(l: &str) -> Value {
    json!({"kind": "label", "label": l, "confidence": 4})
}

/// Skips every remaining item of the worker's place; returns the final step (`Done`).
pub async fn skip_to_the_end(state: &AppState, study_id: StudyId, cookie: &str) -> Value {
    loop {
        let st = parse(&state_of(state, study_id, cookie).await);
        let Some(pos) = st["step"]["Item"]["position"].as_i64() else {
            return st["step"].clone();
        };
        if !st["step"]["Item"]["reveal"].is_null() {
            let body = format!("study_id={study_id}&position={pos}");
            parse(&form(state, "continue_study", &body, Some(cookie)).await);
            continue;
        }
        let skip = json!({"kind": "skip", "confidence": null});
        let body = submit_body(study_id, pos, &format!("skip-{pos}"), skip);
        parse(&post_json(state, "submit_answer", &body, Some(cookie)).await);
    }
}
