//! The machines page's door to the model track (`store::machine::JobDoor`): a learner queued
//! from the browser is checked as the command line checks it, with the same functions and
//! argument parsers, before any job is queued; `clues-lab worker` processes run the jobs.

use crate::command::clap_error;
use crate::crossfit::{self, TuneArgs};
use crate::eval::ModelDir;
use crate::jobs::{self, grid};
use crate::runtime::Device;
use crate::tune::{self, folder_name};
use clap::Parser;
use domain::ids::TaskId;
use domain::wire::queue::{QueueAnswer, QueueRequest, QueuedLearner, UpstreamChoice};
use sqlx::AnyPool;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use store::catalog::{load_spec, shot_groups};
use store::error::{Error, Result};
use store::lease::Clock;
use store::machine::JobDoor;

/// The door the server installs.
#[derive(Debug)]
pub struct Door;

impl JobDoor for Door {
    fn queue<'a>(
        &'a self,
        pool: &'a AnyPool,
        request: QueueRequest,
        clock: &'a Clock,
    ) -> Pin<Box<dyn Future<Output = Result<QueueAnswer>> + Send + 'a>> {
        Box::pin(queue(pool, request, clock))
    }
}

/// A folder as a request names it: absolute, as every worker's machine must see it.
fn folder(given: &str, what: &str) -> Result<PathBuf> {
    let path = PathBuf::from(given.trim());
    if given.trim().is_empty() {
        return Err(Error::Invalid(format!("give the {what} folder")));
    }
    if !path.is_absolute() {
        return Err(Error::Invalid(format!(
            "give the {what} folder as an absolute path ({given} is relative), as every worker's machine sees it"
        )));
    }
    Ok(path)
}

/// Runs a blocking check of a folder (reading a model) off the async workers. A folder that
/// does not pass (missing, unreadable or malformed files, a model that does not load) is the
/// asker's to fix: refused as invalid, naming the file and why, never a server failure.
async fn checked<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Model(format!("the check stopped: {e}")))?
        .map_err(refusal)
}

/// A folder check's failure as the asker's mistake (`Invalid`, with its words); the database's
/// and the server's own failures stay what they are.
fn refusal(e: Error) -> Error {
    match e {
        Error::Io { .. } | Error::Model(_) | Error::Unfit(_) | Error::Data { .. } => {
            Error::Invalid(e.to_string())
        }
        e => e,
    }
}

/// Each task's id with the shot group to queue: the one asked for, which the task must have, or
/// (0, 0) (every group of the frozen baseline; a model folder trained elsewhere). Every task is
/// checked before anything is queued.
async fn task_groups(pool: &AnyPool, r: &QueueRequest) -> Result<Vec<(TaskId, u32, u32)>> {
    let mut out = Vec::new();
    for task in &r.tasks {
        let (id, ..) = load_spec(pool, task).await?;
        // A model folder trained elsewhere needs no training files; a learner here does.
        if !matches!(r.learner, QueuedLearner::Onnx { .. }) {
            let groups = shot_groups(pool, id).await?;
            if groups.is_empty() {
                return Err(Error::Invalid(format!(
                    "task {task} has no training files to learn from"
                )));
            }
            if let Some((k, split)) = r.group.filter(|g| !groups.contains(g)) {
                return Err(Error::Invalid(format!(
                    "task {task} has no shot group k={k} split={split}"
                )));
            }
        }
        let (k, split) = r.group.unwrap_or((0, 0));
        out.push((id, k, split));
    }
    Ok(out)
}

/// A task's jobs for a learner that runs per shot group: the group asked for, which the task
/// (`all`: its groups) must have, or k 0 and split 0 where `zero_shot` (no demonstrations);
/// else every group it has.
fn per_group(
    task: &str,
    id: TaskId,
    all: Vec<(u32, u32)>,
    group: Option<(u32, u32)>,
    zero_shot: bool,
) -> Result<Vec<(TaskId, u32, u32)>> {
    let (no_group, no_files) = if zero_shot {
        (
            " (k 0 and split 0: no demonstrations)",
            ": give k 0 and split 0 for no demonstrations",
        )
    } else {
        ("", " to learn from")
    };
    match group {
        Some((0, 0)) if zero_shot => Ok(vec![(id, 0, 0)]),
        Some(g) if all.contains(&g) => Ok(vec![(id, g.0, g.1)]),
        Some((k, split)) => Err(Error::Invalid(format!(
            "task {task} has no shot group k={k} split={split}{no_group}"
        ))),
        None if all.is_empty() => Err(Error::Invalid(format!(
            "task {task} has no training files{no_files}"
        ))),
        None => Ok(all.into_iter().map(|(k, split)| (id, k, split)).collect()),
    }
}

/// Checks and queues one request; says what was queued.
pub async fn queue(pool: &AnyPool, r: QueueRequest, clock: &Clock) -> Result<QueueAnswer> {
    let upstream = matches!(r.learner, QueuedLearner::CrossfitUpstream(_));
    if r.tasks.is_empty() && !upstream {
        return Err(Error::Invalid("choose at least one task".into()));
    }
    let terms = (r.replace, clock);
    let (jobs, what) = match &r.learner {
        QueuedLearner::FrozenBaseline => {
            let groups = task_groups(pool, &r).await?;
            let learner = grid::Learner::FrozenBaseline;
            let system = crate::baseline::SYSTEM;
            let ids = grid::enqueue(pool, system, learner, None, &groups, terms).await?;
            (ids.len(), system.to_string())
        }
        QueuedLearner::FineTuning { weights, system } => {
            let weights = folder(weights, "checkpoint")?;
            let system = system.clone().filter(|s| !s.trim().is_empty());
            let start = checked(move || tune::Start::new(Some(weights), system)).await?;
            let (jobs, skipped) =
                jobs::plan_finetune(pool, &start, &r.tasks, r.group, r.replace).await?;
            let ids = jobs::queue_finetune(pool, &start, &jobs, terms).await?;
            let kept = if skipped > 0 {
                format!(" ({skipped} groups already fine-tuned are kept)")
            } else {
                String::new()
            };
            (ids.len(), format!("{}{kept}", start.system))
        }
        QueuedLearner::Onnx { model, system } => {
            let model = folder(model, "model")?;
            let m = model.clone();
            // Loaded as a worker will load it (on the CPU): the files, the model's inputs and
            // outputs, and the tokenizer's ids against the model.
            checked(move || crate::eval::load(&ModelDir::open(&m)?, Device::Cpu).map(|_| ()))
                .await?;
            let system = system
                .clone()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| folder_name(&model));
            let source = model.display().to_string();
            let groups = task_groups(pool, &r).await?;
            let learner = grid::Learner::Onnx;
            let source = Some(source.as_str());
            let ids = grid::enqueue(pool, &system, learner, source, &groups, terms).await?;
            (ids.len(), system)
        }
        QueuedLearner::Prompt {
            weights,
            system,
            template,
            verbaliser,
            steps,
        } => {
            let weights = folder(weights, "checkpoint")?;
            let steps = steps.unwrap_or(1000).to_string();
            let mut line = vec!["prompt", "--task", "-", "--steps", &steps];
            let w = weights.display().to_string();
            line.extend(["--weights", &w]);
            let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
            let mut a = PromptLine::try_parse_from(line).map_err(clap_error)?.prompt;
            (a.template, a.verbaliser) = (given(template), given(verbaliser));
            a.system = given(system);
            queue_prompt((pool, clock), &r, a).await?
        }
        QueuedLearner::InContext {
            endpoint,
            model,
            system,
            concurrency,
        } => {
            let line = [
                "icl",
                "--endpoint",
                endpoint.trim(),
                "--model",
                model.trim(),
                "--task",
                "-",
                "--concurrency",
                &concurrency.unwrap_or(1).to_string(),
            ];
            let mut a = IclLine::try_parse_from(line).map_err(clap_error)?.icl;
            a.system = system.clone().filter(|s| !s.trim().is_empty());
            queue_in_context((pool, clock), &r, a).await?
        }
        QueuedLearner::Crossfit {
            model,
            method,
            steps,
        } => queue_crossfit((pool, clock), &r, model, method, *steps).await?,
        QueuedLearner::CrossfitUpstream(u) => queue_upstream((pool, clock), &r, u).await?,
    };
    let plural = if jobs == 1 { "" } else { "s" };
    Ok(QueueAnswer {
        jobs,
        said: format!(
            "{jobs} job{plural} of {what} queued; `clues-lab worker` processes pointed at this database run them"
        ),
    })
}

/// The command line's arguments of `prompt` (its defaults for what the page does not set).
#[derive(Parser)]
struct PromptLine {
    #[command(flatten)]
    prompt: jobs::PromptArgs,
}

/// Prompt-based fine-tuning on each task's shot groups (or the one asked for), checked on
/// each task as `prompt` checks it (template, verbaliser, checkpoint and its head).
async fn queue_prompt(
    (pool, clock): (&AnyPool, &Clock),
    r: &QueueRequest,
    mut a: jobs::PromptArgs,
) -> Result<(usize, String)> {
    let system = jobs::prompt_system(&a)?;
    let mut groups = Vec::new();
    for task in &r.tasks {
        a.task = task.clone();
        let (id, all) = jobs::check_prompt(pool, &a).await.map_err(refusal)?;
        groups.extend(per_group(task, id, all, r.group, false)?);
    }
    let learner = grid::Learner::Prompt {
        weights: a.weights,
        template: a.template,
        verbaliser: a.verbaliser,
        steps: a.steps,
    };
    let ids = grid::enqueue(pool, &system, learner, None, &groups, (r.replace, clock)).await?;
    Ok((ids.len(), system))
}

/// The command line's arguments of `icl` (its defaults for what the page does not set).
#[derive(Parser)]
struct IclLine {
    #[command(flatten)]
    icl: crate::icl::IclArgs,
}

/// In-context learning on each task's shot groups (or the one asked for; k = 0: none), as
/// `icl` checks it.
async fn queue_in_context(
    (pool, clock): (&AnyPool, &Clock),
    r: &QueueRequest,
    a: crate::icl::IclArgs,
) -> Result<(usize, String)> {
    if a.model.is_empty() {
        return Err(Error::Invalid(
            "give the model name the server is asked for".into(),
        ));
    }
    crate::icl::check(&a)?;
    let mut groups = Vec::new();
    for task in &r.tasks {
        let (id, spec, _) = load_spec(pool, task).await?;
        if spec.family == domain::task::Family::TextToText {
            return Err(Error::Invalid(format!(
                "{task} is a CrossFit text-to-text task: in-context learning reads replies as spans of the context"
            )));
        }
        let all = shot_groups(pool, id).await?;
        groups.extend(per_group(task, id, all, r.group, true)?);
    }
    let system = crate::icl::system_name(&a);
    let learner = grid::Learner::InContext {
        endpoint: a.endpoint.trim_end_matches('/').to_string(),
        model: a.model,
        max_tokens: a.max_tokens,
        timeout_seconds: a.timeout_seconds,
        concurrency: a.concurrency,
    };
    let ids = grid::enqueue(pool, &system, learner, None, &groups, (r.replace, clock)).await?;
    Ok((ids.len(), system))
}

/// CrossFit's upstream learning of a partition as one job (`crossfit upstream`'s arguments,
/// checked as the command checks them); its worker queues the test tasks' seeds.
async fn queue_upstream(
    (pool, clock): (&AnyPool, &Clock),
    r: &QueueRequest,
    u: &UpstreamChoice,
) -> Result<(usize, String)> {
    let UpstreamChoice {
        model,
        partition,
        method,
        out,
        name,
        upstream_steps,
        steps,
    } = u;
    if !r.tasks.is_empty() || r.group.is_some() || r.replace {
        return Err(Error::Invalid(
            "upstream learning takes its tasks from the partition: choose no tasks, shot group or replacement".into(),
        ));
    }
    let model = folder(model, "model")?.display().to_string();
    let out = folder(out, "upstream")?.display().to_string();
    let mut line = vec![
        "--model".to_string(),
        model,
        "--partition".into(),
        partition.trim().to_string(),
        "--method".into(),
        method.trim().to_string(),
        "--out".into(),
        out,
        "--upstream-steps".into(),
        upstream_steps.unwrap_or(1000).to_string(),
        "--steps".into(),
        steps.unwrap_or(1000).to_string(),
    ];
    if let Some(n) = name.as_ref().filter(|n| !n.trim().is_empty()) {
        line.extend(["--name".to_string(), n.trim().to_string()]);
    }
    let (_, method) = crossfit::upstream_job::queue_upstream(pool, line, clock).await?;
    Ok((1, format!("upstream learning of {method}")))
}

/// The command line's arguments of `crossfit learn` with `--steps` (its defaults otherwise).
#[derive(Parser)]
struct LearnLine {
    #[command(flatten)]
    tune: TuneArgs,
}

/// CrossFit's direct fine-tuning on every seed of each task without a run of the method.
async fn queue_crossfit(
    (pool, clock): (&AnyPool, &Clock),
    r: &QueueRequest,
    model: &str,
    method: &Option<String>,
    steps: Option<u32>,
) -> Result<(usize, String)> {
    if r.group.is_some() {
        return Err(Error::Invalid(
            "CrossFit learns every seed of a task: a shot group does not apply".into(),
        ));
    }
    if r.replace {
        return Err(Error::Invalid(
            "CrossFit keeps a method's runs: give another method name to learn again".into(),
        ));
    }
    let model = folder(model, "model")?;
    let m = model.clone();
    checked(move || crossfit::check_model(&m)).await?;
    let method = crossfit::method_name(method, &model, "direct fine-tuning")?;
    let steps = steps.unwrap_or(1000).to_string();
    let line = LearnLine::try_parse_from(["learn", "--steps", &steps]).map_err(clap_error)?;
    for task in &r.tasks {
        store::crossfit::metric_of(pool, task).await?;
    }
    let mut jobs = 0;
    for task in &r.tasks {
        let seeds = crossfit::SeedsOf {
            model: &model,
            task,
            method: &method,
            a: &line.tune,
            upstream: None,
        };
        let (ids, ..) = crossfit::queue_task(pool, &seeds, clock).await?;
        jobs += ids.len();
    }
    Ok((jobs, method))
}
