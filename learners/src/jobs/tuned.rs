//! Fine-tuned runs (`baseline --finetune`): per shot group, the encoder fine-tuned in candle,
//! exported to ONNX and evaluated by ONNX Runtime; a grid that many workers share (`grid`),
//! resumes and shows its ETA.

use super::grid::{self, GridRun};
use super::runs::task_test;
use super::*;
use crate::baseline;
use crate::decode::Decoding;
use crate::eval::{self, decode_items, featurize, model_inputs, predict_loaded, ModelDir};
use crate::runtime::Device;
use crate::tokenizer::Tokenizer;
use crate::tune::export::Precision;
use crate::tune::{self, train, Recipe};
use domain::ids::TaskId;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;
use store::catalog::examples_of;

/// One shot group to fine-tune on.
#[derive(Clone, Debug)]
pub struct Job {
    pub task: String,
    pub task_id: TaskId,
    pub k: u32,
    pub split: u32,
}

fn target(start: &tune::Start, task: &str, k: u32, split: u32, replace: bool) -> Target {
    Target {
        system: start.system.clone(),
        kind: SystemKind::Baseline,
        task: task.into(),
        k,
        split,
        replace,
    }
}

/// The shot groups to fine-tune on: the given ones (refused when finished, unless replaced),
/// or every group of each task, where finished ones are skipped (the grid resumes).
pub async fn plan(
    pool: &AnyPool,
    start: &tune::Start,
    tasks: &[String],
    groups: Option<(u32, u32)>,
    replace: bool,
) -> Result<(Vec<Job>, usize)> {
    let (mut jobs, mut skipped) = (Vec::new(), 0);
    for task in tasks {
        let (task_id, ..) = task_test(pool, task).await?;
        let all = store::catalog::shot_groups(pool, task_id).await?;
        if all.is_empty() {
            return Err(Error::Invalid(format!(
                "task {task} has no training files to fine-tune on"
            )));
        }
        let chosen = match groups {
            Some(g) if !all.contains(&g) => {
                return Err(Error::Invalid(format!(
                    "task {task} has no shot group k={} split={}",
                    g.0, g.1
                )))
            }
            Some(g) => {
                refuse_if_done(pool, task_id, &target(start, task, g.0, g.1, replace)).await?;
                vec![g]
            }
            None => all,
        };
        for (k, split) in chosen {
            if !replace
                && done_run(pool, task_id, &target(start, task, k, split, false))
                    .await?
                    .is_some()
            {
                skipped += 1;
                continue;
            }
            jobs.push(Job {
                task: task.clone(),
                task_id,
                k,
                split,
            });
        }
    }
    Ok((jobs, skipped))
}

/// What one fine-tuned shot group gave, before storing.
struct Tuned {
    spans: Vec<Vec<crate::decode::PredSpan>>,
    probabilities: Vec<f32>,
    provider: String,
    losses: Vec<f64>,
    /// Of the shot group's own items, how many ONNX Runtime answers as candle does.
    agree: (usize, usize),
    train_seconds: f64,
    eval_seconds: f64,
}

/// One shot group to fine-tune and evaluate: the starting weights, the task's shots and test
/// set, and how.
struct OneGroup<'a> {
    weights: &'a Path,
    spec: &'a domain::task::TaskSpec,
    shots: &'a [domain::task::Example],
    test: &'a [domain::task::Example],
    d: &'a Decoding,
    recipe: &'a Recipe,
}

/// Fine-tunes, exports to `out` (and at int8 to `int8`) and evaluates one shot group
/// (blocking).
fn tune_one(
    g: &OneGroup,
    out: &Path,
    int8: Option<&Path>,
    device: Device,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Tuned> {
    let OneGroup {
        weights,
        spec,
        shots,
        test,
        d,
        recipe,
    } = *g;
    let started = Instant::now();
    let tok_path = weights.join("tokenizer.json");
    let tok = Tokenizer::open(&tok_path)?;
    let (on, trained_on) = tune::device(device)?;
    let lesson = tune::TaskShots {
        spec,
        examples: shots,
    };
    let (w, losses) = tune::finetune(weights, &tok, lesson, d, recipe, &on, progress)?;
    let train_seconds = started.elapsed().as_secs_f64();
    tune::export_dir(out, &w, &tok_path, d, Precision::F32)?;
    if let Some(int8) = int8 {
        tune::export_dir(int8, &w, &tok_path, d, Precision::Int8)?;
    }
    let dir = ModelDir::open(out)?;
    let mut loaded = eval::load(&dir, device)?;
    // The exported model must answer the shots as the trained one does.
    let inputs: Vec<(String, String)> = shots.iter().map(|e| model_inputs(spec, e)).collect();
    let fs = featurize(&tok, &inputs, d)?;
    let logits = train::logits(&w, &fs, d.batch_size)
        .map_err(|e| Error::Model(format!("fine-tuned model failed: {e}")))?;
    let choices = eval::choices(spec, shots, &inputs);
    let ours = decode_items(&fs, &logits, &inputs, &choices, d);
    let theirs = predict_loaded(&dir, &mut loaded, spec, shots, &mut |_, _| {})?.spans;
    let same = |a: &[crate::decode::PredSpan], b: &[crate::decode::PredSpan]| {
        a.iter()
            .map(|s| (s.source, s.offset, s.length))
            .eq(b.iter().map(|s| (s.source, s.offset, s.length)))
    };
    let agree = ours.iter().zip(&theirs).filter(|(a, b)| same(a, b)).count();
    let p = predict_loaded(&dir, &mut loaded, spec, test, &mut |_, _| {})?;
    Ok(Tuned {
        spans: p.spans,
        probabilities: p.probabilities,
        provider: format!(
            "fine-tuned with candle on {trained_on} (ONNX Runtime answers {agree} of {} shots as candle does); evaluated with ONNX Runtime {}",
            shots.len(),
            p.provider
        ),
        losses,
        agree: (agree, shots.len()),
        train_seconds,
        eval_seconds: p.seconds,
    })
}

/// A task's test set, loaded once per task a worker meets.
type TaskTest = (
    domain::task::TaskSpec,
    Vec<(domain::ids::ExampleId, domain::task::Example)>,
);

/// Queues the fine-tuning of `jobs` from `start` in the shared grid (with `replace`, finished
/// groups again); the jobs' ids.
pub async fn queue(
    pool: &AnyPool,
    start: &tune::Start,
    jobs: &[Job],
    (replace, clock): (bool, &store::lease::Clock),
) -> Result<Vec<i64>> {
    let groups: Vec<_> = jobs.iter().map(|j| (j.task_id, j.k, j.split)).collect();
    let learner = grid::Learner::FineTuning {
        weights: super::runs::absolute(&start.weights),
    };
    grid::enqueue(
        pool,
        &start.system,
        learner,
        None,
        &groups,
        (replace, clock),
    )
    .await
}

/// Queues the jobs in the shared grid, then claims, fine-tunes, evaluates and stores one job
/// after another until none of them is left unfinished: any number of workers on any machines
/// can run this on the same database and share the jobs; each stores what it finishes at once
/// (a stopped grid resumes where it stopped). Prints progress with an estimate of the time left.
pub async fn run_finetune(
    pool: &AnyPool,
    start: &tune::Start,
    jobs: Vec<Job>,
    o: &GridRun,
) -> Result<Vec<Summary>> {
    let ids = queue(pool, start, &jobs, (o.replace, &o.clock)).await?;
    if o.queue_only {
        return super::runs::queued(ids.len());
    }
    let names: HashMap<TaskId, String> = jobs.iter().map(|j| (j.task_id, j.task.clone())).collect();
    let mut worker = grid::Worker::new(pool, ids, o.lease).on_signals()?;
    let (mut mine, started) = (0u64, Instant::now());
    let mut tests: HashMap<TaskId, TaskTest> = HashMap::new();
    let mut out = Vec::new();
    while let Some(held) = worker.next().await? {
        let task = names[&held.task_id].clone();
        if let std::collections::hash_map::Entry::Vacant(e) = tests.entry(held.task_id) {
            let (_, spec, test) = task_test(pool, &task).await?;
            e.insert((spec, test));
        }
        let test = &tests[&held.task_id];
        let result = worker
            .hold(&held, tune_job(pool, start, &task, test, &held, o))
            .await?;
        let Some(summary) = worker.settle(&held, result).await? else {
            continue;
        };
        mine += u64::from(held.k);
        let (_, left) = worker.left().await?;
        let elapsed = started.elapsed().as_secs_f64();
        eprintln!(
            "{task} k={} split={} ({}): S1 {:.4}; elapsed {:.1} min, about {:.1} min left at this worker's pace ({left} shots unfinished)",
            held.k,
            held.split,
            worker.name,
            summary.s1,
            elapsed / 60.0,
            elapsed / mine as f64 * left as f64 / 60.0
        );
        out.push(summary);
    }
    Ok(out)
}

/// Fine-tunes, evaluates and stores one held job from `start` (its task's test set read here).
pub(crate) async fn tune_held(
    pool: &AnyPool,
    start: &tune::Start,
    held: &grid::Held,
    o: &GridRun,
) -> Result<Summary> {
    let (_, task, _) = grid::job_target(pool, held.lease.job).await?;
    let (_, spec, test) = task_test(pool, &task).await?;
    tune_job(pool, start, &task, &(spec, test), held, o).await
}

/// Where a job's model goes: kept under `--export` (with an int8 copy beside it, for
/// `bench`), else a temporary folder removed after the evaluation.
struct Folders {
    int8: Option<std::path::PathBuf>,
    /// Where the model is written: the export's folder, or `scratch`'s.
    dir: std::path::PathBuf,
    /// A temporary folder, removed when dropped: also where the job's future is dropped (a
    /// worker stopped by SIGTERM hands its job back and exits), which a removal after the
    /// evaluation never reached, leaving a model's size on disk per stop.
    scratch: Option<tempfile::TempDir>,
}

fn folders(o: &GridRun, task: &str, held: &grid::Held) -> Result<Folders> {
    let keep = o
        .export
        .as_ref()
        .map(|e| e.join(format!("{task}-finetuned-k{}-s{}", held.k, held.split)));
    let int8 = keep.as_ref().map(|k| {
        k.with_file_name(format!(
            "{}-int8",
            k.file_name().unwrap_or_default().to_string_lossy()
        ))
    });
    let (dir, scratch) = match &keep {
        Some(k) => (k.clone(), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix(&format!("clues-finetune-{task}-{}-{}-", held.k, held.split))
                .tempdir()
                .map_err(|e| Error::io("cannot make a folder for the fine-tuned model", e))?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    Ok(Folders { int8, dir, scratch })
}

/// A held job's decoding and recipe (seeded by its group), and the settings its run stores.
fn job_settings(
    weights: &Path,
    spec: &TaskSpec,
    held: &grid::Held,
) -> Result<(Decoding, Recipe, String)> {
    let family = tune::read_config(weights)?.model_type;
    let d = Decoding {
        null_threshold: 0.0,
        ..baseline::decoding(spec)
    };
    let seeded = Recipe {
        seed: baseline::seed(held.k, held.split),
        ..Recipe::default()
    };
    let settings = serde_json::json!({
        "decoding": d, "recipe": seeded, "weights": weights.display().to_string(),
        "model_type": family,
    })
    .to_string();
    Ok((d, seeded, settings))
}

/// Fine-tunes, evaluates and stores one held job; the run is marked failed on any error.
async fn tune_job(
    pool: &AnyPool,
    from: &tune::Start,
    task: &str,
    (spec, test): &TaskTest,
    held: &grid::Held,
    o: &GridRun,
) -> Result<Summary> {
    let weights = from.weights.as_path();
    let t = target(from, task, held.k, held.split, o.replace);
    let (d, seeded, settings) = job_settings(weights, spec, held)?;
    let shots: Vec<_> = examples_of(pool, held.task_id, Some((held.k, held.split)))
        .await?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let provider = format!("built-in fine-tuning ({})", held.lease.worker);
    let run = start(
        pool,
        held.task_id,
        &t,
        &provider,
        &settings,
        "starting",
        Some(held),
    )
    .await?;
    let Folders { int8, dir, scratch } = folders(o, task, held)?;
    let label = format!(
        "fine-tuning {task} k={} split={} (attempt {})",
        held.k, held.split, held.lease.attempt
    );
    let mut progress = Progress::new(pool, vec![run], label, o.bar).counting("training steps");
    let (w, s, d2, o2, o8, device) = (
        weights.to_path_buf(),
        spec.clone(),
        d,
        dir.clone(),
        int8.clone(),
        o.device,
    );
    let examples: Vec<_> = test.iter().map(|(_, e)| e.clone()).collect();
    let result = tokio::task::spawn_blocking(move || {
        let group = OneGroup {
            weights: &w,
            spec: &s,
            shots: &shots,
            test: &examples,
            d: &d2,
            recipe: &seeded,
        };
        tune_one(&group, &o2, o8.as_deref(), device, &mut |a, b| {
            progress.update(a, b)
        })
    })
    .await
    .map_err(|e| Error::Model(format!("fine-tuning stopped: {e}")))
    .and_then(|r| r);
    drop(scratch);
    let tuned = or_fail(pool, &[run], result).await?;
    let items = score_items(
        spec,
        test,
        model_answers(spec, tuned.spans, tuned.probabilities),
    )?;
    let stored = finish(pool, run, &t, &tuned.provider, &items, Some(held)).await;
    let (s1, s1_any_of) = or_fail(pool, &[run], stored).await?;
    eprintln!(
        "{task} k={} split={}: trained {:.3} s (final loss {:.3}), evaluated {:.3} s; ONNX Runtime answers {} of {} shots as candle does",
        held.k,
        held.split,
        tuned.train_seconds,
        tuned.losses.last().copied().unwrap_or(f64::NAN),
        tuned.eval_seconds,
        tuned.agree.0,
        tuned.agree.1,
    );
    Ok(Summary {
        run,
        items: items.len(),
        s1,
        s1_any_of,
        provider: tuned.provider,
        seconds: tuned.train_seconds + tuned.eval_seconds,
        target: t,
    })
}
