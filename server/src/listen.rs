//! The server's socket: every connection under hyper's header-read time-out (a half-sent request
//! or an idle keep-alive is closed), request bodies under an idle time-out, and at most N open
//! connections per client address (below a quarter of the budget), so that slow or many
//! connections from one address cannot hold the server; and a budget of connections in total,
//! below the descriptors the process may open, so that many addresses cannot take the
//! descriptors the database and files need. When the budget is full a newcomer takes the place
//! of the connection that has waited longest (a half-sent request or an idle keep-alive); only
//! where every connection is busy is it answered 503 and closed. `axum::serve` offers none of
//! these.

mod open;
mod track;

use axum::extract::connect_info::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use open::{Open, Over};
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;
use track::{TrackedBody, TrackedIo};

/// How connections are held.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A request's headers must arrive within this time, and an idle keep-alive connection is
    /// closed after it.
    pub header_timeout: Duration,
    /// A request body that sends nothing for this long is cut off (the handler reads an
    /// error and answers 400).
    pub body_timeout: Duration,
    /// Open connections one address may hold (at most a quarter of `total`: see
    /// `address_cap`); a further one is closed at once. `None`: no cap (behind a proxy, whose
    /// own address every connection has).
    pub per_address: Option<usize>,
    /// Open connections in all (see `budget`). A further one takes the place of the one that
    /// has waited longest; where every one is busy it is answered 503 and closed.
    pub total: usize,
}

impl Limits {
    /// The cap of one address in force: `per_address`, but at most a quarter of the budget (and
    /// at least 1), so that one address never holds the budget, even at a low descriptor limit
    /// (256 descriptors: a budget of 128, which the default cap of 256 would not bound).
    pub fn address_cap(&self) -> Option<usize> {
        self.per_address.map(|cap| cap.min((self.total / 4).max(1)))
    }
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
        // it. Over the total with every connection busy: told so in one write that never waits
        // (a fresh socket's buffer takes it), then closed.
        let (slot, closed) = match open.take(peer.ip(), limits) {
            Ok(taken) => taken,
            Err(Over::Address) => {
                tracing::debug!("{peer}: over {:?} connections", limits.address_cap());
                continue;
            }
            Err(Over::Total) => {
                tracing::debug!("{peer}: {} connections in all, all busy", limits.total);
                let _ = stream.try_write(BUSY);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // Busy from the moment a request's headers are in and it goes to the app, until its
        // answer is all written (its body done, then a flush that completes).
        let (busy, answered) = (slot.clone(), slot.clone());
        let service = app
            .clone()
            .map_request(move |mut req: axum::http::Request<Incoming>| {
                busy.busy();
                req.extensions_mut().insert(ConnectInfo(peer));
                req.map(|body| axum::body::Body::new(TimeoutBody::new(limits.body_timeout, body)))
            })
            .map_response(move |res: axum::response::Response| {
                res.map(|body| TrackedBody::new(body, answered.clone()))
            });
        let io = TrackedIo::new(stream, slot);
        let conn = builder.serve_connection(io, TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        // Dropping the connection closes its socket: at its end, or when it has waited longest
        // and a newcomer needs its place (its registry entry is dropped, and `closed` with it).
        tokio::spawn(async move {
            tokio::select! {
                ended = conn => if let Err(e) = ended {
                    tracing::debug!("{peer}: connection ended: {e}");
                },
                _ = closed => tracing::debug!("{peer}: closed to make room"),
            }
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

#[cfg(test)]
mod tests {
    use super::Limits;
    use std::time::Duration;

    #[test]
    fn an_address_is_capped_below_the_budget() {
        let limits = |per_address, total| Limits {
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            per_address,
            total,
        };
        // `ulimit -n 256`: a budget of 128, which the default cap of 256 would not bound.
        assert_eq!(limits(Some(256), 128).address_cap(), Some(32));
        assert_eq!(limits(Some(256), 16_384).address_cap(), Some(256));
        assert_eq!(limits(Some(8), 20).address_cap(), Some(5));
        assert_eq!(limits(Some(8), 3).address_cap(), Some(1));
        assert_eq!(limits(None, 128).address_cap(), None);
        for total in 1..300 {
            let cap = limits(Some(usize::MAX), total).address_cap().unwrap();
            assert!(cap >= 1 && (cap < total || total == 1), "{cap} of {total}");
        }
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
