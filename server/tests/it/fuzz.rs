//! Malformed calls to every server function (bad JSON and form data, wrong types, numbers out
//! of range, bad UTF-8, empty and oversized bodies), signed in or not: never a 500; where the
//! arguments cannot be read, 400 naming the problem or 413; and nothing in the database changes.
use crate::common;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::client::*;

/// Bodies no client of ours would send, each with the content type it claims.
fn bodies() -> Vec<(&'static str, Vec<u8>)> {
    let mut oversized = b"{\"client_id\": \"".to_vec();
    oversized.extend(std::iter::repeat_n(b'x', 3 << 20));
    oversized.extend(b"\"}");
    vec![
        ("application/json", b"{not json".to_vec()),
        ("application/json", b"[]".to_vec()),
        ("application/json", b"".to_vec()),
        (
            "application/json",
            br#"{"study_id": "x", "id": "x", "name": 5, "task": [], "position": 1e400}"#.to_vec(),
        ),
        (
            "application/json",
            br#"{"study_id": 99999999999999999999999, "id": -99999999999999999999, "position": 1.5}"#
                .to_vec(),
        ),
        ("application/json", vec![b'{', b'"', 0xff, 0xfe, b'"', b':', b'1', b'}']),
        (
            "application/x-www-form-urlencoded",
            b"study_id=abc&id=%FF&position=1e9999&name".to_vec(),
        ),
        ("application/x-www-form-urlencoded", vec![0xff, 0xfe, b'=', 0xc3]),
        ("text/plain", b"hello".to_vec()),
        ("application/json", oversized),
    ]
}

#[tokio::test]
async fn malformed_calls_to_every_server_function_get_a_4xx_and_change_nothing() {
    let e = env().await;
    let s = &e.state;
    let ada = login(s, "ada", "ada-password").await;
    // The router registers every server function.
    get(s, "/", None).await;
    let mut paths: Vec<String> = leptos::server_fn::axum::server_fn_paths()
        .map(|(p, _)| p.to_string())
        // Signing out with a well-formed cookie is what it should be: it would end the session
        // the rest of this test uses. It is called last, below.
        .filter(|p| !p.ends_with("/logout"))
        .collect();
    paths.sort();
    for known in [
        "/api/submit_answer",
        "/api/login",
        "/api/create_study",
        "/api/dashboard",
    ] {
        assert!(paths.iter().any(|p| p == known), "{known} in {paths:?}");
    }
    let before = common::snapshot(&s.pool).await;
    let mut malformed_seen = 0;
    for path in &paths {
        for (content_type, body) in bodies() {
            for cookie in [None, Some(ada.as_str())] {
                let mut req = Request::post(path.as_str())
                    .header(header::CONTENT_TYPE, content_type)
                    .header(header::ACCEPT, "application/json");
                if let Some(c) = cookie {
                    req = req.header(header::COOKIE, c);
                }
                let r = send(s, req.body(Body::from(body.clone())).unwrap()).await;
                let what = format!(
                    "{path} {content_type} {:?} (signed in: {})",
                    String::from_utf8_lossy(&body[..body.len().min(60)]),
                    cookie.is_some()
                );
                assert!(
                    !r.status.is_server_error(),
                    "{what}: {} {}",
                    r.status,
                    r.body
                );
                if r.status == StatusCode::BAD_REQUEST && r.body.contains("is malformed") {
                    malformed_seen += 1;
                    assert!(r.body.starts_with("{\"Invalid\":"), "{what}: {}", r.body);
                }
                if body.len() > 2 << 20 && r.status == StatusCode::PAYLOAD_TOO_LARGE {
                    assert!(
                        r.body.contains("too large") || r.body.contains("TooLarge"),
                        "{what}: {}",
                        r.body
                    );
                }
            }
        }
    }
    assert!(
        malformed_seen > paths.len(),
        "only {malformed_seen} malformed answers"
    );
    assert_eq!(common::snapshot(&s.pool).await, before);
    // The body over the limit is refused as too large, not as a server failure.
    let mut big = b"{\"study_id\": 1, \"client_id\": \"".to_vec();
    big.extend(std::iter::repeat_n(b'x', 3 << 20));
    big.extend(b"\"}");
    let r = call_fn(
        s,
        "submit_answer",
        "application/json",
        String::from_utf8(big).unwrap(),
        Some(&ada),
    )
    .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    for (content_type, body) in bodies() {
        let req = Request::post("/api/logout")
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap();
        assert!(!send(s, req).await.status.is_server_error());
    }
}
