//! The built-in demo study: a few hand-written items of each of the six CLUES task shapes
//! (k = 2 and 4, splits 1 and 2, nested), embedded in the binary and loaded on first start,
//! with two open demo studies so the worker flow can be tried at once.

use crate::clues::load::{load_task, SourceFile, TaskData};
use crate::clues::spec::clues_task;
use crate::clues::{import_tasks, Imported};
use crate::error::Result;
use app::domain::study::StudyConfig;
use app::ssr::study;
use sqlx::SqlitePool;

/// Demo tasks are named like the CLUES ones with this prefix, e.g. `demo-SST-2`.
pub const DEMO_PREFIX: &str = "demo-";

/// The files of one demo task, stored as `server/demo/<prefix>/<stem>.jsonl` (written for this
/// project; the names are not the official ones) and handed to the importer under the CLUES
/// name `<prefix>_<stem>.jsonl`.
macro_rules! demo_files {
    ($dir:literal, $prefix:literal) => {
        (
            $dir,
            &[
                demo_files!(@one $prefix, "test"),
                demo_files!(@one $prefix, "train_2_1"),
                demo_files!(@one $prefix, "train_2_2"),
                demo_files!(@one $prefix, "train_4_1"),
                demo_files!(@one $prefix, "train_4_2"),
            ],
        )
    };
    (@one $prefix:literal, $stem:literal) => {
        ($stem, include_str!(concat!("../demo/", $prefix, "/", $stem, ".jsonl")))
    };
}

/// (CLUES task directory, [(file stem, contents)]).
type DemoTask = (&'static str, &'static [(&'static str, &'static str)]);

const DEMO: [DemoTask; 6] = [
    demo_files!("SST-2", "sst"),
    demo_files!("MNLI", "mnli"),
    demo_files!("CoNLL2003", "conll"),
    demo_files!("WikiANN_EN", "wikiann"),
    demo_files!("SQuAD-v2", "squad-v2"),
    demo_files!("ReCoRD", "record"),
];

/// The demo tasks, read and checked like any import.
pub fn demo_tasks() -> Result<Vec<TaskData>> {
    DEMO.iter()
        .map(|(dir, files)| {
            let task = clues_task(dir).expect("demo directories are CLUES task directories");
            let files = files
                .iter()
                .map(|(stem, body)| SourceFile {
                    name: format!("{}_{stem}.jsonl", task.prefix),
                    label: format!("server/demo/{}/{stem}.jsonl", task.prefix),
                    bytes: body.as_bytes().to_vec(),
                })
                .collect();
            load_task(task, &format!("{DEMO_PREFIX}{dir}"), files)
        })
        .collect()
}

/// The demo studies created with the demo tasks: (task, name), each open with scenarios
/// 0, 2 and 4 shots (the demo's k) and 3 annotators per scenario.
const DEMO_STUDIES: [(&str, &str); 2] = [
    ("demo-SST-2", "Demo study: SST-2 sentiment"),
    (
        "demo-SQuAD-v2",
        "Demo study: SQuAD v2 reading comprehension",
    ),
];

/// Loads the demo tasks and opens the demo studies, unless a demo is already in the database.
pub async fn ensure_demo(pool: &SqlitePool) -> Result<Option<Imported>> {
    let present: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE source = 'demo'")
        .fetch_one(pool)
        .await?;
    if present > 0 {
        return Ok(None);
    }
    let imported = import_tasks(pool, demo_tasks()?, "demo").await?;
    for (task, name) in DEMO_STUDIES {
        let config = StudyConfig {
            scenarios: vec![0, 2, 4],
            open: true,
            ..StudyConfig::default()
        };
        let id = study::create(pool, None, task, name, config).await?;
        tracing::info!(
            "demo study {id} ({task}): workers join at /join/{id}?PROLIFIC_PID=<any id>"
        );
    }
    Ok(Some(imported))
}
