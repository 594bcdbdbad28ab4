//! A scope's data version: what a kept report is keyed by. Every study has its own, and what
//! every report reads alike has one more; a scope's is made of its studies' and that one.

use crate::db::Backend;
use crate::error::Error;
use domain::ids::StudyId;
use sqlx::AnyPool;

/// The data version of the studies `scope` names (every study when it names none): the shared
/// counter plus the studies' (on SQLite the sum of their counters, on PostgreSQL the largest
/// value of one sequence logged for them). Each part only goes up, so equal versions of a scope
/// mean the same data, and an answer to another study leaves it as it was. (On PostgreSQL a
/// part moves as its change commits, a moment before the change is seen: see `TRUSTED` where
/// builds are kept.) A study with no row yet counts 0; an unknown id reads as 0 too, and the build that
/// follows says it is not found.
pub async fn version(pool: &AnyPool, scope: &[StudyId]) -> Result<i64, Error> {
    let backend = Backend::of(pool);
    let only = if scope.is_empty() {
        String::new()
    } else {
        let ids = backend.json_elements("$1");
        format!("WHERE study_id IN (SELECT CAST(value AS BIGINT) FROM {ids})")
    };
    let sql = match backend {
        Backend::Sqlite => format!(
            "SELECT (SELECT n FROM report_shared_version WHERE id = 1)
                + (SELECT COALESCE(SUM(n), 0) FROM study_versions {only})"
        ),
        Backend::Postgres => format!(
            "SELECT (SELECT last_value FROM report_shared_seq)
                + COALESCE((SELECT MAX(n) FROM report_changes {only}), 0)"
        ),
    };
    let q = sqlx::query_scalar::<_, i64>(&sql);
    let q = if scope.is_empty() {
        q
    } else {
        q.bind(crate::rows::json_ids(scope))
    };
    Ok(q.fetch_one(pool).await?)
}

/// Keeps only each study's latest change in PostgreSQL's log of changes (a scope's part of the
/// version is its studies' largest value, so the rest says nothing); SQLite keeps a counter
/// per study and has nothing to prune. Returns the rows let go.
pub async fn prune_versions(pool: &AnyPool) -> Result<u64, Error> {
    match Backend::of(pool) {
        Backend::Sqlite => Ok(0),
        Backend::Postgres => Ok(sqlx::query(
            "DELETE FROM report_changes c
             USING (SELECT study_id, MAX(n) AS top FROM report_changes GROUP BY study_id) m
             WHERE c.study_id = m.study_id AND c.n < m.top",
        )
        .execute(pool)
        .await?
        .rows_affected()),
    }
}
