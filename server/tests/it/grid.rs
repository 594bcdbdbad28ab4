//! The model grids shared by several worker processes on one database (SQLite's file locks,
//! or PostgreSQL with `CLUES_TEST_POSTGRES`): `baseline --finetune --all` and `baseline --all`
//! processes on a small random BERT, one killed with kill -9 in the middle of a job. Every
//! group is stored exactly once, none is lost, and the killed worker's job is taken over once
//! its lease runs out.
use crate::common;

use domain::run::JobStatus;
use std::path::Path;
use std::process::Child;
use std::time::Duration;
use store::lease::{self, Clock};
use store::machine::grid::GridKind;

/// `clues-lab baseline --all` (fine-tuning, or the frozen baseline) as one grid worker, its
/// stderr in `log`.
fn worker(url: &str, model: &Path, log: &Path) -> Child {
    grid_worker(url, model, log, true)
}

fn grid_worker(url: &str, model: &Path, log: &Path, finetune: bool) -> Child {
    let mut args = vec!["baseline", "--all"];
    args.extend(finetune.then_some("--finetune"));
    args.extend(["--lease-seconds", "2", "--device", "cpu"]);
    common::spawn_with_model(url, model, log, &args)
}

/// The grid job (id, worker) that the worker whose name ends with `victim` holds with a run
/// under way, once there is one.
async fn holding(pool: &sqlx::AnyPool, victim: &str, log: &Path) -> (i64, String) {
    common::until("the first worker never held a job", log, || async {
        sqlx::query_as(
            "SELECT g.id, g.worker FROM jobs g WHERE g.kind = 'grid' AND g.status = 'claimed' AND EXISTS
             (SELECT 1 FROM machine_runs r WHERE r.grid_job_id = g.id AND r.status = 'running')",
        )
        .fetch_all(pool)
        .await
        .unwrap()
        .into_iter()
        .find(|(_, w): &(i64, String)| w.ends_with(victim))
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn three_workers_share_the_grid_and_a_killed_ones_group_is_taken_over_and_stored_once() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("grid", 3).await;
    let logs: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("worker{i}.log")))
        .collect();
    let mut workers: Vec<Child> = logs.iter().map(|l| worker(&url, &model, l)).collect();

    // Wait until the first worker holds a group, then kill it with kill -9.
    let victim = format!(":{}", workers[0].id());
    let held = holding(&pool, &victim, &logs[0]).await;
    workers[0].kill().unwrap();
    workers[0].wait().unwrap();
    for (i, w) in workers.iter_mut().enumerate().skip(1) {
        let status = w.wait().unwrap();
        let log = std::fs::read_to_string(&logs[i]).unwrap();
        assert!(status.success(), "worker {i}: {status}\n{log}");
    }
    let logs: String = logs[1..]
        .iter()
        .map(|l| std::fs::read_to_string(l).unwrap())
        .collect();

    // Every shot group of every demo task with training files: one done run, its job done.
    let groups: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT DISTINCT f.task_id, f.k, f.split FROM data_files f
         WHERE f.kind = 'train') g",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let done: Vec<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT r.task_id, r.k, r.split, COUNT(*) FROM machine_runs r
         JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = $1 AND r.status = 'done' GROUP BY r.task_id, r.k, r.split",
    )
    .bind(learners::tune::SYSTEM)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(groups >= 8, "{groups} groups");
    assert_eq!(done.len() as i64, groups, "every group stored: {done:?}");
    assert!(done.iter().all(|d| d.3 == 1), "each once: {done:?}");
    let predictions: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM machine_predictions p JOIN machine_runs r ON r.id = p.run_id
         WHERE r.status = 'done'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let test_items: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM (SELECT r.id, (SELECT COUNT(*) FROM examples e
             JOIN data_files f ON f.id = e.file_id WHERE f.task_id = r.task_id AND f.kind = 'test') AS n
         FROM machine_runs r WHERE r.status = 'done') x",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        predictions, test_items,
        "one prediction per test item per run"
    );
    let jobs: Vec<(JobStatus, i64)> =
        sqlx::query_as("SELECT status, COUNT(*) FROM jobs WHERE kind = 'grid' GROUP BY status")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(jobs, vec![(JobStatus::Done, groups)]);

    // The killed worker's group: claimed again, its first run marked failed with the reason.
    let (attempts, now_by): (i64, String) =
        sqlx::query_as("SELECT attempts, worker FROM jobs WHERE id = $1")
            .bind(held.0)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(attempts >= 2, "{attempts} claims");
    assert!(!now_by.ends_with(&victim), "{now_by}");
    let failed: Vec<String> = sqlx::query_scalar(
        "SELECT error FROM machine_runs WHERE status = 'failed' AND error IS NOT NULL",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].contains(&format!("worker {} stopped renewing its lease", held.1)),
        "{failed:?}"
    );
    assert!(logs.contains("taken over from"), "{logs}");
    // Both survivors did work.
    let by: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT worker FROM jobs WHERE kind = 'grid' AND status = 'done'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(by.len() >= 2, "{by:?}");

    // The machines page's summary: all done, nobody holding a job.
    let grids = store::machine::grids(&pool, &Clock::System).await.unwrap();
    assert_eq!(grids.len(), 1);
    assert_eq!(
        (
            grids[0].queued,
            grids[0].claimed,
            grids[0].done,
            grids[0].failed
        ),
        (0, 0, groups, 0)
    );
    assert!(grids[0].workers.is_empty());

    // A fourth worker started now finds nothing left and stores nothing more.
    let again = worker(&url, &model, &dir.path().join("late.log"))
        .wait()
        .unwrap();
    assert!(again.success());
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, groups + 1, "the done runs and the killed worker's");
    eprintln!(
        "{groups} groups stored once by {} workers; group {} taken over from {} after {attempts} claims",
        by.len(),
        held.0,
        held.1
    );
}

/// The lease rules on their own: a job queued twice is one job; a claim whose lease ran out is
/// taken over; the worker that lost it can neither mark it done nor failed, and nobody else can
/// claim it while the new lease holds.
#[tokio::test]
async fn a_worker_that_lost_its_lease_can_neither_store_nor_fail_the_group() {
    use learners::jobs::grid;
    let (_dir, pool) = common::fresh_db().await;
    server::demo::ensure_demo(&pool).await.unwrap();
    let task = common::task_id(&pool, "demo-SST-2").await;
    let queue = async || {
        let learner = grid::Learner::FrozenBaseline;
        let group = [(task, 4, 1)];
        grid::enqueue(&pool, "s", learner, None, &group, (false, &Clock::System))
            .await
            .unwrap()
    };
    let jobs = queue().await;
    assert_eq!(queue().await, jobs);
    // A clock of the test's: a's lease runs out when the test moves it on, not by sleeping.
    // It starts a minute and 2 ms back, so b's claim falls just before the system's now (which
    // the machines page reads).
    let minute = Duration::from_secs(60);
    let clock = Clock::manual(store::auth::now_ms() - 60_002);
    let a = lease::claim::<GridKind>(&pool, &jobs, "a:1", (minute, &clock))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (a.lease.attempt, a.lease.took_over_from.as_deref()),
        (1, None)
    );
    clock.advance(minute - Duration::from_millis(1));
    assert!(
        lease::claim::<GridKind>(&pool, &jobs, "b:2", (minute, &clock))
            .await
            .unwrap()
            .is_none()
    );
    clock.advance(Duration::from_millis(2));
    let b = lease::claim::<GridKind>(&pool, &jobs, "b:2", (minute, &clock))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (b.lease.attempt, b.lease.took_over_from.as_deref()),
        (2, Some("a:1"))
    );
    let mut tx = store::tx::begin_immediate(&pool, &[]).await.unwrap();
    let e = grid::complete(&mut tx, &a).await.unwrap_err();
    tx.rollback().await.unwrap();
    assert!(e.to_string().contains("lost its lease"), "{e}");
    grid::fail(&pool, &a, "too late").await.unwrap();
    assert!(lease::claim::<GridKind>(
        &pool,
        &jobs,
        "c:3",
        (Duration::from_secs(60), &Clock::System)
    )
    .await
    .unwrap()
    .is_none());
    assert_eq!(
        lease::unfinished::<GridKind>(&pool, &jobs).await.unwrap(),
        (1, 4)
    );
    let (status, worker): (JobStatus, String) =
        sqlx::query_as("SELECT status, worker FROM jobs WHERE id = $1")
            .bind(jobs[0])
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((status, worker.as_str()), (JobStatus::Claimed, "b:2"));
    // Handed back as its worker stops: queued again at once, for the next claim.
    assert!(lease::release::<GridKind>(&pool, &b, "b:2 was stopped")
        .await
        .unwrap());
    assert!(
        !lease::release::<GridKind>(&pool, &b, "again")
            .await
            .unwrap(),
        "no longer b's"
    );
    let (status, error): (JobStatus, Option<String>) =
        sqlx::query_as("SELECT status, error FROM jobs WHERE id = $1")
            .bind(jobs[0])
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        (status, error.as_deref()),
        (JobStatus::Queued, Some("b:2 was stopped"))
    );
    let d = lease::claim::<GridKind>(
        &pool,
        &jobs,
        "d:4",
        (Duration::from_secs(60), &Clock::System),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        (d.lease.attempt, d.lease.took_over_from.as_deref()),
        (3, None)
    );
    // Failed, it is queued again by the next command; done, only with --replace.
    grid::fail(&pool, &d, "broke").await.unwrap();
    assert_eq!(
        lease::unfinished::<GridKind>(&pool, &jobs).await.unwrap(),
        (0, 0)
    );
    queue().await;
    assert_eq!(
        lease::unfinished::<GridKind>(&pool, &jobs).await.unwrap(),
        (1, 4)
    );
}

/// The frozen baseline as a grid: a job per task (its heads share one pass of the encoder),
/// its runs stored together. Two workers, one killed with kill -9 while it holds a task: every
/// group of every task stored once, the killed worker's runs of that task marked failed.
#[tokio::test(flavor = "multi_thread")]
async fn the_frozen_baseline_grid_survives_a_killed_worker_and_stores_each_task_once() {
    let (dir, url, pool, model) = common::tiny_bert::demo_with_model("frozen", 4).await;
    let logs: Vec<_> = (0..2)
        .map(|i| dir.path().join(format!("frozen{i}.log")))
        .collect();
    let mut workers: Vec<Child> = logs
        .iter()
        .map(|l| grid_worker(&url, &model, l, false))
        .collect();
    let victim = format!(":{}", workers[0].id());
    let held = holding(&pool, &victim, &logs[0]).await;
    workers[0].kill().unwrap();
    workers[0].wait().unwrap();
    let status = workers[1].wait().unwrap();
    let log = std::fs::read_to_string(&logs[1]).unwrap();
    assert!(status.success(), "{status}\n{log}");

    let tasks: i64 =
        sqlx::query_scalar("SELECT COUNT(DISTINCT task_id) FROM data_files WHERE kind = 'train'")
            .fetch_one(&pool)
            .await
            .unwrap();
    let jobs: Vec<(JobStatus, i64, i64)> = sqlx::query_as(
        "SELECT j.status, COUNT(*), CAST(SUM(g.k + g.split) AS BIGINT) FROM jobs j
         JOIN grid_jobs g ON g.id = j.id GROUP BY j.status",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(jobs, vec![(JobStatus::Done, tasks, 0)], "a job per task");
    let done: Vec<i64> = sqlx::query_scalar(
        "SELECT COUNT(*) FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = $1 AND r.status = 'done' GROUP BY r.task_id, r.k, r.split",
    )
    .bind(learners::baseline::SYSTEM)
    .fetch_all(&pool)
    .await
    .unwrap();
    let groups: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT DISTINCT task_id, k, split FROM data_files WHERE kind = 'train') g",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(done.len() as i64, groups);
    assert!(done.iter().all(|&n| n == 1), "{done:?}");
    // The killed worker's runs of its task: all failed, none left running.
    let lost: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT status, error FROM machine_runs WHERE grid_job_id = $1 AND status != 'done'",
    )
    .bind(held.0)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(!lost.is_empty());
    assert!(
        lost.iter().all(|(s, e)| s == "failed"
            && e.as_deref()
                .is_some_and(|e| e.contains(&format!("worker {} stopped renewing", held.1)))),
        "{lost:?}"
    );
    let running: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs WHERE status = 'running'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(running, 0);
    eprintln!(
        "{tasks} task jobs, {groups} groups stored once; job {} taken over from {}",
        held.0, held.1
    );
}
