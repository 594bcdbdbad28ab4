//! Slow and many connections as a public server meets them, over raw sockets: a half-sent
//! request, a stalled body and an idle keep-alive are closed within their time-outs, one
//! address holds at most its cap of connections, a worker at another address is served all the
//! while, and a full budget makes room for a newcomer by closing waiting connections, never busy
//! ones.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use axum::body::{Body, Bytes};
use common::spawned::Spawned;
use futures_util::{stream, FutureExt, StreamExt};
use server::listen::{self, Limits};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::Semaphore;

/// A connection to `addr` from the loopback address `from` (127.0.0.x: another client).
async fn connect(from: &str, addr: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(addr.parse().unwrap()).await.unwrap()
}

/// Reads until the server closes the connection (or `limit` passes): what it sent, and when
/// it closed (`None`: still open at the limit).
async fn until_closed(conn: &mut TcpStream, limit: Duration) -> (String, Option<Duration>) {
    let t = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit.saturating_sub(t.elapsed()), conn.read(&mut buf)).await {
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), None),
            Ok(Ok(0)) | Ok(Err(_)) => {
                return (
                    String::from_utf8_lossy(&got).into_owned(),
                    Some(t.elapsed()),
                )
            }
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A whole `GET /` from `from`, closed after the answer: its status line and how long it took.
async fn page(from: &str, addr: &str) -> (String, Duration) {
    let t = Instant::now();
    let mut conn = connect(from, addr).await;
    conn.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (answer, closed) = until_closed(&mut conn, Duration::from_secs(20)).await;
    assert!(closed.is_some(), "the page was answered and closed");
    (answer.lines().next().unwrap_or("").to_string(), t.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_dropped_within_seconds_and_one_address_cannot_hold_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Spawned::start(
        &dir.path().join("t.db"),
        &[
            "--no-demo",
            "--header-timeout",
            "2",
            "--connections-per-address",
            "8",
        ],
    );
    let addr = server.base.trim_start_matches("http://").to_string();

    // Half a request's headers: closed after the 2 s header time-out, not held.
    let mut half = connect("127.0.0.1", &addr).await;
    half.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let (_, closed) = until_closed(&mut half, Duration::from_secs(15)).await;
    let closed = closed.expect("a half-sent request is dropped");
    assert!(
        closed >= Duration::from_millis(1500) && closed < Duration::from_secs(6),
        "{closed:?}"
    );

    // An idle keep-alive connection after its answer: closed as well.
    let mut idle = connect("127.0.0.1", &addr).await;
    idle.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (answer, closed) = until_closed(&mut idle, Duration::from_secs(20)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
    assert!(closed.expect("an idle keep-alive is closed") < Duration::from_secs(8));

    // A body that stops half-way: cut off after the body time-out (3 x the header one),
    // answered with a 4xx, never a 500.
    let mut stalled = connect("127.0.0.1", &addr).await;
    stalled
        .write_all(
            b"POST /api/study_state HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\n\
              Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nstudy_id=1",
        )
        .await
        .unwrap();
    let (answer, closed) = until_closed(&mut stalled, Duration::from_secs(30)).await;
    let closed = closed.expect("a stalled body is dropped");
    assert!(closed < Duration::from_secs(12), "{closed:?}");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "{answer:.300}"
    );

    // One address opens its 8 connections and sends nothing: a 9th is closed at once, while
    // a worker at another address is served in good time.
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(connect("127.0.0.1", &addr).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ninth = connect("127.0.0.1", &addr).await;
    let (sent, closed) = until_closed(&mut ninth, Duration::from_secs(5)).await;
    assert!(sent.is_empty());
    assert!(closed.expect("the 9th connection is closed") < Duration::from_secs(1));
    for _ in 0..5 {
        let (status, took) = page("127.0.0.2", &addr).await;
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    // The held ones time out, and the address is served again.
    for conn in &mut held {
        let (_, closed) = until_closed(conn, Duration::from_secs(15)).await;
        assert!(
            closed.is_some(),
            "a held connection is closed by the time-out"
        );
    }
    let (status, _) = page("127.0.0.1", &addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

/// Opens `n` connections from `from`, each sending half a request's headers; keeps them.
async fn hold_half_sent(from: &str, addr: &str, n: usize, held: &mut Vec<TcpStream>) {
    for _ in 0..n {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
        if let Ok(mut c) = socket.connect(addr.parse().unwrap()).await {
            let _ = c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await;
            held.push(c);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_addresses_holding_half_sent_requests_make_room_for_new_arrivals() {
    let dir = tempfile::tempdir().unwrap();
    // The common `ulimit -n 1024`, made small: 320 descriptors, of which the server keeps 128
    // for the database and files, so 192 connections in all.
    let server = Spawned::start_with(
        &dir.path().join("t.db"),
        &["--header-timeout", "20", "--connections-per-address", "4"],
        Some(320),
    );
    let addr = server.base.trim_start_matches("http://").to_string();
    // 70 addresses, 4 half-sent requests each: 280 connections wanted, over a budget of 192.
    let mut held = Vec::new();
    for i in 0..70 {
        hold_half_sent(&format!("127.0.1.{}", i + 1), &addr, 4, &mut held).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // New arrivals from new addresses take the places of the oldest half-sent requests: the
    // page at once, never a 500 (the descriptors held), and (where a place is wanting) a 503.
    let mut served = 0;
    for i in 0..20 {
        let (status, took) = page(&format!("127.0.2.{}", i + 1), &addr).await;
        assert!(
            status.starts_with("HTTP/1.1 503") || status.starts_with("HTTP/1.1 200"),
            "{status}"
        );
        served += usize::from(status.starts_with("HTTP/1.1 200"));
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    eprintln!("under 280 half-sent requests, {served} of 20 new arrivals served");
    assert!(served >= 18, "{served} of 20 served");
    // The oldest half-sent requests were closed to make room.
    let (_, closed) = until_closed(&mut held[0], Duration::from_secs(2)).await;
    assert!(closed.is_some(), "the oldest half-sent request is closed");
    drop(held);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _) = page("127.0.3.1", &addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

/// `listen::serve` itself on a free port, `total` connections in all, no time-out met in a test:
/// `/` answers at once; `/hold` answers once `release` gives it a permit; `/slow` sends a first
/// part, then the rest once given a permit. Each request to these two adds a permit to `entered`.
struct InProcess {
    addr: String,
    release: Arc<Semaphore>,
    entered: Arc<Semaphore>,
}

async fn in_process(total: usize) -> InProcess {
    use axum::routing::get;
    let (release, entered) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let (r, e) = (release.clone(), entered.clone());
    let wait = move || {
        let (r, e) = (r.clone(), e.clone());
        async move {
            e.add_permits(1);
            r.acquire().await.unwrap().forget();
        }
    };
    let hold = wait.clone();
    let app = axum::Router::new()
        .route("/", get(|| async { "the page\n" }))
        .route("/hold", get(move || hold().then(|()| async { "held\n" })))
        .route(
            "/slow",
            get(move || {
                let rest = stream::once(wait().map(|()| Ok(Bytes::from("the rest\n"))));
                let first = stream::iter([Ok::<_, Infallible>(Bytes::from("first part\n"))]);
                async move { Body::from_stream(first.chain(rest)) }
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let limits = Limits {
        header_timeout: Duration::from_secs(60),
        body_timeout: Duration::from_secs(60),
        per_address: Some(8),
        total,
    };
    tokio::spawn(listen::serve(listener, app, limits, std::future::pending()));
    InProcess {
        addr,
        release,
        entered,
    }
}

impl InProcess {
    /// Waits until `n` more requests are in the app.
    async fn entered(&self, n: u32) {
        let permits = tokio::time::timeout(Duration::from_secs(5), self.entered.acquire_many(n));
        permits
            .await
            .expect("the requests reached the app")
            .unwrap()
            .forget();
    }
}

/// Reads until `marker` has come (in 5 s); what came.
async fn read_until(conn: &mut TcpStream, marker: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(marker) {
        let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("{marker:?} came: {:?}", String::from_utf8_lossy(&got)))
            .unwrap();
        assert!(n > 0, "closed before {marker:?}");
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_full_of_half_sent_requests_makes_room_and_a_slow_answer_is_not_cut() {
    let server = in_process(20).await;
    let addr = &server.addr;
    // An answer under way: its first part sent, the rest to come.
    let mut slow = connect("127.0.3.1", addr).await;
    slow.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let first = read_until(&mut slow, "first part").await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // The rest of the budget: 19 half-sent requests from 10 addresses (at most 5 each, a
    // quarter of the budget).
    let mut held = Vec::new();
    for i in 0..19 {
        hold_half_sent(&format!("127.0.1.{}", i % 10 + 1), addr, 1, &mut held).await;
    }
    assert_eq!(held.len(), 19);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // New arrivals take the places of the oldest half-sent requests.
    let mut served = 0;
    for i in 0..20 {
        let (status, took) = page(&format!("127.0.2.{}", i + 1), addr).await;
        served += usize::from(status.starts_with("HTTP/1.1 200"));
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    assert!(served >= 18, "{served} of 20 served");
    let (_, closed) = until_closed(&mut held[0], Duration::from_secs(2)).await;
    assert!(closed.is_some(), "the oldest half-sent request made room");
    // The slow answer was never cut: its rest comes once released, and it ends whole.
    server.release.add_permits(1);
    let (rest, closed) = until_closed(&mut slow, Duration::from_secs(5)).await;
    assert!(closed.is_some());
    assert!(
        rest.contains("the rest") && rest.ends_with("0\r\n\r\n"),
        "{rest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_makes_room_and_only_a_budget_all_busy_refuses() {
    let server = in_process(4).await;
    let addr = &server.addr;
    // A keep-alive connection, answered and idle.
    let mut idle = connect("127.0.4.5", addr).await;
    idle.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    read_until(&mut idle, "the page").await;
    // Three requests in the app.
    let hold = b"GET /hold HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let mut holds = Vec::new();
    for i in 1..=3 {
        let mut conn = connect(&format!("127.0.4.{i}"), addr).await;
        conn.write_all(hold).await.unwrap();
        holds.push(conn);
    }
    server.entered(3).await;
    // A newcomer takes the idle connection's place.
    let (status, _) = page("127.0.4.9", addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let (_, closed) = until_closed(&mut idle, Duration::from_secs(2)).await;
    assert!(closed.is_some(), "the idle keep-alive made room");
    // A fourth request in the app: all four busy, a newcomer is refused at once.
    let mut conn = connect("127.0.4.4", addr).await;
    conn.write_all(hold).await.unwrap();
    holds.push(conn);
    server.entered(1).await;
    let (status, took) = page("127.0.4.10", addr).await;
    assert!(status.starts_with("HTTP/1.1 503"), "{status}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    // None of the busy ones was cut: each is answered once released.
    server.release.add_permits(4);
    for conn in &mut holds {
        let (answer, closed) = until_closed(conn, Duration::from_secs(5)).await;
        assert!(closed.is_some());
        assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("held\n"));
    }
    let (status, _) = page("127.0.4.11", addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}
