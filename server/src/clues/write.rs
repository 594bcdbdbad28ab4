//! Writing imported tasks to the database, all in one transaction: an import either stores
//! everything or nothing. Identical files already stored are left alone; different ones refused.

use super::checks::Note;
use super::files::FileKind;
use super::load::TaskData;
use sqlx::{Any, AnyPool, Transaction};
use std::collections::HashMap;
use store::error::{Error, Result};
use store::task_write;
use store::tx::Lock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Imported,
    /// The same files (by SHA-256) were imported before; nothing was written.
    Unchanged,
}

/// Stores every task, or none of them.
pub async fn store_tasks(pool: &AnyPool, tasks: &[TaskData], source: &str) -> Result<Vec<Outcome>> {
    let locks: Vec<Lock> = tasks.iter().map(|t| Lock::Task(&t.spec.name)).collect();
    let mut tx = store::tx::begin_immediate(pool, &locks).await?;
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(store_task(&mut tx, task, source).await?);
    }
    tx.commit().await?;
    Ok(outcomes)
}

async fn store_task(
    tx: &mut Transaction<'_, Any>,
    task: &TaskData,
    source: &str,
) -> Result<Outcome> {
    let spec = &task.spec;
    if let Some(stored) = task_write::stored_files(tx, &spec.name).await? {
        let mut incoming: Vec<(String, String)> = task
            .files
            .iter()
            .map(|f| (f.name.clone(), f.sha256.clone()))
            .collect();
        incoming.sort();
        if stored == incoming {
            return Ok(Outcome::Unchanged);
        }
        let differing: std::collections::BTreeSet<&str> = incoming
            .iter()
            .filter(|f| !stored.contains(f))
            .chain(stored.iter().filter(|f| !incoming.contains(f)))
            .map(|(n, _)| n.as_str())
            .collect();
        return Err(Error::Refused(format!(
            "task {} is already imported from different files ({}); stored data is never altered, so nothing was imported",
            spec.name,
            differing.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }

    let task_id = task_write::insert_task(tx, spec, source).await?;
    let mut file_ids: HashMap<&str, i64> = HashMap::new();
    for file in &task.files {
        let train = match file.kind {
            FileKind::Test => None,
            FileKind::Train { k, split } => Some((k, split)),
        };
        let row = task_write::FileRow {
            name: &file.name,
            train,
            sha256: &file.sha256,
            n_rows: file.rows.len(),
        };
        let file_id = task_write::insert_file(tx, task_id, &row).await?;
        file_ids.insert(&file.name, file_id);
        for row in &file.rows {
            task_write::insert_example(tx, file_id, row.line, &row.example, &row.content_key)
                .await?;
        }
    }
    for Note {
        file,
        line,
        kind,
        detail,
    } in &task.notes
    {
        let file_id = file.as_deref().and_then(|f| file_ids.get(f).copied());
        task_write::insert_note(tx, task_id, file_id, *line, kind, detail).await?;
    }
    Ok(Outcome::Imported)
}
