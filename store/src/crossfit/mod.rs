//! CrossFit tasks on the database: storing imported or sampled files (all or nothing) and the
//! task -> metric table here; runs scored with the task's metric (runs), partitions and ARG
//! reports (partitions), the fine-tuning and upstream-learning jobs workers share (jobs,
//! upstream), and the copy of a task into the crowd protocol's tables (study_task).

use crate::catalog::corrupt;
use crate::error::Error;
use crate::tx::Lock;
use domain::crossfit::metrics::Metric;
use domain::crossfit::sampler::TsvLine;
use domain::wire::crossfit::TaskRow;
use sqlx::AnyPool;
use std::collections::BTreeSet;

pub mod jobs;
mod listed;
mod partitions;
mod runs;
mod study_task;
pub mod upstream;

pub use partitions::{arg_report, partition, partitions, save_partition};
pub use runs::{run_scores, seeds_with_run, store_run};
pub use study_task::make_study_task;

/// A file to store: its CrossFit name, what the name says, its hash and lines.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFile {
    pub file_name: String,
    pub k: u32,
    pub seed: u32,
    pub split: String,
    pub sha256: String,
    pub lines: Vec<TsvLine>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NewTask {
    pub name: String,
    pub ontology: String,
    pub metric: Metric,
    pub source: String,
    pub files: Vec<NewFile>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Imported,
    Unchanged,
}

/// Stores tasks in one transaction. A task already stored with exactly these files (by name
/// and hash) is unchanged; any difference refuses the whole import.
pub async fn store_tasks(pool: &AnyPool, tasks: &[NewTask]) -> Result<Vec<Outcome>, Error> {
    let locks: Vec<Lock> = tasks.iter().map(|t| Lock::Task(&t.name)).collect();
    let mut tx = crate::tx::begin_write(pool, &locks).await?;
    let result = async {
        let mut out = Vec::new();
        for t in tasks {
            let existing: Option<i64> =
                sqlx::query_scalar("SELECT id FROM crossfit_tasks WHERE name = $1")
                    .bind(&t.name)
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some(id) = existing {
                let stored: BTreeSet<(String, String)> =
                    sqlx::query_as("SELECT file_name, sha256 FROM crossfit_files WHERE task_id = $1")
                        .bind(id)
                        .fetch_all(&mut *tx)
                        .await?
                        .into_iter()
                        .collect();
                let given: BTreeSet<(String, String)> = t
                    .files
                    .iter()
                    .map(|f| (f.file_name.clone(), f.sha256.clone()))
                    .collect();
                if stored != given {
                    return Err(Error::Refused(format!(
                        "task {} is already imported with other files; stored data is never altered",
                        t.name
                    )));
                }
                out.push(Outcome::Unchanged);
                continue;
            }
            let task_id = sqlx::query_scalar::<_, i64>(
                "INSERT INTO crossfit_tasks (name, ontology, metric, source) VALUES ($1, $2, $3, $4) RETURNING id",
            )
            .bind(&t.name)
            .bind(&t.ontology)
            .bind(t.metric.name())
            .bind(&t.source)
            .fetch_one(&mut *tx)
            .await?;
            for f in &t.files {
                let file_id = sqlx::query_scalar::<_, i64>(
                    "INSERT INTO crossfit_files (task_id, file_name, k, seed, split, sha256, n_rows)
                     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .bind(task_id)
                .bind(&f.file_name)
                .bind(i64::from(f.k))
                .bind(i64::from(f.seed))
                .bind(&f.split)
                .bind(&f.sha256)
                .bind(f.lines.len() as i64)
                .fetch_one(&mut *tx)
                .await?;
                for (i, l) in f.lines.iter().enumerate() {
                    sqlx::query(
                        "INSERT INTO crossfit_examples (file_id, line_no, input, output) VALUES ($1, $2, $3, $4)",
                    )
                    .bind(file_id)
                    .bind(i as i64 + 1)
                    .bind(&l.input)
                    .bind(&l.output)
                    .execute(&mut *tx)
                    .await?;
                }
            }
            out.push(Outcome::Imported);
        }
        Ok(out)
    }
    .await;
    crate::tx::finish(tx, result).await
}

/// A CrossFit task as stored.
#[derive(sqlx::FromRow)]
struct TaskEntry {
    id: i64,
    name: String,
    ontology: String,
    metric: String,
    source: String,
}

/// One of a CrossFit task's files: its k and seed, which split, how many lines.
#[derive(sqlx::FromRow)]
struct FileEntry {
    k: i64,
    seed: i64,
    split: String,
    n_rows: i64,
}

pub async fn list_tasks(pool: &AnyPool) -> Result<Vec<TaskRow>, Error> {
    let tasks: Vec<TaskEntry> = sqlx::query_as(
        "SELECT id, name, ontology, metric, source FROM crossfit_tasks ORDER BY name",
    )
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(tasks.len());
    for TaskEntry {
        id,
        name,
        ontology,
        metric,
        source,
    } in tasks
    {
        let files: Vec<FileEntry> = sqlx::query_as(
            "SELECT k, seed, split, n_rows FROM crossfit_files WHERE task_id = $1 ORDER BY seed, k",
        )
        .bind(id)
        .fetch_all(pool)
        .await?;
        let seeds: BTreeSet<u32> = files.iter().map(|f| f.seed as u32).collect();
        let ks: BTreeSet<u32> = files.iter().map(|f| f.k as u32).collect();
        out.push(TaskRow {
            metric: Metric::parse(&metric).ok_or_else(|| corrupt("metric", &metric))?,
            test_items: files
                .iter()
                .find(|f| f.split == "test")
                .map_or(0, |f| f.n_rows),
            name,
            ontology,
            source,
            seeds: seeds.into_iter().collect(),
            ks: ks.into_iter().collect(),
        })
    }
    Ok(out)
}

async fn task_id(pool: &AnyPool, name: &str) -> Result<(i64, Metric), Error> {
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT id, metric FROM crossfit_tasks WHERE name = $1")
            .bind(name)
            .fetch_optional(pool)
            .await?;
    let (id, metric) =
        row.ok_or_else(|| Error::NotFound(format!("no CrossFit task named {name:?}")))?;
    Ok((
        id,
        Metric::parse(&metric).ok_or_else(|| corrupt("metric", &metric))?,
    ))
}

/// Changes a task's ontology path and metric (the task -> metric table).
pub async fn set_task_meta(
    pool: &AnyPool,
    name: &str,
    ontology: &str,
    metric: &str,
) -> Result<(), Error> {
    let metric = Metric::parse(metric)
        .ok_or_else(|| Error::Invalid(format!("{metric:?} is not one of CrossFit's metrics")))?;
    let (id, _) = task_id(pool, name).await?;
    sqlx::query("UPDATE crossfit_tasks SET ontology = $1, metric = $2 WHERE id = $3")
        .bind(ontology.trim())
        .bind(metric.name())
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// The lines of a task's `split` file for `seed` (the smallest k when several have one).
pub async fn split_lines(
    pool: &AnyPool,
    task: &str,
    seed: u32,
    split: &str,
) -> Result<Vec<TsvLine>, Error> {
    let (id, _) = task_id(pool, task).await?;
    let file: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM crossfit_files WHERE task_id = $1 AND seed = $2 AND split = $3 ORDER BY k LIMIT 1",
    )
    .bind(id)
    .bind(i64::from(seed))
    .bind(split)
    .fetch_optional(pool)
    .await?;
    let file =
        file.ok_or_else(|| Error::NotFound(format!("{task} has no {split} file for seed {seed}")))?;
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT input, output FROM crossfit_examples WHERE file_id = $1 ORDER BY line_no",
    )
    .bind(file)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(input, output)| TsvLine { input, output })
        .collect())
}

/// A task's metric (the task must exist).
pub async fn metric_of(pool: &AnyPool, task: &str) -> Result<Metric, Error> {
    Ok(task_id(pool, task).await?.1)
}

pub async fn seeds_of(pool: &AnyPool, task: &str) -> Result<Vec<u32>, Error> {
    let (id, _) = task_id(pool, task).await?;
    let seeds: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT seed FROM crossfit_files WHERE task_id = $1 AND split = 'test' ORDER BY seed",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    Ok(seeds.into_iter().map(|s| s as u32).collect())
}
