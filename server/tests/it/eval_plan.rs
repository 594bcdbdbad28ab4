//! Evaluations of many models as a grid that workers on several machines share
//! (`eval --plan`), on SQLite or on PostgreSQL with `CLUES_TEST_POSTGRES`.
use crate::common;

use common::clues_with_model as cli;

/// Evaluations of many models as a grid (`eval --plan`): a plan with a malformed line is
/// refused with its line and queues nothing; two workers share a good plan, each model is
/// evaluated once, and ONNX Runtime gives the answers the fine-tuned runs stored.
#[tokio::test(flavor = "multi_thread")]
async fn two_workers_share_an_evaluation_plan_and_store_each_model_once() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("plan", 5).await;
    let models = dir.path().join("models");
    let tuned = cli(
        &url,
        &model,
        &[
            "baseline",
            "--finetune",
            "--task",
            "demo-SST-2",
            "--device",
            "cpu",
            "--export",
            models.to_str().unwrap(),
        ],
    );
    assert!(
        tuned.status.success(),
        "{}",
        String::from_utf8_lossy(&tuned.stderr)
    );
    let groups = [(2, 1), (2, 2), (4, 1), (4, 2)];
    let lines: Vec<String> = groups
        .iter()
        .map(|(k, s)| {
            let folder = models.join(format!("demo-SST-2-finetuned-k{k}-s{s}"));
            format!("{}\tdemo-SST-2\t{k}\t{s}\ttiny plan", folder.display())
        })
        .collect();
    let plan = dir.path().join("plan.tsv");
    std::fs::write(
        &plan,
        format!("# folder, task, k, split, system\n{}\n", lines.join("\n")),
    )
    .unwrap();
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, format!("{}\nnot a line\n", lines[0])).unwrap();

    let refused = cli(&url, &model, &["eval", "--plan", bad.to_str().unwrap()]);
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("bad.tsv:2: expected folder, task, k, split"),
        "{why}"
    );
    // A line at some k without its split has no place beside the humans of that k; nor has
    // one evaluation given a k alone (it was stored as split 0, in the table at k = 2).
    let runs = || async {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs")
            .fetch_one(&pool)
            .await
            .unwrap();
        n
    };
    let before = runs().await;
    let no_split = dir.path().join("no-split.tsv");
    std::fs::write(&no_split, lines[0].replace("\t2\t1\t", "\t2\t0\t") + "\n").unwrap();
    let refused = cli(
        &url,
        &model,
        &["eval", "--plan", no_split.to_str().unwrap()],
    );
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(why.contains("no-split.tsv:1: k=2 needs its split"), "{why}");
    let folder = models.join("demo-SST-2-finetuned-k2-s1");
    let (task, k) = (["--task", "demo-SST-2"], ["--k", "2", "--device", "cpu"]);
    let alone = [
        &["eval", "--model", folder.to_str().unwrap()][..],
        &task,
        &k,
    ]
    .concat();
    let refused = cli(&url, &model, &alone);
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(why.contains("k=2 needs its split"), "{why}");
    assert_eq!(runs().await, before);
    let queued: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM grid_jobs WHERE system = 'tiny plan'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(queued, 0);

    let args = [
        "eval",
        "--plan",
        plan.to_str().unwrap(),
        "--device",
        "cpu",
        "--lease-seconds",
        "2",
    ];
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (url, model) = (url.clone(), model.clone());
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            std::thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                cli(&url, &model, &args)
            })
        })
        .collect();
    for w in workers {
        let out = w.join().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let done: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT r.k, r.split, COUNT(*) FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = 'tiny plan' AND r.status = 'done' GROUP BY r.k, r.split ORDER BY r.k, r.split",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(done, vec![(2, 1, 1), (2, 2, 1), (4, 1, 1), (4, 2, 1)]);
    // The same answers as the fine-tuned runs that wrote the folders.
    let answers = |system: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_as::<_, (i64, i64, i64, String)>(
                "SELECT r.k, r.split, p.example_id, p.spans_json FROM machine_predictions p
                 JOIN machine_runs r ON r.id = p.run_id JOIN machine_systems s ON s.id = r.system_id
                 WHERE s.name = $1 AND r.status = 'done' ORDER BY r.k, r.split, p.example_id",
            )
            .bind(system)
            .fetch_all(&pool)
            .await
            .unwrap()
        }
    };
    let planned = answers("tiny plan").await;
    assert!(!planned.is_empty());
    assert_eq!(planned, answers(learners::tune::SYSTEM).await);
    // Nothing is left to claim: a third worker stores nothing.
    let again = cli(&url, &model, &args);
    assert!(again.status.success());
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 8);
}
