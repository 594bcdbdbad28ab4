//! The fine-tuning of a task's seeds as jobs that workers on many machines share
//! (`store::crossfit::jobs`): queued with their recipe, each trained on a blocking thread
//! while its progress is written to the job, its run stored as the job is marked done.

use super::{golds, inputs, pairs, scored, TuneArgs};
use crate::seq2seq::text::Text;
use crate::seq2seq::train::{decode_all, direct, Grid, Pair, Tried};
use crate::seq2seq::Model;
use domain::crossfit::metrics::Metric;
use domain::crossfit::sampler::TsvLine;
use sqlx::AnyPool;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store::crossfit::jobs::SeedKind;
use store::crossfit::{self as xf, jobs};
use store::error::{Error, Result};
use store::lease::Worker;

/// How a held job runs: the worker's device, and whether a renewal found its lease lost.
pub type Terms<'a> = (crate::runtime::Device, &'a (dyn Fn() -> bool + Send + Sync));

/// One seed's data as token ids: training pairs (the first output of each line), and the
/// development and test inputs with their gold outputs.
struct SeedData {
    train: Vec<Pair>,
    dev: (Vec<Vec<u32>>, Vec<Vec<String>>),
    test: Vec<Vec<u32>>,
}

fn seed_data(
    tok: &Text,
    a: &TuneArgs,
    train: &[TsvLine],
    dev: &[TsvLine],
    test: &[TsvLine],
) -> Result<SeedData> {
    Ok(SeedData {
        train: pairs(tok, train, a)?,
        dev: (inputs(tok, dev, a)?, golds(dev)),
        test: inputs(tok, test, a)?,
    })
}

/// One method's learning of a task's seeds: from which model folder, with which grid and
/// lengths, after which upstream learning (part of the recipe, stored with each run).
pub struct SeedsOf<'a> {
    pub model: &'a Path,
    pub task: &'a str,
    pub method: &'a str,
    pub a: &'a TuneArgs,
    pub upstream: Option<&'a serde_json::Value>,
}

/// The seeds of `task` without a run of `method`, queued with the recipe every worker learns
/// them with (the device is each worker's own); the jobs' ids, the recipe and the model's
/// tokenizer. A model without a tokenizer, or a `--keep` folder that cannot be made, queues
/// nothing.
pub async fn queue_task(
    pool: &AnyPool,
    seeds: &SeedsOf<'_>,
    clock: &store::lease::Clock,
) -> Result<(Vec<i64>, serde_json::Value, Text)> {
    let SeedsOf {
        model,
        task,
        method,
        a,
        upstream,
    } = seeds;
    let grid = a.grid()?;
    let done = xf::seeds_with_run(pool, method, task).await?;
    let seeds: Vec<u32> = xf::seeds_of(pool, task)
        .await?
        .into_iter()
        .filter(|s| !done.contains(s))
        .collect();
    if !done.is_empty() {
        eprintln!("{task}: seeds {done:?} already have a run of {method:?}, kept");
    }
    let recipe = serde_json::json!({
        "learner": "direct fine-tuning",
        "model": crate::jobs::absolute(model).display().to_string(), "upstream": upstream,
        "grid": grid, "max_input_tokens": a.max_input_tokens,
    });
    if let Some(k) = &a.keep {
        std::fs::create_dir_all(k)
            .map_err(|e| Error::io(format!("--keep {}: cannot create it", k.display()), e))?;
    }
    let tok = Text::open(&model.join("tokenizer.json"))?;
    let ids = jobs::enqueue(pool, (method, task), &seeds, &recipe.to_string(), clock).await?;
    Ok((ids, recipe, tok))
}

/// Direct fine-tuning of the model on every seed of the task without a run of the method, as
/// jobs that every worker running the same command shares, each run stored as soon as it is
/// done.
pub async fn learn_task(pool: &AnyPool, seeds: &SeedsOf<'_>) -> Result<()> {
    let SeedsOf { model, task, a, .. } = *seeds;
    let grid = a.grid()?;
    let metric = xf::metric_of(pool, task).await?;
    let (ids, recipe, tok) = queue_task(pool, seeds, &store::lease::Clock::System).await?;
    if a.queue.queue_only {
        eprintln!("{task}: {} seeds queued; `clues-lab worker` processes pointed at this database run them", ids.len());
        return Ok(());
    }
    let tok = Arc::new(tok);
    let how = Learning {
        model,
        a,
        grid,
        metric,
        recipe,
        tok,
    };
    let mut worker: Worker<SeedKind> =
        Worker::new(pool, ids, Duration::from_secs(a.lease_seconds)).on_signals()?;
    let (started, mut mine) = (Instant::now(), 0u32);
    while let Some(held) = worker.next().await? {
        let seed_started = Instant::now();
        let lost = worker.lost_flag();
        let result = worker
            .hold(&held, learn_seed(pool, &held, &how, &lost))
            .await?;
        let Some((score, best_dev, trained_on)) = worker.settle(&held, result).await? else {
            continue;
        };
        mine += 1;
        let (left, _) = worker.left().await?;
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "{task} seed {}: {} {} on the test set (best development score {best_dev:.4}), learned on {trained_on} in {:.3} s; {:.1} min, about {:.1} min left at the pace of {} ({left} seeds unfinished)",
            held.seed,
            metric.name(),
            score.value.map_or("n/a".into(), |v| format!("{v:.4}")),
            seed_started.elapsed().as_secs_f64(),
            elapsed / 60.0,
            elapsed / f64::from(mine) * left as f64 / 60.0,
            worker.name
        );
    }
    Ok(())
}

/// A job's recipe as it was queued: what any worker learns its seed with.
#[derive(serde::Deserialize)]
struct QueuedRecipe {
    model: std::path::PathBuf,
    grid: Grid,
    max_input_tokens: usize,
}

/// Learns a held job's seed from the recipe it was queued with, on `device` (`clues-lab
/// worker`); the run is stored with the job marked done. `lost()`: whether another worker
/// took the job over.
pub async fn run_held(pool: &AnyPool, held: &jobs::Held, (device, lost): Terms<'_>) -> Result<()> {
    let recipe: serde_json::Value =
        serde_json::from_str(&held.settings).map_err(Error::internal)?;
    let q: QueuedRecipe = serde_json::from_value(recipe.clone()).map_err(|e| {
        Error::Invalid(format!(
            "{}: its recipe is not one this worker knows: {e}",
            held.name()
        ))
    })?;
    let a = TuneArgs {
        learning_rates: q.grid.learning_rates.clone(),
        batch_sizes: q.grid.batch_sizes.clone(),
        steps: q.grid.steps as u32,
        warmup: q.grid.warmup as u32,
        eval_every: q.grid.eval_every as u32,
        max_input_tokens: q.max_input_tokens,
        max_output_tokens: q.grid.max_output_tokens,
        device,
        lease_seconds: crate::jobs::grid::LEASE.as_secs(),
        keep: None,
        queue: crate::command::QueueArg { queue_only: false },
    };
    let how = Learning {
        model: &q.model,
        a: &a,
        grid: q.grid.clone(),
        metric: xf::metric_of(pool, &held.task).await?,
        recipe,
        tok: Arc::new(Text::open(&q.model.join("tokenizer.json"))?),
    };
    learn_seed(pool, held, &how, lost).await.map(|_| ())
}

/// What every seed of a task is learned with: the model folder and its tokenizer, the grid
/// and lengths, the task's metric, and the recipe as the jobs hold it.
struct Learning<'a> {
    model: &'a Path,
    a: &'a TuneArgs,
    grid: Grid,
    metric: Metric,
    recipe: serde_json::Value,
    tok: Arc<Text>,
}

/// Where a held job's training stands, shared by the training thread and the writer of the
/// job's progress: updates made, of how many, in words.
type Shared = Arc<Mutex<(u64, u64, String)>>;

/// Fine-tunes on one held job's seed over the grid, decodes the test set with the best
/// checkpoint and stores the run with the job marked done; answers the test score and the
/// best development score. The training stops soon after `lost()` says that another worker
/// took the job over.
async fn learn_seed(
    pool: &AnyPool,
    held: &jobs::Held,
    how: &Learning<'_>,
    lost: &(dyn Fn() -> bool + Send + Sync),
) -> Result<(domain::crossfit::metrics::Score, f64, String)> {
    let (a, grid, metric) = (how.a, &how.grid, how.metric);
    let (task, seed) = (held.task.as_str(), held.seed);
    let lines = |split: &'static str| xf::split_lines(pool, task, seed, split);
    let (train, dev, test) = (
        lines("train").await?,
        lines("dev").await?,
        lines("test").await?,
    );
    let tok = how.tok.clone();
    let data = seed_data(&tok, a, &train, &dev, &test)?;
    let shared: Shared = Arc::new(Mutex::new((0, 0, "starting".into())));
    let stop = Arc::new(AtomicBool::new(false));
    let (dir, device, g) = (how.model.to_path_buf(), a.device, grid.clone());
    let max_input_tokens = a.max_input_tokens;
    let kept = a
        .keep
        .as_ref()
        .map(|k| k.join(format!("{task}-seed{seed}")));
    let keep_in = kept.clone();
    let (state, stopped) = (shared.clone(), stop.clone());
    let mut training = tokio::task::spawn_blocking(move || -> Result<_> {
        let (on, trained_on) = crate::tune::device(device)?;
        let m = Model::load(&dir, &on)?;
        let (dev_ids, dev_golds) = &data.dev;
        let score = |ids: &[Vec<u32>]| scored(&tok, metric, ids, dev_golds);
        let settings = g.learning_rates.len() * g.batch_sizes.len();
        let mut progress = |setting: usize, step: usize, steps: usize| {
            let mut s = state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *s = (
                (setting * steps + step) as u64,
                (settings * steps) as u64,
                format!(
                    "setting {} of {settings}, update {step} of {steps}",
                    setting + 1
                ),
            );
            !stopped.load(Ordering::Relaxed)
        };
        let tried = direct(
            &m,
            &data.train,
            dev_ids,
            &score,
            &g,
            u64::from(seed),
            &mut progress,
        )?;
        *state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = (
            (settings * g.steps) as u64,
            (settings * g.steps) as u64,
            "decoding the test set".into(),
        );
        let out =
            decode_all(&m, &data.test, g.max_output_tokens).map_err(crate::tune::model_error)?;
        let texts = out
            .iter()
            .map(|ids| tok.text(ids))
            .collect::<Result<Vec<String>>>()?;
        if let Some(out) = &keep_in {
            let d = decoding(g.max_output_tokens, m.start(), max_input_tokens);
            keep_checkpoint(&m, &dir, out, &d)?;
        }
        Ok((texts, tried, trained_on, m.start()))
    });
    // While it trains: its progress on the job every second (the machines page refreshes as
    // often), and on stderr every ten.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut said = Instant::now();
    let (preds, tried, trained_on, start) = loop {
        tokio::select! {
            done = &mut training => {
                let done = done.map_err(|e| Error::Model(format!("training stopped: {e}")))?;
                if done.is_err() && stop.load(Ordering::Relaxed) {
                    return Err(Error::LeaseLost(format!(
                        "this worker ({}) lost its lease on {} (it could not renew it in time) and another worker took it over; its training stopped and nothing was stored",
                        held.lease.worker,
                        held.name()
                    )));
                }
                break done?;
            }
            _ = tick.tick() => {
                if lost() {
                    stop.store(true, Ordering::Relaxed);
                }
                let (done, total, words) = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
                // The database may come back; the training goes on meanwhile.
                if let Err(e) = jobs::progress(pool, held, done, total, &words).await {
                    tracing::warn!("cannot write the progress of {}: {e}", held.name());
                }
                if said.elapsed().as_secs() >= 10 {
                    said = Instant::now();
                    eprintln!("{task} seed {seed}: {words}");
                }
            }
        }
    };
    let chosen = tried.iter().fold(None::<&Tried>, |b, t| match b {
        Some(b) if b.best_dev >= t.best_dev => Some(b),
        _ => Some(t),
    });
    let mut settings = how.recipe.clone();
    settings["tried"] = serde_json::to_value(&tried).map_err(Error::internal)?;
    settings["chosen"] = serde_json::to_value(chosen).map_err(Error::internal)?;
    settings["trained_on"] = trained_on.clone().into();
    settings["worker"] = held.lease.worker.clone().into();
    settings["decoding"] = decoding(grid.max_output_tokens, start, a.max_input_tokens);
    if let Some(k) = &kept {
        settings["kept"] = k.display().to_string().into();
    }
    let score = jobs::finish(pool, held, &preds, &settings.to_string()).await?;
    Ok((score, chosen.map_or(f64::NAN, |c| c.best_dev), trained_on))
}

/// How the stored predictions were decoded: greedily, from the decoder's start token.
fn decoding(max_output_tokens: usize, start: u32, max_input_tokens: usize) -> serde_json::Value {
    serde_json::json!({
        "strategy": "greedy", "num_beams": 1, "max_output_tokens": max_output_tokens,
        "decoder_start_token_id": start, "max_input_tokens": max_input_tokens,
    })
}

/// Writes the chosen weights as a checkpoint folder at `out` (transformers' layout), with the
/// tokenizer of `from` and the decoding settings beside them.
fn keep_checkpoint(m: &Model, from: &Path, out: &Path, decoding: &serde_json::Value) -> Result<()> {
    m.save(out)?;
    let io = |what: &str, e| Error::io(format!("cannot write {what} in {}", out.display()), e);
    std::fs::copy(from.join("tokenizer.json"), out.join("tokenizer.json"))
        .map_err(|e| io("tokenizer.json", e))?;
    let text = serde_json::to_string_pretty(decoding).map_err(Error::internal)?;
    std::fs::write(out.join("decoding.json"), text).map_err(|e| io("decoding.json", e))
}
