//! Synthetic finished annotators for load runs (`clues-lab load fill`): a study gets as many
//! zero-shot workers as it takes to reach a number of annotation rows, each answering every
//! test item with its gold (written with SQL in one transaction; for benchmarks and tests of
//! large exports only). They are marked synthetic, so no report or export counts them unless
//! asked to. Here, beside the study's other writes of `users`, `assignments` and their items.

use crate::db::Backend;
use crate::error::{Error, Result};
use crate::tx::Lock;
use domain::ids::{ConfigId, StudyId, TaskId};
use sqlx::AnyPool;

/// Adds finished zero-shot workers named `fill-<tag>-<study>-<run>-<n>` to `study` until about `rows` new
/// annotation rows exist; returns (workers, rows) added.
pub async fn fill(pool: &AnyPool, study: StudyId, rows: u64, tag: &str) -> Result<(u64, u64)> {
    let (task_id, config_id): (TaskId, ConfigId) = sqlx::query_as(
        "SELECT s.task_id, (SELECT MAX(id) FROM study_configs c WHERE c.study_id = s.id)
         FROM studies s WHERE s.id = $1",
    )
    .bind(study)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::Invalid(format!("there is no study {study}")))?;
    let test_items: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = 'test'",
    )
    .bind(task_id)
    .fetch_one(pool)
    .await?;
    if test_items == 0 {
        return Err(Error::Invalid(format!(
            "study {study}'s task has no test items"
        )));
    }
    let workers = rows.div_ceil(test_items as u64);
    let now = crate::auth::now_ms();
    // Names unique to this run: a second fill, of this study or another, makes new workers
    // instead of failing on a name taken by the first.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let prefix = format!("fill-{tag}-{study}-{run}-");
    // The JSON the rows carry is built with each dialect's own functions.
    let backend = Backend::of(pool);
    let golds = backend.json_elements("e.gold_official");
    let (crowd, answer) = match backend {
        Backend::Sqlite => (
            "json_object('platform', 'prolific', 'worker', u.name, 'study', 'fill',
                 'session', 's' || u.id, 'assignment', NULL)"
                .to_string(),
            format!(
                "(SELECT json_group_array(json_object('text', g.value, 'offset', NULL,
                     'length', length(g.value))) FROM {golds} g)"
            ),
        ),
        Backend::Postgres => (
            "json_build_object('platform', 'prolific', 'worker', u.name, 'study', 'fill',
                 'session', 's' || u.id, 'assignment', NULL)::text"
                .to_string(),
            format!(
                "(SELECT COALESCE(json_agg(json_build_object('text', g.value, 'offset', NULL,
                     'length', length(g.value))), '[]'::json)::text FROM {golds} g)"
            ),
        ),
    };
    let mut tx = crate::tx::begin_immediate(pool, &[Lock::Study(study)]).await?;
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
         INSERT INTO users (name, role) SELECT $2 || i, 'worker' FROM n",
    )
    .bind(workers as i64)
    .bind(&prefix)
    .execute(&mut *tx)
    .await?;
    sqlx::query(&format!(
        "INSERT INTO assignments (study_id, task_id, worker_id, k, config_id, training_split,
             order_seed, status, crowd_json, started_at, last_activity, finished_at, synthetic)
         SELECT $1, $2, u.id, 0, $3, NULL, u.id, 'finished', {crowd}, $4, $5, $6, 1
         FROM users u WHERE u.name LIKE $7 || '%'"
    ))
    .bind(study)
    .bind(task_id)
    .bind(config_id)
    .bind(now - 3_600_000)
    .bind(now)
    .bind(now)
    .bind(&prefix)
    .execute(&mut *tx)
    .await?;
    let added = sqlx::query(&format!(
        "INSERT INTO assignment_items (assignment_id, position, phase, example_id, shown_at,
             submitted_at, client_id, answer_json, confidence, s1, s1_any_of)
         SELECT a.id, e.line_no - 1, 'test', e.id, a.started_at, a.finished_at,
             'fill-' || e.line_no, {answer}, 4, 1.0, 1.0
         FROM assignments a JOIN users u ON u.id = a.worker_id
         CROSS JOIN examples e JOIN data_files f ON f.id = e.file_id
         WHERE u.name LIKE $1 || '%' AND f.task_id = a.task_id AND f.kind = 'test'"
    ))
    .bind(&prefix)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok((workers, added))
}
