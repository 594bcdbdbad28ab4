//! The model track's commands: `eval`, `baseline` (frozen or `--finetune`), `quantize` and
//! `import predictions`; `bench` has its own module.

use super::eval::ModelDir;
use super::jobs::{self, SystemKind, Target};
use super::runtime::Device;
use std::path::PathBuf;
use store::db::cli as db;
use store::error::{Error, Result};

/// How long a claimed grid job stays a worker's, for every command that runs a shared grid.
#[derive(Debug, clap::Args)]
pub struct LeaseArg {
    /// How long a claimed job (an evaluation of --plan, a fine-tuning shot group, a task of the
    /// frozen baseline) stays this worker's without a renewal (it renews four times as often).
    /// Run the same command on several machines pointed at one database and they share the
    /// grid; a job whose worker stopped is taken over after this.
    #[arg(long, default_value_t = jobs::grid::LEASE.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
}

/// `--queue-only`, for every command that queues jobs.
#[derive(Clone, Debug, clap::Args)]
pub struct QueueArg {
    /// Queue the jobs and stop: `clues-lab worker` processes on machines pointed at this
    /// database (and seeing the model folders at the same paths) run them.
    #[arg(long)]
    pub queue_only: bool,
}

impl LeaseArg {
    fn duration(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.lease_seconds)
    }
}

#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// A model folder: model.onnx (start_logits/end_logits), tokenizer.json, optional decoding.json.
    #[arg(long, required_unless_present = "plan")]
    pub model: Option<PathBuf>,
    #[arg(long, required_unless_present = "plan")]
    pub task: Option<String>,
    /// Many evaluations as a grid that workers on many machines share: a tab-separated file,
    /// a line per model (`folder<TAB>task<TAB>k<TAB>split[<TAB>system]`, `#` for comments).
    /// Run `eval --plan FILE` on every machine pointed at one database (each must see the
    /// folders at the same paths); each evaluation is claimed by one worker and stored once.
    #[arg(long, conflicts_with_all = ["model", "task", "system", "k", "split"])]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub lease: LeaseArg,
    #[command(flatten)]
    pub queue: QueueArg,
    /// The system name the scores are reported under [default: the folder's name].
    #[arg(long)]
    pub system: Option<String>,
    /// Shots the model was trained on (0: none); with --split, its place in Tables 6/7.
    #[arg(long, default_value_t = 0)]
    pub k: u32,
    /// The training file of k shots the model learned from (1 or more); needed with a k above 0.
    #[arg(long)]
    pub split: Option<u32>,
    /// Run on CPU even when CUDA is available (the same as --device cpu).
    #[arg(long)]
    pub cpu: bool,
    /// Where ONNX Runtime runs the model: auto (CUDA when it loads, else CPU), cpu, or cuda
    /// (an error when CUDA cannot be used).
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
    /// Replace a finished evaluation of the same system, task, k and split.
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// One task (with --k and --split for one shot group; every group of the task without).
    #[arg(long, conflicts_with = "all")]
    pub task: Option<String>,
    #[arg(long, requires = "split")]
    pub k: Option<u32>,
    #[arg(long, requires = "k")]
    pub split: Option<u32>,
    /// Every task that has training files, every shot group.
    #[arg(long)]
    pub all: bool,
    /// Replace finished baseline evaluations.
    #[arg(long)]
    pub replace: bool,
    /// Also write each trained model as a model folder (encoder + head in one model.onnx).
    #[arg(long)]
    pub export: Option<PathBuf>,
    /// Classic fine-tuning (CLUES sec. 5.1a): the whole encoder and a span head trained on each
    /// shot group with candle, exported to ONNX and evaluated by ONNX Runtime. Without --k and
    /// --split it runs every group and resumes a stopped grid (finished groups are kept).
    #[arg(long)]
    pub finetune: bool,
    /// The encoder to fine-tune: a folder as Hugging Face saves a BERT, RoBERTa / XLM-R or
    /// DeBERTa-v2/v3 (config.json, model.safetensors, tokenizer.json) [default: MiniLM-L6].
    #[arg(long, requires = "finetune")]
    pub weights: Option<PathBuf>,
    /// The system name the fine-tuned runs are stored under [default: "<folder> fine-tuned"].
    #[arg(long, requires = "finetune")]
    pub system: Option<String>,
    #[command(flatten)]
    pub lease: LeaseArg,
    #[command(flatten)]
    pub queue: QueueArg,
    /// Where models run: auto (CUDA when it loads, else CPU), cpu, or cuda (an error when
    /// CUDA cannot be used). Fine-tuning uses the GPU when clues-lab was built with the
    /// `cuda` feature.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    pub device: Device,
}

#[derive(Debug, clap::Args)]
pub struct ImportPredictionsArgs {
    /// Predictions: official CLUES lines {"id", "answer"}, lines {"<id>": [spans]}, or one
    /// JSON object {"<id>": [spans]}.
    pub file: PathBuf,
    #[arg(long)]
    pub task: String,
    /// The system name, e.g. "GPT-3 in-context".
    #[arg(long)]
    pub system: String,
    #[arg(long, default_value_t = 0)]
    pub k: u32,
    /// The training file of k shots the system used (1 or more); needed with a k above 0.
    #[arg(long)]
    pub split: Option<u32>,
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, clap::Args)]
pub struct QuantizeArgs {
    /// A model folder with model.safetensors, config.json, tokenizer.json (and decoding.json).
    #[arg(long)]
    pub model: PathBuf,
    /// The int8 model folder to write.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn quantize(a: QuantizeArgs) -> Result<()> {
    if a.out.exists() {
        return Err(Error::Invalid(format!(
            "{} exists; give a new folder",
            a.out.display()
        )));
    }
    let w = super::tune::load(&a.model, 0)?;
    let d = ModelDir::open(&a.model)
        .map(|m| m.decoding)
        .unwrap_or_default();
    super::tune::export_dir(
        &a.out,
        &w,
        &a.model.join("tokenizer.json"),
        &d,
        super::tune::export::Precision::Int8,
    )?;
    println!("wrote {} (int8)", a.out.display());
    Ok(())
}

/// The system name of a model folder: its own name.
fn folder_name(model: &std::path::Path) -> String {
    model
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "model".into())
}

/// Reads an evaluation plan; every folder must open as a model here before anything is queued.
pub fn read_plan(path: &std::path::Path) -> Result<Vec<jobs::PlannedEval>> {
    let label = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io(format!("cannot read {label}"), e))?;
    let mut plan = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |m: String| Error::data(&label, Some(n + 1), m);
        let f: Vec<&str> = line.split('\t').collect();
        if !(4..=5).contains(&f.len()) {
            return Err(bad(format!(
                "expected folder, task, k, split and optionally a system name, separated by tabs; found {} field(s)",
                f.len()
            )));
        }
        let number = |name: &str, v: &str| {
            v.trim()
                .parse::<u32>()
                .map_err(|_| bad(format!("{name} must be a whole number, not {v:?}")))
        };
        let model = PathBuf::from(f[0]);
        ModelDir::open(&model).map_err(|e| bad(e.to_string()))?;
        let (k, split) = domain::shots::run_group(number("k", f[2])?, Some(number("split", f[3])?))
            .map_err(bad)?;
        plan.push(jobs::PlannedEval {
            system: f
                .get(4)
                .map_or_else(|| folder_name(&model), |s| s.trim().to_string()),
            task: f[1].trim().to_string(),
            k,
            split,
            model,
        });
    }
    if plan.is_empty() {
        return Err(Error::data(&label, None, "the plan names no model"));
    }
    Ok(plan)
}

pub async fn eval(database: &str, a: EvalArgs) -> Result<()> {
    if a.queue.queue_only && a.plan.is_none() {
        return Err(Error::Invalid(
            "--queue-only queues the evaluations of a --plan; give --plan".into(),
        ));
    }
    let device = if a.cpu { Device::Cpu } else { a.device };
    // ONNX Runtime runs every evaluation: a device it cannot use is refused before a row.
    super::runtime::check_device(device)?;
    let pool = db::connect_existing(database).await?;
    if let Some(plan) = &a.plan {
        let plan = read_plan(plan)?;
        let run = jobs::GridRun {
            replace: a.replace,
            export: None,
            device,
            bar: true,
            lease: a.lease.duration(),
            queue_only: a.queue.queue_only,
            clock: store::lease::Clock::System,
        };
        for s in jobs::evaluate_plan(&pool, &plan, &run).await? {
            println!("{}", s.render());
        }
        return Ok(());
    }
    let (Some(model), Some(task)) = (a.model, a.task) else {
        return Err(Error::Invalid("give --model and --task, or --plan".into()));
    };
    let (k, split) = domain::shots::run_group(a.k, a.split).map_err(Error::Invalid)?;
    let dir = ModelDir::open(&model)?;
    let system = a.system.unwrap_or_else(|| folder_name(&model));
    let t = Target {
        system,
        kind: SystemKind::Onnx,
        task,
        k,
        split,
        replace: a.replace,
    };
    let s = jobs::evaluate(&pool, &dir, t, device, true).await?;
    println!("{}", s.render());
    Ok(())
}

pub async fn baseline(database: &str, a: BaselineArgs) -> Result<()> {
    // Refused before anything is stored or queued: the frozen baseline runs on ONNX Runtime,
    // fine-tuning on candle and then ONNX Runtime.
    if a.finetune {
        super::tune::check_device(a.device, true)?;
    } else {
        super::runtime::check_device(a.device)?;
    }
    let pool = db::connect_existing(database).await?;
    let tasks: Vec<String> = match (&a.task, a.all) {
        (Some(t), false) => vec![t.clone()],
        (None, true) => store::catalog::span_tasks_with_training(&pool).await?,
        _ => {
            return Err(Error::Invalid(
                "give --task <task> (optionally --k and --split) or --all".into(),
            ))
        }
    };
    let run = jobs::GridRun {
        replace: a.replace,
        export: a.export,
        device: a.device,
        bar: true,
        lease: a.lease.duration(),
        queue_only: a.queue.queue_only,
        clock: store::lease::Clock::System,
    };
    if a.finetune {
        let start = super::tune::Start::new(a.weights, a.system)?;
        let (jobs, skipped) =
            jobs::plan_finetune(&pool, &start, &tasks, a.k.zip(a.split), a.replace).await?;
        if skipped > 0 {
            eprintln!("{skipped} shot groups already fine-tuned and evaluated are kept (--replace to run them again)");
        }
        for s in jobs::run_finetune(&pool, &start, jobs, &run).await? {
            println!("{}", s.render());
        }
        return Ok(());
    }
    for s in jobs::run_baseline_grid(&pool, &tasks, a.k.zip(a.split), &run).await? {
        println!("{}", s.render());
    }
    Ok(())
}

pub async fn import_predictions(database: &str, a: ImportPredictionsArgs) -> Result<()> {
    let (k, split) = domain::shots::run_group(a.k, a.split).map_err(Error::Invalid)?;
    let pool = db::connect_existing(database).await?;
    let t = Target {
        system: a.system,
        kind: SystemKind::Imported,
        task: a.task,
        k,
        split,
        replace: a.replace,
    };
    let label = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| Error::io(format!("cannot read {label}"), e))?;
    println!("{}", jobs::import(&pool, &label, &text, t).await?.render());
    Ok(())
}

/// A command line's refusal of a value, as one line (without clap's "error: " and its advice).
pub(crate) fn clap_error(e: clap::Error) -> Error {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    Error::Invalid(first.trim_start_matches("error: ").to_string())
}
