//! In-context learning against a real llama.cpp server (llama-cpp-python's, on this machine)
//! running a tiny random-weight llama model that the test writes itself in the GGUF format:
//! every prompt, raw reply and reading is stored, the replies are the server's own, S1 is the
//! test's own computation from the stored answers, a run cut off goes on where it stopped, and
//! bad arguments are refused clearly.
use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use store::db::cli as db;

/// Writes a llama-architecture GGUF: 2 layers of 64 dimensions, random normal(0, 0.02)
/// weights, a byte-level SentencePiece vocabulary (the 256 byte tokens and a few words).
const WRITE_GGUF: &str = include_str!("../common/tiny_gguf.py");

/// The model track's Python (`$CLUES_VENV`, else ~/.cache/clues-lab/venv) where it has
/// llama-cpp-python's server and gguf; `None` (the test says it is skipped) elsewhere, a
/// failure under CI.
fn venv_python(test: &str) -> Option<PathBuf> {
    let venv = std::env::var_os("CLUES_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/clues-lab/venv"))
        })?;
    let py = venv.join("bin/python");
    let ok = Command::new(&py)
        .args(["-c", "import llama_cpp.server, gguf"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(py);
    }
    let why = format!(
        "{test}: llama-cpp-python[server] and gguf are not in {} (bash .ci/setup installs them)",
        venv.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{why}; CI must have them");
    eprintln!("SKIPPED {why}");
    None
}

/// A llama.cpp server on a free port, stopped when dropped.
struct LlamaServer {
    child: Child,
    base: String,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// A llama.cpp server on a port free now, once it answers; `None` where it exited because the
/// port was taken; any other failure to start within 90 s fails the test.
fn start_llama(py: &Path, model: &Path, log: &Path) -> Option<LlamaServer> {
    let port = common::ports::free_port().to_string();
    let child = Command::new(py)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(model)
        .args(["--port", &port, "--n_ctx", "4096", "--model_alias", "tiny"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut server = LlamaServer {
        child,
        base: format!("http://127.0.0.1:{port}/v1"),
    };
    let started = Instant::now();
    while agent()
        .get(format!("{}/models", server.base))
        .call()
        .is_err()
    {
        if server.child.try_wait().unwrap().is_some() {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            assert!(
                said.to_lowercase().contains("address already in use"),
                "the llama.cpp server exited: {said}"
            );
            return None;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the llama.cpp server did not start: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    Some(server)
}

/// What the server itself answers to a prompt with the settings `icl` uses.
fn ask(base: &str, prompt: &str) -> String {
    let body = serde_json::json!({
        "model": "tiny", "prompt": prompt, "max_tokens": 64, "temperature": 0, "stop": ["\n"],
    });
    let text = agent()
        .post(format!("{base}/completions"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["choices"][0]["text"].as_str().unwrap().to_string()
}

/// Runs a command that must succeed.
fn succeeds(c: &mut Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// F1 between two answer sets, written here from the definition.
fn f1(pred: &[String], gold: &[String]) -> f64 {
    let p: HashSet<&String> = pred.iter().collect();
    let g: HashSet<&String> = gold.iter().collect();
    match (p.is_empty(), g.is_empty()) {
        (true, true) => 1.0,
        (true, false) | (false, true) => 0.0,
        _ => 2.0 * p.intersection(&g).count() as f64 / (p.len() + g.len()) as f64,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_llama_cpp_server_answers_every_item_and_a_cut_off_run_goes_on() {
    let Some(py) = venv_python("a_llama_cpp_server_answers_every_item_and_a_cut_off_run_goes_on")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.gguf");
    succeeds(Command::new(&py).args(["-c", WRITE_GGUF]).arg(&model));
    let url = common::db_url(&dir.path().join("icl.db"));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    // A CrossFit task as a task of studies: text to text, which icl does not read as spans.
    succeeds(Command::new(env!("CARGO_BIN_EXE_clues-lab")).args([
        "--database",
        &url,
        "crossfit",
        "study-task",
        "--task",
        "demo-xf-sentiment",
    ]));
    let log = dir.path().join("llama.log");
    let llama = common::ports::starting_again_where_taken("the llama.cpp server", || {
        start_llama(&py, &model, &log)
    });
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &url, "icl", "--model", "tiny"])
            .args(args)
            .output()
            .unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (out.status.success(), text(out.stdout), text(out.stderr))
    };
    let group = ["--task", "demo-CoNLL2003", "--k", "2", "--split", "1"];
    let args: Vec<&str> = [&["--endpoint", llama.base.as_str()][..], &group[..]].concat();

    // Refused before anything is stored: not http, an unknown task, a shot group that is not there.
    for (args, says) in [
        (
            vec![
                "--endpoint",
                "https://example.org/v1",
                "--task",
                "demo-SST-2",
            ],
            "plain http",
        ),
        (
            vec![
                "--endpoint",
                llama.base.as_str(),
                "--task",
                "xf-demo-xf-sentiment-s100",
            ],
            "text-to-text",
        ),
        (
            args.iter()
                .copied()
                .map(|a| if a == "demo-CoNLL2003" { "nope" } else { a })
                .collect(),
            "nope",
        ),
        (
            [
                &["--endpoint", llama.base.as_str()][..],
                &["--task", "demo-SST-2", "--k", "3", "--split", "9"][..],
            ]
            .concat(),
            "no training file for k=3 split=9",
        ),
    ] {
        let (ok, _, err) = cli(&args);
        assert!(!ok && err.contains(says), "{args:?}: {err}");
    }
    let runs = |status| common::machine_runs(&pool, status);
    assert_eq!(
        runs("running").await + runs("done").await + runs("failed").await,
        0
    );
    // A server that is not there: the run fails, saying so, with nothing asked.
    let dead = format!("http://127.0.0.1:{}/v1", common::ports::free_port());
    let (ok, _, err) = cli(&[&["--endpoint", dead.as_str()][..], &group[..]].concat());
    assert!(!ok && err.contains("cannot be reached"), "{err}");
    assert_eq!(runs("failed").await, 1);

    let (ok, out, err) = cli(&args);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("LLM in-context (tiny) on demo-CoNLL2003 (k=2, split=1): S1 "),
        "{out}"
    );
    let run: i64 = sqlx::query_scalar("SELECT id FROM machine_runs WHERE status = 'done'")
        .fetch_one(&pool)
        .await
        .unwrap();
    // Every item once: its prompt holds the two shots with their answers and ends open; the
    // reply is what the server answers to it.
    let calls: Vec<(i64, String, String, String)> = sqlx::query_as(
        "SELECT example_id, prompt, reply, reading_json FROM machine_calls WHERE run_id = $1 ORDER BY example_id",
    )
    .bind(run)
    .fetch_all(&pool)
    .await
    .unwrap();
    let items: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT e.id, e.context, e.gold_official FROM examples e JOIN data_files f ON f.id = e.file_id
         JOIN tasks t ON t.id = f.task_id WHERE t.name = 'demo-CoNLL2003' AND f.kind = 'test' ORDER BY e.id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(calls.len(), items.len());
    let shots: Vec<String> = sqlx::query_scalar(
        "SELECT e.context FROM examples e JOIN data_files f ON f.id = e.file_id
         JOIN tasks t ON t.id = f.task_id WHERE t.name = 'demo-CoNLL2003' AND f.k = 2 AND f.split = 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for ((id, prompt, reply, reading), (item, context, _)) in calls.iter().zip(&items) {
        assert_eq!(id, item);
        assert!(shots.iter().all(|s| prompt.contains(s.trim())), "{prompt}");
        assert!(
            prompt.ends_with("\nAnswer:") && prompt.contains(context.trim()),
            "{prompt}"
        );
        assert_eq!(reply, &ask(&llama.base, prompt), "the server's own reply");
        let r: serde_json::Value = serde_json::from_str(reading).unwrap();
        assert!(
            r["parts"].as_array().is_some_and(|p| !p.is_empty()),
            "{reading}"
        );
    }
    // S1: the test's own F1 of each stored answer against the gold, averaged.
    let answers: Vec<(i64, String, f64)> = sqlx::query_as(
        "SELECT example_id, answer_json, s1 FROM machine_predictions WHERE run_id = $1 ORDER BY example_id",
    )
    .bind(run)
    .fetch_all(&pool)
    .await
    .unwrap();
    let own: Vec<f64> = answers
        .iter()
        .zip(&items)
        .map(|((_, a, _), (_, _, gold))| {
            f1(
                &serde_json::from_str::<Vec<String>>(a).unwrap(),
                &serde_json::from_str::<Vec<String>>(gold).unwrap(),
            )
        })
        .collect();
    for ((_, _, stored), own) in answers.iter().zip(&own) {
        assert!((stored - own).abs() < 1e-12);
    }
    let s1: f64 = sqlx::query_scalar("SELECT s1 FROM machine_runs WHERE id = $1")
        .bind(run)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!((s1 - own.iter().sum::<f64>() / own.len() as f64).abs() < 1e-12);
    // A second start is refused: the run is done.
    let (ok, _, err) = cli(&args);
    assert!(
        !ok && err.contains("already has a finished evaluation"),
        "{err}"
    );

    // What a kill -9 leaves (calls stored as they came, the run still running, no answers):
    // a new start goes on with the same run and asks only the items not yet asked.
    sqlx::query("DELETE FROM machine_predictions WHERE run_id = $1")
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE machine_runs SET status = 'running', s1 = NULL WHERE id = $1")
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
    let (first, second) = (items[0].0, items[1].0);
    sqlx::query("DELETE FROM machine_calls WHERE run_id = $1 AND example_id = $2")
        .bind(run)
        .bind(second)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "UPDATE machine_calls SET reply = 'kept as it was' WHERE run_id = $1 AND example_id = $2",
    )
    .bind(run)
    .bind(first)
    .execute(&pool)
    .await
    .unwrap();
    let (ok, _, err) = cli(&args);
    assert!(ok && err.contains("going on after"), "{err}");
    let (done_run, replies): (i64, Vec<String>) = (
        sqlx::query_scalar("SELECT id FROM machine_runs WHERE status = 'done'")
            .fetch_one(&pool)
            .await
            .unwrap(),
        sqlx::query_scalar("SELECT reply FROM machine_calls WHERE run_id = $1 ORDER BY example_id")
            .bind(run)
            .fetch_all(&pool)
            .await
            .unwrap(),
    );
    assert_eq!(done_run, run);
    assert_eq!(replies.len(), items.len());
    assert_eq!(
        replies[0], "kept as it was",
        "an item asked before is not asked again"
    );
    assert_eq!(replies[1], calls[1].2, "the item not yet asked is asked");
    let kept: String = sqlx::query_scalar(
        "SELECT answer_json FROM machine_predictions WHERE run_id = $1 AND example_id = $2",
    )
    .bind(run)
    .bind(first)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        kept, "[\"\"]",
        "an unmatched reply is no answer, in NER's official encoding"
    );
}
