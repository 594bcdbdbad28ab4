//! Slow and many connections as a public server meets them, over raw sockets: a half-sent
//! request, a stalled body and an idle keep-alive are closed within their time-outs, one
//! address holds at most its cap of connections, and a worker at another address is served
//! all the while.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use common::spawned::Spawned;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

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
async fn many_addresses_holding_half_sent_requests_get_a_503_never_a_500() {
    let dir = tempfile::tempdir().unwrap();
    // The common `ulimit -n 1024`, made small: 320 descriptors, of which the server keeps 128
    // for the database and files, so 192 connections in all.
    let server = Spawned::start_with(
        &dir.path().join("t.db"),
        &["--header-timeout", "20", "--connections-per-address", "4"],
        Some(320),
    );
    let addr = server.base.trim_start_matches("http://").to_string();
    // A worker's keep-alive connection, open before the flood.
    let mut worker = connect("127.0.0.1", &addr).await;
    // 70 addresses, 4 half-sent requests each: 280 connections wanted.
    let mut held = Vec::new();
    for i in 0..70 {
        hold_half_sent(&format!("127.0.1.{}", i + 1), &addr, 4, &mut held).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The worker keeps being answered on the connection it holds.
    for _ in 0..5 {
        let t = Instant::now();
        worker
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = vec![0u8; 256 * 1024];
        let n = tokio::time::timeout(Duration::from_secs(5), worker.read(&mut buf))
            .await
            .expect("the worker is answered")
            .unwrap();
        let head = String::from_utf8_lossy(&buf[..n]);
        assert!(head.starts_with("HTTP/1.1 200"), "{head:.200}");
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // The rest of the page, so the next answer starts afresh.
        while tokio::time::timeout(Duration::from_millis(100), worker.read(&mut buf))
            .await
            .is_ok_and(|r| r.is_ok_and(|n| n > 0))
        {}
    }
    // New arrivals from new addresses: a clear 503 at once, or (where a place is free) the
    // page; never a 500, never a wait.
    let mut busy = 0;
    for i in 0..20 {
        let (status, took) = page(&format!("127.0.2.{}", i + 1), &addr).await;
        assert!(
            status.starts_with("HTTP/1.1 503") || status.starts_with("HTTP/1.1 200"),
            "{status}"
        );
        busy += usize::from(status.starts_with("HTTP/1.1 503"));
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    assert!(busy > 0, "the budget of 192 was full");
    // Let the flood go: new arrivals are served again.
    drop(held);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _) = page("127.0.3.1", &addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}
