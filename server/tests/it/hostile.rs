//! Hostile clients: study links and sign-ins that only count when posted from our own page,
//! address limits on new workers, bounded sessions per crowd id, cookies behind a proxy,
//! request lines that are not paths, a crash during the demo load, and an import while a
//! study is under crowd load.
use crate::common;

use app::ssr::limits::{Lane, Limiter, Limits};
use app::ssr::state::AppState;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use common::client::*;
use std::sync::Arc;
use std::time::Duration;
use store::db::cli as db;

/// A study link's Start as the start page's script sends it (`script=1`), with `headers`.
fn post(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut req =
        Request::post(path).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.body(Body::from("script=1")).unwrap()
}

/// Each call (server function, content type, body) posted in `cookie`'s name as another site's
/// page would send it, as a browser says so: a cross-site page, a sibling subdomain's (same-site
/// is another site too), a sandboxed frame or a data: page (`Origin: null`), a foreign
/// `Origin`. Every one is refused 403, naming another site.
async fn refused_from_other_sites(s: &AppState, cookie: &str, calls: &[(&str, &str, &str)]) {
    for site in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("sec-fetch-site", "same-site")][..],
        &[("host", "lab.example"), ("origin", "null")][..],
        &[("host", "lab.example"), ("origin", "https://evil.example")][..],
    ] {
        for (name, content_type, body) in calls {
            let r = send(s, call_from(name, content_type, body, cookie, site)).await;
            assert_eq!(
                r.status,
                StatusCode::FORBIDDEN,
                "{name} {site:?}: {}",
                r.body
            );
            assert!(r.body.contains("another site"), "{}", r.body);
        }
    }
}

/// A server function called in `cookie`'s name with a body of `content_type`, with the headers
/// `site` (what a browser says of the page that sent it).
fn call_from(
    name: &str,
    content_type: &str,
    body: &str,
    cookie: &str,
    site: &[(&str, &str)],
) -> Request<Body> {
    let mut req = Request::post(format!("/api/{name}"))
        .header(header::CONTENT_TYPE, content_type)
        .header(header::COOKIE, cookie);
    for (k, v) in site {
        req = req.header(*k, *v);
    }
    req.body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn a_study_link_takes_a_place_only_when_its_start_page_is_posted_from_our_site() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let link = format!("/join/{id}?PROLIFIC_PID=prefetched&STUDY_ID=s&SESSION_ID=x");
    let before = common::snapshot(&s.pool).await;
    // A link preview or prefetch (GET) gets the start page and changes nothing.
    for _ in 0..3 {
        let r = get(s, &link, None).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.body.contains("<button type=\"submit\""), "{}", r.body);
        assert!(r.cookie.is_none());
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    // A form on another site posting the link is refused.
    for headers in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("host", "lab.example"), ("origin", "https://evil.example")][..],
    ] {
        let r = send(s, post(&link, headers)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        assert!(r.cookie.is_none());
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    // Our own start page in a browser without JavaScript (the form posts without the script's
    // mark): no place, no account, and the page says why.
    let no_script = Request::post(&link)
        .header("sec-fetch-site", "same-origin")
        .body(Body::empty())
        .unwrap();
    let r = send(s, no_script).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.body.contains("needs JavaScript"), "{}", r.body);
    assert!(r.cookie.is_none());
    assert_eq!(common::snapshot(&s.pool).await, before);
    // From our own start page it takes the place.
    let r = send(s, post(&link, &[("sec-fetch-site", "same-origin")])).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(places(s, id).await.len(), 1);
    // A missing study: 404 for both, nothing made.
    let before = common::snapshot(&s.pool).await;
    for r in [
        get(s, "/join/999?PROLIFIC_PID=w1", None).await,
        send(s, post("/join/999?PROLIFIC_PID=w1", &[])).await,
    ] {
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
}

#[tokio::test]
async fn one_address_cannot_take_every_place_and_returning_workers_are_not_counted() {
    let mut e = env().await;
    e.state.limiter = Arc::new(Limiter::new(Limits {
        joins_per_client: (3, Duration::from_secs(3600)),
        ..Limits::default()
    }));
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 12).await;
    let first = arrive(s, id, "squat-1").await;
    arrive(s, id, "squat-2").await;
    arrive(s, id, "squat-3").await;
    let before = common::snapshot(&s.pool).await;
    let r = join_link(s, &format!("/join/{id}?PROLIFIC_PID=squat-4")).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    let wait: u64 = r.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&wait), "{wait}");
    assert!(
        r.body.contains("Too many new workers from your address"),
        "{}",
        r.body
    );
    assert_eq!(common::snapshot(&s.pool).await, before);
    assert_eq!(places(s, id).await.len(), 3);
    // A worker who started comes back to their place whatever the limit.
    let again = arrive(s, id, "squat-1").await;
    assert_ne!(again, first);
    assert_eq!(places(s, id).await.len(), 3);
}

#[tokio::test]
async fn new_crowd_ids_at_a_full_study_make_no_accounts() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 1).await;
    let first = arrive(s, id, "the-one").await;
    let before = common::snapshot(&s.pool).await;
    for i in 0..27 {
        let r = join_link(s, &format!("/join/{id}?PROLIFIC_PID=crowd-{i}")).await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
        assert!(r.body.contains("All places in this study are taken"));
        assert!(r.cookie.is_none());
    }
    assert_eq!(
        common::snapshot(&s.pool).await,
        before,
        "no users, no sessions"
    );
    // The worker who holds the place comes back to it.
    arrive(s, id, "the-one").await;
    assert_eq!(state_of(s, id, &first).await.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_of_new_crowd_ids_makes_accounts_for_the_places_only() {
    let mut e = env().await;
    e.state.limiter = Arc::new(Limiter::new(Limits {
        joins_per_client: (1000, Duration::from_secs(1)),
        ..Limits::default()
    }));
    // Three places, 60 new workers pressing Start at once (each passes the free-place check
    // before the first place is taken).
    let id = new_study(&e.state, "demo-SST-2", &[0], 3).await;
    let arrivals: Vec<_> = (0..60)
        .map(|w| {
            let s = e.state.clone();
            tokio::spawn(async move {
                join_post(&s, &format!("/join/{id}?PROLIFIC_PID=burst-{w}")).await
            })
        })
        .collect();
    let mut seated = 0;
    for a in arrivals {
        let r = a.await.unwrap();
        match r.status {
            StatusCode::SEE_OTHER => {
                assert!(r.cookie.is_some());
                seated += 1;
            }
            StatusCode::CONFLICT => {
                assert!(r.cookie.is_none());
                assert!(
                    r.body.contains("All places in this study are taken"),
                    "{}",
                    r.body
                );
            }
            other => panic!("{other}: {}", r.body),
        }
    }
    assert_eq!(seated, 3);
    let count = |sql: &'static str| {
        let pool = e.state.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        count("SELECT COUNT(*) FROM users WHERE name LIKE 'prolific:burst-%'").await,
        3
    );
    assert_eq!(count("SELECT COUNT(*) FROM crowd_ids").await, 3);
    assert_eq!(count("SELECT COUNT(*) FROM sessions").await, 3);
    assert_eq!(places(&e.state, id).await.len(), 3);
}

#[tokio::test]
async fn cookies_are_secure_over_https_as_a_trusted_proxy_says_and_not_otherwise() {
    let mut e = env().await;
    let link = |id: domain::ids::StudyId, pid: &str| format!("/join/{id}?PROLIFIC_PID={pid}");
    let id = new_study(&e.state, "demo-SST-2", &[0], 5).await;
    let https = [
        ("x-forwarded-proto", "https"),
        ("x-forwarded-for", "10.0.0.7"),
    ];
    let cookie_of = |r: &Resp| r.headers[header::SET_COOKIE].to_str().unwrap().to_string();
    // Not trusted: the header is ignored.
    let r = send(&e.state, post(&link(id, "p1"), &https)).await;
    assert!(!cookie_of(&r).contains("Secure"), "{}", cookie_of(&r));
    e.state.trust_proxy = true;
    let r = send(&e.state, post(&link(id, "p2"), &https)).await;
    assert!(cookie_of(&r).contains("; Secure"), "{}", cookie_of(&r));
    let r = send(&e.state, post(&link(id, "p3"), &[])).await;
    assert!(!cookie_of(&r).contains("Secure"));
}

#[tokio::test]
async fn a_sign_in_sent_by_another_sites_page_is_refused() {
    let e = env().await;
    let s = &e.state;
    common::add_users(&s.pool, &[("staffer", domain::people::Role::Researcher)]).await;
    let body = "name=staffer&password=staffer-password";
    let login_req = |headers: &[(&str, &str)]| {
        let mut req = Request::post("/api/login")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.body(Body::from(body)).unwrap()
    };
    let before = common::snapshot(&s.pool).await;
    // A form on another site posting the attacker's credentials (login CSRF): no session.
    for headers in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("host", "lab.example"), ("origin", "https://evil.example")][..],
    ] {
        let r = send(s, login_req(headers)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        assert!(r.cookie.is_none());
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    // The site's own sign-in page still signs in.
    let r = send(s, login_req(&[("sec-fetch-site", "same-origin")])).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.cookie.is_some());
}

/// A server behind a trusted proxy (the client address is X-Forwarded-For's) with `limits`,
/// and an admin "owner".
async fn owner_behind_a_proxy(limits: Limits) -> Env {
    let mut e = env().await;
    e.state.trust_proxy = true;
    e.state.limiter = Arc::new(Limiter::new(limits));
    common::add_users(&e.state.pool, &[("owner", domain::people::Role::Admin)]).await;
    e
}

/// A sign-in as `name` from the address `from` (through the proxy).
fn sign_in_from(name: &str, from: &str, password: &str) -> Request<Body> {
    Request::post("/api/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header("x-forwarded-for", from)
        .body(Body::from(format!("name={name}&password={password}")))
        .unwrap()
}

#[tokio::test]
async fn a_flood_on_a_staff_name_does_not_lock_out_its_owner_at_their_address() {
    let e = owner_behind_a_proxy(Limits {
        login_per_account: (4, Duration::from_secs(3600)),
        ..Limits::default()
    })
    .await;
    let s = &e.state;
    let sign_in = |from: &str, password: &str| sign_in_from("owner", from, password);
    // The owner signs in from their address once.
    let r = send(s, sign_in("10.0.0.2", "owner-password")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Someone floods the name with wrong passwords from another address until refused.
    let mut refused = false;
    for _ in 0..6 {
        let r = send(s, sign_in("10.0.0.66", "guess")).await;
        if r.status == StatusCode::TOO_MANY_REQUESTS {
            refused = true;
            break;
        }
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    }
    assert!(refused, "the flood was throttled");
    // The right password from a new address waits like the flood; from the owner's it works.
    let r = send(s, sign_in("10.0.0.9", "owner-password")).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    let r = send(s, sign_in("10.0.0.2", "owner-password")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.cookie.is_some());
}

/// [`owner_behind_a_proxy`] where one password is checked at a time and none waits.
async fn one_check_at_a_time_and_no_queue() -> Env {
    let limits = Limits {
        password_checks: 1,
        password_queue: 0,
        ..Limits::default()
    };
    owner_behind_a_proxy(limits).await
}

#[tokio::test]
async fn a_flood_of_made_up_names_does_not_queue_out_the_owner_at_their_address() {
    let e = one_check_at_a_time_and_no_queue().await;
    let s = &e.state;
    let sign_in = sign_in_from;
    let r = send(s, sign_in("owner", "10.0.0.2", "owner-password")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // A flood of made-up names holds every password check and fills the common queue.
    let held = s.limiter.password_turn(Lane::Anyone).await.unwrap();
    let r = send(s, sign_in("made-up-7", "10.0.0.66", "guess")).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    // The right password from a new address waits like the flood; the owner at their own
    // address has a lane of their own.
    let r = send(s, sign_in("owner", "10.0.0.9", "owner-password")).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    let r = send(s, sign_in("owner", "10.0.0.2", "owner-password")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.cookie.is_some());
    drop(held);
}

/// A client that hangs up in the middle of its password check: the check keeps its turn until
/// its hash is done (the bound on checks at once bounds their memory and CPU only so), then
/// frees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_dropped_mid_check_keeps_its_turn_until_the_hash_is_done() {
    use std::future::Future;
    let e = one_check_at_a_time_and_no_queue().await;
    let s = &e.state;
    // With no queue, a turn asked for is had at once or refused at once.
    let turn_held = || async { s.limiter.password_turn(Lane::Anyone).await.is_err() };
    let mut signing = Box::pin(send_inner(
        s,
        sign_in_from("made-up-9", "10.0.0.66", "guess"),
    ));
    let start = std::time::Instant::now();
    loop {
        let poll = |cx: &mut std::task::Context<'_>| {
            std::task::Poll::Ready(signing.as_mut().poll(cx).is_ready())
        };
        assert!(
            !std::future::poll_fn(poll).await,
            "answered before its check was seen"
        );
        if turn_held().await {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no check began");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    drop(signing);
    assert!(turn_held().await, "the turn was freed with the request");
    while turn_held().await {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the turn was never freed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_known_crowd_id_joining_again_and_again_keeps_a_bounded_number_of_sessions() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let first = arrive(s, id, "rejoiner").await;
    // Sessions are stamped in seconds: the first one is made a minute older than the rest.
    sqlx::query("UPDATE sessions SET created_at = created_at - 60")
        .execute(&s.pool)
        .await
        .unwrap();
    let mut last = first.clone();
    for _ in 0..40 {
        last = arrive(s, id, "rejoiner").await;
    }
    let rows: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.name = 'prolific:rejoiner'",
    )
    .fetch_one(&s.pool)
    .await
    .unwrap();
    assert_eq!(rows, store::auth::SESSIONS_PER_USER);
    // The newest session works; the oldest was ended.
    assert_eq!(state_of(s, id, &last).await.status, StatusCode::OK);
    assert_eq!(
        state_of(s, id, &first).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(places(s, id).await.len(), 1);
}

#[test]
fn request_targets_that_are_not_paths_get_400_not_a_closed_connection() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let server = common::spawned::Spawned::start(&dir.path().join("t.db"), &["--no-demo"]);
    let addr = server.base.trim_start_matches("http://").to_string();
    for target in [".", "..", "example.com:80", "*"] {
        let mut conn = std::net::TcpStream::connect(&addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            conn,
            "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        let _ = conn.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 400"),
            "GET {target}: {answer:?}"
        );
    }
    // The server is still there and answers an ordinary request.
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        conn,
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
}

#[tokio::test]
async fn a_demo_load_cut_short_is_completed_by_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("d.db"));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let whole = common::snapshot(&pool).await;
    // As if the first start had died after the tasks were stored: no runs, no partition,
    // no demo studies.
    for sql in [
        "DELETE FROM crossfit_runs WHERE id > (SELECT MIN(id) + 6 FROM crossfit_runs)",
        "DELETE FROM crossfit_partitions",
        "DELETE FROM study_configs",
        "DELETE FROM studies",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    assert_ne!(common::snapshot(&pool).await, whole);
    server::demo::ensure_demo(&pool).await.unwrap();
    let again = common::snapshot(&pool).await;
    let counts = |s: &[(String, String)]| s.iter().take(19).cloned().collect::<Vec<_>>();
    assert_eq!(counts(&again), counts(&whole));
    // And a complete demo is left alone.
    server::demo::ensure_demo(&pool).await.unwrap();
    assert_eq!(common::snapshot(&pool).await, again);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_import_during_a_forty_worker_study_succeeds() {
    let mut e = env().await;
    // Forty workers from one (in-process) address.
    e.state.limiter = Arc::new(Limiter::new(Limits {
        joins_per_client: (100, Duration::from_secs(1)),
        ..Limits::default()
    }));
    let id = new_study(&e.state, "demo-SST-2", &[0, 2], 40).await;
    let workers: Vec<_> = (0..40)
        .map(|w| {
            let s = e.state.clone();
            tokio::spawn(async move {
                let r = join_post(&s, &format!("/join/{id}?PROLIFIC_PID=busy-{w}")).await;
                assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
                skip_to_the_end(&s, id, &r.cookie.unwrap()).await;
            })
        })
        .collect();
    // Meanwhile, ten imports of new tasks (the demo's files under other names).
    for round in 0..10 {
        let tasks = server::demo::demo_tasks()
            .unwrap()
            .into_iter()
            .map(|mut t| {
                t.spec.name = format!("copy{round}-{}", t.spec.name);
                t
            })
            .collect();
        server::clues::import_tasks(&e.state.pool, tasks, "test")
            .await
            .unwrap_or_else(|err| panic!("import {round} during the study: {err}"));
    }
    for w in workers {
        w.await.unwrap();
    }
    let finished: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments WHERE study_id = $1 AND status = 'finished'",
    )
    .bind(id)
    .fetch_one(&e.state.pool)
    .await
    .unwrap();
    assert_eq!(finished, 40);
}

#[tokio::test]
async fn streamed_exports_come_whole_through_compression() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let cookie = arrive(s, id, "streamed").await;
    skip_to_the_end(s, id, &cookie).await;
    let rita = login(s, "rita", "rita-password").await;
    for file in ["annotations.csv", "annotations.jsonl", "bundle.tar"] {
        let req = Request::get(format!("/export/{file}"))
            .header(header::COOKIE, &rita)
            .header(header::ACCEPT_ENCODING, "br, gzip")
            .body(Body::empty())
            .unwrap();
        // The compression layer polls the body once more after its end.
        let r = send(s, req).await;
        assert_eq!(r.status, StatusCode::OK, "{file}");
        assert_eq!(r.headers[header::CONTENT_ENCODING], "br", "{file}");
        assert!(!r.body.is_empty(), "{file}");
    }
}

/// The machines page's calls that change the queue, posted by another site's page in a signed-in
/// researcher's name: refused 403 and nothing queued, cancelled or retried; `queue_learner`
/// takes JSON only (text/plain, which needs no preflight, gets 415). From our own page they work.
#[tokio::test]
async fn another_sites_page_cannot_queue_cancel_or_retry_jobs_in_a_researchers_name() {
    let mut e = env().await;
    e.state.door = Some(Arc::new(learners::queue::Door));
    let s = &e.state;
    let rita = login(s, "rita", "rita-password").await;
    let task = common::task_id(&s.pool, "demo-SST-2").await;
    let baseline = learners::jobs::grid::Learner::FrozenBaseline;
    let now = (false, &s.clock);
    let job = learners::jobs::grid::enqueue(&s.pool, "b", baseline, None, &[(task, 0, 0)], now)
        .await
        .unwrap()[0];
    let jobs = move || async move {
        sqlx::query_as::<_, (i64, String, Option<String>)>(
            "SELECT id, status, error FROM jobs WHERE kind = 'grid' ORDER BY id",
        )
        .fetch_all(&s.pool)
        .await
        .unwrap()
    };
    let queue = serde_json::json!({ "request": { "tasks": ["demo-SST-2"], "group": null,
        "learner": { "learner": "onnx", "model": "/nowhere", "system": null }, "replace": true } })
    .to_string();
    let this_job = format!("queue=grid&id={job}");
    let form = "application/x-www-form-urlencoded";
    let calls = [
        ("queue_learner", "application/json", queue.as_str()),
        ("cancel_job", form, this_job.as_str()),
        ("retry_job", form, this_job.as_str()),
    ];
    let call = |name: &str, content_type: &str, body: &str, site: &[(&str, &str)]| {
        call_from(name, content_type, body, &rita, site)
    };
    let before = (common::snapshot(&s.pool).await, jobs().await);
    refused_from_other_sites(s, &rita, &calls).await;
    let r = send(s, call("queue_learner", "text/plain", &queue, &[])).await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{}", r.body);
    assert_eq!((common::snapshot(&s.pool).await, jobs().await), before);
    // From the machines page itself: cancelled, then queued again.
    let own = [("sec-fetch-site", "same-origin")];
    let r = send(s, call("cancel_job", form, &this_job, &own)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let cancelled = (
        job,
        "failed".to_string(),
        Some("cancelled by rita".to_string()),
    );
    assert_eq!(jobs().await, vec![cancelled]);
    let r = send(s, call("retry_job", form, &this_job, &own)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(jobs().await, vec![(job, "queued".to_string(), None)]);
}

#[tokio::test]
async fn another_sites_page_cannot_answer_continue_or_take_a_place_in_the_workers_name() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let other = new_study(s, "demo-SQuAD-v2", &[0], 3).await;
    let cookie = arrive(s, id, "csrf-victim").await;
    let st = parse(&state_of(s, id, &cookie).await);
    let pos = st["step"]["Item"]["position"].as_i64().unwrap();
    let answer = submit_body(id, pos, "csrf-1", label("positive")).to_string();
    // What another site's page would send: each call in its own content type and as the
    // text/plain a form or fetch may send without asking first.
    let calls = [
        ("submit_answer", "application/json", answer.clone()),
        ("submit_answer", "text/plain", answer.clone()),
        (
            "continue_study",
            "application/x-www-form-urlencoded",
            format!("study_id={id}&position={pos}"),
        ),
        (
            "study_state",
            "application/x-www-form-urlencoded",
            format!("study_id={other}"),
        ),
        ("study_state", "text/plain", format!("study_id={other}")),
    ];
    let call = |name: &str, content_type: &str, body: &str, site: &[(&str, &str)]| {
        call_from(name, content_type, body, &cookie, site)
    };
    let before = common::snapshot(&s.pool).await;
    let calls: Vec<(&str, &str, &str)> =
        calls.iter().map(|(n, t, b)| (*n, *t, b.as_str())).collect();
    refused_from_other_sites(s, &cookie, &calls).await;
    // Without the browser's headers (an old browser, a script) the content type still has to
    // be the call's own: text/plain is refused, naming what the call takes.
    for (name, content_type, body) in calls.iter().filter(|c| c.1 == "text/plain") {
        let r = send(s, call(name, content_type, body, &[])).await;
        assert_eq!(
            r.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{name}: {}",
            r.body
        );
        assert!(r.body.contains("takes a body of type"), "{}", r.body);
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    assert!(places(s, other).await.is_empty());
    // The worker's own page goes on as before.
    let own = [("sec-fetch-site", "same-origin")];
    let r = send(s, call("submit_answer", "application/json", &answer, &own)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Same-site is refused at sign-in and at a study link too.
    for path in ["/api/login", &format!("/join/{id}?PROLIFIC_PID=sibling")] {
        let mut req = Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header("sec-fetch-site", "same-site");
        if path == "/api/login" {
            req = req.header(header::ACCEPT, "application/json");
        }
        let r = send(s, req.body(Body::from("name=ada&password=x")).unwrap()).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert!(r.cookie.is_none());
    }
}

#[tokio::test]
async fn a_crowd_worker_gets_403_on_the_staff_pages() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let cookie = arrive(s, id, "curious-worker").await;
    for path in [
        "/dashboard",
        "/studies",
        &format!("/studies/{id}"),
        "/machines",
        "/crossfit",
        "/tasks/demo-SST-2",
    ] {
        let r = get(s, path, Some(&cookie)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert!(
            r.body.contains("This page is for researchers and admins"),
            "{}",
            r.body
        );
    }
    // The worker's own page, and staff at the dashboard, as before.
    assert_eq!(
        get(s, &format!("/study/{id}"), Some(&cookie)).await.status,
        StatusCode::OK
    );
    let rita = login(s, "rita", "rita-password").await;
    assert_eq!(
        get(s, "/dashboard", Some(&rita)).await.status,
        StatusCode::OK
    );
    // The machines page's earlier address leads to it.
    let r = get(s, "/models", Some(&rita)).await;
    assert_eq!(r.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(r.headers[header::LOCATION], "/machines");
    assert_eq!(
        get(s, "/machines", Some(&rita)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_frame_that_could_not_keep_its_session_is_told_why_before_anything_is_taken() {
    let mut e = env().await;
    e.state.trust_proxy = true;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let link = format!("/join/{id}?workerId=F1&assignmentId=AF1&hitId=H");
    // MTurk's page frames the link; nginx in front sends X-Forwarded-For but not the scheme.
    let framed = |extra: &[(&str, &str)]| {
        let mut req = Request::get(&link)
            .header("sec-fetch-dest", "iframe")
            .header("sec-fetch-site", "cross-site")
            .header("x-forwarded-for", "203.0.113.9");
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        req.body(Body::empty()).unwrap()
    };
    let before = common::snapshot(&s.pool).await;
    let r = send(s, framed(&[])).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(
        r.body.contains("cannot run inside this frame"),
        "{}",
        r.body
    );
    assert!(
        r.body.contains("does not send X-Forwarded-Proto: https"),
        "{}",
        r.body
    );
    assert!(!r.body.contains("<form"), "{}", r.body);
    assert_eq!(common::snapshot(&s.pool).await, before);
    // With the header the frame gets its Start; opened in a tab of its own, always.
    let r = send(s, framed(&[("x-forwarded-proto", "https")])).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("<form class=\"start\""), "{}", r.body);
    let r = get(s, &link, None).await;
    assert!(r.body.contains("<form class=\"start\""), "{}", r.body);
}

/// A crowd session takes a place only in the study whose link sent it there (issue 54): asking
/// another study's state, or posting another study's link without its crowd ids, takes nothing
/// and says why; its own study goes on.
#[tokio::test]
async fn a_crowd_session_takes_no_place_in_a_study_it_was_not_sent_to() {
    let e = env().await;
    let s = &e.state;
    let mine = new_study(s, "demo-SST-2", &[0], 3).await;
    let other = new_study(s, "demo-SQuAD-v2", &[0], 3).await;
    let w = arrive(s, mine, "sent-here").await;
    let before = common::snapshot(&s.pool).await;
    let r = state_of(s, other, &w).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert!(r.body.contains("no place in this study"), "{}", r.body);
    let page = get(s, &format!("/study/{other}"), Some(&w)).await;
    assert!(
        page.body.contains("no place in this study"),
        "{}",
        page.body
    );
    let link = format!("/join/{other}");
    let start = get(s, &link, Some(&w)).await;
    assert_eq!(start.status, StatusCode::CONFLICT, "{}", start.body);
    assert!(start.body.contains("not sent to this study") && !start.body.contains("<form"));
    let r = send(
        s,
        post(&link, &[("sec-fetch-site", "same-origin"), ("cookie", &w)]),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.body.contains("not sent to this study"), "{}", r.body);
    assert!(places(s, other).await.is_empty());
    assert_eq!(common::snapshot(&s.pool).await, before);
    assert!(parse(&state_of(s, mine, &w).await)["step"]["Item"].is_object());
}
