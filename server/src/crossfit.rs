//! Reading CrossFit data from disk: a folder of `<task>_<k>_<seed>_{train,dev,test}.tsv` files
//! (with an optional `tasks.json` of ontology paths and metrics), or a plain source file that
//! the numpy-exact sampler splits for the five seeds. Every bad line is reported; nothing is
//! stored from a folder with one.

use domain::crossfit::baseline::{self, Baseline};
use domain::crossfit::metrics::Metric;
use domain::crossfit::metrics::Score;
use domain::crossfit::sampler::{sample, to_tsv, SampleKind, TsvLine, CROSSFIT_SEEDS};
use domain::crossfit::tsv::{parse_file_name, parse_tsv};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use store::crossfit::{self as xf, NewFile, NewTask};
use store::error::{read_text, Error, Result};

/// Ontology path and metric of a task, as `tasks.json` gives them.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskMeta {
    pub ontology: String,
    pub metric: String,
}

fn tsv_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?;
    for entry in entries {
        let path = entry
            .map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?
            .path();
        if path.is_dir() {
            tsv_files(&path, out)?;
        } else if path.extension().and_then(|e| e.to_str()) == Some("tsv") {
            out.push(path);
        }
    }
    Ok(())
}

fn metric_of(file: &str, name: &str) -> Result<Metric> {
    Metric::parse(name).ok_or_else(|| {
        Error::data(
            file,
            None,
            format!("unknown metric {name:?}; CrossFit's are ACC, Classification-F1, QA-F1, EM, Rouge-L, Matthew-Correlation, Pearson-Correlation"),
        )
    })
}

/// Reads `tasks.json` beside the data, if there is one: `{"<task>": {"ontology", "metric"}}`.
pub fn read_meta(dir: &Path) -> Result<BTreeMap<String, TaskMeta>> {
    let path = dir.join("tasks.json");
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let label = path.display().to_string();
    let meta: BTreeMap<String, TaskMeta> = serde_json::from_str(&read_text(&path)?)
        .map_err(|e| Error::data(&label, None, format!("{e}")))?;
    for m in meta.values() {
        metric_of(&label, &m.metric)?;
    }
    Ok(meta)
}

fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Every task of a CrossFit data folder. All problems of all files are reported together.
pub fn load_dir(dir: &Path, source: &str) -> Result<Vec<NewTask>> {
    let meta = read_meta(dir)?;
    let mut paths = Vec::new();
    tsv_files(dir, &mut paths)?;
    paths.sort();
    if paths.is_empty() {
        return Err(Error::data(
            dir.display().to_string(),
            None,
            "no .tsv files",
        ));
    }
    let mut problems = Vec::new();
    let mut tasks: BTreeMap<String, Vec<NewFile>> = BTreeMap::new();
    for path in &paths {
        let file_name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let label = path.display().to_string();
        let name = match parse_file_name(file_name) {
            Ok(n) => n,
            Err(e) => {
                problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let text = read_text(path)?;
        match parse_tsv(&label, &text) {
            Ok(lines) => tasks.entry(name.task.clone()).or_default().push(NewFile {
                file_name: file_name.to_string(),
                k: name.k,
                seed: name.seed,
                split: name.split,
                sha256: sha(&text),
                lines,
            }),
            Err(errs) => problems.extend(errs),
        }
    }
    for (task, files) in &tasks {
        if !files.iter().any(|f| f.split == "test") {
            problems.push(format!("{task}: no test file"));
        }
    }
    if !problems.is_empty() {
        return Err(Error::Data {
            file: dir.display().to_string(),
            line: None,
            message: format!(
                "{} problem(s), nothing imported:\n{}",
                problems.len(),
                problems.join("\n")
            ),
        });
    }
    let label = dir.join("tasks.json").display().to_string();
    tasks
        .into_iter()
        .map(|(name, files)| {
            let (ontology, metric) = match meta.get(&name) {
                Some(m) => (m.ontology.clone(), metric_of(&label, &m.metric)?),
                None => (String::new(), Metric::Accuracy),
            };
            Ok(NewTask {
                name,
                ontology,
                metric,
                source: source.to_string(),
                files,
            })
        })
        .collect()
}

/// A task sampled from a source file: the test set is `test` as given, the same for every seed;
/// each of CrossFit's five seeds gives `<task>_<k>_<seed>_{train,dev,test}.tsv`.
pub fn load_source(
    task: &str,
    source_file: &Path,
    test_file: &Path,
    kind: SampleKind,
    k: usize,
    meta: TaskMeta,
    origin: &str,
) -> Result<NewTask> {
    let text =
        |p: &Path| -> Result<(String, String)> { Ok((p.display().to_string(), read_text(p)?)) };
    sample_task(
        task,
        &text(source_file)?,
        &text(test_file)?,
        kind,
        k,
        meta,
        origin,
    )
}

/// `load_source` on texts: (label, contents) of the source and of the test set.
pub fn sample_task(
    task: &str,
    source: &(String, String),
    test: &(String, String),
    kind: SampleKind,
    k: usize,
    meta: TaskMeta,
    origin: &str,
) -> Result<NewTask> {
    if task.is_empty() || task.contains(['/', '\\']) {
        return Err(Error::Invalid(format!("{task:?} is not a task name")));
    }
    let parse = |(label, text): &(String, String)| -> Result<Vec<TsvLine>> {
        parse_tsv(label, text).map_err(|errs| Error::Data {
            file: label.clone(),
            line: None,
            message: format!(
                "{} problem(s), nothing imported:\n{}",
                errs.len(),
                errs.join("\n")
            ),
        })
    };
    let source = parse(source)?;
    let test = parse(test)?;
    let metric = metric_of("--metric", &meta.metric)?;
    let mut files = Vec::new();
    for seed in CROSSFIT_SEEDS {
        let (train, dev) = sample(&source, kind, k, seed);
        for (split, lines) in [("train", train), ("dev", dev), ("test", test.clone())] {
            files.push(NewFile {
                file_name: format!("{task}_{k}_{seed}_{split}.tsv"),
                k: k as u32,
                seed,
                split: split.to_string(),
                sha256: sha(&to_tsv(&lines)),
                lines,
            });
        }
    }
    Ok(NewTask {
        name: task.to_string(),
        ontology: meta.ontology,
        metric,
        source: origin.to_string(),
        files,
    })
}

/// A reference method's runs on one task: the seeds that had a run before (kept as they are)
/// and the runs made now with their scores.
pub struct BaselineRuns {
    pub kept: Vec<u32>,
    pub made: Vec<(u32, Score)>,
}

/// Runs a reference method on the seeds of a task that have no run of it yet, and stores the
/// runs (each as it is made: one cut short goes on where it stopped).
pub async fn run_baseline_missing(
    pool: &sqlx::AnyPool,
    method: Baseline,
    task: &str,
) -> Result<BaselineRuns> {
    let kept = xf::seeds_with_run(pool, method.name(), task).await?;
    let mut seeds = xf::seeds_of(pool, task).await?;
    seeds.retain(|s| !kept.contains(s));
    let mut made = Vec::new();
    for seed in seeds {
        let train = xf::split_lines(pool, task, seed, "train").await?;
        let test = xf::split_lines(pool, task, seed, "test").await?;
        let inputs: Vec<&str> = test.iter().map(|l| l.input.as_str()).collect();
        let preds = baseline::predict(method, &train, &inputs);
        made.push((
            seed,
            xf::store_run(pool, method.name(), task, seed, "baseline", &preds, None).await?,
        ));
    }
    Ok(BaselineRuns { kept, made })
}
