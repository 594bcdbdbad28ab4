//! Fine-tuned runs (`baseline --finetune`): per shot group, the encoder fine-tuned in candle,
//! exported to ONNX and evaluated by ONNX Runtime; a grid that resumes and shows its ETA.

use super::runs::task_test;
use super::*;
use crate::model::baseline;
use crate::model::decode::Decoding;
use crate::model::eval::{self, decode_items, featurize, model_inputs, predict_loaded, ModelDir};
use crate::model::runtime::Device;
use crate::model::tokenizer::Tokenizer;
use crate::model::tune::export::Precision;
use crate::model::tune::{self, train, Recipe};
use app::ssr::catalog::examples_of;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One shot group to fine-tune on.
#[derive(Clone, Debug)]
pub struct Job {
    pub task: String,
    pub k: u32,
    pub split: u32,
}

fn target(task: &str, k: u32, split: u32, replace: bool) -> Target {
    Target {
        system: tune::SYSTEM.into(),
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
    tasks: &[String],
    groups: Option<(u32, u32)>,
    replace: bool,
) -> Result<(Vec<Job>, usize)> {
    let (mut jobs, mut skipped) = (Vec::new(), 0);
    for task in tasks {
        let (task_id, ..) = task_test(pool, task).await?;
        let all = app::ssr::catalog::shot_groups(pool, task_id).await?;
        if all.is_empty() {
            return Err(ServerError::Usage(format!(
                "task {task} has no training files to fine-tune on"
            )));
        }
        let chosen = match groups {
            Some(g) if !all.contains(&g) => {
                return Err(ServerError::Usage(format!(
                    "task {task} has no shot group k={} split={}",
                    g.0, g.1
                )))
            }
            Some(g) => {
                refuse_if_done(pool, task_id, &target(task, g.0, g.1, replace)).await?;
                vec![g]
            }
            None => all,
        };
        for (k, split) in chosen {
            if !replace
                && done_run(pool, task_id, &target(task, k, split, false))
                    .await?
                    .is_some()
            {
                skipped += 1;
                continue;
            }
            jobs.push(Job {
                task: task.clone(),
                k,
                split,
            });
        }
    }
    Ok((jobs, skipped))
}

/// What one fine-tuned shot group gave, before storing.
struct Tuned {
    spans: Vec<Vec<crate::model::decode::PredSpan>>,
    probabilities: Vec<f32>,
    provider: String,
    losses: Vec<f64>,
    /// Of the shot group's own items, how many ONNX Runtime answers as candle does.
    agree: (usize, usize),
    train_seconds: f64,
    eval_seconds: f64,
}

/// Fine-tunes, exports to `out` and evaluates one shot group (blocking).
#[allow(clippy::too_many_arguments)]
fn tune_one(
    weights: &Path,
    spec: &app::domain::task::TaskSpec,
    shots: &[app::domain::task::Example],
    test: &[app::domain::task::Example],
    d: &Decoding,
    recipe: &Recipe,
    out: &Path,
    int8: Option<&Path>,
    device: Device,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Tuned> {
    let started = Instant::now();
    let tok_path = weights.join("tokenizer.json");
    let tok = Tokenizer::open(&tok_path)?;
    let (on, trained_on) = tune::device(device)?;
    let (w, losses) = tune::finetune(weights, &tok, spec, shots, d, recipe, &on, progress)?;
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
        .map_err(|e| ServerError::Model(format!("fine-tuned model failed: {e}")))?;
    let choices = eval::choices(spec, shots, &inputs);
    let ours = decode_items(&fs, &logits, &inputs, &choices, d);
    let theirs = predict_loaded(&dir, &mut loaded, spec, shots, &mut |_, _| {})?.spans;
    let same = |a: &[crate::model::decode::PredSpan], b: &[crate::model::decode::PredSpan]| {
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

/// Fine-tunes and evaluates each job in order, storing each as soon as it is done (a stopped
/// grid resumes where it stopped); prints progress with an estimate of the time left.
pub async fn run_finetune(
    pool: &AnyPool,
    jobs: Vec<Job>,
    replace: bool,
    export: Option<PathBuf>,
    device: Device,
    bar: bool,
) -> Result<Vec<Summary>> {
    let weights = tune::weights_dir()?;
    let recipe = Recipe::default();
    // Work is about proportional to the shots: the estimate weighs each group by its k.
    let total_shots: u64 = jobs.iter().map(|j| u64::from(j.k)).sum();
    let (mut done_shots, started) = (0u64, Instant::now());
    let mut out = Vec::new();
    let mut loaded: Option<(
        String,
        app::domain::ids::TaskId,
        app::domain::task::TaskSpec,
        Vec<(app::domain::ids::ExampleId, app::domain::task::Example)>,
    )> = None;
    for (n, job) in jobs.iter().enumerate() {
        if loaded.as_ref().is_none_or(|l| l.0 != job.task) {
            let (id, spec, test) = task_test(pool, &job.task).await?;
            loaded = Some((job.task.clone(), id, spec, test));
        }
        let (_, task_id, spec, test) = loaded.as_ref().expect("loaded above");
        let t = target(&job.task, job.k, job.split, replace);
        let d = Decoding {
            null_threshold: 0.0,
            ..baseline::decoding(spec)
        };
        let seeded = Recipe {
            seed: baseline::seed(job.k, job.split),
            ..recipe
        };
        let settings = serde_json::json!({
            "decoding": d, "recipe": seeded, "weights": weights.display().to_string(),
        })
        .to_string();
        let shots: Vec<_> = examples_of(pool, *task_id, Some((job.k, job.split)))
            .await?
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        let run = start(
            pool,
            *task_id,
            &t,
            "built-in fine-tuning",
            &settings,
            "starting",
        )
        .await?;
        let keep = export
            .as_ref()
            .map(|e| e.join(format!("{}-finetuned-k{}-s{}", job.task, job.k, job.split)));
        // With --export, an int8 copy beside each model (for `bench`).
        let int8 = keep.as_ref().map(|k| {
            k.with_file_name(format!(
                "{}-int8",
                k.file_name().expect("a folder name").to_string_lossy()
            ))
        });
        let dir = keep.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!(
                "clues-finetune-{}-{}-{}-{}",
                std::process::id(),
                job.task,
                job.k,
                job.split
            ))
        });
        let label = format!(
            "[{}/{}] fine-tuning {} k={} split={}",
            n + 1,
            jobs.len(),
            job.task,
            job.k,
            job.split
        );
        let mut progress = Progress::new(pool, vec![run], label, bar).counting("training steps");
        let (w, s, d2, r, o, o8) = (
            weights.clone(),
            spec.clone(),
            d,
            seeded,
            dir.clone(),
            int8.clone(),
        );
        let examples: Vec<_> = test.iter().map(|(_, e)| e.clone()).collect();
        let result = tokio::task::spawn_blocking(move || {
            tune_one(
                &w,
                &s,
                &shots,
                &examples,
                &d2,
                &r,
                &o,
                o8.as_deref(),
                device,
                &mut |a, b| progress.update(a, b),
            )
        })
        .await
        .map_err(|e| ServerError::Model(format!("fine-tuning stopped: {e}")))
        .and_then(|r| r);
        if keep.is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        let tuned = or_fail(pool, &[run], result).await?;
        let items = score_items(
            spec,
            test,
            model_answers(spec, tuned.spans, tuned.probabilities),
        );
        let (s1, s1_any_of) = finish(pool, run, &t, &tuned.provider, &items).await?;
        done_shots += u64::from(job.k);
        let elapsed = started.elapsed().as_secs_f64();
        let left = elapsed / done_shots as f64 * (total_shots - done_shots) as f64;
        eprintln!(
            "[{}/{}] {} k={} split={}: S1 {:.4}; trained {:.0} s (final loss {:.3}), evaluated {:.0} s; ONNX Runtime answers {} of {} shots as candle does; elapsed {:.1} min, about {:.1} min left",
            n + 1,
            jobs.len(),
            job.task,
            job.k,
            job.split,
            s1,
            tuned.train_seconds,
            tuned.losses.last().copied().unwrap_or(f64::NAN),
            tuned.eval_seconds,
            tuned.agree.0,
            tuned.agree.1,
            elapsed / 60.0,
            left / 60.0
        );
        out.push(Summary {
            run,
            items: items.len(),
            s1,
            s1_any_of,
            provider: tuned.provider,
            seconds: tuned.train_seconds + tuned.eval_seconds,
            target: t,
        });
    }
    Ok(out)
}
