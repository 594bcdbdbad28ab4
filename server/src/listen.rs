//! The server's socket: every connection under hyper's header-read time-out (a half-sent request
//! or an idle keep-alive is closed), request bodies under an idle time-out, and at most N open
//! connections per client address, so that slow or many connections from one address cannot
//! hold the server; and a budget of connections in total, below the descriptors the process
//! may open, so that many addresses cannot take the descriptors the database and files need
//! (the excess is answered 503 and closed). `axum::serve` offers none of these.

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
    /// Open connections in all; a further one is answered 503 and closed (see `budget`).
    pub total: usize,
}

/// Descriptors kept for the database (SQLite: three per connection), spooled exports, the log
/// and the blocking pool, whatever the connections do: at least this many, or a quarter.
const RESERVE: u64 = 128;

/// Connections in total by default, however many descriptors the system allows (each costs
/// memory: hyper's buffers and a task).
const MOST_CONNECTIONS: u64 = 16_384;

/// Raises this process's soft limit of open descriptors to the hard one (commonly 1,024 soft
/// and far more hard) and returns the connection budget under it: the limit less the reserve,
/// at most `MOST_CONNECTIONS`. Where the limit cannot be read, the budget of a 1,024 limit.
pub fn budget() -> usize {
    let limit = raise_descriptor_limit().unwrap_or(1024);
    let reserve = RESERVE.max(limit / 4);
    limit.saturating_sub(reserve).clamp(16, MOST_CONNECTIONS) as usize
}

#[cfg(unix)]
fn raise_descriptor_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct given; no other memory.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    Some(lim.rlim_cur)
}

#[cfg(not(unix))]
fn raise_descriptor_limit() -> Option<u64> {
    None
}

/// What a connection over the total budget is sent before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nConnection: close\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 55\r\n\r\n\
The server is at its limit of connections: retry soon.\n";

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
        // Over an address's cap: the socket is dropped (closed) before anything is read from
        // it. Over the total: told so in one write that never waits (a fresh socket's buffer
        // takes it), then closed.
        let slot = match open.take(peer.ip(), limits) {
            Ok(slot) => slot,
            Err(Over::Address) => {
                tracing::debug!("{peer}: over {:?} connections", limits.per_address);
                continue;
            }
            Err(Over::Total) => {
                tracing::debug!("{peer}: over {} connections in all", limits.total);
                let _ = stream.try_write(BUSY);
                continue;
            }
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

/// Open connections per address (an address with none has no entry: bounded by what is open),
/// and in all.
#[derive(Clone, Default)]
struct Open(Arc<Mutex<Counts>>);

#[derive(Default)]
struct Counts {
    by_address: HashMap<IpAddr, usize>,
    total: usize,
}

/// Which cap a refused connection met.
#[derive(Debug, PartialEq)]
enum Over {
    Address,
    Total,
}

/// One open connection of an address, counted until dropped.
struct Slot {
    open: Open,
    ip: IpAddr,
}

impl Open {
    fn take(&self, ip: IpAddr, limits: Limits) -> Result<Slot, Over> {
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if counts.total >= limits.total {
            return Err(Over::Total);
        }
        let n = counts.by_address.entry(ip).or_insert(0);
        if limits.per_address.is_some_and(|cap| *n >= cap) {
            return Err(Over::Address);
        }
        *n += 1;
        counts.total += 1;
        Ok(Slot {
            open: self.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.open.0.lock().unwrap_or_else(|p| p.into_inner());
        counts.total -= 1;
        if let Some(n) = counts.by_address.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                counts.by_address.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Limits, Open, Over};
    use std::net::IpAddr;
    use std::time::Duration;

    fn limits(per_address: Option<usize>, total: usize) -> Limits {
        Limits {
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            per_address,
            total,
        }
    }

    #[test]
    fn an_address_holds_at_most_its_cap_and_a_closed_connection_frees_its_slot() {
        let open = Open::default();
        let cap = limits(Some(3), 100);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let held: Vec<_> = (0..3).map(|_| open.take(a, cap).unwrap()).collect();
        assert_eq!(open.take(a, cap).err(), Some(Over::Address));
        let other = open.take(b, cap);
        assert!(other.is_ok(), "another address is not affected");
        drop(held);
        assert!(open.take(a, cap).is_ok());
        drop(other);
        // Addresses with nothing open leave no entry behind (the map stays bounded).
        assert!(open.0.lock().unwrap().by_address.is_empty());
        assert_eq!(open.0.lock().unwrap().total, 0);
        assert!(open.take(a, limits(None, 100)).is_ok());
    }

    #[test]
    fn connections_in_all_stay_within_the_budget_whatever_their_addresses() {
        let open = Open::default();
        let cap = limits(Some(2), 5);
        let held: Vec<_> = (1..=5)
            .map(|i| open.take(IpAddr::from([10, 0, 0, i]), cap).unwrap())
            .collect();
        let sixth = IpAddr::from([10, 0, 0, 6]);
        assert_eq!(open.take(sixth, cap).err(), Some(Over::Total));
        drop(held);
        assert!(open.take(sixth, cap).is_ok());
    }

    #[test]
    fn the_refusal_is_a_whole_503() {
        let text = std::str::from_utf8(super::BUSY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(
            head.contains(&format!("Content-Length: {}", body.len())),
            "{head}"
        );
    }

    #[test]
    fn the_budget_keeps_a_reserve_below_the_descriptor_limit() {
        let limit = super::raise_descriptor_limit().unwrap();
        let budget = super::budget() as u64;
        assert!(
            budget + super::RESERVE <= limit.max(super::RESERVE + 16),
            "{budget} of {limit}"
        );
        assert!(budget <= super::MOST_CONNECTIONS);
    }
}
