//! A small blocking HTTP client for load runs (ureq), the crowd worker's calls, and a sampler
//! of the server's resident memory.

use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One answer: status, body, the session cookie it set, `Retry-After`.
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub cookie: Option<String>,
    pub retry_after: Option<String>,
}

/// The longest a download may take (every other request: 120 s).
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// A download as `download_timed` saw it.
pub struct Download {
    pub status: u16,
    pub bytes: u64,
    /// From the request to the first byte of the body, and to its end (ms).
    pub first_byte_ms: f64,
    pub total_ms: f64,
}

pub struct Client {
    agent: ureq::Agent,
    pub base: String,
}

impl Client {
    pub fn new(base: &str) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        Client {
            agent,
            base: base.trim_end_matches('/').to_string(),
        }
    }

    fn reply(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<Reply, String> {
        let mut r = r.map_err(|e| e.to_string())?;
        let header = |name: &str| {
            r.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let cookie = header("set-cookie").map(|c| c.split(';').next().unwrap_or("").to_string());
        let retry_after = header("retry-after");
        let status = r.status().as_u16();
        let body = r
            .body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| e.to_string())?;
        Ok(Reply {
            status,
            body,
            cookie,
            retry_after,
        })
    }

    /// A POST with a body of `content_type`; `headers` are extra (cookie, X-Forwarded-For).
    pub fn post(
        &self,
        path: &str,
        content_type: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("content-type", content_type)
            .header("accept", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Self::reply(req.send(body))
    }

    /// A GET whose body is counted and dropped (exports); returns (status, bytes). A bundle of
    /// 300k rows takes minutes in a debug build, so a download may take up to
    /// `DOWNLOAD_TIMEOUT`.
    pub fn download(&self, path: &str, cookie: &str) -> Result<(u16, u64), String> {
        self.download_timed(path, cookie)
            .map(|d| (d.status, d.bytes))
    }

    /// `download`, with when its first byte of body and its last came.
    pub fn download_timed(&self, path: &str, cookie: &str) -> Result<Download, String> {
        let started = Instant::now();
        let r = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("cookie", cookie)
            .config()
            .timeout_global(Some(DOWNLOAD_TIMEOUT))
            .build()
            .call()
            .map_err(|e| e.to_string())?;
        let status = r.status().as_u16();
        let mut reader = r.into_body().into_reader();
        let mut first = [0u8; 1];
        let got = std::io::Read::read(&mut reader, &mut first).map_err(|e| e.to_string())?;
        let first_byte_ms = ms_since(started);
        let rest = std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| e.to_string())?;
        Ok(Download {
            status,
            bytes: got as u64 + rest,
            first_byte_ms,
            total_ms: ms_since(started),
        })
    }

    /// A GET with the session cookie, its body read whole.
    pub fn get(&self, path: &str, cookie: &str) -> Result<Reply, String> {
        Self::reply(
            self.agent
                .get(format!("{}{path}", self.base))
                .header("cookie", cookie)
                .call(),
        )
    }

    /// A server function with a form body.
    pub fn form(&self, name: &str, body: &str, cookie: &str) -> Result<Reply, String> {
        self.post(
            &format!("/api/{name}"),
            "application/x-www-form-urlencoded",
            body,
            &[("cookie", cookie)],
        )
    }

    /// Signs in with a password; the session cookie.
    pub fn login(&self, name: &str, password: &str) -> Result<String, String> {
        let r = self.post(
            "/api/login",
            "application/x-www-form-urlencoded",
            &format!("name={name}&password={password}"),
            &[],
        )?;
        match (r.status, r.cookie) {
            (200, Some(c)) => Ok(c),
            (s, _) => Err(format!("login as {name}: {s} {}", r.body)),
        }
    }

    /// Follows a study link's Start button (as the start page's script sends it); the
    /// worker's session cookie.
    pub fn join(&self, study: i64, pid: &str) -> Result<String, String> {
        let r = self.post(
            &format!("/join/{study}?PROLIFIC_PID={pid}&STUDY_ID=load&SESSION_ID=s{pid}"),
            "application/x-www-form-urlencoded",
            "script=1",
            &[],
        )?;
        match (r.status, r.cookie) {
            (303, Some(c)) => Ok(c),
            (s, _) => Err(format!("join as {pid}: {s} {}", r.body)),
        }
    }

    /// The worker's view of the study (`WorkerStudy` as JSON).
    pub fn study_state(&self, study: i64, cookie: &str) -> Result<Value, String> {
        let r = self.form("study_state", &format!("study_id={study}"), cookie)?;
        if r.status != 200 {
            return Err(format!("study_state: {} {}", r.status, r.body));
        }
        serde_json::from_str(&r.body).map_err(|e| e.to_string())
    }
}

/// Samples a process's resident memory every 20 ms until dropped; keeps the peak.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    pub fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(rss(pid)));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        RssSampler {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    /// The highest resident size seen so far, in bytes.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Resident bytes of `pid` now (0 where `/proc` does not tell).
pub fn rss(pid: u32) -> u64 {
    crate::memory::resident_bytes(pid).map_or(0, |(now, _)| now)
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// The p-th percentile (0-100) of latencies, nearest rank.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
