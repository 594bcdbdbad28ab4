//! The model track's commands: `eval`, `baseline`, `import predictions` and `bench` (the
//! Rust model track beside a Python peer on the same ONNX model and test set).

use super::decode::Choice;
use super::eval::{choices, load, model_inputs, predict_loaded, ModelDir};
use super::features::Segment;
use super::runtime::Device;
use super::store::{self, Kind, Target};
use crate::db;
use crate::error::{Result, ServerError};
use app::ssr::catalog::{examples_of, load_spec};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// A model folder: model.onnx (start_logits/end_logits), tokenizer.json, optional decoding.json.
    #[arg(long)]
    pub model: PathBuf,
    #[arg(long)]
    pub task: String,
    /// The system name the scores are reported under [default: the folder's name].
    #[arg(long)]
    pub system: Option<String>,
    /// Shots the model was trained on (0: none); with --split, its place in Tables 6/7.
    #[arg(long, default_value_t = 0)]
    pub k: u32,
    #[arg(long, default_value_t = 0)]
    pub split: u32,
    /// Run on CPU even when CUDA is available.
    #[arg(long)]
    pub cpu: bool,
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
    #[arg(long, default_value_t = 0)]
    pub split: u32,
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[arg(long)]
    pub model: PathBuf,
    #[arg(long)]
    pub task: String,
    /// The Python with onnxruntime and tokenizers [default: the set-up's environment].
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Timed repetitions of each side (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
}

pub async fn eval(database: &str, a: EvalArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let dir = ModelDir::open(&a.model)?;
    let system = a.system.unwrap_or_else(|| {
        a.model
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "model".into())
    });
    let t = Target {
        system,
        kind: Kind::Onnx,
        task: a.task,
        k: a.k,
        split: a.split,
        replace: a.replace,
    };
    let device = if a.cpu { Device::Cpu } else { Device::Auto };
    let s = store::evaluate(&pool, &dir, t, device, true).await?;
    println!("{}", s.render());
    Ok(())
}

pub async fn baseline(database: &str, a: BaselineArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let tasks: Vec<String> = match (&a.task, a.all) {
        (Some(t), false) => vec![t.clone()],
        (None, true) => {
            sqlx::query_scalar(
                "SELECT DISTINCT t.name FROM tasks t JOIN data_files f ON f.task_id = t.id
             WHERE f.kind = 'train' AND t.text_metric IS NULL ORDER BY t.name",
            )
            .fetch_all(&pool)
            .await?
        }
        _ => {
            return Err(ServerError::Usage(
                "give --task <task> (optionally --k and --split) or --all".into(),
            ))
        }
    };
    if a.finetune {
        let (jobs, skipped) =
            store::plan_finetune(&pool, &tasks, a.k.zip(a.split), a.replace).await?;
        if skipped > 0 {
            eprintln!("{skipped} shot groups already fine-tuned and evaluated are kept (--replace to run them again)");
        }
        for s in store::run_finetune(&pool, jobs, a.replace, a.export, Device::Auto, true).await? {
            println!("{}", s.render());
        }
        return Ok(());
    }
    let groups = a.k.zip(a.split).map(|g| vec![g]);
    for task in tasks {
        for s in store::run_baseline(
            &pool,
            &task,
            groups.clone(),
            a.replace,
            a.export.clone(),
            true,
        )
        .await?
        {
            println!("{}", s.render());
        }
    }
    Ok(())
}

pub async fn import_predictions(database: &str, a: ImportPredictionsArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let t = Target {
        system: a.system,
        kind: Kind::Imported,
        task: a.task,
        k: a.k,
        split: a.split,
        replace: a.replace,
    };
    let label = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| ServerError::io(format!("cannot read {label}"), e))?;
    println!("{}", store::import(&pool, &label, &text, t).await?.render());
    Ok(())
}

/// The Python peer's script, beside this crate.
fn peer_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/peer.py")
}

pub async fn bench(database: &str, a: BenchArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let dir = ModelDir::open(&a.model)?;
    let (task_id, spec, _) = load_spec(&pool, &a.task).await?;
    let examples: Vec<_> = examples_of(&pool, task_id, None)
        .await?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let work = tempfile_dir()?;
    let inputs_path = work.join("inputs.jsonl");
    // Each input with what its answer may be (the peer decodes by the same rules).
    let inputs: Vec<(String, String)> = examples.iter().map(|e| model_inputs(&spec, e)).collect();
    let mut lines = String::new();
    for ((q, c), choice) in inputs.iter().zip(choices(&spec, &examples, &inputs)) {
        let one_of = match choice {
            Choice::Spans => serde_json::Value::Null,
            Choice::OneOf(r) => serde_json::json!(r
                .iter()
                .map(|&(seg, s, e)| (matches!(seg, Segment::Question), s, e))
                .collect::<Vec<_>>()),
        };
        lines.push_str(
            &serde_json::json!({"question": q, "context": c, "one_of": one_of}).to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(&inputs_path, lines)
        .map_err(|e| ServerError::io("cannot write the bench inputs", e))?;
    // The peer frames inputs as our tokenizer's post-processor says.
    let frame = serde_json::to_string(&super::runtime::Tokenizer::open(&dir.tokenizer)?.frame)
        .expect("a frame serialises");
    let (d, s) = (dir.clone(), spec.clone());
    let n = examples.len();
    let repeat = a.repeat.max(1);
    let (best, provider, features, ours) = tokio::task::spawn_blocking(move || -> Result<_> {
        let mut best = f64::INFINITY;
        let mut last = None;
        let mut loaded = load(&d, Device::Cpu)?;
        for _ in 0..repeat {
            let p = predict_loaded(&d, &mut loaded, &s, &examples, &mut |_, _| {})?;
            best = best.min(p.seconds);
            last = Some(p);
        }
        let p = last.expect("at least one run");
        Ok((best, p.provider, p.features, p.spans))
    })
    .await
    .map_err(|e| ServerError::Model(format!("the benchmark stopped: {e}")))??;
    let python = a.python.unwrap_or_else(|| {
        super::runtime::site_packages()
            .and_then(|s| s.parent()?.parent()?.parent().map(|v| v.join("bin/python")))
            .unwrap_or_else(|| PathBuf::from("python3"))
    });
    let out_path = work.join("python.jsonl");
    let output = std::process::Command::new(&python)
        .arg(peer_script())
        .args([
            "--model".as_ref(),
            a.model.as_os_str(),
            "--inputs".as_ref(),
            inputs_path.as_os_str(),
            "--out".as_ref(),
            out_path.as_os_str(),
        ])
        .args(["--repeat", &repeat.to_string()])
        .args(["--frame", &frame])
        .args([
            "--threads",
            &std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        ])
        .output()
        .map_err(|e| {
            ServerError::io(
                format!("cannot run the Python peer with {}", python.display()),
                e,
            )
        })?;
    if !output.status.success() {
        return Err(ServerError::Model(format!(
            "the Python peer failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let py: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|e| {
        ServerError::Model(format!(
            "the Python peer printed no result ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        ))
    })?;
    let py_seconds = py["seconds"].as_f64().unwrap_or(f64::NAN);
    let theirs: Vec<serde_json::Value> = std::fs::read_to_string(&out_path)
        .map_err(|e| ServerError::io("cannot read the Python predictions", e))?
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(serde_json::Value::Null))
        .collect();
    let key = |v: &serde_json::Value| -> Vec<(String, u64, u64, String)> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|s| {
                        (
                            s["source"].as_str().unwrap_or("").to_string(),
                            s["offset"].as_u64().unwrap_or(0),
                            s["length"].as_u64().unwrap_or(0),
                            s["text"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let ours_keys: Vec<_> = ours
        .iter()
        .map(|spans| key(&serde_json::to_value(spans).expect("spans serialise")))
        .collect();
    let theirs_keys: Vec<_> = theirs.iter().map(key).collect();
    let differing = if ours_keys.len() != theirs_keys.len() {
        ours_keys.len().max(theirs_keys.len())
    } else {
        ours_keys
            .iter()
            .zip(&theirs_keys)
            .filter(|(a, b)| a != b)
            .count()
    };
    let rust_rate = n as f64 / best;
    let py_rate = n as f64 / py_seconds;
    println!(
        "model track on {} ({} test items, {features} model inputs), best of {repeat}, {provider}",
        a.task, n
    );
    println!(
        "rust   (clues-lab, ort + tokenizers): {:>8.3} s  {:>9.1} examples/s",
        best, rust_rate
    );
    println!(
        "python (onnxruntime + tokenizers)   : {:>8.3} s  {:>9.1} examples/s",
        py_seconds, py_rate
    );
    println!("ratio rust/python: {:.2}x", rust_rate / py_rate);
    println!(
        "predictions identical: {}",
        if differing == 0 {
            "yes".to_string()
        } else {
            format!("NO ({differing} of {n} items differ)")
        }
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("clues-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| ServerError::io("cannot make a temporary folder", e))?;
    Ok(dir)
}
