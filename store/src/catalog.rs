//! Reading tasks and their examples back from the database.
//! Shared by the server functions and the server's command line (e.g. `score --task`).

use crate::error::Error;
use domain::crossfit::metrics::Metric;
use domain::ids::{ExampleId, TaskId};
use domain::shots::{self, ShotSets};
use domain::spans::Span;
use domain::task::{Context, Example, Family, Gold, NoAnswer, TaskSpec};
use domain::wire::tasks::{
    ItemPreview, QualityRow, ShotGroup, TaskInfo, TaskSummary, QUALITY_ROWS,
};
use sqlx::AnyPool;

/// A stored value that does not parse: logged, and an internal error for the client.
pub(crate) fn corrupt(what: &str, e: impl std::fmt::Display) -> Error {
    Error::internal(format!("stored {what} cannot be read: {e}"))
}

/// A task's `family` and `text_metric` columns, flattened into each row struct that reads a
/// task's family: text-to-text tasks are stored with family 'classification' and their metric
/// (see the text_tasks migration), so neither column alone is the family.
#[derive(sqlx::FromRow)]
pub struct FamilyColumns {
    family: String,
    text_metric: Option<String>,
}

impl FamilyColumns {
    /// The one decoder of these columns.
    pub fn decode(&self) -> Result<(Family, Option<Metric>), Error> {
        match &self.text_metric {
            Some(m) => Ok((
                Family::TextToText,
                Some(Metric::parse(m).ok_or_else(|| corrupt("text metric", m))?),
            )),
            None => Ok((
                Family::parse(&self.family).ok_or_else(|| corrupt("family", &self.family))?,
                None,
            )),
        }
    }
}

/// A `tasks` row as stored: the columns of [`TASK_COLUMNS`], which a query joining `tasks t`
/// selects to read a task with what else it reads (a study with its task, in one query).
#[derive(sqlx::FromRow)]
pub(crate) struct TaskRow {
    id: TaskId,
    name: String,
    #[sqlx(flatten)]
    family: FamilyColumns,
    description: String,
    labels_json: String,
    question_types_json: String,
    no_answer: NoAnswer,
    source: String,
}

/// The columns of a [`TaskRow`], of `tasks` as `t`.
pub(crate) const TASK_COLUMNS: &str = "t.id, t.name, t.family, t.description, t.labels_json,
    t.question_types_json, t.no_answer, t.source, t.text_metric";

impl TaskRow {
    /// The task's id, spec and source.
    pub(crate) fn decode(self) -> Result<(TaskId, TaskSpec, String), Error> {
        let (family, metric) = self.family.decode()?;
        let spec = TaskSpec {
            name: self.name,
            family,
            metric,
            description: self.description,
            labels: serde_json::from_str(&self.labels_json).map_err(|e| corrupt("labels", e))?,
            question_types: serde_json::from_str(&self.question_types_json)
                .map_err(|e| corrupt("question types", e))?,
            no_answer: self.no_answer,
        };
        Ok((self.id, spec, self.source))
    }
}

/// A task's id, spec and source, or `NotFound`.
pub async fn load_spec(pool: &AnyPool, name: &str) -> Result<(TaskId, TaskSpec, String), Error> {
    let row: TaskRow = sqlx::query_as(&format!(
        "SELECT {TASK_COLUMNS} FROM tasks t WHERE t.name = $1"
    ))
    .bind(name)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("no task named {name:?}")))?;
    row.decode()
}

/// A task with the counts the catalogue lists.
#[derive(sqlx::FromRow)]
struct SummaryRow {
    id: TaskId,
    name: String,
    #[sqlx(flatten)]
    family: FamilyColumns,
    source: String,
    test_items: i64,
    train_files: i64,
    issues: i64,
}

pub async fn task_summaries(pool: &AnyPool) -> Result<Vec<TaskSummary>, Error> {
    let rows: Vec<SummaryRow> = sqlx::query_as(
        "SELECT t.id, t.name, t.family, t.text_metric, t.source,
            (SELECT COUNT(*) FROM examples e JOIN data_files f ON f.id = e.file_id
              WHERE f.task_id = t.id AND f.kind = 'test') AS test_items,
            (SELECT COUNT(*) FROM data_files f WHERE f.task_id = t.id AND f.kind = 'train') AS train_files,
            (SELECT COUNT(*) FROM quality_issues q WHERE q.task_id = t.id) AS issues
         FROM tasks t ORDER BY t.source DESC, t.name",
    )
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let sets = shot_sets(pool, r.id).await?;
        let mut shot_files: Vec<shots::ShotFile> = sets.keys().copied().collect();
        shot_files.sort_unstable();
        out.push(TaskSummary {
            family: r.family.decode()?.0,
            name: r.name,
            chains: shots::chains(&sets),
            shot_files,
            source: r.source,
            test_items: r.test_items,
            train_files: r.train_files,
            quality_issues: r.issues,
        });
    }
    Ok(out)
}

/// The (k, split) shot groups of a task.
pub async fn shot_groups(pool: &AnyPool, task_id: TaskId) -> Result<Vec<(u32, u32)>, Error> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT k, split FROM data_files WHERE task_id = $1 AND kind = 'train' ORDER BY k, split",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(k, s)| (k as u32, s as u32))
        .collect())
}

/// The names of the span tasks (not text-to-text) that have training files: what the
/// baseline trains on with `--all`.
pub async fn span_tasks_with_training(pool: &AnyPool) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT t.name FROM tasks t JOIN data_files f ON f.task_id = t.id
         WHERE f.kind = 'train' AND t.text_metric IS NULL ORDER BY t.name",
    )
    .fetch_all(pool)
    .await?)
}

/// The content keys of each training file of a task: what nesting is decided on.
pub async fn shot_sets(pool: &AnyPool, task_id: TaskId) -> Result<ShotSets, Error> {
    let keys: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT f.k, f.split, e.content_key FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = 'train'",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    let mut sets = ShotSets::new();
    for (k, split, key) in keys {
        sets.entry((k as u32, split as u32))
            .or_default()
            .insert(key);
    }
    Ok(sets)
}

/// How many test items a task has.
pub async fn test_count(pool: &AnyPool, task_id: TaskId) -> Result<i64, Error> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM examples e JOIN data_files f ON f.id = e.file_id WHERE f.task_id = $1 AND f.kind = 'test'",
    )
    .bind(task_id)
    .fetch_one(pool)
    .await?)
}

pub async fn task_detail(pool: &AnyPool, name: &str) -> Result<TaskInfo, Error> {
    let (task_id, spec, source) = load_spec(pool, name).await?;
    let test_items = test_count(pool, task_id).await?;
    let shot_groups = sqlx::query_as::<_, ShotGroup>(
        "SELECT k, split, n_rows, file_name FROM data_files WHERE task_id = $1 AND kind = 'train' ORDER BY k, split",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    let quality_counts = sqlx::query_as::<_, (String, i64)>(
        "SELECT kind, COUNT(*) FROM quality_issues WHERE task_id = $1 GROUP BY kind ORDER BY kind",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    let quality_rows = sqlx::query_as::<_, QualityRow>(
        "SELECT f.file_name, q.line_no, q.kind, q.detail FROM quality_issues q
         LEFT JOIN data_files f ON f.id = q.file_id WHERE q.task_id = $1 ORDER BY q.id LIMIT $2",
    )
    .bind(task_id)
    .bind(QUALITY_ROWS)
    .fetch_all(pool)
    .await?;
    Ok(TaskInfo {
        spec,
        source,
        test_items,
        shot_groups,
        quality_counts,
        quality_rows,
    })
}

/// The context of an `examples` row from its `context` and `context2` columns.
pub(crate) fn context_of(primary: String, second: Option<String>) -> Context {
    match second {
        Some(hypothesis) => Context::Pair {
            premise: primary,
            hypothesis,
        },
        None => Context::Single { text: primary },
    }
}

/// A test item as a worker sees it: its id, text and question.
#[derive(sqlx::FromRow)]
struct TestItem {
    ext_id: String,
    context: String,
    context2: Option<String>,
    question: String,
}

pub async fn preview_item(pool: &AnyPool, name: &str, position: i64) -> Result<ItemPreview, Error> {
    let (task_id, _, _) = load_spec(pool, name).await?;
    let total = test_count(pool, task_id).await?;
    if total == 0 {
        return Err(Error::NotFound(format!("task {name:?} has no test items")));
    }
    let position = position.rem_euclid(total);
    let item: TestItem = sqlx::query_as(
        "SELECT e.ext_id, e.context, e.context2, e.question FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = 'test' ORDER BY e.line_no LIMIT 1 OFFSET $2",
    )
    .bind(task_id)
    .bind(position)
    .fetch_one(pool)
    .await?;
    Ok(ItemPreview {
        position,
        total,
        id: item.ext_id,
        context: context_of(item.context, item.context2),
        question: item.question,
    })
}

/// An example's `gold_official` and `gold_spans` columns, flattened into each row struct that
/// reads a gold (server side only).
#[derive(sqlx::FromRow)]
pub(crate) struct GoldColumns {
    gold_official: String,
    gold_spans: String,
}

impl GoldColumns {
    /// The one decoder of these columns.
    pub(crate) fn decode(&self) -> Result<Gold, Error> {
        Ok(Gold {
            official: serde_json::from_str(&self.gold_official).map_err(|e| corrupt("gold", e))?,
            spans: serde_json::from_str::<Vec<Span>>(&self.gold_spans)
                .map_err(|e| corrupt("gold spans", e))?,
        })
    }
}

/// An `examples` row as stored, gold included: the one decoder of the table's columns.
#[derive(sqlx::FromRow)]
struct ExampleRow {
    id: ExampleId,
    ext_id: String,
    context: String,
    context2: Option<String>,
    question: String,
    question_type: Option<String>,
    #[sqlx(flatten)]
    gold: GoldColumns,
    extra_json: String,
}

impl ExampleRow {
    /// The row id and the example it holds.
    fn decode(self) -> Result<(ExampleId, Example), Error> {
        Ok((
            self.id,
            Example {
                id: self.ext_id,
                context: context_of(self.context, self.context2),
                question: self.question,
                question_type: self.question_type,
                gold: self.gold.decode()?,
                extra: serde_json::from_str(&self.extra_json).map_err(|e| corrupt("extra", e))?,
            },
        ))
    }
}

/// A test item's row id, id in its file and gold.
#[derive(sqlx::FromRow)]
struct TestGold {
    id: ExampleId,
    ext_id: String,
    #[sqlx(flatten)]
    gold: GoldColumns,
}

/// Each test item of a task with its id in the file and its gold, in file order (server side
/// only: what the report scores against).
pub async fn test_golds(
    pool: &AnyPool,
    task_id: TaskId,
) -> Result<Vec<(ExampleId, String, Gold)>, Error> {
    let rows: Vec<TestGold> = sqlx::query_as(
        "SELECT e.id, e.ext_id, e.gold_official, e.gold_spans FROM examples e
         JOIN data_files f ON f.id = e.file_id WHERE f.task_id = $1 AND f.kind = 'test' ORDER BY e.line_no",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|r| Ok((r.id, r.ext_id, r.gold.decode()?)))
        .collect()
}

/// The row ids of a task's test items (`shots` = None) or of the training file `(k, split)`,
/// in file order: what a worker's place is made of.
pub async fn example_ids(
    db: impl sqlx::AnyExecutor<'_>,
    task_id: TaskId,
    shots: Option<(u32, u32)>,
) -> Result<Vec<ExampleId>, Error> {
    let (k, split) = shots.unzip();
    Ok(sqlx::query_scalar(
        "SELECT e.id FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = $2 AND f.k IS NOT DISTINCT FROM $3
            AND f.split IS NOT DISTINCT FROM $4 ORDER BY e.line_no",
    )
    .bind(task_id)
    .bind(if shots.is_some() { "train" } else { "test" })
    .bind(k.map(i64::from))
    .bind(split.map(i64::from))
    .fetch_all(db)
    .await?)
}

/// All test examples of a task, gold included, in file order (server-side scoring only).
pub async fn test_examples(pool: &AnyPool, task_id: TaskId) -> Result<Vec<Example>, Error> {
    Ok(examples_of(pool, task_id, None)
        .await?
        .into_iter()
        .map(|(_, e)| e)
        .collect())
}

/// The examples of a task's test file (`shots` = None) or of the training file of
/// `(k, split)`, with their row ids, in file order, gold included (server side only).
pub async fn examples_of(
    pool: &AnyPool,
    task_id: TaskId,
    shots: Option<(u32, u32)>,
) -> Result<Vec<(ExampleId, Example)>, Error> {
    let (k, split) = shots.unzip();
    let rows: Vec<ExampleRow> = sqlx::query_as(
        "SELECT e.id, e.ext_id, e.context, e.context2, e.question, e.question_type, e.gold_official, e.gold_spans, e.extra_json
         FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = $2 AND f.k IS NOT DISTINCT FROM $3 AND f.split IS NOT DISTINCT FROM $4 ORDER BY e.line_no",
    )
    .bind(task_id)
    .bind(if shots.is_some() { "train" } else { "test" })
    .bind(k.map(i64::from))
    .bind(split.map(i64::from))
    .fetch_all(pool)
    .await?;
    rows.into_iter().map(ExampleRow::decode).collect()
}
