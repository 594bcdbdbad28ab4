//! Write transactions on SQLite: `BEGIN IMMEDIATE` takes the write lock at once, so concurrent
//! check-then-insert sequences (places in a study) are serialised; ended explicitly either way.

use crate::error::AppError;
use sqlx::{Sqlite, SqlitePool, Transaction};

pub async fn begin_write(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, AppError> {
    Ok(begin_immediate(pool).await?)
}

/// The same for callers with their own error type (the importers). Every write transaction
/// starts this way: a deferred one that reads first and writes later fails with "database is
/// locked" when another writer got in between, instead of waiting for its turn.
pub async fn begin_immediate(
    pool: &SqlitePool,
) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// Commits on `Ok`, rolls back at once on `Err`: a transaction only dropped would keep the
/// write lock until its connection is next used.
pub async fn finish<T>(
    tx: Transaction<'static, Sqlite>,
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
