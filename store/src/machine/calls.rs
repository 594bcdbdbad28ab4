//! A run's calls to a language-model server (`machine_calls`): each test item's prompt, raw
//! reply and its reading, stored as it arrives; and the unfinished run a new start goes on with.

use crate::error::Result;
use crate::machine::write::Target;
use domain::ids::{ExampleId, RunId, TaskId};
use std::collections::HashMap;

/// The newest unfinished run (running or failed) of `t` made with exactly `settings`: the run
/// a new start goes on with. It is marked running again, its error cleared.
pub async fn resume(
    pool: &sqlx::AnyPool,
    task_id: TaskId,
    t: &Target,
    settings: &str,
) -> Result<Option<RunId>> {
    let run: Option<RunId> = sqlx::query_scalar(
        "SELECT r.id FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = $1 AND r.task_id = $2 AND r.k = $3 AND r.split = $4
           AND r.status IN ('running', 'failed') AND r.settings_json = $5
         ORDER BY r.id DESC LIMIT 1",
    )
    .bind(&t.system)
    .bind(task_id)
    .bind(i64::from(t.k))
    .bind(i64::from(t.split))
    .bind(settings)
    .fetch_optional(pool)
    .await?;
    if let Some(run) = run {
        sqlx::query(
            "UPDATE machine_runs SET status = 'running', error = NULL, finished_at = NULL WHERE id = $1",
        )
        .bind(run)
        .execute(pool)
        .await?;
    }
    Ok(run)
}

/// Stores one call; a call already stored for the item (by another process going on with the
/// same run) is kept as it was. Answers the reply stored, the one the run is scored with.
pub async fn store(
    pool: &sqlx::AnyPool,
    run: RunId,
    example: ExampleId,
    prompt: &str,
    reply: &str,
    reading_json: &str,
) -> Result<String> {
    sqlx::query(
        "INSERT INTO machine_calls (run_id, example_id, prompt, reply, reading_json)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, example_id) DO NOTHING",
    )
    .bind(run)
    .bind(example)
    .bind(prompt)
    .bind(reply)
    .bind(reading_json)
    .execute(pool)
    .await?;
    Ok(
        sqlx::query_scalar("SELECT reply FROM machine_calls WHERE run_id = $1 AND example_id = $2")
            .bind(run)
            .bind(example)
            .fetch_one(pool)
            .await?,
    )
}

/// The reply stored for each item a run has asked about (the prompts, which can be long, are
/// not read back).
pub async fn replies(pool: &sqlx::AnyPool, run: RunId) -> Result<HashMap<ExampleId, String>> {
    let rows: Vec<(ExampleId, String)> =
        sqlx::query_as("SELECT example_id, reply FROM machine_calls WHERE run_id = $1")
            .bind(run)
            .fetch_all(pool)
            .await?;
    Ok(rows.into_iter().collect())
}
