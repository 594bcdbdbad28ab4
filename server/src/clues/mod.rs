//! Importing the official CLUES JSONL data (and the built-in demo, which uses the same
//! layout): read and check everything first, then store it in one transaction, then report.
pub mod checks;
#[cfg(test)]
mod checks_tests;
pub mod files;
pub mod load;
pub mod own;
pub mod parse;
pub mod spec;
pub mod summary;
pub mod write;

use sqlx::AnyPool;
use std::path::Path;
use store::error::Result;

/// The outcome of an import, with its printable report.
pub struct Imported {
    pub tasks: Vec<load::TaskData>,
    pub outcomes: Vec<write::Outcome>,
}

impl Imported {
    pub fn report(&self) -> String {
        let mut out: String = self
            .tasks
            .iter()
            .zip(&self.outcomes)
            .map(|(t, o)| summary::render_task(t, *o))
            .collect();
        out.push_str(&summary::render_totals(&self.tasks, &self.outcomes));
        out
    }
}

/// Stores already loaded tasks (all or nothing).
pub async fn import_tasks(
    pool: &AnyPool,
    tasks: Vec<load::TaskData>,
    source: &str,
) -> Result<Imported> {
    let outcomes = write::store_tasks(pool, &tasks, source).await?;
    Ok(Imported { tasks, outcomes })
}

/// `import clues <dir>`: a CLUES data root or one task directory.
pub async fn import_dir(pool: &AnyPool, dir: &Path) -> Result<Imported> {
    let tasks = load::load_clues_dir(dir)?;
    import_tasks(pool, tasks, "clues").await
}

/// `import task <dir>`: a researcher's own task folder (CLUES layout plus `task.json`).
pub async fn import_own(pool: &AnyPool, dir: &Path) -> Result<Imported> {
    let task = own::load_own_task(dir)?;
    import_tasks(pool, vec![task], "own").await
}
