//! CrossFit runs: a method's predictions on a task's test file for one seed, stored once and
//! scored with the task's metric.

use super::{split_lines, task_id};
use crate::catalog::corrupt;
use crate::error::{Error, OnUnique, CROSSFIT_RUN};
use crate::lease::{self, Lease};
use domain::crossfit::metrics::{evaluate, Metric, Score};
use domain::crossfit::sampler::TsvLine;
use domain::wire::crossfit::RunScore;
use sqlx::AnyPool;
use std::collections::BTreeMap;

/// The seeds of a task that already have a run of `method`.
pub async fn seeds_with_run(pool: &AnyPool, method: &str, task: &str) -> Result<Vec<u32>, Error> {
    let done: Vec<i64> = sqlx::query_scalar(
        "SELECT r.seed FROM crossfit_runs r JOIN crossfit_tasks t ON t.id = r.task_id
         WHERE t.name = $1 AND r.method = $2 ORDER BY r.seed",
    )
    .bind(task)
    .bind(method)
    .fetch_all(pool)
    .await?;
    Ok(done.into_iter().map(|s| s as u32).collect())
}

/// A run to store: one method's predictions on the test file of one task and seed.
pub struct NewRun<'a> {
    pub method: &'a str,
    pub task: &'a str,
    pub seed: u32,
    /// `predictions` (made by a learner) or `baseline` (a reference method).
    pub kind: &'a str,
    pub predictions: &'a [String],
    /// What a run trained here was made with (JSON).
    pub settings: Option<&'a str>,
}

/// Stores a run; its predictions must match the test file line for line. `settings`: what
/// a run trained here was made with (JSON).
pub async fn store_run(
    pool: &AnyPool,
    method: &str,
    task: &str,
    seed: u32,
    kind: &str,
    predictions: &[String],
    settings: Option<&str>,
) -> Result<Score, Error> {
    let run = NewRun {
        method,
        task,
        seed,
        kind,
        predictions,
        settings,
    };
    store(pool, &run, None).await
}

/// Stores a run, and where it is a held job's (`held`: its lease and the job as a person names
/// it), marks the job done in the same transaction, or stores nothing when the lease was lost.
pub(super) async fn store(
    pool: &AnyPool,
    run: &NewRun<'_>,
    held: Option<(&Lease, &str)>,
) -> Result<Score, Error> {
    let NewRun {
        method, task, seed, ..
    } = *run;
    if method.trim().is_empty() {
        return Err(Error::Invalid("a run needs a method name".into()));
    }
    let (id, metric) = task_id(pool, task).await?;
    let test = split_lines(pool, task, seed, "test").await?;
    if test.len() != run.predictions.len() {
        return Err(Error::Invalid(format!(
            "{} predictions for the {} lines of {task}'s test file (seed {seed})",
            run.predictions.len(),
            test.len()
        )));
    }
    let golds = golds_of(&test);
    let score = evaluate(metric, run.predictions, &golds).map_err(Error::Invalid)?;
    let mut tx = crate::tx::begin_immediate(pool, &[]).await?;
    let stored = sqlx::query(
        "INSERT INTO crossfit_runs (method, task_id, seed, kind, predictions, settings_json) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(method.trim())
    .bind(id)
    .bind(i64::from(seed))
    .bind(run.kind)
    .bind(serde_json::to_string(run.predictions).map_err(Error::internal)?)
    .bind(run.settings)
    .execute(&mut *tx)
    .await;
    stored.on_unique(CROSSFIT_RUN, || {
        Error::Refused(format!(
            "{method} already has a run on {task} for seed {seed}; runs are never replaced"
        ))
    })?;
    if let Some((lease, what)) = held {
        lease::complete(&mut tx, lease, what).await?;
    }
    tx.commit().await?;
    Ok(score)
}

fn golds_of(lines: &[TsvLine]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|l| l.outputs().into_iter().map(str::to_string).collect())
        .collect()
}

/// A stored run of a method on one seed of a task, its predictions as JSON.
#[derive(sqlx::FromRow)]
struct StoredRun {
    method: String,
    task: String,
    seed: i64,
    kind: String,
    predictions: String,
}

/// A test set's metric and the golds of its lines.
type Scorer = (Metric, Vec<Vec<String>>);

pub async fn run_scores(pool: &AnyPool) -> Result<Vec<RunScore>, Error> {
    let runs: Vec<StoredRun> = sqlx::query_as(
        "SELECT r.method, t.name AS task, r.seed, r.kind, r.predictions FROM crossfit_runs r
         JOIN crossfit_tasks t ON t.id = r.task_id ORDER BY r.method, t.name, r.seed",
    )
    .fetch_all(pool)
    .await?;
    // Each (task, seed)'s metric and test golds, read once.
    let mut tests: BTreeMap<(String, u32), Scorer> = BTreeMap::new();
    let mut out = Vec::with_capacity(runs.len());
    for StoredRun {
        method,
        task,
        seed,
        kind,
        predictions: json,
    } in runs
    {
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
