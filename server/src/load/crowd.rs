//! Crowd load: worker threads that join a study and answer item after item as fast as the
//! server allows (a label where the task has labels, else a skip), recording every
//! acknowledged submission, each submit's latency and each arrival's (the join and the first
//! item); a finished worker, or one that leaves after its share of answers, comes back as a new one.

use super::client::{ms_since, percentile, Client};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A submission the server acknowledged (200): which worker, which item, which client id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ack {
    pub pid: String,
    pub position: i64,
    pub client_id: String,
}

#[derive(Default)]
pub struct CrowdStats {
    pub latencies_ms: Vec<f64>,
    /// An arrival: the study link posted, then the first `study_state` (the first item).
    pub arrivals_ms: Vec<f64>,
    pub acks: Vec<Ack>,
    pub errors: Vec<String>,
}

impl CrowdStats {
    /// The slowest acknowledged submission, ms.
    pub fn slowest_ms(&self) -> f64 {
        self.latencies_ms.iter().copied().fold(0.0, f64::max)
    }

    /// Arrivals (join and first item): p50 and p99, ms.
    pub fn arrivals(&self) -> (f64, f64) {
        let mut l = self.arrivals_ms.clone();
        l.sort_by(f64::total_cmp);
        (percentile(&l, 50.0), percentile(&l, 99.0))
    }

    /// `submits/s, p50, p99` over `seconds`.
    pub fn summary(&self, seconds: f64) -> (f64, f64, f64) {
        let mut l = self.latencies_ms.clone();
        l.sort_by(f64::total_cmp);
        (
            l.len() as f64 / seconds,
            percentile(&l, 50.0),
            percentile(&l, 99.0),
        )
    }
}

/// Runs `workers` crowd workers on `study` until `stop` is set; worker ids start with `tag`.
/// `base` may list several servers of one deployment, comma-separated: workers are spread
/// over them in turn, as a load balancer would.
pub fn run(
    base: &str,
    study: i64,
    workers: usize,
    tag: &str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<CrowdStats> {
    run_paced(base, study, workers, tag, stop, None, Duration::ZERO)
}

/// `run`, each worker leaving after `answers` answers (if given) and a new one arriving in its
/// stead (a crowd of many arrivals), and pausing `pause` after each answer, as a person reads
/// the next item (zero: at once, a crowd that takes every cycle it is given).
pub fn run_paced(
    base: &str,
    study: i64,
    workers: usize,
    tag: &str,
    stop: Arc<AtomicBool>,
    answers: Option<usize>,
    pause: Duration,
) -> std::thread::JoinHandle<CrowdStats> {
    let stats = Arc::new(Mutex::new(CrowdStats::default()));
    let bases: Vec<&str> = base.split(',').collect();
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let client = Client::new(bases[w % bases.len()]);
            let (stop, stats) = (stop.clone(), stats.clone());
            let tag = tag.to_string();
            std::thread::spawn(move || {
                let mut round = 0;
                while !stop.load(Ordering::Relaxed) {
                    let pid = format!("{tag}-{w}-{round}");
                    round += 1;
                    let pace = (answers, pause);
                    if let Err(e) = one_worker(&client, study, &pid, pace, &stop, &stats) {
                        stats
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .errors
                            .push(e);
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
            })
        })
        .collect();
    std::thread::spawn(move || {
        for t in threads {
            let _ = t.join();
        }
        std::mem::take(
            &mut *stats
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    })
}

/// The JSON body of a 200 answer to `what`.
pub(super) fn json_of(r: super::client::Reply, what: &str) -> Result<Value, String> {
    if r.status != 200 {
        return Err(format!("{what}: {} {}", r.status, r.body));
    }
    serde_json::from_str(&r.body).map_err(|e| format!("{what}: {e}"))
}

/// Sends one answer (the JSON body of `submit_answer`) as the page does; returns the step it
/// leads to: the next one, or after a training item the item with its gold revealed.
pub(super) fn send_answer(
    c: &Client,
    cookie: &str,
    position: i64,
    body: &Value,
) -> Result<Value, String> {
    let r = c.post(
        "/api/submit_answer",
        "application/json",
        &body.to_string(),
        &[("cookie", cookie)],
    )?;
    let ack = json_of(r, "submit")?;
    Ok(if ack["next"].is_null() {
        json!({"Item": {"position": position, "reveal": ack["reveal"]}})
    } else {
        ack["next"].clone()
    })
}

/// One worker as the page drives the server: the state once, then one request per answer
/// (the acknowledgement carries the next step) up to `answers`, each followed by `pause`, and a
/// `continue_study` after each revealed training item.
fn one_worker(
    c: &Client,
    study: i64,
    pid: &str,
    (answers, pause): (Option<usize>, Duration),
    stop: &AtomicBool,
    stats: &Mutex<CrowdStats>,
) -> Result<(), String> {
    let t = Instant::now();
    let cookie = c.join(study, pid)?;
    let st = c.study_state(study, &cookie)?;
    stats
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .arrivals_ms
        .push(ms_since(t));
    let mut left = answers.unwrap_or(usize::MAX);
    let label = st["labels"]
        .as_array()
        .and_then(|l| l.first())
        .map(|l| l["name"].clone());
    let mut step = st["step"].clone();
    while !stop.load(Ordering::Relaxed) && left > 0 {
        let item = &step["Item"];
        let Some(position) = item["position"].as_i64() else {
            return Ok(()); // done or released: a new worker comes
        };
        if !item["reveal"].is_null() {
            step = json_of(
                c.form(
                    "continue_study",
                    &format!("study_id={study}&position={position}"),
                    &cookie,
                )?,
                "continue",
            )?;
            continue;
        }
        let answer = match &label {
            Some(label) => json!({"kind": "label", "label": label, "confidence": 4}),
            None => json!({"kind": "skip", "confidence": Value::Null}),
        };
        let client_id = format!("{pid}-{position}");
        let body = json!({"study_id": study, "position": position, "client_id": client_id, "answer": answer});
        let t = Instant::now();
        let next = send_answer(c, &cookie, position, &body)?;
        let ms = ms_since(t);
        {
            let mut s = stats
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.latencies_ms.push(ms);
            s.acks.push(Ack {
                pid: pid.to_string(),
                position,
                client_id,
            });
        }
        step = next;
        left -= 1;
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    Ok(())
}
