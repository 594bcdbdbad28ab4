//! CrossFit tasks end to end: import of the file layout (bad lines named, nothing stored),
//! source sampling, runs scored with the task's metric, partitions, and ARG on the demo
//! partition against the test's own computation.
mod common;

use app::domain::crossfit::metrics::Metric;
use app::ssr::crossfit as xf;
use server::{crossfit, db, demo};
use std::path::Path;

async fn file_db(dir: &Path) -> (sqlx::SqlitePool, String) {
    let url = format!("sqlite://{}", dir.join("x.db").display());
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
    let score = xf::store_run(&pool, "mine", "qa_task", 100, "predictions", &preds)
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
            xf::store_run(&pool, method, task, seed, "predictions", &preds)
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
    let (ok, out) = cli(&[
        "crossfit",
        "partition-import",
        "--name",
        "small",
        p.to_str().unwrap(),
    ]);
    assert!(ok, "{out}");
    let (ok, out) = cli(&[
        "crossfit",
        "partition-import",
        "--name",
        "small",
        p.to_str().unwrap(),
    ]);
    assert!(!ok && out.contains("never replaced"), "{out}");
    write(
        tmp.path(),
        "bad.json",
        r#"{"train": ["a"], "dev": [], "test": ["a"]}"#,
    );
    let bad = tmp.path().join("bad.json");
    let (ok, out) = cli(&[
        "crossfit",
        "partition-import",
        "--name",
        "bad",
        bad.to_str().unwrap(),
    ]);
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
        let (t, d) = app::domain::crossfit::sampler::sample(
            &app::domain::crossfit::tsv::parse_tsv(
                "s",
                &std::fs::read_to_string(tmp.path().join("src.tsv")).unwrap(),
            )
            .unwrap(),
            app::domain::crossfit::sampler::SampleKind::Classification,
            2,
            seed,
        );
        assert_eq!((train, dev), (t, d));
    }
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
    let url = format!("sqlite://{}", db.display());
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
        report.contains("nesting (10 within 20 within 30): 10 of 10 checks hold"),
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
