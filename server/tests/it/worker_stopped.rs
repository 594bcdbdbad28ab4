//! A worker stopped by SIGTERM in the middle of fine-tuning a shot group hands the job back
//! and leaves no model folder in the temporary folder (one per stop would fill a node's disk).
use crate::common;

use common::tiny_bert::write_wider_model_dir;
use domain::run::JobStatus;
use std::path::Path;
use std::process::Stdio;

/// The fine-tuned models' temporary folders in `tmp`.
fn scratch_in(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("clues-finetune-"))
        .collect()
}

/// `worker --device cpu --kinds fine-tuning` ARGS with its temporary folder `tmp`, its stderr
/// in `log`.
fn worker(url: &str, model: &Path, tmp: &Path, log: &Path, args: &[&str]) -> std::process::Child {
    let mut line = vec!["worker", "--device", "cpu", "--kinds", "fine-tuning"];
    line.extend(args);
    common::with_model(url, model, &line)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_stopped_while_it_fine_tunes_leaves_no_model_folder_behind() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("stopped.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    // Wide enough for the group's training to last seconds, not milliseconds.
    let model = dir.path().join("wide-bert");
    write_wider_model_dir(&model, 128, 4, 7);
    let group = ["--task", "demo-SST-2", "--k", "4", "--split", "1"];
    let queue = [
        &["baseline", "--finetune", "--device", "cpu", "--queue-only"][..],
        &group,
    ];
    let out = common::clues_with_model(&url, &model, &queue.concat());
    assert!(out.status.success(), "{out:?}");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();

    // Once the model's folder is made and the job held, SIGTERM.
    let log = dir.path().join("stopped.log");
    let child = worker(&url, &model, &tmp, &log, &[]);
    let held: i64 = common::until("no fine-tuning under way", &log, || async {
        let job =
            sqlx::query_scalar("SELECT id FROM jobs WHERE kind = 'grid' AND status = 'claimed'")
                .fetch_optional(&pool)
                .await
                .unwrap();
        job.filter(|_| !scratch_in(&tmp).is_empty())
    })
    .await;
    let said = common::stopped_by_sigterm(child, &log, &pool, held).await;
    assert_eq!(scratch_in(&tmp), Vec::<String>::new(), "{said}");

    // The next worker fine-tunes the group and stores it once; nothing is left behind either.
    let log = dir.path().join("next.log");
    let status = worker(&url, &model, &tmp, &log, &["--exit-when-idle"])
        .wait()
        .unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{said}");
    let jobs: Vec<(JobStatus, i64)> =
        sqlx::query_as("SELECT status, attempts FROM jobs WHERE kind = 'grid'")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(jobs, vec![(JobStatus::Done, 2)], "{said}");
    assert_eq!(common::machine_runs(&pool, "done").await, 1, "{said}");
    assert_eq!(scratch_in(&tmp), Vec::<String>::new(), "{said}");
    eprintln!("{said}");
}
