//! Helpers shared by the integration tests: the CLUES data location and database snapshots.
#![allow(dead_code)]

use sqlx::SqlitePool;
use std::path::PathBuf;

/// The official CLUES data: `$CLUES_DATA`, else `../shared/data/clues` beside the project.
/// Prints a clear notice and returns `None` when it is absent.
pub fn clues_data(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CLUES_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/clues")
        });
    if dir.join("SST-2").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED {test}: the official CLUES data is not at {} (set CLUES_DATA)",
            dir.display()
        );
        None
    }
}

/// Row counts of every table, to prove that a failed operation changed nothing.
pub async fn snapshot(pool: &SqlitePool) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for t in [
        "users",
        "sessions",
        "tasks",
        "data_files",
        "examples",
        "quality_issues",
    ] {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {t}"))
            .fetch_one(pool)
            .await
            .unwrap();
        out.push((t.to_string(), n));
    }
    out
}
