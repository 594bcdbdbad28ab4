//! `clues-lab load authenticity`: honest and assisted work sessions over the API, each answer
//! sent with the page's signals as `domain::authenticity::simulate` draws them, then the
//! study's pay sheet read back as the researcher sees it: the share of honest sessions the
//! report flags (low authenticity) and the share of assisted ones it detects.

use super::client::Client;
use super::crowd::{json_of, send_answer};
use domain::authenticity::simulate::{ItemShape, Session, Worker};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one run found: sessions and levels per kind of worker.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rates {
    /// (sessions, low, mixed) of the honest and of the assisted workers.
    pub honest: (usize, usize, usize),
    pub assisted: (usize, usize, usize),
    pub errors: Vec<String>,
}

impl Rates {
    pub fn false_flags(&self) -> f64 {
        self.honest.1 as f64 / self.honest.0.max(1) as f64
    }
    pub fn detection(&self) -> f64 {
        self.assisted.1 as f64 / self.assisted.0.max(1) as f64
    }
}

/// An item's shape from the step the server sent: its words and characters.
fn shape(item: &Value, free_text: bool) -> ItemShape {
    let context = &item["context"];
    let texts: Vec<&str> = [
        &context["text"],
        &context["premise"],
        &context["hypothesis"],
        &item["question"],
    ]
    .into_iter()
    .filter_map(Value::as_str)
    .collect();
    ItemShape {
        words: texts
            .iter()
            .map(|t| t.split_whitespace().count() as u32)
            .sum(),
        chars: texts.iter().map(|t| t.chars().count() as u32).sum(),
        free_text,
    }
}

/// One session: joins as `pid`, answers every item with a label drawn at random (a word in a
/// free-text task, "no answer" in a span task) and the session's signals.
fn one_session(c: &Client, study: i64, pid: &str, worker: Worker, seed: u64) -> Result<(), String> {
    let cookie = c.join(study, pid)?;
    let st = c.study_state(study, &cookie)?;
    let labels: Vec<Value> = st["labels"]
        .as_array()
        .map(|l| l.iter().map(|x| x["name"].clone()).collect())
        .unwrap_or_default();
    let free_text = st["family"].as_str() == Some("text_to_text");
    let items = st["test_items"].as_u64().unwrap_or(0) + st["training_items"].as_u64().unwrap_or(0);
    let mut session = Session::new(seed, worker, items as usize);
    let mut pick = domain::rng::SplitMix64(seed ^ 0x5eed);
    let mut step = st["step"].clone();
    loop {
        let item = &step["Item"];
        let Some(position) = item["position"].as_i64() else {
            return Ok(());
        };
        if !item["reveal"].is_null() {
            let body = format!("study_id={study}&position={position}");
            step = json_of(c.form("continue_study", &body, &cookie)?, "continue")?;
            continue;
        }
        let answer = if !labels.is_empty() {
            json!({"kind": "label", "label": labels[pick.below(labels.len())], "confidence": 4})
        } else if free_text {
            json!({"kind": "text", "text": "an answer"})
        } else {
            json!({"kind": "no_answer"})
        };
        let signals = session.item(&shape(item, free_text));
        let body = json!({"study_id": study, "position": position, "client_id": format!("{pid}-{position}"),
            "answer": answer, "signals": signals});
        step = send_answer(c, &cookie, position, &body)?;
    }
}

/// Runs `honest` and `assisted` sessions on `study` over `threads` connections (worker ids
/// `honest-N` and `assisted-N` after `tag`), then reads each worker's level from the study's
/// pay sheet with the researcher's `cookie`.
pub fn run(
    base: &str,
    study: i64,
    (honest, assisted): (usize, usize),
    threads: usize,
    tag: &str,
    cookie: &str,
) -> Result<Rates, String> {
    let jobs: Vec<(String, Worker)> = (0..honest)
        .map(|i| (format!("{tag}honest-{i}"), Worker::Honest))
        .chain((0..assisted).map(|i| (format!("{tag}assisted-{i}"), Worker::Assisted)))
        .collect();
    let next = AtomicUsize::new(0);
    let errors: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let c = Client::new(base);
                    let mut errors = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((pid, worker)) = jobs.get(i) else {
                            return errors;
                        };
                        if let Err(e) = one_session(&c, study, pid, *worker, i as u64 + 1) {
                            errors.push(format!("{pid}: {e}"));
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let levels = levels(&Client::new(base), study, cookie)?;
    let mut rates = Rates {
        errors,
        ..Rates::default()
    };
    for (pid, worker) in &jobs {
        let Some(level) = levels.get(pid) else {
            continue;
        };
        let counts = match worker {
            Worker::Honest => &mut rates.honest,
            Worker::Assisted => &mut rates.assisted,
        };
        counts.0 += 1;
        counts.1 += usize::from(level == "low");
        counts.2 += usize::from(level == "mixed");
    }
    Ok(rates)
}

/// Each crowd worker id's authenticity level, from the study's pay sheet.
fn levels(c: &Client, study: i64, cookie: &str) -> Result<HashMap<String, String>, String> {
    let r = c.get(&format!("/export/pay.csv?studies={study}"), cookie)?;
    if r.status != 200 {
        return Err(format!("pay.csv: {} {}", r.status, r.body));
    }
    let mut lines = r.body.lines();
    let header = cells(lines.next().unwrap_or_default());
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("pay.csv has no {name} column"))
    };
    let (id, level) = (col("crowd_worker_id")?, col("authenticity")?);
    Ok(lines
        .filter_map(|l| {
            let cells = cells(l);
            Some((cells.get(id)?.clone(), cells.get(level)?.clone()))
        })
        .collect())
}

/// The cells of one CSV line (quoted cells with doubled quotes; no line breaks in a cell).
pub fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().expect("one cell").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().expect("one cell").push(c),
        }
    }
    out
}

/// Prints the rates of a run as the benchmark reports them.
pub fn print(r: &Rates) {
    let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    for (who, (n, low, mixed), low_is) in [
        ("honest", r.honest, "flagged"),
        ("assisted", r.assisted, "detected"),
    ] {
        println!(
            "{who} sessions: {n}, {low_is} (low) {low} ({:.1}%), mixed {mixed} ({:.1}%)",
            pct(low, n),
            pct(mixed, n)
        );
    }
    println!(
        "false-flag rate {:.2}% (aim: at most 1%), detection rate {:.2}% (aim: at least 95%)",
        100.0 * r.false_flags(),
        100.0 * r.detection()
    );
    if !r.errors.is_empty() {
        println!(
            "{} sessions failed, the first: {}",
            r.errors.len(),
            r.errors[0]
        );
    }
}
