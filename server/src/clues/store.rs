//! Writing imported tasks to the database, all in one transaction: an import either stores
//! everything or nothing. Identical files already stored are left alone; different ones refused.

use super::checks::Note;
use super::load::{FileKind, TaskData};
use crate::error::{Result, ServerError};
use sqlx::{Sqlite, SqlitePool, Transaction};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Imported,
    /// The same files (by SHA-256) were imported before; nothing was written.
    Unchanged,
}

/// Stores every task, or none of them.
pub async fn store_tasks(
    pool: &SqlitePool,
    tasks: &[TaskData],
    source: &str,
) -> Result<Vec<Outcome>> {
    let mut tx = pool.begin().await?;
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(store_task(&mut tx, task, source).await?);
    }
    tx.commit().await?;
    Ok(outcomes)
}

async fn store_task(
    tx: &mut Transaction<'_, Sqlite>,
    task: &TaskData,
    source: &str,
) -> Result<Outcome> {
    let spec = &task.spec;
    let existing: Option<i64> = sqlx::query_scalar("SELECT id FROM tasks WHERE name = ?")
        .bind(&spec.name)
        .fetch_optional(&mut **tx)
        .await?;
    if let Some(task_id) = existing {
        let stored: Vec<(String, String)> = sqlx::query_as(
            "SELECT file_name, sha256 FROM data_files WHERE task_id = ? ORDER BY file_name",
        )
        .bind(task_id)
        .fetch_all(&mut **tx)
        .await?;
        let mut incoming: Vec<(String, String)> = task
            .files
            .iter()
            .map(|f| (f.name.clone(), f.sha256.clone()))
            .collect();
        incoming.sort();
        if stored == incoming {
            return Ok(Outcome::Unchanged);
        }
        let differing: std::collections::BTreeSet<&str> = incoming
            .iter()
            .filter(|f| !stored.contains(f))
            .chain(stored.iter().filter(|f| !incoming.contains(f)))
            .map(|(n, _)| n.as_str())
            .collect();
        return Err(ServerError::Conflict(format!(
            "task {} is already imported from different files ({}); stored data is never altered, so nothing was imported",
            spec.name,
            differing.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }

    let task_id = sqlx::query(
        "INSERT INTO tasks (name, family, description, labels_json, question_types_json, no_answer, source)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&spec.name)
    .bind(spec.family.as_str())
    .bind(&spec.description)
    .bind(serde_json::to_string(&spec.labels).expect("labels serialise"))
    .bind(serde_json::to_string(&spec.question_types).expect("question types serialise"))
    .bind(spec.no_answer.as_str())
    .bind(source)
    .execute(&mut **tx)
    .await?
    .last_insert_rowid();

    let mut file_ids: HashMap<&str, i64> = HashMap::new();
    for file in &task.files {
        let (kind, k, split) = match file.kind {
            FileKind::Test => ("test", None, None),
            FileKind::Train { k, split } => ("train", Some(k as i64), Some(split as i64)),
        };
        let file_id = sqlx::query(
            "INSERT INTO data_files (task_id, file_name, kind, k, split, sha256, n_rows) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(task_id)
        .bind(&file.name)
        .bind(kind)
        .bind(k)
        .bind(split)
        .bind(&file.sha256)
        .bind(file.rows.len() as i64)
        .execute(&mut **tx)
        .await?
        .last_insert_rowid();
        file_ids.insert(&file.name, file_id);
        for row in &file.rows {
            let ex = &row.example;
            sqlx::query(
                "INSERT INTO examples (file_id, line_no, ext_id, context, context2, question, question_type,
                                       gold_official, gold_spans, extra_json, content_key)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(file_id)
            .bind(row.line as i64)
            .bind(&ex.id)
            .bind(ex.context.primary())
            .bind(ex.context.second())
            .bind(&ex.question)
            .bind(&ex.question_type)
            .bind(serde_json::to_string(&ex.gold.official).expect("strings serialise"))
            .bind(serde_json::to_string(&ex.gold.spans).expect("spans serialise"))
            .bind(serde_json::to_string(&ex.extra).expect("json serialises"))
            .bind(&row.content_key)
            .execute(&mut **tx)
            .await?;
        }
    }
    for Note {
        file,
        line,
        kind,
        detail,
    } in &task.notes
    {
        sqlx::query("INSERT INTO quality_issues (task_id, file_id, line_no, kind, detail) VALUES (?, ?, ?, ?, ?)")
            .bind(task_id)
            .bind(file.as_deref().and_then(|f| file_ids.get(f).copied()))
            .bind(line.map(|l| l as i64))
            .bind(kind)
            .bind(detail)
            .execute(&mut **tx)
            .await?;
    }
    Ok(Outcome::Imported)
}
