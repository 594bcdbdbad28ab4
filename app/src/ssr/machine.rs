//! Reading the model track's runs: the finished ones for the report, and every run with its
//! progress for the models page (the server's model module writes them).

use crate::domain::report::calibration::MachineAnswer;
use crate::domain::report::machine::MachineRun;
use crate::error::AppError;
use crate::ssr::catalog::family_of_row;
use crate::wire::machine::RunRow;
use sqlx::{AnyPool, Row};

/// Every finished evaluation, for the report.
pub async fn done_runs(pool: &AnyPool) -> Result<Vec<MachineRun>, AppError> {
    let rows = sqlx::query(
        "SELECT s.name AS system, t.name AS task, t.family, t.text_metric, r.k, r.split, r.s1, r.s1_any_of
         FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id JOIN tasks t ON t.id = r.task_id
         WHERE r.status = 'done' ORDER BY s.name, t.name, r.k, r.split",
    )
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(MachineRun {
                system: r.get("system"),
                task: r.get("task"),
                family: family_of_row(r)?.0,
                k: r.get::<i64, _>("k") as u32,
                split: r.get::<i64, _>("split") as u32,
                official: r.get::<Option<f64>, _>("s1").unwrap_or(0.0),
                any_of: r.get::<Option<f64>, _>("s1_any_of").unwrap_or(0.0),
            })
        })
        .collect()
}

/// Every machine answer with a probability on a label task's test item, for the reliability
/// diagram (imports have none).
pub async fn confident_answers(pool: &AnyPool) -> Result<Vec<MachineAnswer>, AppError> {
    let rows: Vec<(String, String, f64, f64)> = sqlx::query_as(
        "SELECT s.name, t.name, p.probability, p.s1
         FROM machine_predictions p JOIN machine_runs r ON r.id = p.run_id
         JOIN machine_systems s ON s.id = r.system_id JOIN tasks t ON t.id = r.task_id
         WHERE r.status = 'done' AND t.family = 'classification' AND p.probability IS NOT NULL
         ORDER BY s.name, t.name",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(system, task, probability, s1)| MachineAnswer {
            system,
            task,
            probability,
            correct: s1 >= 1.0 - 1e-9,
        })
        .collect())
}

/// Every run, running ones first, then the newest.
pub async fn runs(pool: &AnyPool) -> Result<Vec<RunRow>, AppError> {
    let rows = sqlx::query(
        "SELECT r.id, s.name AS system, s.kind, t.name AS task, r.k, r.split, r.status, r.done, r.total,
            r.provider, r.error, r.s1, r.s1_any_of, r.started_at, r.finished_at
         FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id JOIN tasks t ON t.id = r.task_id
         ORDER BY r.status = 'running' DESC, r.id DESC",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| RunRow {
            id: r.get("id"),
            system: r.get("system"),
            kind: r.get("kind"),
            task: r.get("task"),
            k: r.get::<i64, _>("k") as u32,
            split: r.get::<i64, _>("split") as u32,
            status: r.get("status"),
            done: r.get("done"),
            total: r.get("total"),
            provider: r.get("provider"),
            error: r.get("error"),
            s1: r.get("s1"),
            s1_any_of: r.get("s1_any_of"),
            seconds: r
                .get::<Option<i64>, _>("finished_at")
                .map(|f| (f - r.get::<i64, _>("started_at")) as f64 / 1000.0),
        })
        .collect())
}
