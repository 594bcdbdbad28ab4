//! The workers pointed at this database (`workers`): a row written as a worker starts, its
//! `seen_at` refreshed while it runs and `ended_at` set as it ends; the live ones, with the job
//! each holds, for the machines page.

use crate::auth::now_ms;
use crate::error::Result;
use domain::wire::machine::{WorkerRow, WORKER_SEEN_WITHIN_MS};
use sqlx::AnyPool;

/// A worker as it starts: its name (host:pid), host, the kinds it takes, where its models run.
#[derive(Clone, Copy, Debug)]
pub struct Arrival<'a> {
    pub name: &'a str,
    pub host: &'a str,
    pub kinds: &'a [String],
    pub device: &'a str,
}

/// Writes a starting worker's row (a row of an earlier process of the same name is replaced).
pub async fn arrived(pool: &AnyPool, w: Arrival<'_>) -> Result<()> {
    let now = now_ms();
    sqlx::query(
        "INSERT INTO workers (name, host, kinds, device, started_at, seen_at, ended_at)
         VALUES ($1, $2, $3, $4, $5, $5, NULL)
         ON CONFLICT (name) DO UPDATE SET host = excluded.host, kinds = excluded.kinds,
             device = excluded.device, started_at = excluded.started_at,
             seen_at = excluded.seen_at, ended_at = NULL",
    )
    .bind(w.name)
    .bind(w.host)
    .bind(w.kinds.join(","))
    .bind(w.device)
    .bind(now)
    .execute(pool)
    .await?;
    Ok(())
}

/// A running worker's sign of life.
pub async fn seen(pool: &AnyPool, name: &str) -> Result<()> {
    sqlx::query("UPDATE workers SET seen_at = $1 WHERE name = $2 AND ended_at IS NULL")
        .bind(now_ms())
        .bind(name)
        .execute(pool)
        .await?;
    Ok(())
}

/// A worker's end (idle, stopped by a signal, or refused to go on).
pub async fn ended(pool: &AnyPool, name: &str) -> Result<()> {
    let now = now_ms();
    sqlx::query("UPDATE workers SET seen_at = $1, ended_at = $1 WHERE name = $2")
        .bind(now)
        .bind(name)
        .execute(pool)
        .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct Row {
    name: String,
    host: String,
    kinds: String,
    device: String,
    started_at: i64,
    seen_at: i64,
    job: Option<i64>,
    job_kind: Option<String>,
}

/// The workers not ended and seen lately, longest running first, each with the job it holds
/// now (its kind and id).
pub async fn live(pool: &AnyPool) -> Result<Vec<WorkerRow>> {
    let now = now_ms();
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT w.name, w.host, w.kinds, w.device, w.started_at, w.seen_at,
            j.id AS job, j.kind AS job_kind
         FROM workers w
         LEFT JOIN jobs j ON j.worker = w.name AND j.status = 'claimed' AND j.lease_until >= $1
         WHERE w.ended_at IS NULL AND w.seen_at >= $2
         ORDER BY w.started_at, w.name",
    )
    .bind(now)
    .bind(now - WORKER_SEEN_WITHIN_MS)
    .fetch_all(pool)
    .await?;
    let secs = |ms: i64| (now - ms).max(0) as f64 / 1000.0;
    Ok(rows
        .into_iter()
        .map(|r| WorkerRow {
            up_seconds: secs(r.started_at),
            seen_seconds_ago: secs(r.seen_at),
            holds: r
                .job
                .zip(r.job_kind)
                .map(|(id, kind)| format!("{kind} job {id}")),
            kinds: r.kinds.split(',').map(String::from).collect(),
            name: r.name,
            host: r.host,
            device: r.device,
        })
        .collect())
}
