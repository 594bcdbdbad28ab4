//! The one home of the machine side's tables (`machine_systems`, `machine_runs`,
//! `machine_predictions`, `machine_calls`, `grid_jobs`, `workers`): reading runs here (the
//! finished ones for the report, every run with its progress and every grid for the machines
//! page), storing them in `write`, a language model's calls in `calls`, the shared grids' jobs
//! in `grid`, the workers pointed at the database in `workers`. The `learners` crate writes
//! only through these.

pub mod calls;
pub mod grid;
pub mod workers;
pub mod write;

use crate::catalog::FamilyColumns;
use crate::error::Error;
use domain::ids::{ExampleId, RunId};
use domain::report::authenticity::SystemAnswers;
use domain::report::calibration::MachineAnswer;
use domain::report::machine::MachineRun;
use domain::run::{RunStatus, SystemKind};
use domain::wire::machine::{GridRow, RunRow};
use domain::wire::queue::{QueueAnswer, QueueRequest};
use futures_util::TryStreamExt;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

/// A finished run with its system and task.
#[derive(sqlx::FromRow)]
struct DoneRow {
    id: RunId,
    system: String,
    task: String,
    #[sqlx(flatten)]
    family: FamilyColumns,
    k: i64,
    split: i64,
    s1: Option<f64>,
    s1_any_of: Option<f64>,
    provider: String,
}

/// Every finished evaluation, for the report.
pub async fn done_runs(pool: &AnyPool) -> Result<Vec<MachineRun>, Error> {
    let rows: Vec<DoneRow> = sqlx::query_as(
        "SELECT r.id, s.name AS system, t.name AS task, t.family, t.text_metric, r.k, r.split, r.s1, r.s1_any_of, r.provider
         FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id JOIN tasks t ON t.id = r.task_id
         WHERE r.status = 'done' ORDER BY s.name, t.name, r.k, r.split",
    )
    .fetch_all(pool)
    .await?;
    let mut items = done_items(pool).await?;
    rows.into_iter()
        .map(|r| {
            Ok(MachineRun {
                items: items.remove(&r.id).unwrap_or_default(),
                family: r.family.decode()?.0,
                system: r.system,
                task: r.task,
                k: r.k as u32,
                split: r.split as u32,
                official: r.s1.unwrap_or(0.0),
                any_of: r.s1_any_of.unwrap_or(0.0),
                device: r.provider,
            })
        })
        .collect()
}

/// A finished run's score of one test item.
#[derive(sqlx::FromRow)]
struct ItemScore {
    run_id: RunId,
    example_id: ExampleId,
    s1: f64,
    s1_any_of: f64,
}

/// Every finished run's item scores (official, any-of), streamed into one list per run.
async fn done_items(pool: &AnyPool) -> Result<HashMap<RunId, Vec<(ExampleId, f64, f64)>>, Error> {
    let mut rows = sqlx::query_as::<_, ItemScore>(
        "SELECT p.run_id, p.example_id, p.s1, p.s1_any_of
         FROM machine_predictions p JOIN machine_runs r ON r.id = p.run_id
         WHERE r.status = 'done'",
    )
    .fetch(pool);
    let mut out: HashMap<RunId, Vec<(ExampleId, f64, f64)>> = HashMap::new();
    while let Some(r) = rows.try_next().await? {
        out.entry(r.run_id)
            .or_default()
            .push((r.example_id, r.s1, r.s1_any_of));
    }
    Ok(out)
}

/// One stored machine answer of a finished run, for the authenticity's machine agreement.
#[derive(sqlx::FromRow)]
struct RunAnswer {
    run_id: RunId,
    system: String,
    k: i64,
    split: i64,
    example_id: ExampleId,
    answer_json: String,
    s1: f64,
}

/// Each finished run's answers on a task's test items (official encoding), with the items it
/// got wrong.
pub async fn system_answers(
    pool: &AnyPool,
    task_id: domain::ids::TaskId,
) -> Result<Vec<SystemAnswers>, Error> {
    let mut rows = sqlx::query_as::<_, RunAnswer>(
        "SELECT p.run_id, s.name AS system, r.k, r.split, p.example_id, p.answer_json, p.s1
         FROM machine_predictions p JOIN machine_runs r ON r.id = p.run_id
         JOIN machine_systems s ON s.id = r.system_id
         WHERE r.status = 'done' AND r.task_id = $1 ORDER BY p.run_id",
    )
    .bind(task_id)
    .fetch(pool);
    let mut out: Vec<(RunId, SystemAnswers)> = Vec::new();
    while let Some(r) = rows.try_next().await? {
        let answers = &mut crate::rows::group_of(
            &mut out,
            |(id, _)| *id == r.run_id,
            || {
                let name = format!("{} k={} split={}", r.system, r.k, r.split);
                (
                    r.run_id,
                    SystemAnswers {
                        name,
                        ..Default::default()
                    },
                )
            },
        )
        .1;
        let answer: Vec<String> = serde_json::from_str(&r.answer_json)
            .map_err(|e| crate::catalog::corrupt("machine answer", e))?;
        if r.s1 < 1.0 {
            answers.wrong.insert(r.example_id);
        }
        answers.answers.insert(r.example_id, answer);
    }
    Ok(out.into_iter().map(|(_, a)| a).collect())
}

/// A machine's answer with the probability it gave, and its S1.
#[derive(sqlx::FromRow)]
struct ConfidentAnswer {
    system: String,
    task: String,
    probability: f64,
    s1: f64,
}

/// Every machine answer with a probability on a label task's test item, for the reliability
/// diagram (imports have none).
pub async fn confident_answers(pool: &AnyPool) -> Result<Vec<MachineAnswer>, Error> {
    let rows: Vec<ConfidentAnswer> = sqlx::query_as(
        "SELECT s.name AS system, t.name AS task, p.probability, p.s1
         FROM machine_predictions p JOIN machine_runs r ON r.id = p.run_id
         JOIN machine_systems s ON s.id = r.system_id JOIN tasks t ON t.id = r.task_id
         WHERE r.status = 'done' AND t.family = 'classification' AND p.probability IS NOT NULL
         ORDER BY s.name, t.name",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| MachineAnswer {
            system: r.system,
            task: r.task,
            probability: r.probability,
            correct: r.s1 >= 1.0 - 1e-9,
        })
        .collect())
}

/// A run as the machines page lists it.
#[derive(sqlx::FromRow)]
struct ListedRow {
    id: RunId,
    system: String,
    kind: SystemKind,
    task: String,
    k: i64,
    split: i64,
    status: RunStatus,
    done: i64,
    total: i64,
    provider: String,
    error: Option<String>,
    s1: Option<f64>,
    s1_any_of: Option<f64>,
    started_at: i64,
    finished_at: Option<i64>,
    worker: Option<String>,
}

/// Every run, running ones first, then the newest.
pub async fn runs(pool: &AnyPool) -> Result<Vec<RunRow>, Error> {
    let rows: Vec<ListedRow> = sqlx::query_as(
        "SELECT r.id, s.name AS system, s.kind, t.name AS task, r.k, r.split, r.status, r.done, r.total,
            r.provider, r.error, r.s1, r.s1_any_of, r.started_at, r.finished_at, g.worker
         FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id JOIN tasks t ON t.id = r.task_id
         LEFT JOIN jobs g ON g.id = r.grid_job_id AND r.status = 'running'
         ORDER BY CASE WHEN r.status = 'running' THEN 0 ELSE 1 END, r.id DESC",
    )
    .fetch_all(pool)
    .await?;
    let now = crate::auth::now_ms();
    Ok(rows
        .into_iter()
        .map(|r| RunRow {
            left_seconds: (r.status == RunStatus::Running && r.done > 0 && r.total >= r.done).then(
                || (now - r.started_at) as f64 / 1000.0 * (r.total - r.done) as f64 / r.done as f64,
            ),
            worker: r.worker,
            id: r.id,
            system: r.system,
            kind: r.kind,
            task: r.task,
            k: r.k as u32,
            split: r.split as u32,
            status: r.status,
            done: r.done,
            total: r.total,
            provider: r.provider,
            error: r.error,
            s1: r.s1,
            s1_any_of: r.s1_any_of,
            seconds: r.finished_at.map(|f| (f - r.started_at) as f64 / 1000.0),
        })
        .collect())
}

/// Every shared grid's jobs by status, and the workers holding one now (by `clock`), by system.
pub async fn grids(pool: &AnyPool, clock: &crate::lease::Clock) -> Result<Vec<GridRow>, Error> {
    crate::lease::summary::<grid::GridKind>(pool, clock).await
}

/// Checks a queue request as the command line checks the same learner, then queues its jobs.
/// The binary installs it in the server's state (`learners` implements it; this crate cannot
/// depend on it).
pub trait JobDoor: Send + Sync + std::fmt::Debug {
    fn queue<'a>(
        &'a self,
        pool: &'a AnyPool,
        request: QueueRequest,
        clock: &'a crate::lease::Clock,
    ) -> Pin<Box<dyn Future<Output = Result<QueueAnswer, Error>> + Send + 'a>>;
}
