//! `clues-lab prompt`: prompt-based fine-tuning runs (the CLUES paper's PT) on a label task's
//! shot groups, the template and verbaliser stored with each run, scored like any run.

use super::progress::Progress;
use super::runs::task_test;
use super::{done_run, or_fail, start, store_finished, Summary, SystemKind, Target};
use crate::runtime::Device;
use crate::tokenizer::Tokenizer;
use crate::tune::{self, prompt, Recipe};
use domain::ids::TaskId;
use domain::prompt::{check_template, default_prompt, parse_verbaliser, Prompt};
use domain::task::{Context, Example, Family, TaskSpec};
use sqlx::AnyPool;
use std::path::PathBuf;
use std::time::Instant;
use store::catalog::{examples_of, shot_groups};
use store::db::cli as db;
use store::error::{Error, Result};
use store::machine::write::Scored;

#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    /// An encoder with its masked-LM head, as Hugging Face saves a BERT, RoBERTa / XLM-R or
    /// DeBERTa-v2/v3 from `...ForMaskedLM` (config.json, model.safetensors, tokenizer.json).
    #[arg(long)]
    pub weights: PathBuf,
    /// A label task (classification).
    #[arg(long)]
    pub task: String,
    /// One shot group (with --split); every group of the task without (finished ones kept).
    #[arg(long, requires = "split")]
    pub k: Option<u32>,
    #[arg(long, requires = "k")]
    pub split: Option<u32>,
    /// The item's text with {mask} once: {text} (or {premise} and {hypothesis}) and {question}
    /// [default: LM-BFF's "{text} It was {mask}." for sentiment, "{premise} ? {mask} ,
    /// {hypothesis}" for inference, else "{text} {question} {mask}"].
    #[arg(long)]
    pub template: Option<String>,
    /// A one-token word per label, e.g. positive=great,negative=terrible [default: LM-BFF's
    /// for sentiment and inference, else the labels themselves].
    #[arg(long)]
    pub verbaliser: Option<String>,
    /// The system name [default: "<folder> prompt-tuned"].
    #[arg(long)]
    pub system: Option<String>,
    /// Updates on the shots (LM-BFF's 1000, at 1e-5, batch 8).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub steps: u32,
    /// Replace finished runs of the same system, task, k and split.
    #[arg(long)]
    pub replace: bool,
    /// Where candle trains: auto, cpu or cuda (with the `cuda` build).
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
}

/// LM-BFF's recipe without its development set (the few-shot setting has none): AdamW at 1e-5
/// decaying linearly, batch 8, no weight decay, clipping at 1, dropout 0.1, `steps` updates.
fn recipe(steps: u32, k: u32, split: u32) -> Recipe {
    Recipe {
        learning_rate: 1e-5,
        steps: Some(steps as usize),
        seed: crate::baseline::seed(k, split),
        ..Recipe::default()
    }
}

/// The prompt of a run: the given template and verbaliser or the task's defaults, checked.
fn chosen(a: &PromptArgs, spec: &TaskSpec, pair: bool) -> Result<Prompt> {
    let Some(default) = default_prompt(spec, pair) else {
        return Err(Error::Invalid(format!(
            "{} is not a label task ({}): prompt-based fine-tuning predicts a label word; fine-tune a span head with `baseline --finetune --weights`",
            spec.name,
            spec.family.label()
        )));
    };
    let template = a.template.clone().unwrap_or(default.template);
    check_template(&template, pair).map_err(Error::Invalid)?;
    let verbaliser = match &a.verbaliser {
        Some(v) => parse_verbaliser(spec, v).map_err(Error::Invalid)?,
        None => default.verbaliser,
    };
    Ok(Prompt {
        template,
        verbaliser,
    })
}

/// Each test item's label index and probability, where it trained, each epoch's mean loss.
/// The test answers (label, probability), where it trained, each epoch's loss, the seconds
/// training took.
type Trained = (Vec<(usize, f32)>, String, Vec<f64>, f64);

/// Everything one group's training needs, checked before any run is stored.
struct Setup {
    spec: TaskSpec,
    task_id: TaskId,
    test: Vec<(domain::ids::ExampleId, Example)>,
    prompt: Prompt,
    words: Vec<u32>,
    mask: u32,
    max_len: usize,
    model_type: String,
}

async fn setup(pool: &AnyPool, a: &PromptArgs) -> Result<Setup> {
    let (task_id, spec, test) = task_test(pool, &a.task).await?;
    if spec.family == Family::TextToText {
        return Err(Error::Invalid(format!(
            "{} is a CrossFit text-to-text task; prompt-based fine-tuning here is for CLUES label tasks",
            a.task
        )));
    }
    let pair = matches!(
        test.first().map(|(_, e)| &e.context),
        Some(Context::Pair { .. })
    );
    let prompt = chosen(a, &spec, pair)?;
    // The folder is read off the async workers (the server's machines page checks it too).
    let (weights, p) = (a.weights.clone(), prompt.clone());
    let (config, mask, words) = tokio::task::spawn_blocking(move || -> Result<_> {
        let config = tune::read_config(&weights)?;
        // The head is looked for first, so that a folder without one stores nothing.
        prompt::load_mlm(&weights, &candle_core::Device::Cpu)?;
        let tok = Tokenizer::open(&weights.join("tokenizer.json"))?;
        tune::check_vocab(&weights, &config, &tok)?;
        let mask = tok.mask_id().ok_or_else(|| {
            Error::Invalid(format!(
                "{}: the tokenizer has no mask token ([MASK] or <mask>)",
                weights.display()
            ))
        })?;
        let words = prompt::word_ids(&tok, &p)?;
        Ok((config, mask, words))
    })
    .await
    .map_err(|e| Error::Model(format!("reading the checkpoint stopped: {e}")))??;
    Ok(Setup {
        spec,
        task_id,
        test,
        prompt,
        words,
        mask,
        max_len: config.max_len().min(256),
        model_type: config.model_type,
    })
}

/// The system's name: `--system` (not blank), else "<folder> prompt-tuned".
pub fn system_name(a: &PromptArgs) -> Result<String> {
    match &a.system {
        Some(n) if n.trim().is_empty() => Err(Error::Invalid("--system must not be empty".into())),
        Some(n) => Ok(n.clone()),
        None => Ok(format!("{} prompt-tuned", tune::folder_name(&a.weights))),
    }
}

/// Checks a prompt-based fine-tuning as `clues-lab prompt` does before it stores anything
/// (the task, template, verbaliser and checkpoint); answers the task's id and shot groups.
pub async fn check(pool: &AnyPool, a: &PromptArgs) -> Result<(TaskId, Vec<(u32, u32)>)> {
    let s = setup(pool, a).await?;
    Ok((s.task_id, shot_groups(pool, s.task_id).await?))
}

/// One held grid job (`clues-lab worker`): its shot group trained and scored, the run stored
/// with the job marked done. `a` names the job's task, group and system.
pub(crate) async fn prompt_held(
    pool: &AnyPool,
    a: &PromptArgs,
    held: &super::grid::Held,
) -> Result<Summary> {
    let s = setup(pool, a).await?;
    let t = Target {
        system: system_name(a)?,
        kind: SystemKind::Baseline,
        task: a.task.clone(),
        k: held.k,
        split: held.split,
        replace: a.replace,
    };
    one_group(pool, a, &s, t, Some(held)).await
}

/// `clues-lab prompt`: trains and scores every chosen shot group in turn.
pub async fn prompt_tune(database: &str, a: PromptArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    tune::check_device(a.device, false)?;
    let s = setup(&pool, &a).await?;
    let system = system_name(&a)?;
    let target = |k, split, replace| Target {
        system: system.clone(),
        kind: SystemKind::Baseline,
        task: a.task.clone(),
        k,
        split,
        replace,
    };
    let all = shot_groups(&pool, s.task_id).await?;
    let groups = match a.k.zip(a.split) {
        Some(g) if !all.contains(&g) => {
            return Err(Error::NotFound(format!(
                "{} has no shot group k={} split={}",
                a.task, g.0, g.1
            )))
        }
        Some(g) => vec![g],
        None => all,
    };
    for (k, split) in groups {
        let t = target(k, split, a.replace);
        if a.k.is_none() && !a.replace && done_run(&pool, s.task_id, &t).await?.is_some() {
            eprintln!(
                "{} k={k} split={split}: finished, kept (--replace runs it again)",
                a.task
            );
            continue;
        }
        println!("{}", one_group(&pool, &a, &s, t, None).await?.render());
    }
    Ok(())
}

/// Each shot's label as its verbaliser's index; a shot without a label of the task is refused.
fn shot_labels(s: &Setup, shots: &[Example]) -> Result<Vec<u32>> {
    shots
        .iter()
        .map(|e| {
            let gold = s.spec.from_official(&e.gold.official);
            s.prompt
                .verbaliser
                .iter()
                .position(|(l, _)| gold.first() == Some(l))
                .map(|i| i as u32)
                .ok_or_else(|| {
                    Error::Invalid(format!("shot {} has no label of the task: {gold:?}", e.id))
                })
        })
        .collect()
}

/// Each test item's answer (a verbaliser's index and its probability), scored both ways.
fn scored(s: &Setup, answers: &[(usize, f32)]) -> Vec<Scored> {
    s.test
        .iter()
        .zip(answers)
        .map(|((id, item), &(label, p))| {
            let official = s.spec.to_official(&[s.prompt.verbaliser[label].0.clone()]);
            let p = Some(f64::from(p));
            Scored::of(&s.spec, *id, &item.gold, official, "[]".into(), p)
        })
        .collect()
}

/// One shot group: stored as started, trained, scored on the test set, stored as finished (or
/// failed, with the reason).
async fn one_group(
    pool: &AnyPool,
    a: &PromptArgs,
    s: &Setup,
    t: Target,
    held: Option<&super::grid::Held>,
) -> Result<Summary> {
    let started = Instant::now();
    let shots: Vec<Example> = examples_of(pool, s.task_id, Some((t.k, t.split)))
        .await?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let labels = shot_labels(s, &shots)?;
    let r = recipe(a.steps, t.k, t.split);
    let settings = serde_json::json!({
        "learner": "prompt-based fine-tuning", "template": s.prompt.template,
        "verbaliser": s.prompt.verbaliser, "recipe": r, "max_len": s.max_len,
        "weights": a.weights.display().to_string(), "model_type": s.model_type,
    })
    .to_string();
    let source = a.weights.display().to_string();
    let run = start(pool, s.task_id, &t, &source, &settings, "starting", held).await?;
    let label = format!("prompt-tuning {} k={} split={}", t.task, t.k, t.split);
    let bar = held.is_none();
    let mut progress = Progress::new(pool, vec![run], label, bar).counting("training steps");
    let test: Vec<Example> = s.test.iter().map(|(_, e)| e.clone()).collect();
    let (dir, template, words, mask, max_len, device) = (
        a.weights.clone(),
        s.prompt.template.clone(),
        s.words.clone(),
        s.mask,
        s.max_len,
        a.device,
    );
    let result = tokio::task::spawn_blocking(move || -> Result<Trained> {
        let (on, trained_on) = tune::device(device)?;
        let tok = Tokenizer::open(&dir.join("tokenizer.json"))?;
        let inputs = |items: &[Example]| -> Result<Vec<prompt::Input>> {
            items
                .iter()
                .map(|e| prompt::input(&tok, mask, &template, e, max_len))
                .collect()
        };
        let w = prompt::load_mlm(&dir, &on)?;
        let (xs, ys) = (inputs(&shots)?, inputs(&test)?);
        let training = Instant::now();
        let losses = prompt::train(&w, &xs, &labels, &words, &r, &mut |a, b| {
            progress.update(a, b)
        })
        .map_err(tune::model_error)?;
        let train_seconds = training.elapsed().as_secs_f64();
        let answers = prompt::predict(&w, &ys, &words, 32).map_err(tune::model_error)?;
        Ok((answers, trained_on, losses, train_seconds))
    })
    .await
    .map_err(|e| Error::Model(format!("prompt-based fine-tuning stopped: {e}")))
    .and_then(|r| r);
    let (answers, trained_on, losses, train_seconds) = or_fail(pool, &[run], result).await?;
    eprintln!(
        "{} k={} split={}: {} updates in {train_seconds:.3} s, loss {:.4} in the first epoch, {:.4} in the last",
        t.task,
        t.k,
        t.split,
        r.steps.unwrap_or(0),
        losses.first().copied().unwrap_or(f64::NAN),
        losses.last().copied().unwrap_or(f64::NAN)
    );
    let items = scored(s, &answers);
    let provider = format!("prompt-based fine-tuning with candle on {trained_on}");
    let seconds = started.elapsed().as_secs_f64();
    store_finished(pool, run, t, provider, &items, held, seconds).await
}
