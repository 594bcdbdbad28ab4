//! Writing tasks, their data files and examples: the one place that knows how a task is stored
//! (shared by the CLUES importer and the CrossFit study tasks). Callers own the transaction.

use domain::ids::TaskId;
use domain::task::{Context, Example, Family, TaskSpec};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;

/// A column's JSON, its failure a bind error (plain data always serialises).
fn json(value: &impl Serialize) -> Result<String, sqlx::Error> {
    serde_json::to_string(value).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// SHA-256 of an item's context, question and answer: the same item across files.
#[expect(
    clippy::expect_used,
    reason = "a tuple of strings always serialises, and the key's bytes must stay as stored"
)]
pub fn content_key(context: &Context, question: &str, official: &[String]) -> String {
    let canonical =
        serde_json::to_string(&(context.primary(), context.second(), question, official))
            .expect("strings serialise");
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

/// The files (name, SHA-256, by name) a task named `name` was imported from, or `None` when
/// no such task is stored: what a re-import is compared with.
pub async fn stored_files(
    conn: &mut AnyConnection,
    name: &str,
) -> Result<Option<Vec<(String, String)>>, sqlx::Error> {
    let Some(task_id): Option<TaskId> = sqlx::query_scalar("SELECT id FROM tasks WHERE name = $1")
        .bind(name)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(None);
    };
    let files = sqlx::query_as(
        "SELECT file_name, sha256 FROM data_files WHERE task_id = $1 ORDER BY file_name",
    )
    .bind(task_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(Some(files))
}

/// A note on a task's data found at import (`quality_issues`): of a file and line where it has
/// them, its kind and what it says.
pub async fn insert_note(
    conn: &mut AnyConnection,
    task_id: TaskId,
    file_id: Option<i64>,
    line: Option<usize>,
    kind: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO quality_issues (task_id, file_id, line_no, kind, detail)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(task_id)
    .bind(file_id)
    .bind(line.map(|l| l as i64))
    .bind(kind)
    .bind(detail)
    .execute(conn)
    .await?;
    Ok(())
}

/// Inserts a task row; returns its id. Text-to-text tasks are stored with family
/// 'classification' and their metric in `text_metric` (see the text_tasks migration);
/// `catalog::load_spec` reads them back as text-to-text.
pub async fn insert_task(
    conn: &mut AnyConnection,
    spec: &TaskSpec,
    source: &str,
) -> Result<TaskId, sqlx::Error> {
    let (family, text_metric) = match (spec.family, spec.metric) {
        (Family::TextToText, Some(m)) => (Family::Classification, Some(m.name())),
        (f, _) => (f, None),
    };
    sqlx::query_scalar::<_, TaskId>(
        "INSERT INTO tasks (name, family, description, labels_json, question_types_json, no_answer, source, text_metric)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(&spec.name)
    .bind(family.as_str())
    .bind(&spec.description)
    .bind(json(&spec.labels)?)
    .bind(json(&spec.question_types)?)
    .bind(spec.no_answer.as_str())
    .bind(source)
    .bind(text_metric)
    .fetch_one(conn)
    .await
}

/// A data file's row: a test file (`train` = None) or the training file of (k, split).
pub struct FileRow<'a> {
    pub name: &'a str,
    pub train: Option<(u32, u32)>,
    pub sha256: &'a str,
    pub n_rows: usize,
}

pub async fn insert_file(
    conn: &mut AnyConnection,
    task_id: TaskId,
    f: &FileRow<'_>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar::<_, i64>(
        "INSERT INTO data_files (task_id, file_name, kind, k, split, sha256, n_rows) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(task_id)
    .bind(f.name)
    .bind(if f.train.is_some() { "train" } else { "test" })
    .bind(f.train.map(|(k, _)| i64::from(k)))
    .bind(f.train.map(|(_, s)| i64::from(s)))
    .bind(f.sha256)
    .bind(f.n_rows as i64)
    .fetch_one(conn)
    .await
}

/// Inserts one example, line `line` (1-based) of its file.
pub async fn insert_example(
    conn: &mut AnyConnection,
    file_id: i64,
    line: usize,
    ex: &Example,
    content_key: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO examples (file_id, line_no, ext_id, context, context2, question, question_type,
                               gold_official, gold_spans, extra_json, content_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(file_id)
    .bind(line as i64)
    .bind(&ex.id)
    .bind(ex.context.primary())
    .bind(ex.context.second())
    .bind(&ex.question)
    .bind(&ex.question_type)
    .bind(json(&ex.gold.official)?)
    .bind(json(&ex.gold.spans)?)
    .bind(json(&ex.extra)?)
    .bind(content_key)
    .execute(conn)
    .await?;
    Ok(())
}
