//! Evaluations of a registered model and the baseline over shot groups: the task's test
//! set predicted, scored and stored under each target.

use super::grid::{self, GridRun};
use super::*;
use domain::ids::{ExampleId, TaskId};

use crate::baseline::{self, Shots};
use crate::decode::Decoding;
use crate::eval::{predict_loaded, ModelDir};
use crate::head::Training;
use crate::runtime::{Device, Model, Outputs};
use crate::tokenizer::Tokenizer;
use domain::task::{Example, TaskSpec};
use sqlx::AnyPool;
use std::time::Instant;
use store::catalog::{examples_of, load_spec};
use store::error::{Error, Result};

pub(crate) async fn task_test(
    pool: &AnyPool,
    task: &str,
) -> Result<(TaskId, TaskSpec, Vec<(ExampleId, Example)>)> {
    let (id, spec, _) = load_spec(pool, task).await?;
    let test = examples_of(pool, id, None).await?;
    if test.is_empty() {
        return Err(Error::Invalid(format!("task {task} has no test set")));
    }
    Ok((id, spec, test))
}

/// Evaluates a registered model on a task's test set and stores it under `t`.
pub async fn evaluate(
    pool: &AnyPool,
    dir: &ModelDir,
    t: Target,
    device: Device,
    bar: bool,
) -> Result<Summary> {
    evaluate_job(pool, dir, t, device, bar, None).await
}

/// [`evaluate`], for a grid job when `held`.
async fn evaluate_job(
    pool: &AnyPool,
    dir: &ModelDir,
    t: Target,
    device: Device,
    bar: bool,
    held: Option<&grid::Held>,
) -> Result<Summary> {
    let (task_id, spec, test) = task_test(pool, &t.task).await?;
    // A model that cannot run is refused before anything is stored; it is loaded once.
    let d = dir.clone();
    let mut loaded = tokio::task::spawn_blocking(move || crate::eval::load(&d, device))
        .await
        .map_err(|e| Error::Model(format!("loading the model stopped: {e}")))??;
    let settings = serde_json::to_string(&dir.decoding).map_err(Error::internal)?;
    let run = start(
        pool,
        task_id,
        &t,
        &dir.dir.display().to_string(),
        &settings,
        "starting",
        held,
    )
    .await?;
    let mut progress = Progress::new(pool, vec![run], format!("{} on {}", t.system, t.task), bar);
    let (d, s, examples) = (
        dir.clone(),
        spec.clone(),
        test.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>(),
    );
    let result = tokio::task::spawn_blocking(move || {
        predict_loaded(&d, &mut loaded, &s, &examples, &mut |a, b| {
            progress.update(a, b)
        })
    })
    .await
    .map_err(|e| Error::Model(format!("the evaluation stopped: {e}")))
    .and_then(|r| r);
    let p = or_fail(pool, &[run], result).await?;
    let items = score_items(&spec, &test, model_answers(&spec, p.spans, p.probabilities))?;
    store_finished(pool, run, t, p.provider, &items, held, p.seconds).await
}

/// The baseline on a task: a head per shot group (`groups`, or every group of the task),
/// each stored as a run of the baseline system, all in one transaction; optionally each head
/// exported as a model.
pub async fn run_baseline(
    pool: &AnyPool,
    task: &str,
    groups: Option<Vec<(u32, u32)>>,
    replace: bool,
    export: Option<std::path::PathBuf>,
    device: Device,
    bar: bool,
) -> Result<Vec<Summary>> {
    let o = GridRun {
        replace,
        export,
        device,
        bar,
        lease: grid::LEASE,
        queue_only: false,
        clock: store::lease::Clock::System,
    };
    baseline_job(pool, task, groups, &o, None).await
}

/// One line of an evaluation plan (`eval --plan`): a model folder, the task, the shot group it
/// was trained on and the system name its scores are reported under.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedEval {
    pub model: std::path::PathBuf,
    pub task: String,
    pub k: u32,
    pub split: u32,
    pub system: String,
}

/// Evaluations of many models as a shared grid: a job per plan line, claimed by any number
/// of workers (each machine must see the model folders at the same paths); each run stored
/// in the transaction that marks its job done.
pub async fn evaluate_plan(
    pool: &AnyPool,
    plan: &[PlannedEval],
    o: &GridRun,
) -> Result<Vec<Summary>> {
    let mut jobs = Vec::new();
    for e in plan {
        let (task, ..) = load_spec(pool, &e.task).await?;
        let source = absolute(&e.model).display().to_string();
        let group = [(task, e.k, e.split)];
        let learner = grid::Learner::Onnx;
        jobs.extend(
            grid::enqueue(
                pool,
                &e.system,
                learner,
                Some(&source),
                &group,
                (o.replace, &o.clock),
            )
            .await?,
        );
    }
    if o.queue_only {
        return queued(jobs.len());
    }
    let mut worker = grid::Worker::new(pool, jobs, o.lease).on_signals()?;
    let mut out = Vec::new();
    while let Some(held) = worker.next().await? {
        let result = worker.hold(&held, evaluate_held(pool, &held, o)).await?;
        if let Some(s) = worker.settle(&held, result).await? {
            out.push(s);
        }
    }
    Ok(out)
}

/// A folder as an absolute path, as a job keeps it (workers start in other folders).
pub(crate) fn absolute(p: &std::path::Path) -> std::path::PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// What a command run with `--queue-only` answers: the jobs it queued, nothing run.
pub(crate) fn queued(jobs: usize) -> Result<Vec<Summary>> {
    eprintln!("{jobs} jobs queued; `clues-lab worker` processes pointed at this database run them");
    Ok(Vec::new())
}

/// Evaluates a held job's model folder (its source) on its task and shot group.
pub(crate) async fn evaluate_held(
    pool: &AnyPool,
    held: &grid::Held,
    o: &GridRun,
) -> Result<Summary> {
    let (system, task, source) = grid::job_target(pool, held.lease.job).await?;
    let folder = source.unwrap_or_default();
    let dir = ModelDir::open(std::path::Path::new(&folder))?;
    let t = Target {
        system,
        kind: SystemKind::Onnx,
        task,
        k: held.k,
        split: held.split,
        replace: o.replace,
    };
    evaluate_job(pool, &dir, t, o.device, o.bar, Some(held)).await
}

/// The frozen baseline as a shared grid: a job per task (every shot group: k = split = 0) or
/// per given group, claimed by any number of workers; a job's runs are stored together, in
/// the transaction that marks it done, only while its worker holds the lease.
pub async fn run_baseline_grid(
    pool: &AnyPool,
    tasks: &[String],
    group: Option<(u32, u32)>,
    o: &GridRun,
) -> Result<Vec<Summary>> {
    let mut keys = Vec::new();
    for task in tasks {
        let (id, ..) = load_spec(pool, task).await?;
        let (k, split) = group.unwrap_or((0, 0));
        keys.push((id, k, split));
    }
    let learner = grid::Learner::FrozenBaseline;
    let jobs = grid::enqueue(
        pool,
        baseline::SYSTEM,
        learner,
        None,
        &keys,
        (o.replace, &o.clock),
    )
    .await?;
    if o.queue_only {
        return queued(jobs.len());
    }
    let mut worker = grid::Worker::new(pool, jobs, o.lease).on_signals()?;
    let mut out = Vec::new();
    while let Some(held) = worker.next().await? {
        let result = worker.hold(&held, baseline_held(pool, &held, o)).await?;
        if let Some(done) = worker.settle(&held, result).await? {
            out.extend(done);
        }
    }
    Ok(out)
}

/// The frozen baseline's heads of a held job: its one shot group, or every group of its task
/// (k = split = 0).
pub(crate) async fn baseline_held(
    pool: &AnyPool,
    held: &grid::Held,
    o: &GridRun,
) -> Result<Vec<Summary>> {
    let (_, task, _) = grid::job_target(pool, held.lease.job).await?;
    let groups = (held.k > 0).then(|| vec![(held.k, held.split)]);
    baseline_job(pool, &task, groups, o, Some(held)).await
}

/// [`run_baseline`], for a grid job when `held`.
async fn baseline_job(
    pool: &AnyPool,
    task: &str,
    groups: Option<Vec<(u32, u32)>>,
    o: &GridRun,
    held: Option<&grid::Held>,
) -> Result<Vec<Summary>> {
    let (replace, device, bar) = (o.replace, o.device, o.bar);
    let (task_id, spec, test) = task_test(pool, task).await?;
    let groups = chosen_groups(pool, task_id, task, groups).await?;
    let files = baseline::encoder_files()?;
    let (encoder_path, tok_path) = (files.model.clone(), files.tokenizer.clone());
    let d = baseline::decoding(&spec);
    let training = Training::default();
    // Each head's no-answer threshold is chosen on its shots: a run opens with the task's
    // decoding and is stored with the one its head used.
    let settings_with = |d: &Decoding| baseline_settings(d, &training, &files.source, &tok_path);
    let settings = settings_with(&d);
    let target = |k, split| baseline_target(task, k, split, replace);
    // Every shot group is checked before any run is opened: a refusal stores nothing.
    for &(k, split) in &groups {
        refuse_if_done(pool, task_id, &target(k, split)).await?;
    }
    let opened = open_runs(pool, task_id, &groups, &target, &settings, held).await?;
    let (runs, shots, targets) = (opened.runs, opened.shots, opened.targets);
    let started = Instant::now();
    let mut progress = Progress::new(pool, runs.clone(), format!("baseline on {task}"), bar);
    let (s, examples) = (
        spec.clone(),
        test.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>(),
    );
    let (ep, tp) = (encoder_path.clone(), tok_path.clone());
    let result = tokio::task::spawn_blocking(move || -> Result<_> {
        let tok = Tokenizer::open(&tp)?;
        let mut model = Model::open(&ep, Outputs::Hidden, device)?;
        let provider = model.describe_provider();
        let task = baseline::TaskGroups {
            spec: &s,
            test: &examples,
            groups: &shots,
        };
        let trained = baseline::run(&mut model, &tok, &task, &d, &training, &mut |a, b| {
            progress.update(a, b)
        })?;
        Ok((provider, trained))
    })
    .await
    .map_err(|e| Error::Model(format!("the baseline stopped: {e}")))
    .and_then(|r| r);
    let (provider, trained) = or_fail(pool, &runs, result).await?;
    let seconds = started.elapsed().as_secs_f64();
    let mut scored = Vec::new();
    let mut used = Vec::new();
    for tr in trained {
        used.push(settings_with(&tr.decoding));
        if let Some(dir) = &o.export {
            let sub = dir.join(format!("{task}-k{}-s{}", tr.k, tr.split));
            baseline::export(&sub, &encoder_path, &tok_path, &tr.head, &tr.decoding)?;
        }
        scored.push(score_items(
            &spec,
            &test,
            model_answers(&spec, tr.spans, tr.probabilities),
        )?);
    }
    let finished: Vec<Finished> = runs
        .iter()
        .zip(&targets)
        .zip(&scored)
        .zip(&used)
        .map(|(((&run, t), items), settings)| Finished {
            run,
            t,
            provider: &provider,
            items,
            settings: Some(settings),
        })
        .collect();
    let stored = finish_all(pool, &finished, held).await;
    let scores = or_fail(pool, &runs, stored).await?;
    Ok(scores
        .into_iter()
        .zip(runs)
        .zip(targets)
        .zip(&scored)
        .map(|((((s1, s1_any_of), run), t), items)| Summary {
            run,
            items: items.len(),
            s1,
            s1_any_of,
            provider: provider.clone(),
            seconds,
            target: t,
        })
        .collect())
}

/// A baseline run's settings: its decoding, its head's training and the encoder.
fn baseline_settings(
    d: &Decoding,
    training: &Training,
    encoder: &str,
    tokenizer: &std::path::Path,
) -> String {
    serde_json::json!({
        "decoding": d, "epochs": training.epochs, "learning_rate": training.learning_rate,
        "weight_decay": training.weight_decay, "seed": "k << 32 | split",
        "encoder": encoder, "tokenizer": tokenizer.display().to_string(),
    })
    .to_string()
}

/// What a baseline group's run is stored as.
fn baseline_target(task: &str, k: u32, split: u32, replace: bool) -> Target {
    Target {
        system: baseline::SYSTEM.into(),
        kind: SystemKind::Baseline,
        task: task.into(),
        k,
        split,
        replace,
    }
}

/// The shot groups a baseline run trains on: all of the task's, or those asked for (each must
/// exist); a task without any is refused.
async fn chosen_groups(
    pool: &AnyPool,
    task_id: TaskId,
    task: &str,
    groups: Option<Vec<(u32, u32)>>,
) -> Result<Vec<(u32, u32)>> {
    let all = store::catalog::shot_groups(pool, task_id).await?;
    let groups = match groups {
        None => all,
        Some(g) => {
            if let Some((k, s)) = g.iter().find(|x| !all.contains(x)) {
                return Err(Error::Invalid(format!(
                    "task {task} has no shot group k={k} split={s}"
                )));
            }
            g
        }
    };
    if groups.is_empty() {
        return Err(Error::Invalid(format!(
            "task {task} has no training files to train a head on"
        )));
    }
    Ok(groups)
}

/// The runs a baseline opened, one per shot group, with the group's examples and target.
struct Opened {
    runs: Vec<RunId>,
    shots: Vec<Shots>,
    targets: Vec<Target>,
}

/// Opens a run per shot group; when one is refused, those opened before it are marked failed.
async fn open_runs(
    pool: &AnyPool,
    task_id: TaskId,
    groups: &[(u32, u32)],
    target: &(dyn Fn(u32, u32) -> Target + Sync),
    settings: &str,
    held: Option<&grid::Held>,
) -> Result<Opened> {
    let mut shots = Vec::new();
    let mut runs = Vec::new();
    let mut targets = Vec::new();
    for &(k, split) in groups {
        let t = target(k, split);
        let examples = examples_of(pool, task_id, Some((k, split)))
            .await?
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        match start(
            pool,
            task_id,
            &t,
            "built-in baseline",
            settings,
            "starting",
            held,
        )
        .await
        {
            Ok(run) => runs.push(run),
            Err(e) => {
                fail(
                    pool,
                    &runs,
                    "another shot group of this baseline run was refused",
                )
                .await;
                return Err(e);
            }
        }
        shots.push(Shots { k, split, examples });
        targets.push(t);
    }
    Ok(Opened {
        runs,
        shots,
        targets,
    })
}
