//! Write transactions: on SQLite `BEGIN IMMEDIATE` takes the write lock at once, on PostgreSQL
//! an advisory lock does the same across instances (see `db::Backend::begin_write`), so
//! concurrent check-then-insert sequences (places in a study) are serialised; ended explicitly.

use crate::error::AppError;
use crate::ssr::db::Backend;
use sqlx::{Any, AnyConnection, AnyPool, Transaction};

pub async fn begin_write(pool: &AnyPool) -> Result<Transaction<'static, Any>, AppError> {
    Ok(begin_immediate(pool).await?)
}

/// The same for callers with their own error type (the importers). Every write transaction
/// starts this way: a deferred one that reads first and writes later fails with "database is
/// locked" when another writer got in between, instead of waiting for its turn.
pub async fn begin_immediate(pool: &AnyPool) -> Result<Transaction<'static, Any>, sqlx::Error> {
    let steps = Backend::of(pool).begin_write();
    let mut tx = pool.begin_with(steps[0]).await?;
    for step in &steps[1..] {
        sqlx::query(step).execute(&mut *tx).await?;
    }
    Ok(tx)
}

/// Opens a write transaction by hand on `conn` (the answer writer's group commits).
pub async fn begin_on(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    for step in Backend::of_conn(conn).begin_write() {
        sqlx::query(step).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Commits on `Ok`, rolls back at once on `Err`: a transaction only dropped would keep the
/// write lock until its connection is next used.
pub async fn finish<T>(
    tx: Transaction<'static, Any>,
    result: Result<T, AppError>,
) -> Result<T, AppError> {
    match result {
        Ok(v) => {
            tx.commit().await?;
            Ok(v)
        }
        Err(e) => {
            if let Err(r) = tx.rollback().await {
                tracing::error!("rollback failed: {r}");
            }
            Err(e)
        }
    }
}
