//! `icl`: in-context learning through a language-model server that speaks OpenAI's
//! completions API (llama.cpp's server, vLLM, Ollama): one prompt per test item built from the
//! shot group's k examples (`domain::icl`), each reply stored as it arrives, then read as an
//! answer and scored like any run. A run stopped at any moment goes on where it stopped.

use super::jobs::{self, SystemKind, Target};
use domain::icl::{prompt, read_reply};
use domain::ids::{ExampleId, TaskId};
use domain::task::{Example, TaskSpec};
use futures_util::StreamExt;
use serde_json::json;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use store::catalog::examples_of;
use store::db::cli as db;
use store::error::{Error, Result};
use store::machine::{calls, write as runs};

#[derive(Clone, Debug, clap::Args)]
pub struct IclArgs {
    /// The server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (plain http).
    #[arg(long)]
    pub endpoint: String,
    /// The model name the server is asked for.
    #[arg(long)]
    pub model: String,
    #[arg(long)]
    pub task: String,
    /// The shot group whose examples are the demonstrations (k = 0: the description only).
    #[arg(long, default_value_t = 0)]
    pub k: u32,
    #[arg(long, default_value_t = 0)]
    pub split: u32,
    /// The system name [default: "LLM in-context (<model>)"].
    #[arg(long)]
    pub system: Option<String>,
    /// The most tokens a reply may have (it also ends at a line break).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_tokens: u32,
    /// Seconds one call may take before the run stops (it goes on from there when started again).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout_seconds: u64,
    /// Replace a finished run of the same system, task, k and split.
    #[arg(long)]
    pub replace: bool,
    /// Calls in flight at once (servers with parallel slots, such as llama.cpp's `--parallel`
    /// or vLLM, batch them). Replies are stored in the test set's order whatever order they
    /// come back in, so a run cut off goes on from the first item not stored.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: u32,
}

/// The server, the model and how a reply is asked for: what a run is made with (stored as
/// its settings; a run goes on only with the same ones).
fn settings(a: &IclArgs) -> String {
    json!({
        "learner": "in-context",
        "endpoint": a.endpoint.trim_end_matches('/'),
        "model": a.model,
        "api": "completions",
        "max_tokens": a.max_tokens,
        "temperature": 0,
        "stop": ["\n"],
        "prompt": "domain::icl::prompt (description, k shots with answers, the item)",
    })
    .to_string()
}

/// What went wrong with a call, in words: a time-out says how long it waited and how to wait
/// longer (ureq's own text is "timeout: global").
fn call_error(e: &ureq::Error, seconds: u64, otherwise: &str) -> String {
    match e {
        ureq::Error::Timeout(_) => format!(
            "no whole reply within {seconds} s (--timeout-seconds; a slow server or a long prompt may need more)"
        ),
        e => format!("{otherwise} ({e})"),
    }
}

/// One completion: the reply's text, or an error naming the server and what went wrong.
fn complete(agent: &ureq::Agent, a: &IclArgs, prompt: &str) -> Result<String> {
    let url = format!("{}/completions", a.endpoint.trim_end_matches('/'));
    let body = json!({
        "model": a.model, "prompt": prompt, "max_tokens": a.max_tokens,
        "temperature": 0, "stop": ["\n"],
    });
    let fail = |what: String| Error::Model(format!("the model server at {url}: {what}"));
    let mut r = agent
        .post(&url)
        .header("content-type", "application/json")
        .send(body.to_string())
        .map_err(|e| fail(call_error(&e, a.timeout_seconds, "cannot be reached")))?;
    let status = r.status().as_u16();
    let text = r
        .body_mut()
        .with_config()
        .limit(16 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| {
            fail(call_error(
                &e,
                a.timeout_seconds,
                "its reply cannot be read",
            ))
        })?;
    if status != 200 {
        let mut shown: String = text.chars().take(300).collect();
        if shown.len() < text.len() {
            shown.push('…');
        }
        return Err(fail(format!("answered {status}: {shown}")));
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| fail(format!("its reply is not JSON ({e})")))?;
    v["choices"][0]["text"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| fail("its reply has no choices[0].text".into()))
}

/// `clues-lab icl`: asks the server every test item not yet asked in this run, then scores.
pub async fn icl(database: &str, a: IclArgs) -> Result<()> {
    check(&a)?;
    let pool = db::connect_existing(database).await?;
    println!("{}", run(&pool, &a, None).await?.render());
    Ok(())
}

/// Refuses an endpoint that is not a plain http URL.
pub fn check(a: &IclArgs) -> Result<()> {
    if !a.endpoint.starts_with("http://") {
        return Err(Error::Invalid(format!(
            "--endpoint {:?}: give the server's plain http URL, e.g. http://127.0.0.1:8080/v1",
            a.endpoint
        )));
    }
    Ok(())
}

/// The system's name: `--system`, else "LLM in-context (<model>)".
pub fn system_name(a: &IclArgs) -> String {
    a.system
        .clone()
        .unwrap_or_else(|| format!("LLM in-context ({})", a.model))
}

/// The k-shot examples of the prompts (none for k = 0); a missing training file is refused.
async fn shots_of(pool: &AnyPool, task_id: TaskId, t: &Target) -> Result<Vec<Example>> {
    if t.k == 0 {
        return Ok(Vec::new());
    }
    let shots = examples_of(pool, task_id, Some((t.k, t.split))).await?;
    if shots.is_empty() {
        return Err(Error::NotFound(format!(
            "{} has no training file for k={} split={}",
            t.task, t.k, t.split
        )));
    }
    Ok(shots.into_iter().map(|(_, e)| e).collect())
}

/// Each test item's reply read as spans, scored both ways.
fn scored(
    spec: &TaskSpec,
    test: &[(ExampleId, Example)],
    replies: &HashMap<ExampleId, String>,
) -> Vec<runs::Scored> {
    test.iter()
        .map(|(id, item)| {
            let reading = read_reply(spec, item, &replies[id]);
            let official = spec.to_official(&reading.answer);
            runs::Scored::of(spec, *id, &item.gold, official, "[]".into(), None)
        })
        .collect()
}

/// Asks, stores and scores one run; for a grid job when `held` (its run is stored with the
/// job marked done, in one transaction).
pub async fn run(
    pool: &AnyPool,
    a: &IclArgs,
    held: Option<&jobs::grid::Held>,
) -> Result<jobs::Summary> {
    let t = Target {
        system: system_name(a),
        // Its answers come from a model outside clues-lab, as imported predictions do.
        kind: SystemKind::Imported,
        task: a.task.clone(),
        k: a.k,
        split: a.split,
        replace: a.replace,
    };
    let started = Instant::now();
    let (task_id, spec, test) = jobs::task_test(pool, &t.task).await?;
    if spec.family == domain::task::Family::TextToText {
        return Err(Error::Invalid(format!(
            "{} is a CrossFit text-to-text task: icl reads replies as spans of the context; store a language model's outputs for it with `crossfit run`",
            t.task
        )));
    }
    let shots = shots_of(pool, task_id, &t).await?;
    let settings = settings(a);
    runs::refuse_if_done(pool, task_id, &t).await?;
    let run = match calls::resume(pool, task_id, &t, &settings).await? {
        Some(run) => run,
        None => {
            let source = format!("{} ({})", a.endpoint, a.model);
            runs::start(pool, task_id, &t, &source, &settings, "model server", held).await?
        }
    };
    let mut replies = calls::replies(pool, run).await?;
    if !replies.is_empty() {
        eprintln!(
            "run {run}: going on after {} of {} items",
            replies.len(),
            test.len()
        );
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(a.timeout_seconds)))
        .build()
        .into();
    // Up to `concurrency` calls in flight; `buffered` hands the replies back in the items'
    // order, and each is stored before the next: the stored calls are always a prefix of what
    // was asked, in order (a reply that came back early waits for those before it).
    // Owned items, so that the calls' futures hold no borrow of `test` (a worker's job runs
    // on any of the runtime's threads).
    let todo: Vec<(ExampleId, Example)> = test
        .iter()
        .filter(|(id, _)| !replies.contains_key(id))
        .cloned()
        .collect();
    let mut asked = futures_util::stream::iter(todo.into_iter().map(|(id, item)| {
        let p = prompt(&spec, &shots, &item);
        let (agent, a) = (agent.clone(), a.clone());
        async move {
            let p2 = p.clone();
            let reply = tokio::task::spawn_blocking(move || complete(&agent, &a, &p2))
                .await
                .map_err(|e| Error::Model(format!("the call stopped: {e}")))
                .and_then(|r| r);
            (id, item, p, reply)
        }
    }))
    .buffered(a.concurrency as usize);
    while let Some((id, item, p, reply)) = asked.next().await {
        let reply = jobs::or_fail(pool, &[run], reply).await?;
        let reading =
            serde_json::to_string(&read_reply(&spec, &item, &reply)).map_err(Error::internal)?;
        let stored = calls::store(pool, run, id, &p, &reply, &reading).await?;
        replies.insert(id, stored);
        runs::progress(pool, run, replies.len(), test.len()).await?;
        if replies.len() % 50 == 0 {
            eprintln!("{} of {} items asked", replies.len(), test.len());
        }
    }
    let items = scored(&spec, &test, &replies);
    let provider = format!("{} at {}", a.model, a.endpoint);
    let seconds = started.elapsed().as_secs_f64();
    jobs::store_finished(pool, run, t, provider, &items, held, seconds).await
}

#[cfg(test)]
mod tests {
    use super::{complete, IclArgs};
    use std::time::Duration;

    /// A server that takes the call and never answers: the call stops after the time-out and
    /// says so in words, with the flag that gives more time.
    #[test]
    fn a_reply_that_never_comes_is_a_time_out_in_words() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let held = listener.accept();
            std::thread::sleep(Duration::from_secs(5));
            drop(held);
        });
        let a = IclArgs {
            endpoint: format!("http://127.0.0.1:{port}/v1"),
            model: "tiny".into(),
            task: "demo-SST-2".into(),
            k: 0,
            split: 0,
            system: None,
            max_tokens: 8,
            timeout_seconds: 1,
            replace: false,
            concurrency: 1,
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(1)))
            .build()
            .into();
        let e = complete(&agent, &a, "Is it positive?")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no whole reply within 1 s (--timeout-seconds") && !e.contains("global"),
            "{e}"
        );
    }
}
