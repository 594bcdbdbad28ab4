//! `clues-lab crossfit upstream`: CrossFit's upstream learning (multi-task learning, MAML,
//! first-order MAML or Reptile) on a partition's seen tasks, the checkpoint chosen on its dev
//! tasks and written as a model folder, then direct fine-tuning from it on each test task, and its ARG.

use super::{check_model, inputs, learn_task, method_name, pairs, scored, TuneArgs};
use crate::seq2seq::text::Text;
use crate::seq2seq::train::decode_all;
use crate::seq2seq::upstream::{upstream as learn_upstream, Method, Seen, Settings};
use crate::seq2seq::Model;
use domain::crossfit::metrics::Metric;
use domain::crossfit::partition::Partition;
use domain::crossfit::sampler::CROSSFIT_SEEDS;
use sqlx::AnyPool;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store::crossfit as xf;
use store::error::{Error, Result};
use store::lease::Lease;

#[derive(Debug, clap::Args)]
pub struct UpstreamArgs {
    /// The text-to-text model folder to start from (BART or T5).
    #[arg(long)]
    pub model: PathBuf,
    /// The partition: its train tasks are learned upstream, its dev tasks choose the
    /// checkpoint, its test tasks are fine-tuned from it.
    #[arg(long)]
    pub partition: String,
    #[arg(long, value_enum)]
    pub method: Method,
    /// Where the upstream model folder is written; started again, a finished one is reused.
    #[arg(long)]
    pub out: PathBuf,
    /// The outer (AdamW) learning rate, or multi-task learning's.
    #[arg(long, default_value_t = 3e-5)]
    pub upstream_learning_rate: f64,
    /// The meta-learners' inner SGD step size.
    #[arg(long, default_value_t = 3e-5)]
    pub inner_learning_rate: f64,
    /// Reptile's inner steps.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub inner_steps: u32,
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub upstream_batch_size: u32,
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub upstream_steps: u32,
    #[arg(long, default_value_t = 100)]
    pub upstream_warmup: u32,
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub upstream_eval_every: u32,
    /// The method name of the test tasks' runs [default: "<out folder> fine-tuning"].
    #[arg(long)]
    pub name: Option<String>,
    /// The runs ARG is computed against [default: "<model folder> direct fine-tuning"].
    #[arg(long)]
    pub baseline: Option<String>,
    /// The fine-tuning on each test task.
    #[command(flatten)]
    pub tune: TuneArgs,
}

impl UpstreamArgs {
    pub(super) fn settings(&self) -> Result<Settings> {
        for (name, v) in [
            ("--upstream-learning-rate", self.upstream_learning_rate),
            ("--inner-learning-rate", self.inner_learning_rate),
        ] {
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::Invalid(format!("{name} must be between 0 and 1")));
            }
        }
        Ok(Settings {
            method: self.method,
            learning_rate: self.upstream_learning_rate,
            inner_learning_rate: self.inner_learning_rate,
            inner_steps: self.inner_steps as usize,
            batch_size: self.upstream_batch_size as usize,
            steps: self.upstream_steps as usize,
            warmup: self.upstream_warmup.min(self.upstream_steps) as usize,
            eval_every: self.upstream_eval_every as usize,
            dropout: 0.1,
            seed: u64::from(CROSSFIT_SEEDS[0]),
        })
    }
}

/// A dev task as the selection reads it: its metric, inputs and golds.
type DevTask = (Metric, Vec<Vec<u32>>, Vec<Vec<String>>);

/// The seen tasks' support and query pairs and the dev tasks, from their first seed's files.
async fn data(
    pool: &sqlx::AnyPool,
    tok: &Text,
    a: &UpstreamArgs,
) -> Result<(Vec<Seen>, Vec<DevTask>)> {
    let p = xf::partition(pool, &a.partition).await?;
    if p.train.is_empty() || p.dev.is_empty() || p.test.is_empty() {
        return Err(Error::Invalid(format!(
            "partition {} needs train tasks to learn, dev tasks to choose the checkpoint and test tasks to fine-tune on",
            a.partition
        )));
    }
    let seed = CROSSFIT_SEEDS[0];
    let mut seen = Vec::new();
    for task in &p.train {
        seen.push(Seen {
            support: pairs(
                tok,
                &xf::split_lines(pool, task, seed, "train").await?,
                &a.tune,
            )?,
            query: pairs(
                tok,
                &xf::split_lines(pool, task, seed, "dev").await?,
                &a.tune,
            )?,
        });
    }
    let mut dev = Vec::new();
    for task in &p.dev {
        let lines = xf::split_lines(pool, task, seed, "dev").await?;
        let inputs = inputs(tok, &lines, &a.tune)?;
        dev.push((
            xf::metric_of(pool, task).await?,
            inputs,
            super::golds(&lines),
        ));
    }
    Ok((seen, dev))
}

/// Updates made of all, shared by the learning thread and the one that reports them.
type Shared = Arc<Mutex<(u64, u64)>>;

/// Who watches an upstream learning: a worker (the job's lease, its progress written there,
/// and whether the worker lost it), or nobody (`crossfit upstream` on the command line).
#[derive(Clone, Copy)]
pub struct Watch<'a> {
    pub held: Option<(&'a AnyPool, &'a Lease)>,
    pub lost: &'a (dyn Fn() -> bool + Send + Sync),
}

/// What `out` holds when an upstream run finished: its settings and dev score.
fn finished(out: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(out.join("upstream.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// What a finished folder holds when it was learned from this model with these settings.
fn same(record: &serde_json::Value, a: &UpstreamArgs, s: &Settings) -> bool {
    record["settings"] == serde_json::to_value(s).unwrap_or_default()
        && record["from"] == a.model.display().to_string()
}

/// The folder beside `out` that this worker learns into: `.<out's name>.partial-<worker>`.
fn partial_dir(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "upstream".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!(".{name}.partial-{}", store::lease::worker_name()))
}

/// Learns upstream into a folder of this worker's beside `out` (model, tokenizer, then
/// `upstream.json`), then moves it to `out` whole, so that `out` is either absent or complete:
/// workers started at once on one shared folder each learn, the first to finish writes `out`,
/// and the others use that folder where it was learned the same way. Answers `out`'s record.
async fn write_upstream(
    pool: &sqlx::AnyPool,
    a: &UpstreamArgs,
    s: &Settings,
    watch: Watch<'_>,
) -> Result<serde_json::Value> {
    let tok = Text::open(&a.model.join("tokenizer.json"))?;
    let (seen, dev) = data(pool, &tok, a).await?;
    let partial = partial_dir(&a.out);
    // What a worker of the same name left behind (it was killed) is started again.
    let _ = std::fs::remove_dir_all(&partial);
    let cannot = |e| Error::io(format!("cannot write {}", partial.display()), e);
    let (dir, out, device, s2, max_out) = (
        a.model.clone(),
        partial.clone(),
        a.tune.device,
        s.clone(),
        a.tune.max_output_tokens,
    );
    let started = Instant::now();
    let shared: Shared = Arc::new(Mutex::new((0, 0)));
    let stop = Arc::new(AtomicBool::new(false));
    let (state, stopped) = (shared.clone(), stop.clone());
    let mut learning = tokio::task::spawn_blocking(move || -> Result<_> {
        let (on, trained_on) = crate::tune::device(device)?;
        let m = Model::load(&dir, &on)?;
        let score = |m: &Model| -> candle_core::Result<f64> {
            let mut total = 0.0;
            for (metric, inputs, golds) in &dev {
                total += scored(&tok, *metric, &decode_all(m, inputs, max_out)?, golds);
            }
            Ok(total / dev.len() as f64)
        };
        let mut progress = |step: usize, steps: usize| {
            *state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = (step as u64, steps as u64);
            !stopped.load(Ordering::Relaxed)
        };
        let (score, step) = learn_upstream(&m, &seen, &s2, &score, &mut progress)
            .map_err(crate::tune::model_error)?;
        m.save(&out)?;
        Ok((score, step, trained_on))
    });
    // While it learns: its progress on the job (a worker's) every second, on stderr every ten.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let (mut said, mut said_done) = (Instant::now(), 0);
    let (score, step, trained_on) = loop {
        tokio::select! {
            done = &mut learning => {
                let done = done.map_err(|e| Error::Model(format!("upstream learning stopped: {e}")))?;
                if done.is_err() && stop.load(Ordering::Relaxed) {
                    let _ = std::fs::remove_dir_all(&partial);
                    return Err(Error::LeaseLost(format!(
                        "this worker lost its lease on the upstream learning of {} and stopped it; nothing was queued",
                        a.partition
                    )));
                }
                break done?;
            }
            _ = tick.tick() => {
                if (watch.lost)() {
                    stop.store(true, Ordering::Relaxed);
                }
                let (done, total) = *shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let words = format!("upstream {:?}: update {done} of {total}", s.method);
                if let Some((pool, held)) = watch.held {
                    // The database may come back; the learning goes on meanwhile.
                    if let Err(e) = store::lease::progress(pool, held, done, total, &words).await {
                        tracing::warn!("cannot write the progress of upstream job {}: {e}", held.job);
                    }
                }
                if said.elapsed().as_secs() >= 10 || (done == total && total > 0 && said_done != done) {
                    (said, said_done) = (Instant::now(), done);
                    eprintln!("{words}");
                }
            }
        }
    };
    std::fs::copy(
        a.model.join("tokenizer.json"),
        partial.join("tokenizer.json"),
    )
    .map_err(cannot)?;
    let record = serde_json::json!({
        "from": a.model.display().to_string(), "partition": a.partition, "settings": s,
        "best_dev_score": score, "best_update": step, "trained_on": trained_on,
        "seconds": started.elapsed().as_secs_f64(),
    });
    // Written last: its presence says the folder is complete.
    std::fs::write(partial.join("upstream.json"), record.to_string()).map_err(cannot)?;
    // A rename replaces no folder with anything in it: where another worker got there first,
    // its folder stays and this one's is dropped.
    let moved = std::fs::rename(&partial, &a.out);
    if moved.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    match (finished(&a.out), moved) {
        (Some(r), Ok(())) => {
            eprintln!(
                "upstream {:?}: best dev-task score {score:.4} at update {step}; written to {}",
                s.method,
                a.out.display()
            );
            Ok(r)
        }
        (Some(r), Err(_)) if same(&r, a, s) => {
            eprintln!(
                "{}: another worker finished the same upstream learning first; its folder is used",
                a.out.display()
            );
            Ok(r)
        }
        (_, Err(e)) => Err(Error::io(
            format!(
                "cannot move {} to {} (another worker wrote a different folder there?)",
                partial.display(),
                a.out.display()
            ),
            e,
        )),
        (None, Ok(())) => Err(Error::Model(format!(
            "{} has no upstream.json after it was written",
            a.out.display()
        ))),
    }
}

/// The upstream folder `a` asks for: the finished one at `--out` when it was learned the same
/// way, else learned now (`reusable` only checks). A folder learned otherwise, or holding
/// anything else, is refused.
pub(super) async fn learned(
    pool: &AnyPool,
    a: &UpstreamArgs,
    s: &Settings,
    watch: Watch<'_>,
) -> Result<serde_json::Value> {
    match reusable(a, s)? {
        Some(r) => {
            eprintln!(
                "{}: upstream learning already done, reused",
                a.out.display()
            );
            Ok(r)
        }
        None => write_upstream(pool, a, s, watch).await,
    }
}

/// What `--out` holds: a finished upstream folder learned with these settings (`Some`, to be
/// reused), nothing yet (`None`: to be learned), or anything else (refused).
pub(super) fn reusable(a: &UpstreamArgs, s: &Settings) -> Result<Option<serde_json::Value>> {
    match finished(&a.out) {
        Some(r) if same(&r, a, s) => Ok(Some(r)),
        Some(_) => Err(Error::Refused(format!(
            "{} holds an upstream model learned with other settings; give a new --out",
            a.out.display()
        ))),
        None if a.out.exists()
            && std::fs::read_dir(&a.out).map_or(true, |mut d| d.next().is_some()) =>
        {
            Err(Error::Refused(format!(
                "{} exists and is not a finished upstream folder; give a new --out",
                a.out.display()
            )))
        }
        None => Ok(None),
    }
}

/// Everything `crossfit upstream` checks before it learns: the settings, the grid, the device,
/// the model, the partition (train, dev and test tasks, each with a metric) and `--out`.
pub(super) async fn check(pool: &AnyPool, a: &UpstreamArgs) -> Result<(Settings, Partition)> {
    let s = a.settings()?;
    a.tune.grid()?;
    crate::tune::check_device(a.tune.device, false)?;
    let model = a.model.clone();
    tokio::task::spawn_blocking(move || check_model(&model))
        .await
        .map_err(|e| Error::Model(format!("the check stopped: {e}")))??;
    let p = xf::partition(pool, &a.partition).await?;
    if p.train.is_empty() || p.dev.is_empty() || p.test.is_empty() {
        return Err(Error::Invalid(format!(
            "partition {} needs train tasks to learn, dev tasks to choose the checkpoint and test tasks to fine-tune on",
            a.partition
        )));
    }
    for task in p.train.iter().chain(&p.dev).chain(&p.test) {
        xf::metric_of(pool, task).await?;
    }
    reusable(a, &s)?;
    Ok((s, p))
}

/// Queues the test tasks' seeds of `a`'s partition, fine-tuned from the upstream folder.
pub(super) async fn queue_tests(
    pool: &AnyPool,
    a: &UpstreamArgs,
    p: &Partition,
    record: &serde_json::Value,
    name: &str,
) -> Result<()> {
    for task in &p.test {
        let seeds = super::SeedsOf {
            model: &a.out,
            task,
            method: name,
            a: &a.tune,
            upstream: Some(record),
        };
        super::queue_task(pool, &seeds, &store::lease::Clock::System).await?;
    }
    Ok(())
}

/// `clues-lab crossfit upstream`.
pub async fn upstream(pool: &AnyPool, a: UpstreamArgs) -> Result<()> {
    let (s, partition) = check(pool, &a).await?;
    let watch = Watch {
        held: None,
        lost: &|| false,
    };
    let record = learned(pool, &a, &s, watch).await?;
    let name = method_name(&a.name, &a.out, "fine-tuning")?;
    for task in &partition.test {
        let seeds = super::SeedsOf {
            model: &a.out,
            task,
            method: &name,
            a: &a.tune,
            upstream: Some(&record),
        };
        learn_task(pool, &seeds).await?;
    }
    let baseline = method_name(&a.baseline, &a.model, "direct fine-tuning")?;
    match xf::arg_report(pool, &a.partition, &name, &baseline).await {
        Ok(r) => match r.spread {
            Some(sp) => println!(
                "ARG of {name:?} against {baseline:?} on {}: {:+.2}% ± {:.2}% (population std) over {} seeds",
                a.partition,
                100.0 * sp.mean,
                100.0 * sp.std_pop,
                sp.n
            ),
            None => println!("ARG of {name:?} against {baseline:?}: undefined (a baseline score of 0)"),
        },
        Err(e) => println!(
            "no ARG yet ({e}): run `crossfit learn --model {} --task T` on each test task for the baseline",
            a.model.display()
        ),
    }
    Ok(())
}
