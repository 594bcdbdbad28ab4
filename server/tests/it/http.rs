//! The router driven without a socket: pages render, server functions check the session and
//! the role, login failures all read the same, and previews never carry gold answers.
use crate::common;

use app::ssr::state::AppState;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use domain::ids::StudyId;
use domain::people::Role;
use domain::task::Family;
use http_body_util::BodyExt;
use server::{demo, router};
use tower::ServiceExt;

/// A state on a fresh database, with the directory that holds it (kept alive by the caller:
/// the pool opens new connections to the file as it goes).
async fn state() -> (tempfile::TempDir, AppState) {
    let (dir, pool) = common::fresh_db().await;
    demo::ensure_demo(&pool).await.unwrap();
    common::add_users(&pool, &[("rita", Role::Researcher), ("walt", Role::Worker)]).await;
    (dir, common::app_state(pool))
}

async fn call(
    state: &AppState,
    path: &str,
    form: &str,
    cookie: Option<&str>,
) -> (StatusCode, String, Option<String>) {
    let mut req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json");
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    let res = router::app(state.clone())
        .oneshot(req.body(Body::from(form.to_string())).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let set_cookie = res
        .headers()
        .get(header::SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        String::from_utf8_lossy(&body).into_owned(),
        set_cookie,
    )
}

async fn login(state: &AppState, name: &str, password: &str) -> String {
    let (status, body, cookie) = call(
        state,
        "/api/login",
        &format!("name={name}&password={password}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let cookie = cookie.expect("a session cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    cookie.split(';').next().unwrap().to_string()
}

#[tokio::test]
async fn home_page_renders_with_hydration_scripts() {
    let (_db, s) = state().await;
    let res = router::app(s)
        .oneshot(Request::get("/").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let html =
        String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(html.contains("Sign in"), "{html}");
    assert!(html.contains("/pkg/clues-lab.js"), "{html}");
    // Without JavaScript the sign-in form posts; it never sends the password in a URL.
    assert!(
        html.contains(r#"<form action="/api/login" method="post">"#),
        "{html}"
    );
}

#[tokio::test]
async fn login_failures_read_the_same_and_change_nothing() {
    let (_db, s) = state().await;
    let before = common::snapshot(&s.pool).await;
    let (st1, wrong_pw, c1) = call(&s, "/api/login", "name=rita&password=nope-nope", None).await;
    let (st2, no_user, c2) = call(&s, "/api/login", "name=nobody&password=nope-nope", None).await;
    assert_eq!(st1, StatusCode::UNAUTHORIZED);
    assert_eq!((st1, &wrong_pw), (st2, &no_user));
    assert_eq!(wrong_pw, "\"BadLogin\"");
    assert!(c1.is_none() && c2.is_none());
    assert_eq!(common::snapshot(&s.pool).await, before);
}

#[tokio::test]
async fn staff_functions_check_session_and_role() {
    let (_db, s) = state().await;
    let (status, body, _) = call(&s, "/api/list_tasks", "", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("NotSignedIn"), "{body}");

    let worker = login(&s, "walt", "walt-password").await;
    let (status, body, _) = call(&s, "/api/list_tasks", "", Some(&worker)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body, r#"{"Forbidden":"worker"}"#);
    let (_, body, _) = call(
        &s,
        "/api/preview_item",
        "name=demo-SST-2&position=0",
        Some(&worker),
    )
    .await;
    assert!(body.contains("Forbidden"), "{body}");

    let researcher = login(&s, "rita", "rita-password").await;
    let (status, body, _) = call(&s, "/api/list_tasks", "", Some(&researcher)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tasks: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(tasks.as_array().unwrap().len(), 6);
    let (_, body, _) = call(&s, "/api/whoami", "", Some(&researcher)).await;
    assert!(body.contains("\"researcher\""), "{body}");

    // Sign out ends the session on the server too.
    call(&s, "/api/logout", "", Some(&researcher)).await;
    let (_, body, _) = call(&s, "/api/list_tasks", "", Some(&researcher)).await;
    assert!(body.contains("NotSignedIn"), "{body}");
}

#[tokio::test]
async fn previews_carry_no_gold() {
    let (_db, s) = state().await;
    let researcher = login(&s, "rita", "rita-password").await;
    for position in 0..4 {
        let (status, body, _) = call(
            &s,
            "/api/preview_item",
            &format!("name=demo-SQuAD-v2&position={position}"),
            Some(&researcher),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let item: serde_json::Value = serde_json::from_str(&body).unwrap();
        let mut keys: Vec<&str> = item
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(keys, ["context", "id", "position", "question", "total"]);
        assert!(!body.contains("answer_start") && !body.contains("gold"));
    }
    let (status, body, _) = call(
        &s,
        "/api/preview_item",
        "name=no-such-task&position=0",
        Some(&researcher),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no task named"), "{body}");
}

/// `GET path` with `Accept-Encoding: encoding`: status, Content-Encoding and the raw body.
async fn fetch_encoded(
    state: &AppState,
    path: &str,
    encoding: &str,
) -> (StatusCode, Option<String>, Vec<u8>, header::HeaderMap) {
    let req = Request::get(path)
        .header(header::ACCEPT_ENCODING, encoding)
        .body(Body::empty())
        .unwrap();
    let res = router::app(state.clone()).oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let enc = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap().to_string());
    let body = res.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, enc, body, headers)
}

/// A response's `Content-Security-Policy`.
fn csp(headers: &header::HeaderMap) -> String {
    headers
        .get(header::CONTENT_SECURITY_POLICY)
        .expect("a Content-Security-Policy")
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn pages_are_compressed_static_files_come_precompressed_and_headers_protect() {
    let (_db, mut s) = state().await;
    // A site folder as .ci/build leaves it: the wasm with its .br and .gz siblings.
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("clues-lab.wasm"), vec![7u8; 4096]).unwrap();
    std::fs::write(pkg.join("clues-lab.wasm.br"), b"brotli bytes").unwrap();
    std::fs::write(pkg.join("clues-lab.wasm.gz"), b"gzip bytes").unwrap();
    s.leptos_options = leptos::config::LeptosOptions::builder()
        .output_name("clues-lab")
        .site_root(site.path().to_str().unwrap())
        .build();
    // Each encoding of a static file is its own entry in a shared cache.
    let vary = |h: &axum::http::HeaderMap| {
        h.get_all(header::VARY)
            .iter()
            .any(|v| v.to_str().unwrap().eq_ignore_ascii_case("accept-encoding"))
    };
    for (encoding, expected) in [("br", b"brotli bytes".as_slice()), ("gzip", b"gzip bytes")] {
        let (status, enc, body, headers) = fetch_encoded(&s, "/pkg/clues-lab.wasm", encoding).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(enc.as_deref(), Some(encoding));
        assert_eq!(body, expected);
        assert!(vary(&headers), "{encoding}: {headers:?}");
    }
    let (_, enc, body, headers) = fetch_encoded(&s, "/pkg/clues-lab.wasm", "identity").await;
    assert_eq!((enc, body.len()), (None, 4096));
    assert!(vary(&headers), "{headers:?}");
    // Pages are compressed on the fly for browsers that accept it, and carry the headers.
    let (status, plain_enc, plain, _) = fetch_encoded(&s, "/", "identity").await;
    assert_eq!((status, plain_enc), (StatusCode::OK, None));
    assert!(String::from_utf8_lossy(&plain).contains("<!DOCTYPE html>"));
    for encoding in ["br", "gzip"] {
        let (status, enc, body, headers) = fetch_encoded(&s, "/", encoding).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(enc.as_deref(), Some(encoding));
        assert!(
            body.len() < plain.len(),
            "{encoding}: {} of {}",
            body.len(),
            plain.len()
        );
        for (name, value) in [
            ("x-content-type-options", "nosniff"),
            ("x-frame-options", "DENY"),
            ("referrer-policy", "no-referrer"),
        ] {
            assert_eq!(headers.get(name).unwrap(), value, "{name}");
        }
        assert!(csp(&headers).ends_with("; frame-ancestors 'none'"));
    }
}

#[tokio::test]
async fn over_https_browsers_are_told_to_stay_on_https_and_no_page_gets_powerful_features() {
    let (_db, mut s) = state().await;
    let (_, _, _, plain) = fetch_encoded(&s, "/", "identity").await;
    assert!(plain.get(header::STRICT_TRANSPORT_SECURITY).is_none());
    assert!(plain
        .get("permissions-policy")
        .unwrap()
        .to_str()
        .unwrap()
        .contains("camera=()"));
    s.secure_cookies = true;
    for path in ["/", "/join/1?PROLIFIC_PID=p1", "/api/whoami"] {
        let (_, _, _, h) = fetch_encoded(&s, path, "identity").await;
        assert_eq!(
            h.get(header::STRICT_TRANSPORT_SECURITY).unwrap(),
            "max-age=31536000",
            "{path}"
        );
    }
}

#[tokio::test]
async fn pages_run_only_their_own_scripts_and_the_inline_ones_with_this_responses_nonce() {
    let (_db, s) = state().await;
    let nonce_of = |policy: &str| {
        policy
            .split("'nonce-")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .unwrap_or_default()
            .to_string()
    };
    // A Leptos page: its hydration script carries the nonce its policy names; another
    // response gets another nonce.
    let (_, _, body, h) = fetch_encoded(&s, "/", "identity").await;
    let policy = csp(&h);
    assert!(
        policy.starts_with("script-src 'self' 'nonce-")
            && policy.contains(
                "'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
            ),
        "{policy}"
    );
    let nonce = nonce_of(&policy);
    assert!(nonce.len() >= 16, "{policy}");
    assert!(String::from_utf8(body)
        .unwrap()
        .contains(&format!("nonce=\"{nonce}\"")));
    let (_, _, _, again) = fetch_encoded(&s, "/", "identity").await;
    assert_ne!(nonce_of(&csp(&again)), nonce);
    // The study link's start page: its one inline script carries its nonce.
    let (_, _, body, h) = fetch_encoded(&s, "/join/1?PROLIFIC_PID=csp", "identity").await;
    let policy = csp(&h);
    assert!(
        policy.contains("frame-ancestors 'self' https://worker.mturk.com https://www.mturk.com"),
        "{policy}"
    );
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.contains(&format!("<script nonce=\"{}\">", nonce_of(&policy))),
        "{body}"
    );
    // An MTurk preview runs no script at all.
    let (_, _, _, h) = fetch_encoded(
        &s,
        "/join/1?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE",
        "identity",
    )
    .await;
    assert!(csp(&h).starts_with("script-src 'none'"));
}

#[tokio::test]
async fn worker_pages_may_be_framed_by_the_crowd_platforms_and_no_other_page_by_anyone() {
    let (_db, mut s) = state().await;
    s.frame_ancestors = std::sync::Arc::from(["https://lab.example".to_string()]);
    let (_, _, _, home) = fetch_encoded(&s, "/", "identity").await;
    assert_eq!(home.get("x-frame-options").unwrap(), "DENY");
    assert!(csp(&home).ends_with("; frame-ancestors 'none'"));
    // The start page, the study page (also the end page), and their refusals alike.
    for path in ["/join/1?PROLIFIC_PID=p1", "/study/1", "/join/999"] {
        let (_, _, _, h) = fetch_encoded(&s, path, "identity").await;
        assert!(h.get("x-frame-options").is_none(), "{path}: {h:?}");
        assert!(
            csp(&h).ends_with(
                "frame-ancestors 'self' https://worker.mturk.com https://www.mturk.com \
                    https://workersandbox.mturk.com https://requester.mturk.com \
                    https://requestersandbox.mturk.com https://lab.example"
            ),
            "{path}"
        );
    }
}

#[tokio::test]
async fn hashed_assets_are_immutable_and_study_pages_load_their_worker_bundle() {
    let (_db, mut s) = state().await;
    // A site folder as .ci/build leaves it: the three bundles and the stylesheet by content
    // hash.
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    for f in [
        "clues-lab.00112233aabbccdd.js",
        "clues-lab.44556677aabbccdd.wasm",
        "clues-lab-worker.8899aabbccddeeff.js",
        "clues-lab-worker.0011223344556677.wasm",
        "clues-lab-worker-spans.5566778899aabbcc.js",
        "clues-lab-worker-spans.ddeeff0011223344.wasm",
        "clues-lab.ffeeddccbbaa9988.css",
    ] {
        std::fs::write(pkg.join(f), f).unwrap();
    }
    std::fs::write(
        site.path().join("hash.txt"),
        "js: 00112233aabbccdd\nwasm: 44556677aabbccdd\ncss: ffeeddccbbaa9988\n",
    )
    .unwrap();
    std::fs::write(
        site.path().join("hash-worker.txt"),
        "js: 8899aabbccddeeff\nwasm: 0011223344556677\n",
    )
    .unwrap();
    std::fs::write(
        site.path().join("hash-worker-spans.txt"),
        "js: 5566778899aabbcc\nwasm: ddeeff0011223344\n",
    )
    .unwrap();
    s.leptos_options = leptos::config::LeptosOptions::builder()
        .output_name("clues-lab")
        .site_root(site.path().to_str().unwrap())
        .build();
    let (status, _, body, headers) = fetch_encoded(
        &s,
        "/pkg/clues-lab-worker.0011223344556677.wasm",
        "identity",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, b"clues-lab-worker.0011223344556677.wasm");
    assert_eq!(
        headers.get(header::CACHE_CONTROL).unwrap(),
        "public, max-age=31536000, immutable"
    );
    // Staff pages: the staff bundle and the hashed stylesheet; checked again on each use.
    let headers = names_files(
        &s,
        "/",
        &[
            "/pkg/clues-lab.00112233aabbccdd.js",
            "/pkg/clues-lab.44556677aabbccdd.wasm",
            "/pkg/clues-lab.ffeeddccbbaa9988.css",
        ],
        &["clues-lab-worker"],
    )
    .await;
    assert_eq!(headers.get(header::CACHE_CONTROL).unwrap(), "no-cache");
    // The demo's label study (SST-2) and span study (SQuAD v2).
    let family = |id| store::study::family(&s.pool, StudyId(id));
    assert_eq!(family(1).await.unwrap(), Family::Classification);
    assert_eq!(family(2).await.unwrap(), Family::ReadingComprehension);
    // A label study's page: the worker's bundle without the span form, the same stylesheet.
    names_files(
        &s,
        "/study/1",
        &[
            "/pkg/clues-lab-worker.8899aabbccddeeff.js",
            "/pkg/clues-lab-worker.0011223344556677.wasm",
            "/pkg/clues-lab.ffeeddccbbaa9988.css",
        ],
        &["/pkg/clues-lab.00112233aabbccdd.js", "worker-spans"],
    )
    .await;
    // A span study's page, and a page of no study: the span bundle, which hydrates them all.
    for path in ["/study/2", "/study/99"] {
        names_files(
            &s,
            path,
            &[
                "/pkg/clues-lab-worker-spans.5566778899aabbcc.js",
                "/pkg/clues-lab-worker-spans.ddeeff0011223344.wasm",
            ],
            &["clues-lab-worker."],
        )
        .await;
    }
}

/// Fetches the page at `path`, checks that it names each of `has` and none of `lacks`, and
/// returns its headers.
async fn names_files(s: &AppState, path: &str, has: &[&str], lacks: &[&str]) -> header::HeaderMap {
    let (_, _, page, headers) = fetch_encoded(s, path, "identity").await;
    let page = String::from_utf8(page).unwrap();
    for name in has {
        assert!(page.contains(name), "{path} lacks {name}: {page}");
    }
    for name in lacks {
        assert!(!page.contains(name), "{path} names {name}: {page}");
    }
    headers
}
