//! CrossFit tasks end to end: import of the file layout (bad lines named, nothing stored),
//! source sampling, runs scored with the task's metric, partitions, and ARG on the demo
//! partition against the test's own computation.
use crate::common;

use domain::crossfit::metrics::Metric;
use server::{crossfit, demo};
use std::path::Path;
use store::crossfit as xf;
use store::db::cli as db;

async fn file_db(dir: &Path) -> (sqlx::AnyPool, String) {
    let url = common::db_url(&dir.join("x.db"));
    (db::connect(&url).await.unwrap(), url)
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

#[tokio::test]
async fn the_demo_partition_reports_arg_per_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let (pool, _) = file_db(tmp.path()).await;
    demo::ensure_demo(&pool).await.unwrap();
    let tasks = xf::list_tasks(&pool).await.unwrap();
    assert_eq!(tasks.len(), 6);
    assert!(tasks
        .iter()
        .all(|t| t.seeds == vec![13, 21, 42, 87, 100] && t.source == "demo"));
    let topic = tasks.iter().find(|t| t.name == "demo-xf-topic").unwrap();
    assert_eq!(
        (topic.metric, topic.ontology.as_str(), topic.test_items),
        (Metric::ClassificationF1, "cls/topic", 6)
    );
    // Loading twice adds nothing.
    let before = common::snapshot(&pool).await;
    demo::ensure_demo(&pool).await.unwrap();
    assert_eq!(before, common::snapshot(&pool).await);

    let runs = xf::run_scores(&pool).await.unwrap();
    assert_eq!(runs.len(), 2 * 6 * 5);
    let r = xf::arg_report(&pool, "demo", "nearest-input", "majority-output")
        .await
        .unwrap();
    assert_eq!(
        r.tasks,
        vec!["demo-xf-sentiment", "demo-xf-topic", "demo-xf-headline"]
    );
    assert_eq!(r.seeds.len(), 5);
    // The test's own ARG per seed from the run scores.
    let mut args = Vec::new();
    for (seed, arg) in &r.seeds {
        let score = |m: &str, t: &str| {
            runs.iter()
                .find(|x| x.method == m && x.task == t && x.seed == *seed)
                .and_then(|x| x.score.value)
        };
        let gains: Vec<f64> = r
            .tasks
            .iter()
            .filter_map(|t| {
                let (s, b) = (score("nearest-input", t)?, score("majority-output", t)?);
                (b != 0.0).then(|| (s - b) / b)
            })
            .collect();
        let mine = gains.iter().sum::<f64>() / gains.len() as f64;
        assert!((arg.arg.unwrap() - mine).abs() < 1e-12, "seed {seed}");
        args.push(mine);
    }
    let mean = args.iter().sum::<f64>() / args.len() as f64;
    let std = (args.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / args.len() as f64).sqrt();
    let s = r.spread.unwrap();
    assert!((s.mean - mean).abs() < 1e-12 && (s.std_pop - std).abs() < 1e-12);
    // The majority method on the sentiment task: the majority train label for every test item.
    let maj = runs
        .iter()
        .find(|x| x.method == "majority-output" && x.task == "demo-xf-sentiment" && x.seed == 100)
        .unwrap();
    assert_eq!(maj.score.value, Some(0.5));
}

#[tokio::test]
async fn bad_tsv_lines_are_named_and_nothing_is_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let (pool, _) = file_db(tmp.path()).await;
    let data = tmp.path().join("data");
    write(
        &data,
        "qa_task/qa_task_32_100_train.tsv",
        "q1\ta1\nq2\ta2\n",
    );
    write(
        &data,
        "qa_task/qa_task_32_100_test.tsv",
        "q3\ta3\tA3\nno tab\n\tempty input\n",
    );
    write(&data, "other/other_16_13_dev.tsv", "x\ty\n");
    let before = common::snapshot(&pool).await;
    let err = crossfit::load_dir(&data, "crossfit")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("qa_task_32_100_test.tsv:2: no tab between input and output"),
        "{err}"
    );
    assert!(
        err.contains("qa_task_32_100_test.tsv:3: empty input"),
        "{err}"
    );
    assert!(err.contains("other: no test file"), "{err}");
    assert!(err.contains("nothing imported"), "{err}");
    assert_eq!(before, common::snapshot(&pool).await);

    // Mended: imported with its metadata, and an identical re-import changes nothing.
    write(
        &data,
        "qa_task/qa_task_32_100_test.tsv",
        "q3\ta3\tA3\nq4\ta4\n",
    );
    write(&data, "other/other_16_13_test.tsv", "x\ty\n");
    write(
        &data,
        "tasks.json",
        r#"{"qa_task": {"ontology": "qa/closed-book qa", "metric": "EM"}}"#,
    );
    let tasks = crossfit::load_dir(&data, "crossfit").unwrap();
    assert_eq!(
        xf::store_tasks(&pool, &tasks).await.unwrap(),
        vec![xf::Outcome::Imported; 2]
    );
    let again = crossfit::load_dir(&data, "crossfit").unwrap();
    assert_eq!(
        xf::store_tasks(&pool, &again).await.unwrap(),
        vec![xf::Outcome::Unchanged; 2]
    );
    let listed = xf::list_tasks(&pool).await.unwrap();
    assert_eq!(listed[1].name, "qa_task");
    assert_eq!(listed[1].metric, Metric::ExactMatch);
    assert_eq!(
        listed[0].metric,
        Metric::Accuracy,
        "no metadata: accuracy until a researcher sets one"
    );

    // A changed file for an imported task is refused as a whole.
    write(
        &data,
        "qa_task/qa_task_32_100_train.tsv",
        "q1\ta1\nq2\tchanged\n",
    );
    let changed = crossfit::load_dir(&data, "crossfit").unwrap();
    let before = common::snapshot(&pool).await;
    let err = xf::store_tasks(&pool, &changed)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("already imported with other files"), "{err}");
    assert_eq!(before, common::snapshot(&pool).await);

    // Runs: scored with the task's metric (EM, several golds); bad runs change nothing.
    let preds = vec!["A3 ".to_string(), "the a4".to_string()];
    let score = xf::store_run(&pool, "mine", "qa_task", 100, "predictions", &preds, None)
        .await
        .unwrap();
    assert_eq!(score.value, Some(1.0));
    let before = common::snapshot(&pool).await;
    for (method, task, seed, preds) in [
        ("mine", "qa_task", 100, preds.clone()),
        ("short", "qa_task", 100, vec!["a3".to_string()]),
        ("x", "qa_task", 7, preds.clone()),
        ("x", "nope", 100, preds.clone()),
        (" ", "qa_task", 100, preds.clone()),
    ] {
        assert!(
            xf::store_run(&pool, method, task, seed, "predictions", &preds, None)
                .await
                .is_err()
        );
    }
    assert!(xf::set_task_meta(&pool, "qa_task", "qa", "BLEU")
        .await
        .is_err());
    assert_eq!(before, common::snapshot(&pool).await);
    // A researcher changes the metric: the same run is scored anew.
    xf::set_task_meta(&pool, "qa_task", "qa/closed-book qa", "ACC")
        .await
        .unwrap();
    let runs = xf::run_scores(&pool).await.unwrap();
    assert_eq!(runs[0].score.metric, Metric::Accuracy);
    // ACC strips and compares case-insensitively: "A3" matches; "the a4" does not.
    assert_eq!(runs[0].score.value, Some(0.5));
}

#[tokio::test]
async fn partitions_and_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (pool, url) = file_db(tmp.path()).await;
    demo::ensure_demo(&pool).await.unwrap();
    pool.close().await;
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &url])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (ok, out) = cli(&[
        "crossfit",
        "arg",
        "--partition",
        "demo",
        "--method",
        "nearest-input",
        "--baseline",
        "majority-output",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("ARG over 5 seeds:"), "{out}");
    let (ok, json) = cli(&["crossfit", "partition-export", "demo"]);
    assert!(ok && json.contains("\"test\""), "{json}");
    write(
        tmp.path(),
        "p.json",
        r#"{"train": ["demo-xf-topic"], "dev": [], "test": ["demo-xf-sentiment"]}"#,
    );
    let p = tmp.path().join("p.json");
    let import = |name: &str, file: &Path| {
        cli(&[
            "crossfit",
            "partition-import",
            "--name",
            name,
            file.to_str().unwrap(),
        ])
    };
    let (ok, out) = import("small", &p);
    assert!(ok, "{out}");
    let (ok, out) = import("small", &p);
    assert!(!ok && out.contains("never replaced"), "{out}");
    write(
        tmp.path(),
        "bad.json",
        r#"{"train": ["a"], "dev": [], "test": ["a"]}"#,
    );
    let (ok, out) = import("bad", &tmp.path().join("bad.json"));
    assert!(!ok && out.contains("listed twice"), "{out}");
    let (ok, out) = cli(&[
        "crossfit",
        "arg",
        "--partition",
        "small",
        "--method",
        "nearest-input",
        "--baseline",
        "majority-output",
    ]);
    assert!(ok && out.contains("demo-xf-sentiment"), "{out}");
    // A source file sampled for the five seeds: 2 per label as train and the next 2 as dev.
    write(
        tmp.path(),
        "src.tsv",
        &(0..12)
            .map(|i| format!("text {i}\t{}\n", ["a", "b"][i % 2]))
            .collect::<String>(),
    );
    write(tmp.path(), "test.tsv", "t1\ta\nt2\tb\n");
    let (ok, out) = cli(&[
        "import",
        "crossfit-source",
        "--task",
        "mine",
        "--source",
        tmp.path().join("src.tsv").to_str().unwrap(),
        "--test",
        tmp.path().join("test.tsv").to_str().unwrap(),
        "--kind",
        "classification",
        "--k",
        "2",
    ]);
    assert!(ok && out.contains("mine: imported (15 files"), "{out}");
    let pool = db::connect(&url).await.unwrap();
    for seed in [100, 13, 21, 42, 87] {
        let train = xf::split_lines(&pool, "mine", seed, "train").await.unwrap();
        let dev = xf::split_lines(&pool, "mine", seed, "dev").await.unwrap();
        assert_eq!((train.len(), dev.len()), (4, 4));
        let (t, d) = domain::crossfit::sampler::sample(
            &domain::crossfit::tsv::parse_tsv(
                "s",
                &std::fs::read_to_string(tmp.path().join("src.tsv")).unwrap(),
            )
            .unwrap(),
            domain::crossfit::sampler::SampleKind::Classification,
            2,
            seed,
        );
        assert_eq!((train, dev), (t, d));
    }
    // A reference method's runs, made seed by seed: one cut short (seed 42's run missing) is
    // completed by the same command, which keeps the runs made and says so.
    let baseline = || {
        cli(&[
            "crossfit",
            "baseline",
            "--method",
            "majority-output",
            "--task",
            "mine",
        ])
    };
    let (ok, out) = baseline();
    assert!(
        ok && out.matches("majority-output on mine (seed").count() == 5,
        "{out}"
    );
    sqlx::query("DELETE FROM crossfit_runs WHERE method = 'majority-output' AND seed = 42")
        .execute(&pool)
        .await
        .unwrap();
    let (ok, out) = baseline();
    assert!(ok, "{out}");
    assert!(
        out.contains("mine: seeds [13, 21, 87, 100] already have a run of majority-output, kept"),
        "{out}"
    );
    assert_eq!(
        out.matches("majority-output on mine (seed").count(),
        1,
        "{out}"
    );
    assert!(out.contains("majority-output on mine (seed 42)"), "{out}");
    let (ok, out) = baseline();
    assert!(
        ok && !out.contains("(seed") && out.contains("[13, 21, 42, 87, 100]"),
        "{out}"
    );
}

#[test]
fn clues_style_sampling_writes_files_the_importer_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let review = |i: usize| {
        format!(
            r#"{{"answer": ["{}"], "question": "positive or negative?", "id": {i}, "context": "review number {i} "}}"#,
            ["positive", "negative"][i % 2]
        )
    };
    let pool: String = (0..80).map(|i| review(i) + "\n").collect();
    write(tmp.path(), "pool.jsonl", &pool);
    let out = tmp.path().join("data/SST-2");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(args)
            .output()
            .unwrap()
    };
    let pool_path = tmp.path().join("pool.jsonl");
    let sample = |test_size: &str| {
        run(&[
            "sample",
            "--pool",
            pool_path.to_str().unwrap(),
            "--prefix",
            "sst",
            "--out",
            out.to_str().unwrap(),
            "--test-size",
            test_size,
        ])
    };
    let r = sample("20");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let said = String::from_utf8_lossy(&r.stdout);
    assert!(
        said.contains("sst_test.jsonl: 20 lines")
            && said.contains("sst_train_30_5.jsonl: 30 lines"),
        "{said}"
    );
    // Lines are copied from the pool byte for byte.
    let test = std::fs::read_to_string(out.join("sst_test.jsonl")).unwrap();
    assert!(test.lines().all(|l| pool.lines().any(|p| p == l)));
    // The importer's own checks: nested 10 within 20 within 30, splits and test disjoint.
    let db = tmp.path().join("s.db");
    let url = common::db_url(&db);
    let r = run(&[
        "--database",
        &url,
        "import",
        "clues",
        tmp.path().join("data").to_str().unwrap(),
    ]);
    let report = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success(),
        "{}{report}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(
        report.contains("nested within the same split number: 10 of 10 checks hold")
            && report.contains("nesting chains (10, 20, 30 within each other): 10_1 ⊂ 20_1 ⊂ 30_1; 10_2 ⊂ 20_2 ⊂ 30_2;"),
        "{report}"
    );
    assert!(
        report.contains("training rows sharing a context with the test set: 0"),
        "{report}"
    );
    // A pool too small for 30 per group outside the test set is refused.
    let r = sample("60");
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("only 20 items"));
}

/// Answers the current item of a worker through the HTTP server function; returns the status
/// and the answer's acknowledgement body.
async fn answer(
    env: &common::client::Env,
    study: domain::ids::StudyId,
    cookie: &str,
    n: usize,
    answer: serde_json::Value,
) -> (u16, String) {
    use common::client::{parse, post_json, state_of, submit_body};
    let state = parse(&state_of(&env.state, study, cookie).await);
    let position = state["step"]["Item"]["position"]
        .as_i64()
        .expect("an item to answer");
    let r = post_json(
        &env.state,
        "submit_answer",
        &submit_body(study, position, &format!("c{n}"), answer),
        Some(cookie),
    )
    .await;
    (r.status.as_u16(), r.body)
}

#[tokio::test]
async fn human_studies_of_text_to_text_tasks_take_free_text() {
    use common::client::{arrive, env, get, new_study, parse, post_json, state_of};
    use serde_json::json;
    let env = env().await;
    let pool = &env.state.pool;
    let (name, k) = xf::make_study_task(pool, "demo-xf-capitals", 100)
        .await
        .unwrap();
    assert_eq!((name.as_str(), k), ("xf-demo-xf-capitals-s100", 4));
    let again = xf::make_study_task(pool, "demo-xf-capitals", 100)
        .await
        .unwrap_err();
    assert!(again.to_string().contains("exists already"));
    // The task list decodes the row as its page does: text to text, not classification.
    let listed = store::catalog::task_summaries(pool).await.unwrap();
    let row = listed.iter().find(|t| t.name == name).unwrap();
    assert_eq!(row.family, domain::task::Family::TextToText);
    assert_eq!(row.family.label(), "Text to text");
    let study = new_study(&env.state, &name, &[0, k], 1).await;

    // The zero-shot worker sees a free-text box; wrong kinds of answers are refused.
    let zero = arrive(&env.state, study, "text-zero").await;
    let page = get(&env.state, &format!("/study/{study}"), Some(&zero)).await;
    assert!(
        page.body.contains("textarea") && page.body.contains("name=\"answer\""),
        "{}",
        page.body
    );
    let position = parse(&state_of(&env.state, study, &zero).await)["step"]["Item"]["position"]
        .as_i64()
        .unwrap();
    let before = common::snapshot(pool).await;
    for bad in [
        json!({"kind": "text", "text": "   "}),
        json!({"kind": "label", "label": "Tokyo", "confidence": 3}),
        json!({"kind": "no_answer"}),
        json!({"kind": "spans", "spans": [{"text": "What", "offset": 0, "length": 4}]}),
    ] {
        let body = common::client::submit_body(study, position, "bad", bad);
        let r = post_json(&env.state, "submit_answer", &body, Some(&zero)).await;
        assert_eq!(r.status.as_u16(), 400, "{}", r.body);
    }
    assert_eq!(before, common::snapshot(pool).await);
    // Test items in the worker's own order: answer by the question's country.
    let replies = [
        ("Japan", Some(" tokyo ")),
        ("Ghana", Some("Accra")),
        ("Austria", Some("Wien")),
        ("Nepal", Some("Kathmandu!")),
        ("Cuba", None),
    ];
    for n in 0..5 {
        let state = parse(&state_of(&env.state, study, &zero).await);
        let text = state["step"]["Item"]["context"]["text"]
            .as_str()
            .unwrap()
            .to_string();
        let (_, reply) = replies.iter().find(|(c, _)| text.contains(c)).unwrap();
        let a = match reply {
            Some(t) => json!({"kind": "text", "text": t}),
            None => json!({"kind": "skip", "confidence": null}),
        };
        let (status, body) = answer(&env, study, &zero, n, a).await;
        assert_eq!(status, 200, "{body}");
    }
    assert!(parse(&state_of(&env.state, study, &zero).await)["step"]["Done"].is_object());

    // The 4-shot worker: training golds are revealed (both golds of a two-gold line).
    let four = arrive(&env.state, study, "text-four").await;
    let mut revealed = Vec::new();
    for n in 0..4 {
        let (status, body) = answer(
            &env,
            study,
            &four,
            n,
            json!({"kind": "text", "text": "Paris"}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let ack: serde_json::Value = serde_json::from_str(&body).unwrap();
        revealed.push(ack["reveal"]["gold"].clone());
        let position = ack["position"].as_i64().unwrap();
        let body = format!("study_id={study}&position={position}");
        let r = common::client::form(&env.state, "continue_study", &body, Some(&four)).await;
        assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    }
    assert!(
        revealed
            .iter()
            .all(|g| g.as_array().is_some_and(|a| !a.is_empty())),
        "{revealed:?}"
    );
    for n in 0..5 {
        assert_eq!(
            answer(
                &env,
                study,
                &four,
                10 + n,
                json!({"kind": "text", "text": "Paris"})
            )
            .await
            .0,
            200
        );
    }
    assert!(parse(&state_of(&env.state, study, &four).await)["step"]["Done"].is_object());

    // EM (the task's metric): 4 of 5 right for the zero-shot worker (the skip scores 0).
    let loaded = store::report::load(pool, &[study]).await.unwrap();
    let r = loaded.report();
    let of = |k: u32| {
        r.annotators
            .iter()
            .find(|a| a.k == k)
            .unwrap()
            .test_s1
            .unwrap()
    };
    assert!((of(0) - 0.8).abs() < 1e-12, "{}", of(0));
    assert_eq!(of(4), 0.0);
    assert_eq!(r.tasks[0].family, domain::task::Family::TextToText);

    // A corpus-level metric (macro-F1) scores the annotator's whole test set.
    let (topic, _) = xf::make_study_task(pool, "demo-xf-topic", 100)
        .await
        .unwrap();
    let study2 = new_study(&env.state, &topic, &[0], 1).await;
    let w = arrive(&env.state, study2, "topic-zero").await;
    for n in 0..6 {
        assert_eq!(
            answer(
                &env,
                study2,
                &w,
                n,
                json!({"kind": "text", "text": "sports"})
            )
            .await
            .0,
            200
        );
    }
    let _ = state_of(&env.state, study2, &w).await;
    let r = store::report::load(pool, &[study2]).await.unwrap().report();
    // Golds: 2 sports, 2 science, 2 food; all "sports": F1 sports = 2*2/(2*2+4+0) = 0.5,
    // science 0, food 0 -> macro 1/6.
    let s = r.annotators[0].test_s1.unwrap();
    assert!((s - 1.0 / 6.0).abs() < 1e-12, "{s}");
}
