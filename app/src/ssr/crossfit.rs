//! CrossFit tasks on the database: storing imported or sampled files (all or nothing), the
//! task -> metric table, partitions, runs scored with the task's metric, and ARG reports.

use crate::domain::crossfit::metrics::{evaluate, Metric, Score};
use crate::domain::crossfit::partition::{arg_over_seeds, Partition};
use crate::domain::crossfit::sampler::{to_tsv, TsvLine};
use crate::domain::task::{Context, Example, Family, Gold, NoAnswer, QuestionType, TaskSpec};
use crate::error::AppError;
use crate::ssr::catalog::corrupt;
use crate::ssr::task_store;
pub use crate::wire::crossfit::{ArgReport, RunScore, TaskRow};
use sqlx::AnyPool;
use std::collections::{BTreeMap, BTreeSet};

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
pub async fn store_tasks(pool: &AnyPool, tasks: &[NewTask]) -> Result<Vec<Outcome>, AppError> {
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
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
                    return Err(AppError::Refused(format!(
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
    crate::ssr::tx::finish(tx, result).await
}

pub async fn list_tasks(pool: &AnyPool) -> Result<Vec<TaskRow>, AppError> {
    let tasks: Vec<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT id, name, ontology, metric, source FROM crossfit_tasks ORDER BY name",
    )
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(tasks.len());
    for (id, name, ontology, metric, source) in tasks {
        let files: Vec<(i64, i64, String, i64)> = sqlx::query_as(
            "SELECT k, seed, split, n_rows FROM crossfit_files WHERE task_id = $1 ORDER BY seed, k",
        )
        .bind(id)
        .fetch_all(pool)
        .await?;
        let seeds: BTreeSet<u32> = files.iter().map(|f| f.1 as u32).collect();
        let ks: BTreeSet<u32> = files.iter().map(|f| f.0 as u32).collect();
        out.push(TaskRow {
            metric: Metric::parse(&metric).ok_or_else(|| corrupt("metric", &metric))?,
            test_items: files.iter().find(|f| f.2 == "test").map_or(0, |f| f.3),
            name,
            ontology,
            source,
            seeds: seeds.into_iter().collect(),
            ks: ks.into_iter().collect(),
        })
    }
    Ok(out)
}

async fn task_id(pool: &AnyPool, name: &str) -> Result<(i64, Metric), AppError> {
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT id, metric FROM crossfit_tasks WHERE name = $1")
            .bind(name)
            .fetch_optional(pool)
            .await?;
    let (id, metric) =
        row.ok_or_else(|| AppError::NotFound(format!("no CrossFit task named {name:?}")))?;
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
) -> Result<(), AppError> {
    let metric = Metric::parse(metric)
        .ok_or_else(|| AppError::Invalid(format!("{metric:?} is not one of CrossFit's metrics")))?;
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
) -> Result<Vec<TsvLine>, AppError> {
    let (id, _) = task_id(pool, task).await?;
    let file: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM crossfit_files WHERE task_id = $1 AND seed = $2 AND split = $3 ORDER BY k LIMIT 1",
    )
    .bind(id)
    .bind(i64::from(seed))
    .bind(split)
    .fetch_optional(pool)
    .await?;
    let file = file
        .ok_or_else(|| AppError::NotFound(format!("{task} has no {split} file for seed {seed}")))?;
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

pub async fn seeds_of(pool: &AnyPool, task: &str) -> Result<Vec<u32>, AppError> {
    let (id, _) = task_id(pool, task).await?;
    let seeds: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT seed FROM crossfit_files WHERE task_id = $1 AND split = 'test' ORDER BY seed",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    Ok(seeds.into_iter().map(|s| s as u32).collect())
}

/// Stores a run; its predictions must match the test file line for line.
pub async fn store_run(
    pool: &AnyPool,
    method: &str,
    task: &str,
    seed: u32,
    kind: &str,
    predictions: &[String],
) -> Result<Score, AppError> {
    if method.trim().is_empty() {
        return Err(AppError::Invalid("a run needs a method name".into()));
    }
    let (id, metric) = task_id(pool, task).await?;
    let test = split_lines(pool, task, seed, "test").await?;
    if test.len() != predictions.len() {
        return Err(AppError::Invalid(format!(
            "{} predictions for the {} lines of {task}'s test file (seed {seed})",
            predictions.len(),
            test.len()
        )));
    }
    let golds = golds_of(&test);
    let score = evaluate(metric, predictions, &golds).map_err(AppError::Invalid)?;
    let stored = sqlx::query(
        "INSERT INTO crossfit_runs (method, task_id, seed, kind, predictions) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(method.trim())
    .bind(id)
    .bind(i64::from(seed))
    .bind(kind)
    .bind(serde_json::to_string(predictions).map_err(AppError::internal)?)
    .execute(pool)
    .await;
    match stored {
        Ok(_) => Ok(score),
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
            Err(AppError::Refused(format!(
                "{method} already has a run on {task} for seed {seed}; runs are never replaced"
            )))
        }
        Err(e) => Err(e.into()),
    }
}

fn golds_of(lines: &[TsvLine]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|l| l.outputs().into_iter().map(str::to_string).collect())
        .collect()
}

pub async fn run_scores(pool: &AnyPool) -> Result<Vec<RunScore>, AppError> {
    let runs: Vec<(String, String, i64, String, String)> = sqlx::query_as(
        "SELECT r.method, t.name, r.seed, r.kind, r.predictions FROM crossfit_runs r
         JOIN crossfit_tasks t ON t.id = r.task_id ORDER BY r.method, t.name, r.seed",
    )
    .fetch_all(pool)
    .await?;
    let mut tests: BTreeMap<(String, u32), (Metric, Vec<Vec<String>>)> = BTreeMap::new();
    let mut out = Vec::with_capacity(runs.len());
    for (method, task, seed, kind, json) in runs {
        let seed = seed as u32;
        if let std::collections::btree_map::Entry::Vacant(e) = tests.entry((task.clone(), seed)) {
            let (_, metric) = task_id(pool, &task).await?;
            let golds = golds_of(&split_lines(pool, &task, seed, "test").await?);
            e.insert((metric, golds));
        }
        let (metric, golds) = &tests[&(task.clone(), seed)];
        let preds: Vec<String> =
            serde_json::from_str(&json).map_err(|e| corrupt("predictions", e))?;
        let score = evaluate(*metric, &preds, golds).map_err(|e| corrupt("run", e))?;
        out.push(RunScore {
            method,
            task,
            seed,
            kind,
            score,
        });
    }
    Ok(out)
}

pub async fn save_partition(pool: &AnyPool, name: &str, p: &Partition) -> Result<(), AppError> {
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(AppError::Invalid(
            "a partition needs a name of 1 to 100 characters".into(),
        ));
    }
    let stored = sqlx::query("INSERT INTO crossfit_partitions (name, json) VALUES ($1, $2)")
        .bind(name)
        .bind(p.to_json())
        .execute(pool)
        .await;
    match stored {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(AppError::Refused(
            format!("a partition named {name:?} exists; partitions are never replaced"),
        )),
        Err(e) => Err(e.into()),
    }
}

pub async fn partitions(pool: &AnyPool) -> Result<Vec<(String, Partition)>, AppError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT name, json FROM crossfit_partitions ORDER BY name")
            .fetch_all(pool)
            .await?;
    rows.into_iter()
        .map(|(n, j)| {
            Ok((
                n,
                Partition::from_json(&j).map_err(|e| corrupt("partition", e))?,
            ))
        })
        .collect()
}

pub async fn partition(pool: &AnyPool, name: &str) -> Result<Partition, AppError> {
    partitions(pool)
        .await?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p)
        .ok_or_else(|| AppError::NotFound(format!("no partition named {name:?}")))
}

pub async fn arg_report(
    pool: &AnyPool,
    partition_name: &str,
    method: &str,
    baseline: &str,
) -> Result<ArgReport, AppError> {
    let p = partition(pool, partition_name).await?;
    let runs = run_scores(pool).await?;
    let seeds: BTreeSet<u32> = runs
        .iter()
        .filter(|r| r.method == method || r.method == baseline)
        .map(|r| r.seed)
        .collect();
    if seeds.is_empty() {
        return Err(AppError::NotFound(format!(
            "no runs of {method:?} or {baseline:?}"
        )));
    }
    let of = |m: &str, seed: u32| -> BTreeMap<String, f64> {
        runs.iter()
            .filter(|r| r.method == m && r.seed == seed)
            .filter_map(|r| Some((r.task.clone(), r.score.value?)))
            .collect()
    };
    let per_seed: Vec<(BTreeMap<String, f64>, BTreeMap<String, f64>)> = seeds
        .iter()
        .map(|&s| (of(method, s), of(baseline, s)))
        .collect();
    let (args, spread) = arg_over_seeds(&p.test, &per_seed);
    Ok(ArgReport {
        partition: partition_name.to_string(),
        method: method.to_string(),
        baseline: baseline.to_string(),
        tasks: p.test,
        seeds: seeds.into_iter().zip(args).collect(),
        spread,
    })
}

/// Copies a CrossFit task (the training and test files of one seed) into the task tables the
/// crowd protocol uses, as `xf-<task>-s<seed>`: context = input, gold = the outputs, the
/// training file as the k-shot set of split 1 (k = its lines). Workers then answer in a
/// free-text box, scored with the task's metric. Returns (name, k); refused if it exists.
pub async fn make_study_task(
    pool: &AnyPool,
    task: &str,
    seed: u32,
) -> Result<(String, u32), AppError> {
    use sha2::{Digest, Sha256};
    let (_, metric) = task_id(pool, task).await?;
    let ontology: String =
        sqlx::query_scalar("SELECT ontology FROM crossfit_tasks WHERE name = $1")
            .bind(task)
            .fetch_one(pool)
            .await?;
    let train = split_lines(pool, task, seed, "train").await?;
    let test = split_lines(pool, task, seed, "test").await?;
    if train.is_empty() || test.is_empty() {
        return Err(AppError::Invalid(format!(
            "{task} (seed {seed}) needs training and test lines for a human study"
        )));
    }
    let name = format!("xf-{task}-s{seed}");
    let k = train.len() as u32;
    let description = format!(
        "Read each text and write its output, as in the examples you will see. This is the \
         CrossFit task {task}{}; answers are scored with {}.",
        if ontology.is_empty() {
            String::new()
        } else {
            format!(" ({ontology})")
        },
        metric.name()
    );
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let result = async {
        let exists: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE name = $1")
            .bind(&name)
            .fetch_one(&mut *tx)
            .await?;
        if exists > 0 {
            return Err(AppError::Refused(format!(
                "the study task {name} exists already"
            )));
        }
        let spec = TaskSpec {
            name: name.clone(),
            family: Family::TextToText,
            description: description.clone(),
            labels: Vec::new(),
            question_types: vec![QuestionType {
                key: "text".into(),
                question: String::new(),
            }],
            no_answer: NoAnswer::EmptyList,
            metric: Some(metric),
        };
        let task_id = task_store::insert_task(&mut tx, &spec, "crossfit").await?;
        for (lines, train) in [(&train, Some((k, 1))), (&test, None)] {
            let kind = if train.is_some() { "train" } else { "test" };
            let file = task_store::FileRow {
                name: &format!("{task}_{k}_{seed}_{kind}.tsv"),
                train,
                sha256: &hex::encode(Sha256::digest(to_tsv(lines).as_bytes())),
                n_rows: lines.len(),
            };
            let file_id = task_store::insert_file(&mut tx, task_id, &file).await?;
            for (i, l) in lines.iter().enumerate() {
                let ex = Example {
                    id: (i + 1).to_string(),
                    context: Context::Single {
                        text: l.input.clone(),
                    },
                    question: "What is the output for this text?".into(),
                    question_type: Some("text".into()),
                    gold: Gold {
                        official: l.outputs().into_iter().map(str::to_string).collect(),
                        spans: Vec::new(),
                    },
                    extra: serde_json::json!({}),
                };
                let key = task_store::content_key(&ex.context, &ex.question, &ex.gold.official);
                task_store::insert_example(&mut tx, file_id, i + 1, &ex, &key).await?;
            }
        }
        Ok((name.clone(), k))
    }
    .await;
    crate::ssr::tx::finish(tx, result).await
}
