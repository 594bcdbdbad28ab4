//! The server's socket: every connection under hyper's header-read time-out (a half-sent request
//! or an idle keep-alive is closed), request bodies under an idle time-out, and at most N open
//! connections per client address, so that slow or many connections from one address cannot
//! hold the server. `axum::serve` offers none of these.

use axum::extract::connect_info::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;

/// How connections are held.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A request's headers must arrive within this time, and an idle keep-alive connection is
    /// closed after it.
    pub header_timeout: Duration,
    /// A request body that sends nothing for this long is cut off (the handler reads an
    /// error and answers 400).
    pub body_timeout: Duration,
    /// Open connections one address may hold; a further one is closed at once. `None`: no cap
    /// (behind a proxy, whose own address every connection has).
    pub per_address: Option<usize>,
}

/// Serves `app` on `listener` until `stop` completes; then takes no new connection and waits
/// for the requests in flight.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    // HTTP/1 only: browsers and proxies speak it to a plain-HTTP upstream, and its header
    // time-out runs from the moment a connection opens and again whenever it is idle
    // (hyper-util's auto builder waits for a first byte with no time-out at all).
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let open = Open::default();
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // Over the cap: the socket is dropped (closed) before anything is read from it.
        let Some(slot) = open.take(peer.ip(), limits.per_address) else {
            tracing::debug!("{peer}: over {:?} connections", limits.per_address);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = app
            .clone()
            .map_request(move |mut req: axum::http::Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req.map(|body| axum::body::Body::new(TimeoutBody::new(limits.body_timeout, body)))
            });
        let conn =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("{peer}: connection ended: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// An accept that failed: a connection reset before it was taken is skipped; running out of
/// file descriptors (or another failure of the listener) is logged and waited out briefly.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused
    ) {
        return;
    }
    tracing::warn!("accepting a connection failed: {e}");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Open connections per address; an address with none has no entry (bounded by what is open).
#[derive(Clone, Default)]
struct Open(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// One open connection of an address, counted until dropped.
struct Slot {
    open: Open,
    ip: IpAddr,
}

impl Open {
    fn take(&self, ip: IpAddr, cap: Option<usize>) -> Option<Slot> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(ip).or_insert(0);
        if cap.is_some_and(|cap| *n >= cap) {
            return None;
        }
        *n += 1;
        Some(Slot {
            open: self.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut map = self.open.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Open;
    use std::net::IpAddr;

    #[test]
    fn an_address_holds_at_most_its_cap_and_a_closed_connection_frees_its_slot() {
        let open = Open::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let held: Vec<_> = (0..3).map(|_| open.take(a, Some(3)).unwrap()).collect();
        assert!(open.take(a, Some(3)).is_none());
        let other = open.take(b, Some(3));
        assert!(other.is_some(), "another address is not affected");
        drop(held);
        assert!(open.take(a, Some(3)).is_some());
        drop(other);
        // Addresses with nothing open leave no entry behind (the map stays bounded).
        assert!(open.0.lock().unwrap().is_empty());
        assert!(open.take(a, None).is_some());
    }
}
