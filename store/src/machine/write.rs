//! Storing a run of a system (`machine_systems`, `machine_runs`, `machine_predictions`): a run is
//! opened (refused where a finished one exists, unless it replaces it), its progress recorded,
//! and its scored predictions stored with the run marked done in one transaction (for a grid's
//! job, only while its worker holds the lease); or it is marked failed.

use super::grid::{self, Held};
use crate::auth::now_ms;
use crate::error::{Error, Result};
use crate::tx::Lock;
use domain::ids::{ExampleId, RunId, TaskId};
use domain::run::{RunStatus, SystemKind};
use domain::s1::{mean, Scoring};
use domain::task::{Gold, TaskSpec};
use sqlx::{Any, AnyConnection, AnyPool, Executor, Transaction};

/// What an evaluation is stored as: system, task and the shot group (0/0 for none).
#[derive(Clone, Debug)]
pub struct Target {
    pub system: String,
    pub kind: SystemKind,
    pub task: String,
    pub k: u32,
    pub split: u32,
    /// Replace a finished evaluation of the same system, task and shot group.
    pub replace: bool,
}

async fn system_id(db: &mut AnyConnection, name: &str, kind: SystemKind) -> Result<i64> {
    if let Some((id, k)) = sqlx::query_as::<_, (i64, SystemKind)>(
        "SELECT id, kind FROM machine_systems WHERE name = $1",
    )
    .bind(name)
    .fetch_optional(&mut *db)
    .await?
    {
        if k != kind {
            return Err(Error::Refused(format!(
                "system {name:?} is of kind {}, not {}; choose another name",
                k.as_str(),
                kind.as_str()
            )));
        }
        return Ok(id);
    }
    // Workers of a shared grid may register the system at the same moment: one row wins.
    sqlx::query(
        "INSERT INTO machine_systems (name, kind) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(kind)
    .execute(&mut *db)
    .await?;
    Ok(
        sqlx::query_scalar("SELECT id FROM machine_systems WHERE name = $1")
            .bind(name)
            .fetch_one(&mut *db)
            .await?,
    )
}

/// The finished evaluation of a target, if there is one.
pub async fn done_run<'c>(
    db: impl Executor<'c, Database = Any>,
    task_id: TaskId,
    t: &Target,
) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT r.id FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = $1 AND r.task_id = $2 AND r.k = $3 AND r.split = $4 AND r.status = 'done'",
    )
    .bind(&t.system)
    .bind(task_id)
    .bind(i64::from(t.k))
    .bind(i64::from(t.split))
    .fetch_optional(db)
    .await?)
}

/// Refuses a target that already has a finished evaluation, unless it replaces it.
pub async fn refuse_if_done<'c>(
    db: impl Executor<'c, Database = Any>,
    task_id: TaskId,
    t: &Target,
) -> Result<()> {
    match (done_run(db, task_id, t).await?, t.replace) {
        (Some(run), false) => Err(Error::Refused(format!(
            "{} already has a finished evaluation of {} for k={} split={} (run {run}); replace it with --replace on the command line or replace=true in an upload",
            t.system, t.task, t.k, t.split
        ))),
        _ => Ok(()),
    }
}

/// Refuses a target that already has a finished evaluation (unless it replaces it) and
/// opens a running one.
pub async fn start(
    pool: &AnyPool,
    task_id: TaskId,
    t: &Target,
    source: &str,
    settings: &str,
    provider: &str,
    held: Option<&Held>,
) -> Result<RunId> {
    let mut conn = pool.acquire().await?;
    // A grid job's run names its job as it is opened: a worker killed at any moment leaves no
    // run that the worker taking the job over cannot find.
    let job = held.map(|h| h.lease.job);
    open_run(&mut conn, task_id, t, (source, settings, provider), job).await
}

/// [`start`] on `db`: (source, settings, provider) as the run is opened with, and its grid job.
async fn open_run(
    db: &mut AnyConnection,
    task_id: TaskId,
    t: &Target,
    (source, settings, provider): (&str, &str, &str),
    job: Option<i64>,
) -> Result<RunId> {
    refuse_if_done(&mut *db, task_id, t).await?;
    let system = system_id(db, &t.system, t.kind).await?;
    Ok(sqlx::query_scalar(
        "INSERT INTO machine_runs (system_id, task_id, k, split, status, source, settings_json, provider, started_at, grid_job_id)
         VALUES ($1, $2, $3, $4, 'running', $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(system)
    .bind(task_id)
    .bind(i64::from(t.k))
    .bind(i64::from(t.split))
    .bind(source)
    .bind(settings)
    .bind(provider)
    .bind(now_ms())
    .bind(job)
    .fetch_one(&mut *db)
    .await?)
}

/// An evaluation made elsewhere (imported predictions), scored here: opened, stored and marked
/// done in one transaction, so that an upload cut off at any moment (a client that hangs up)
/// or refused leaves nothing, never a run that stays "running". Its id and S1 both ways.
pub async fn store_whole(
    pool: &AnyPool,
    task_id: TaskId,
    t: &Target,
    (source, provider): (&str, &str),
    items: &[Scored],
) -> Result<(RunId, (f64, f64))> {
    let lock = Lock::Run(&t.system, &t.task, t.k, t.split);
    let mut tx = crate::tx::begin_immediate(pool, &[lock]).await?;
    let run = open_run(&mut tx, task_id, t, (source, "{}", provider), None).await?;
    let finished = Finished {
        run,
        t,
        provider,
        items,
        settings: None,
    };
    let scores = store_run(&mut tx, &finished).await;
    Ok((run, crate::tx::finish(tx, scores).await?))
}

/// Marks those of `runs` still running failed with `error` (logged where that fails too). A
/// run another process finished meanwhile stays done: a second process's refused finish must
/// not turn the stored evaluation into a failed one (which the next start would resume).
pub async fn fail(pool: &AnyPool, runs: &[RunId], error: &str) {
    for run in runs {
        let r = sqlx::query(
            "UPDATE machine_runs SET status = 'failed', error = $1, finished_at = $2
             WHERE id = $3 AND status = 'running'",
        )
        .bind(error)
        .bind(now_ms())
        .bind(run)
        .execute(pool)
        .await;
        if let Err(e) = r {
            tracing::error!("cannot mark run {run} failed: {e}");
        }
    }
}

/// Records how far a running run is (`done` of `total`), as the machines page shows it.
pub async fn progress(pool: &AnyPool, run: RunId, done: usize, total: usize) -> Result<()> {
    sqlx::query("UPDATE machine_runs SET done = $1, total = $2 WHERE id = $3")
        .bind(done as i64)
        .bind(total as i64)
        .bind(run)
        .execute(pool)
        .await?;
    Ok(())
}

/// One item's answer, scored: official encoding, the spans it came from (JSON), the
/// probability the model gave it (none for imports), S1 both ways.
pub struct Scored {
    pub example: ExampleId,
    pub official: Vec<String>,
    pub spans_json: String,
    pub probability: Option<f64>,
    pub s1: f64,
    pub s1_any_of: f64,
}

impl Scored {
    /// An answer in the official encoding scored against its item's gold both ways.
    pub fn of(
        spec: &TaskSpec,
        example: ExampleId,
        gold: &Gold,
        official: Vec<String>,
        spans_json: String,
        probability: Option<f64>,
    ) -> Scored {
        Scored {
            example,
            s1: spec.score(gold, &official, Scoring::Official),
            s1_any_of: spec.score(gold, &official, Scoring::AnyOf),
            official,
            spans_json,
            probability,
        }
    }
}

/// A finished run to store: its predictions, scored.
pub struct Finished<'a> {
    pub run: RunId,
    pub t: &'a Target,
    pub provider: &'a str,
    pub items: &'a [Scored],
    /// The settings the run was made with, where they were settled only by running it (a
    /// frozen head's no-answer threshold, chosen on its shots); `None` keeps those it opened
    /// with.
    pub settings: Option<&'a str>,
}

/// Stores the predictions and marks the run done (replacing an older one if asked), at once;
/// for a job of a shared grid, only while this worker still holds its lease, marking it done.
pub async fn finish(
    pool: &AnyPool,
    run: RunId,
    t: &Target,
    provider: &str,
    items: &[Scored],
    held: Option<&Held>,
) -> Result<(f64, f64)> {
    let one = Finished {
        run,
        t,
        provider,
        items,
        settings: None,
    };
    Ok(finish_all(pool, &[one], held).await?[0])
}

/// [`finish`] for several runs in one transaction: all stored, or none.
pub async fn finish_all(
    pool: &AnyPool,
    runs: &[Finished<'_>],
    held: Option<&Held>,
) -> Result<Vec<(f64, f64)>> {
    let locks: Vec<Lock> = runs
        .iter()
        .map(|f| Lock::Run(&f.t.system, &f.t.task, f.t.k, f.t.split))
        .collect();
    let mut tx = crate::tx::begin_immediate(pool, &locks).await?;
    if let Some(held) = held {
        grid::complete(&mut tx, held).await?;
    }
    let mut scores = Vec::with_capacity(runs.len());
    for f in runs {
        scores.push(store_run(&mut tx, f).await?);
    }
    tx.commit().await?;
    Ok(scores)
}

/// Writes one finished run inside a transaction; answers its S1 (official, any-of).
async fn store_run(tx: &mut Transaction<'static, Any>, f: &Finished<'_>) -> Result<(f64, f64)> {
    let (run, items) = (f.run, f.items);
    // Another process going on with the same run may have stored it first (the target's lock
    // orders the two): it is stored once.
    let status: RunStatus = sqlx::query_scalar("SELECT status FROM machine_runs WHERE id = $1")
        .bind(run)
        .fetch_one(&mut **tx)
        .await?;
    if status != RunStatus::Running {
        return Err(Error::Refused(format!(
            "run {run} of {} on {} (k={} split={}) is {} already (another process finished or stopped it); nothing more was stored",
            f.t.system,
            f.t.task,
            f.t.k,
            f.t.split,
            status.as_str()
        )));
    }
    let s1 = mean(&items.iter().map(|i| i.s1).collect::<Vec<_>>()).unwrap_or(0.0);
    let any = mean(&items.iter().map(|i| i.s1_any_of).collect::<Vec<_>>()).unwrap_or(0.0);
    if f.t.replace {
        sqlx::query(
            "UPDATE machine_runs SET status = 'replaced' WHERE status = 'done' AND id != $1
             AND (system_id, task_id, k, split) = (SELECT system_id, task_id, k, split FROM machine_runs WHERE id = $2)",
        )
        .bind(run)
        .bind(run)
        .execute(&mut **tx)
        .await?;
    }
    for i in items {
        // A missing probability is written as a literal NULL, not bound: sqlx's `Any` driver
        // types a bound `None::<f64>` as float4 on PostgreSQL, and a statement first prepared
        // with it would then refuse the float8 of the next item's probability.
        let sql = match i.probability {
            Some(_) => "INSERT INTO machine_predictions (run_id, example_id, answer_json, spans_json, s1, s1_any_of, probability) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            None => "INSERT INTO machine_predictions (run_id, example_id, answer_json, spans_json, s1, s1_any_of, probability) VALUES ($1, $2, $3, $4, $5, $6, NULL)",
        };
        let insert = sqlx::query(sql)
            .bind(run)
            .bind(i.example)
            .bind(serde_json::to_string(&i.official).map_err(Error::internal)?)
            .bind(&i.spans_json)
            .bind(i.s1)
            .bind(i.s1_any_of);
        match i.probability {
            Some(p) => insert.bind(p),
            None => insert,
        }
        .execute(&mut **tx)
        .await?;
    }
    if let Some(settings) = f.settings {
        sqlx::query("UPDATE machine_runs SET settings_json = $1 WHERE id = $2")
            .bind(settings)
            .bind(run)
            .execute(&mut **tx)
            .await?;
    }
    sqlx::query(
        "UPDATE machine_runs SET status = 'done', provider = $1, s1 = $2, s1_any_of = $3, finished_at = $4, done = total WHERE id = $5",
    )
    .bind(f.provider)
    .bind(s1)
    .bind(any)
    .bind(now_ms())
    .bind(run)
    .execute(&mut **tx)
    .await?;
    Ok((s1, any))
}
