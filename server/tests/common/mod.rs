//! Helpers shared by the integration tests: the CLUES data location and database snapshots.
#![allow(dead_code, unused_imports)]

pub mod client;
pub mod spawned;

use sqlx::SqlitePool;
use std::path::PathBuf;

/// The official CLUES data: `$CLUES_DATA`, else `../shared/data/clues` beside the project.
/// Prints a clear notice and returns `None` when it is absent, unless `CI` is set: CI has the
/// data, so its absence there fails the test instead of skipping it.
pub fn clues_data(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CLUES_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/clues")
        });
    if dir.join("SST-2").is_dir() {
        Some(dir)
    } else if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!(
            "{test}: the official CLUES data is not at {} (set CLUES_DATA); CI must have it",
            dir.display()
        );
    } else {
        eprintln!(
            "SKIPPED {test}: the official CLUES data is not at {} (set CLUES_DATA)",
            dir.display()
        );
        None
    }
}

/// Row counts of every table, and the full contents of the tables a worker's requests
/// write to, to prove that a refused operation changed nothing.
pub async fn snapshot(pool: &SqlitePool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in [
        "users",
        "sessions",
        "tasks",
        "data_files",
        "examples",
        "quality_issues",
        "studies",
        "study_configs",
        "crowd_ids",
        "assignments",
        "assignment_items",
        "crossfit_tasks",
        "crossfit_files",
        "crossfit_examples",
        "crossfit_partitions",
        "crossfit_runs",
        "machine_systems",
        "machine_runs",
        "machine_predictions",
    ] {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {t}"))
            .fetch_one(pool)
            .await
            .unwrap();
        out.push((t.to_string(), n.to_string()));
    }
    for (t, cols) in [
        ("assignments", "id, k, status, last_activity, finished_at, abandoned_at"),
        (
            "assignment_items",
            "assignment_id, position, shown_at, submitted_at, acknowledged_at, client_id, answer_json, no_answer, skipped, confidence, s1",
        ),
        ("study_configs", "id, study_id, config_json"),
    ] {
        let rows: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT json_array({cols}) FROM {t} ORDER BY 1"
        ))
        .fetch_all(pool)
        .await
        .unwrap();
        out.push((format!("{t} rows"), rows.join("\n")));
    }
    out
}

/// The application state the router needs, over `pool`, with no site files.
pub fn app_state(pool: SqlitePool) -> app::ssr::state::AppState {
    app::ssr::state::AppState::new(
        pool,
        leptos::config::LeptosOptions::builder()
            .output_name("clues-lab")
            .site_root("target/site")
            .build(),
    )
}

/// Adds users with the password `<name>-password`.
pub async fn add_users(pool: &SqlitePool, users: &[(&str, app::domain::people::Role)]) {
    for (name, role) in users {
        app::ssr::auth::create_user(pool, name, *role, Some(format!("{name}-password")))
            .await
            .unwrap();
    }
}
