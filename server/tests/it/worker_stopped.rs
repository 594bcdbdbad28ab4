//! Stopped in the middle of fine-tuning a shot group, a worker (SIGTERM) or a grid command
//! (Ctrl-C on `baseline --finetune`) hands the job back at once and leaves no model folder in
//! the temporary folder (one per stop would fill a node's disk); the next run stores it once.
use crate::common;

use common::tiny_bert::write_wider_model_dir;
use domain::run::JobStatus;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// The fine-tuned models' temporary folders in `tmp`.
fn scratch_in(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("clues-finetune-"))
        .collect()
}

/// The shot group the tests fine-tune.
const GROUP: [&str; 6] = ["--task", "demo-SST-2", "--k", "4", "--split", "1"];

/// A database with the demo and one fine-tuning job queued (`GROUP`) on a model wide enough
/// for its training to last seconds, not milliseconds; an empty temporary folder for the
/// processes. (directory, database URL, pool, model, temporary folder)
async fn one_group_queued(
    name: &str,
) -> (tempfile::TempDir, String, sqlx::AnyPool, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join(format!("{name}.db")));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let model = dir.path().join("wide-bert");
    write_wider_model_dir(&model, 128, 4, 7);
    let queue = [
        &["baseline", "--finetune", "--device", "cpu", "--queue-only"][..],
        &GROUP,
    ];
    let out = common::clues_with_model(&url, &model, &queue.concat());
    assert!(out.status.success(), "{out:?}");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    (dir, url, pool, model, tmp)
}

/// `clues-lab ARGS` with the temporary folder `tmp`, its stderr in `log`.
fn spawn(url: &str, model: &Path, tmp: &Path, log: &Path, args: &[&str]) -> Child {
    common::with_model(url, model, args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// `worker --device cpu --kinds fine-tuning` ARGS.
fn worker(url: &str, model: &Path, tmp: &Path, log: &Path, args: &[&str]) -> Child {
    let line = [
        &["worker", "--device", "cpu", "--kinds", "fine-tuning"][..],
        args,
    ]
    .concat();
    spawn(url, model, tmp, log, &line)
}

/// The queued job, once a process holds it and has made its model's folder in `tmp`.
async fn fine_tuning_under_way(pool: &sqlx::AnyPool, tmp: &Path, log: &Path) -> i64 {
    common::until("no fine-tuning under way", log, || async {
        let sql = "SELECT id FROM jobs WHERE kind = 'grid' AND status = 'claimed'";
        let job = sqlx::query_scalar(sql).fetch_optional(pool).await.unwrap();
        job.filter(|_| !scratch_in(tmp).is_empty())
    })
    .await
}

/// The group's job done on its second claim, its run stored once; the words of the run.
async fn stored_once_on_the_second_claim(
    pool: &sqlx::AnyPool,
    status: std::process::ExitStatus,
    log: &Path,
) -> String {
    let said = std::fs::read_to_string(log).unwrap();
    assert!(status.success(), "{said}");
    let jobs: Vec<(JobStatus, i64)> =
        sqlx::query_as("SELECT status, attempts FROM jobs WHERE kind = 'grid'")
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(jobs, vec![(JobStatus::Done, 2)], "{said}");
    assert_eq!(common::machine_runs(pool, "done").await, 1, "{said}");
    said
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_stopped_while_it_fine_tunes_leaves_no_model_folder_behind() {
    let (dir, url, pool, model, tmp) = one_group_queued("stopped").await;
    let log = dir.path().join("stopped.log");
    let child = worker(&url, &model, &tmp, &log, &[]);
    let held = fine_tuning_under_way(&pool, &tmp, &log).await;
    let sigterm = ("SIGTERM", libc::SIGTERM);
    let said = common::stopped_by(sigterm, child, &log, &pool, held).await;
    assert_eq!(scratch_in(&tmp), Vec::<String>::new(), "{said}");

    // The next worker fine-tunes the group and stores it once; nothing is left behind either.
    let log = dir.path().join("next.log");
    let status = worker(&url, &model, &tmp, &log, &["--exit-when-idle"])
        .wait()
        .unwrap();
    let said = stored_once_on_the_second_claim(&pool, status, &log).await;
    assert_eq!(scratch_in(&tmp), Vec::<String>::new(), "{said}");
}

/// A researcher's Ctrl-C on `baseline --finetune` (a grid command, no worker) hands its group
/// back at once: run again, the command takes it at once, not after its lease of 60 s ran out
/// ("taken over"), and stores it once.
#[tokio::test(flavor = "multi_thread")]
async fn a_grid_command_stopped_by_ctrl_c_hands_its_group_back_at_once() {
    let (dir, url, pool, model, tmp) = one_group_queued("ctrl-c").await;
    let command = [&["baseline", "--finetune", "--device", "cpu"][..], &GROUP].concat();
    let log = dir.path().join("stopped.log");
    let child = spawn(&url, &model, &tmp, &log, &command);
    let held = fine_tuning_under_way(&pool, &tmp, &log).await;
    let said = common::stopped_by(("SIGINT", libc::SIGINT), child, &log, &pool, held).await;
    assert_eq!(scratch_in(&tmp), Vec::<String>::new(), "{said}");

    let log = dir.path().join("again.log");
    let started = std::time::Instant::now();
    let status = spawn(&url, &model, &tmp, &log, &command).wait().unwrap();
    let said = stored_once_on_the_second_claim(&pool, status, &log).await;
    assert!(!said.contains("taken over"), "{said}");
    assert!(started.elapsed().as_secs() < 60, "{said}");
    assert_eq!(scratch_in(&tmp), Vec::<String>::new(), "{said}");
}
