//! The built-in demo study: a few hand-written items of each of the six CLUES task shapes
//! (k = 2 and 4, splits 1 and 2, nested), embedded in the binary and loaded on first start,
//! with two open demo studies so the worker flow can be tried at once.

use crate::clues::files::SourceFile;
use crate::clues::load::{load_task, TaskData};
use crate::clues::spec::clues_task;
use crate::clues::{import_tasks, Imported};
use domain::study::StudyConfig;
use sqlx::AnyPool;
use store::error::{Error, Result};
use store::study;

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
            let task = clues_task(dir)
                .ok_or_else(|| Error::internal(format!("the demo's {dir} is no CLUES task")))?;
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

/// The CrossFit demo: six small text-to-text tasks written for this project (`demo/crossfit/`),
/// sampled for the five seeds, a partition, and the two reference methods run on every seed.
const CROSSFIT_DEMO: [(&str, &str, &str); 6] = [
    (
        "demo-xf-sentiment",
        include_str!("../demo/crossfit/sentiment.source.tsv"),
        include_str!("../demo/crossfit/sentiment.test.tsv"),
    ),
    (
        "demo-xf-topic",
        include_str!("../demo/crossfit/topic.source.tsv"),
        include_str!("../demo/crossfit/topic.test.tsv"),
    ),
    (
        "demo-xf-headline",
        include_str!("../demo/crossfit/headline.source.tsv"),
        include_str!("../demo/crossfit/headline.test.tsv"),
    ),
    (
        "demo-xf-acceptability",
        include_str!("../demo/crossfit/acceptability.source.tsv"),
        include_str!("../demo/crossfit/acceptability.test.tsv"),
    ),
    (
        "demo-xf-capitals",
        include_str!("../demo/crossfit/capitals.source.tsv"),
        include_str!("../demo/crossfit/capitals.test.tsv"),
    ),
    (
        "demo-xf-similarity",
        include_str!("../demo/crossfit/similarity.source.tsv"),
        include_str!("../demo/crossfit/similarity.test.tsv"),
    ),
];
const CROSSFIT_DEMO_TASKS: &str = include_str!("../demo/crossfit/tasks.json");
const CROSSFIT_DEMO_PARTITION: &str = include_str!("../demo/crossfit/partition.json");

#[derive(serde::Deserialize)]
struct DemoTaskMeta {
    ontology: String,
    metric: String,
    kind: String,
    k: usize,
}

/// Reference runs of the complete CrossFit demo: 6 tasks x 2 methods x 5 seeds.
const CROSSFIT_DEMO_RUNS: i64 = 60;

/// Loads the CrossFit demo, or what is missing of it; returns whether anything was loaded.
/// Resumable: a start that crashed half-way (tasks stored, runs not) is completed by the next,
/// since every step below skips what is already stored.
pub async fn ensure_crossfit_demo(pool: &AnyPool) -> Result<bool> {
    use domain::crossfit::{baseline::Baseline, partition::Partition, sampler::SampleKind};
    let (runs, partitions): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM crossfit_runs r JOIN crossfit_tasks t ON t.id = r.task_id
                 WHERE t.source = 'demo' AND r.kind = 'baseline'),
                (SELECT COUNT(*) FROM crossfit_partitions WHERE name = 'demo')",
    )
    .fetch_one(pool)
    .await?;
    if runs >= CROSSFIT_DEMO_RUNS && partitions > 0 {
        return Ok(false);
    }
    let meta: std::collections::BTreeMap<String, DemoTaskMeta> =
        serde_json::from_str(CROSSFIT_DEMO_TASKS)
            .map_err(|e| Error::internal(format!("the demo's tasks.json: {e}")))?;
    let mut tasks = Vec::new();
    for (name, source, test) in CROSSFIT_DEMO {
        let m = &meta[name];
        let kind = if m.kind == "classification" {
            SampleKind::Classification
        } else {
            SampleKind::TextToText
        };
        let label = |what: &str| format!("server/demo/crossfit/{name}.{what}.tsv");
        tasks.push(crate::crossfit::sample_task(
            name,
            &(label("source"), source.to_string()),
            &(label("test"), test.to_string()),
            kind,
            m.k,
            crate::crossfit::TaskMeta {
                ontology: m.ontology.clone(),
                metric: m.metric.clone(),
            },
            "demo",
        )?);
    }
    // Tasks stored before with the same files are left as they are.
    store::crossfit::store_tasks(pool, &tasks).await?;
    if partitions == 0 {
        let partition = Partition::from_json(CROSSFIT_DEMO_PARTITION)
            .map_err(|e| Error::internal(format!("the demo partition: {e}")))?;
        store::crossfit::save_partition(pool, "demo", &partition).await?;
    }
    for (name, ..) in CROSSFIT_DEMO {
        for method in [Baseline::Majority, Baseline::Nearest] {
            crate::crossfit::run_baseline_missing(pool, method, name).await?;
        }
    }
    Ok(true)
}

/// Loads the demo tasks and opens the demo studies, unless a demo is already in the database;
/// loads the CrossFit demo too (on its own check, so older databases get it). Each part is
/// atomic or completed by the next start; returns the import when the tasks were loaded now.
pub async fn ensure_demo(pool: &AnyPool) -> Result<Option<Imported>> {
    if ensure_crossfit_demo(pool).await? {
        tracing::info!(
            "loaded the CrossFit demo: partition \"demo\", 6 tasks, 2 reference methods"
        );
    }
    let present: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE source = 'demo'")
        .fetch_one(pool)
        .await?;
    // The import is one transaction: all demo tasks or none.
    let imported = if present == 0 {
        Some(import_tasks(pool, demo_tasks()?, "demo").await?)
    } else {
        None
    };
    for (task, name) in DEMO_STUDIES {
        // A demo task with no study at all lost it to a crash right after the import (a study
        // renamed or closed by an admin is still a study, and is left alone).
        let study: Option<i64> = sqlx::query_scalar(
            "SELECT s.id FROM studies s JOIN tasks t ON t.id = s.task_id WHERE t.name = $1 LIMIT 1",
        )
        .bind(task)
        .fetch_optional(pool)
        .await?;
        if study.is_some() {
            continue;
        }
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
    Ok(imported)
}
