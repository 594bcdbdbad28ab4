//! Queuing learners from the machines page (`/api/queue_learner`, `cancel_job`, `retry_job`):
//! researchers only; every refusal (a relative or missing folder, an unknown task, a shot
//! group the task lacks, a worker's session) stores nothing; queued jobs are listed, cancelled
//! and retried, and a `clues-lab worker` turns them into runs the page lists.
use crate::common;

use axum::http::StatusCode;
use common::client::{form, machines_page, parse, post_json};
use common::tiny_seq2seq::{write_seq2seq_dir, Kind};
use serde_json::{json, Value};

fn queue(tasks: &[&str], group: Option<(u32, u32)>, learner: Value) -> Value {
    json!({ "request": { "tasks": tasks, "group": group, "learner": learner, "replace": false } })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_researcher_queues_learners_checked_as_the_command_line_checks_them() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("queue", 8).await;
    let (state, rita, wendy) = machines_page(&pool).await;
    let s = &state;

    // The form's choices: the imported tasks, CLUES-format and CrossFit.
    let r = form(s, "learner_choices", "", Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let choices = parse(&r);
    let has = |list: &str, t: &str| choices[list].as_array().unwrap().iter().any(|x| x == t);
    assert!(
        has("tasks", "demo-SST-2") && has("crossfit_tasks", "demo-xf-topic"),
        "{choices}"
    );
    assert_eq!(choices["queueing"], json!(true), "{choices}");

    let weights = model.display().to_string();
    let tune = |w: &str| json!({ "learner": "fine-tuning", "weights": w, "system": null });
    let before = common::snapshot(&pool).await;
    let bart = dir.path().join("tiny-bart");
    write_seq2seq_dir(&bart, Kind::Bart, 1, 8);
    let xf = |steps: u32| json!({ "learner": "crossfit", "model": bart.display().to_string(), "method": null, "steps": steps });
    let (roberta, _) = common::families::families().remove(1);
    let mlm = dir.path().join("tiny-roberta-mlm");
    common::tiny_bert::write_mlm_dir(&mlm, roberta.clone(), 4);
    let pt = |w: &str, verbaliser: Option<&str>| json!({ "learner": "prompt", "weights": w, "system": null, "template": null, "verbaliser": verbaliser, "steps": 3 });
    let (llm, _) = common::scripted_llm::scripted();
    let icl = |endpoint: &str, concurrency: u32| json!({ "learner": "in-context", "endpoint": endpoint, "model": "tiny", "system": null, "concurrency": concurrency });
    // ONNX model folders that cannot run: no model.onnx; a model.onnx that is not a model.
    let onnx = |m: &std::path::Path| json!({ "learner": "onnx", "model": m.display().to_string(), "system": null });
    let no_model = dir.path().join("no-model");
    std::fs::create_dir_all(&no_model).unwrap();
    std::fs::copy(
        model.join("tokenizer.json"),
        no_model.join("tokenizer.json"),
    )
    .unwrap();
    let not_a_model = dir.path().join("not-a-model");
    std::fs::create_dir_all(&not_a_model).unwrap();
    std::fs::copy(
        model.join("tokenizer.json"),
        not_a_model.join("tokenizer.json"),
    )
    .unwrap();
    std::fs::write(not_a_model.join("model.onnx"), b"not protobuf at all").unwrap();
    // A masked-LM checkpoint whose tokenizer has ids past config.json's vocabulary.
    let wide = dir.path().join("wide-tokenizer");
    common::tiny_bert::write_mlm_dir(&wide, roberta, 4);
    common::tiny_bert::widen_tokenizer(&wide, 20);
    let refused: Vec<(Value, Option<&str>, StatusCode, &str)> = vec![
        (
            queue(&["demo-SST-2"], None, onnx(&no_model)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "missing model.onnx",
        ),
        (
            queue(&["demo-SST-2"], None, onnx(&not_a_model)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "not a model ONNX Runtime can load",
        ),
        (
            queue(
                &["demo-SST-2"],
                Some((2, 1)),
                pt(&wide.display().to_string(), None),
            ),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "vocab_size",
        ),
        (
            queue(&["demo-SST-2"], Some((2, 1)), pt(&weights, None)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "masked-LM",
        ),
        (
            queue(
                &["demo-SST-2"],
                Some((2, 1)),
                pt(&mlm.display().to_string(), Some("positive=great")),
            ),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "negative",
        ),
        (
            queue(&["demo-SST-2"], None, icl("https://llm.example/v1", 1)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "plain http URL",
        ),
        (
            queue(&["demo-SST-2"], None, icl(&llm, 0)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "--concurrency",
        ),
        (
            queue(&["demo-SST-2"], Some((3, 3)), icl(&llm, 2)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "no shot group k=3 split=3",
        ),
        (
            queue(&["demo-SST-2"], None, tune("tiny-bert")),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "absolute path",
        ),
        (
            queue(&["demo-SST-2"], None, tune("/no/such/folder")),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "has no model.safetensors",
        ),
        (
            queue(&["no-such-task"], None, tune(&weights)),
            Some(&rita),
            StatusCode::NOT_FOUND,
            "no-such-task",
        ),
        (
            queue(&["demo-SST-2"], Some((7, 9)), tune(&weights)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "no shot group k=7 split=9",
        ),
        (
            queue(&[], None, tune(&weights)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "at least one task",
        ),
        (
            queue(&["demo-xf-topic"], Some((2, 1)), xf(6)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "shot group does not apply",
        ),
        (
            queue(&["demo-xf-topic"], None, xf(0)),
            Some(&rita),
            StatusCode::BAD_REQUEST,
            "steps",
        ),
        (
            queue(&["demo-SST-2"], None, tune(&weights)),
            Some(&wendy),
            StatusCode::FORBIDDEN,
            "Forbidden",
        ),
        (
            queue(&["demo-SST-2"], None, tune(&weights)),
            None,
            StatusCode::UNAUTHORIZED,
            "NotSignedIn",
        ),
    ];
    for (body, who, status, says) in &refused {
        let r = post_json(s, "queue_learner", body, *who).await;
        assert_eq!(r.status, *status, "{body}: {}", r.body);
        assert!(r.body.contains(says), "{body}: {}", r.body);
        assert_eq!(common::snapshot(&pool).await, before, "{body} stored rows");
    }

    // Fine-tuning on every shot group of a task, and CrossFit's seeds of a task.
    let r = post_json(
        s,
        "queue_learner",
        &queue(&["demo-SST-2"], None, tune(&weights)),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let groups = parse(&r)["jobs"].as_u64().unwrap();
    assert!(groups >= 2, "{}", r.body);
    let r = post_json(
        s,
        "queue_learner",
        &queue(&["demo-xf-topic"], None, xf(6)),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(parse(&r)["jobs"], 5, "{}", r.body);
    // Prompt-based fine-tuning on one shot group.
    let r = post_json(
        s,
        "queue_learner",
        &queue(
            &["demo-SST-2"],
            Some((2, 1)),
            pt(&mlm.display().to_string(), None),
        ),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(parse(&r)["jobs"], 1, "{}", r.body);
    // In-context learning without demonstrations (k 0, split 0), two calls in flight.
    let r = post_json(
        s,
        "queue_learner",
        &queue(&["demo-SST-2"], Some((0, 0)), icl(&llm, 2)),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(parse(&r)["jobs"], 1, "{}", r.body);
    let r = form(s, "grid_job_list", "", Some(&rita)).await;
    let jobs = parse(&r);
    assert_eq!(jobs.as_array().unwrap().len() as u64, groups + 2, "{jobs}");
    assert!(
        jobs.as_array()
            .unwrap()
            .iter()
            .all(|j| j["status"] == "queued"),
        "{jobs}"
    );

    // Cancel one grid job, then retry it; a second cancel of a cancelled job is refused.
    let id = jobs[0]["id"].as_i64().unwrap();
    let cancel = format!("queue=grid&id={id}");
    let r = form(s, "cancel_job", &cancel, Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = form(s, "grid_job_list", "", Some(&rita)).await;
    let cancelled = parse(&r)
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .cloned()
        .unwrap();
    assert_eq!(
        (cancelled["status"].as_str(), cancelled["error"].as_str()),
        (Some("failed"), Some("cancelled by rita"))
    );
    let r = form(s, "cancel_job", &cancel, Some(&rita)).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.body.contains("nothing to cancel"), "{}", r.body);
    let r = form(s, "retry_job", &cancel, Some(&wendy)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = form(s, "retry_job", &cancel, Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = form(s, "retry_job", "queue=grid&id=999999", Some(&rita)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    // Cancel a CrossFit seed for good.
    let r = form(s, "crossfit_learning", "", Some(&rita)).await;
    let seed = parse(&r)["open"][0]["id"].as_i64().unwrap();
    let r = form(
        s,
        "cancel_job",
        &format!("queue=crossfit&id={seed}"),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // A worker runs what is queued; the page lists the runs, and nothing is left open but the
    // cancelled seed.
    let out = common::clues_with_model(
        &url,
        &model,
        &["worker", "--exit-when-idle", "--device", "cpu"],
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    let r = form(s, "machine_runs", "", Some(&rita)).await;
    let runs = parse(&r);
    let tuned = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["system"] == "tiny-bert fine-tuned" && r["status"] == "done")
        .count() as u64;
    assert_eq!(tuned, groups, "{said}");
    let in_context: Vec<&Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["system"] == "LLM in-context (tiny)")
        .collect();
    assert_eq!(in_context.len(), 1, "{said}");
    let prompted: Vec<&Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["system"] == "tiny-roberta-mlm prompt-tuned" && r["status"] == "done")
        .collect();
    assert_eq!(prompted.len(), 1, "{said}");
    assert_eq!(
        (&in_context[0]["status"], &in_context[0]["k"]),
        (&json!("done"), &json!(0))
    );
    let r = form(s, "grid_job_list", "", Some(&rita)).await;
    assert_eq!(parse(&r), json!([]), "{said}");
    let r = form(s, "crossfit_learning", "", Some(&rita)).await;
    let open = parse(&r)["open"].clone();
    assert_eq!(open.as_array().unwrap().len(), 1, "{open}");
    assert_eq!(open[0]["error"], "cancelled by rita");
}

/// A server without the model track's door (the serving build, `.ci/start`): the page is told
/// it cannot queue, and a queue request is refused naming the build, storing nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_the_model_track_says_so_and_queues_nothing() {
    let (_dir, pool) = common::fresh_db().await;
    let (mut state, rita, _) = machines_page(&pool).await;
    state.door = None;
    let r = form(&state, "learner_choices", "", Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(parse(&r)["queueing"], json!(false), "{}", r.body);
    let before = common::snapshot(&pool).await;
    let frozen = json!({ "learner": "frozen-baseline" });
    let r = post_json(
        &state,
        "queue_learner",
        &queue(&["demo-SST-2"], None, frozen),
        Some(&rita),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(
        r.body.contains("built without the model track"),
        "{}",
        r.body
    );
    assert_eq!(common::snapshot(&pool).await, before);
}
