//! `bench`: examples per second of the model track beside a Python peer on the same model and
//! test set (ONNX Runtime in Python, and Hugging Face transformers on PyTorch), with S1.

use super::decode::Choice;
use super::eval::{choices, load, model_inputs, predict_loaded, ModelDir};
use super::features::Segment;
use super::runtime::Device;
use domain::task::{Example, TaskSpec};
use std::path::{Path, PathBuf};
use store::catalog::{examples_of, load_spec};
use store::db::cli as db;
use store::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The span model folder evaluated (not with --train).
    #[arg(long, required_unless_present = "train")]
    pub model: Option<PathBuf>,
    /// The task whose test set it is evaluated on (not with --train).
    #[arg(long, required_unless_present = "train")]
    pub task: Option<String>,
    /// The Python with onnxruntime and tokenizers [default: the set-up's environment].
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Timed repetitions of each side (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Where every side runs the model: cpu, cuda (an error when CUDA cannot be used), or
    /// auto; the Python sides follow the Rust side.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    pub device: Device,
    /// The float checkpoint (model.safetensors, config.json) Hugging Face transformers runs
    /// [default: the model folder].
    #[arg(long)]
    pub hf: Option<PathBuf>,
    /// The Python with torch and transformers [default: ~/.cache/clues-lab/hf-venv].
    #[arg(long)]
    pub hf_python: Option<PathBuf>,
    #[command(flatten)]
    pub training: crate::train_bench::TrainArgs,
}

/// The Python peer's script, carried in the binary (written next to the bench inputs).
const PEER: &str = include_str!("../bench/peer.py");

/// One item's spans as compared across engines: (source, offset, length, text).
type Key = Vec<(String, u64, u64, String)>;

fn key(v: &serde_json::Value) -> Key {
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
}

/// What every peer run shares: the work folder (inputs.jsonl), repetitions, the input frame,
/// and whether the model runs on the GPU.
struct PeerRun {
    work: PathBuf,
    repeat: u32,
    frame: String,
    gpu: bool,
}

/// Runs the peer script with `engine` ("ort" or "torch"); returns its best seconds and answers.
fn run_peer(
    python: &std::path::Path,
    engine: &str,
    model: &std::path::Path,
    p: &PeerRun,
) -> Result<(f64, Vec<Key>)> {
    let (work, repeat, frame) = (&p.work, p.repeat, p.frame.as_str());
    let script = work.join("peer.py");
    std::fs::write(&script, PEER).map_err(|e| Error::io("cannot write the peer script", e))?;
    let out_path = work.join(format!("{engine}.jsonl"));
    let output = std::process::Command::new(python)
        .arg(&script)
        .args(["--model".as_ref(), model.as_os_str()])
        .args(["--inputs".as_ref(), work.join("inputs.jsonl").as_os_str()])
        .args(["--out".as_ref(), out_path.as_os_str()])
        .args(["--device", if p.gpu { "cuda" } else { "cpu" }])
        .args([
            "--repeat",
            &repeat.to_string(),
            "--frame",
            frame,
            "--engine",
            engine,
        ])
        .args([
            "--threads",
            &std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        ])
        .output()
        .map_err(|e| {
            Error::io(
                format!("cannot run the Python peer with {}", python.display()),
                e,
            )
        })?;
    if !output.status.success() {
        return Err(Error::Model(format!(
            "the Python peer ({engine}) failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|e| {
        Error::Model(format!(
            "the Python peer ({engine}) printed no result ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        ))
    })?;
    let answers = std::fs::read_to_string(&out_path)
        .map_err(|e| Error::io("cannot read the Python predictions", e))?
        .lines()
        .map(|l| key(&serde_json::from_str(l).unwrap_or(serde_json::Value::Null)))
        .collect();
    Ok((printed["seconds"].as_f64().unwrap_or(f64::NAN), answers))
}

/// Items whose answers differ ("yes" when none).
fn identical(a: &[Key], b: &[Key]) -> String {
    let differing = if a.len() != b.len() {
        a.len().max(b.len())
    } else {
        a.iter().zip(b).filter(|(x, y)| x != y).count()
    };
    if differing == 0 {
        "yes".into()
    } else {
        format!("NO ({differing} of {} items differ)", a.len())
    }
}

/// Mean official S1 of answers against the examples' golds.
fn s1_of(
    spec: &domain::task::TaskSpec,
    examples: &[domain::task::Example],
    answers: &[Key],
) -> f64 {
    let total: f64 = examples
        .iter()
        .zip(answers)
        .map(|(ex, a)| {
            let texts: Vec<String> = a.iter().map(|s| s.3.clone()).collect();
            spec.score(
                &ex.gold,
                &spec.to_official(&texts),
                domain::s1::Scoring::Official,
            )
        })
        .sum();
    total / examples.len().max(1) as f64
}

pub async fn bench(database: &str, a: BenchArgs) -> Result<()> {
    if a.training.train {
        let (t, hf, device) = (a.training.clone(), a.hf_python.clone(), a.device);
        return tokio::task::spawn_blocking(move || crate::train_bench::run(&t, hf, device))
            .await
            .map_err(|e| Error::Model(format!("the benchmark stopped: {e}")))?;
    }
    let (Some(model), Some(task)) = (a.model.clone(), a.task.clone()) else {
        return Err(Error::Invalid(
            "give --model and --task (or --train)".into(),
        ));
    };
    let pool = db::connect_existing(database).await?;
    let dir = ModelDir::open(&model)?;
    let (task_id, spec, _) = load_spec(&pool, &task).await?;
    let examples: Vec<_> = examples_of(&pool, task_id, None)
        .await?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let work = tempfile_dir()?;
    let inputs_path = work.join("inputs.jsonl");
    // Each input with what its answer may be (the peer decodes by the same rules).
    let inputs: Vec<(String, String)> = examples.iter().map(|e| model_inputs(&spec, e)).collect();
    let lines = peer_inputs(&spec, &examples, &inputs);
    std::fs::write(&inputs_path, lines)
        .map_err(|e| Error::io("cannot write the bench inputs", e))?;
    // The peer frames inputs as our tokenizer's post-processor says.
    let frame = serde_json::to_string(&super::tokenizer::Tokenizer::open(&dir.tokenizer)?.frame)
        .map_err(Error::internal)?;
    let (d, s) = (dir.clone(), spec.clone());
    let examples_all = examples.clone();
    let n = examples.len();
    let repeat = a.repeat.max(1);
    let device = a.device;
    let (best, provider, features, ours) = tokio::task::spawn_blocking(move || -> Result<_> {
        let mut loaded = load(&d, device)?;
        // The first run, then the others (`repeat` is at least 1): the best time, the last run.
        let mut p = predict_loaded(&d, &mut loaded, &s, &examples, &mut |_, _| {})?;
        let mut best = p.seconds;
        for _ in 1..repeat {
            p = predict_loaded(&d, &mut loaded, &s, &examples, &mut |_, _| {})?;
            best = best.min(p.seconds);
        }
        Ok((best, p.provider, p.features, p.spans))
    })
    .await
    .map_err(|e| Error::Model(format!("the benchmark stopped: {e}")))??;
    let python = a.python.unwrap_or_else(|| {
        super::runtime::site_packages()
            .and_then(|s| s.parent()?.parent()?.parent().map(|v| v.join("bin/python")))
            .unwrap_or_else(|| PathBuf::from("python3"))
    });
    let peer = PeerRun {
        work: work.clone(),
        repeat,
        frame,
        gpu: provider.contains("CUDA"),
    };
    let ours: Vec<Key> = ours
        .iter()
        .map(|spans| Ok(key(&serde_json::to_value(spans).map_err(Error::internal)?)))
        .collect::<Result<_>>()?;
    let rust_rate = n as f64 / best;
    println!(
        "model track on {} ({} test items, {features} model inputs), best of {repeat}, {provider}",
        task, n
    );
    println!("rust   (clues-lab, ort + tokenizers)     : {best:>8.3} s  {rust_rate:>9.1} examples/s  S1 {:.4}", s1_of(&spec, &examples_all, &ours));
    // The other sides stand when Python's onnxruntime cannot run (on a GPU machine, a wheel
    // for another Python); it says why.
    match run_peer(&python, "ort", &model, &peer) {
        Ok((py_seconds, theirs)) => {
            let py_rate = n as f64 / py_seconds;
            println!("python (onnxruntime + tokenizers)       : {py_seconds:>8.3} s  {py_rate:>9.1} examples/s");
            println!(
                "ratio rust/python onnxruntime: {:.2}x; predictions identical: {}",
                rust_rate / py_rate,
                identical(&ours, &theirs)
            );
        }
        Err(e) => println!("python onnxruntime: not run ({e})"),
    }
    // Hugging Face transformers on PyTorch with the float weights of the folder (or --hf).
    let hf_dir = a.hf.clone().unwrap_or_else(|| model.clone());
    let side = Ours {
        spec: &spec,
        examples: &examples_all,
        answers: &ours,
        rate: rust_rate,
    };
    transformers_side(a.hf_python.clone(), &hf_dir, &peer, &side);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The peer's input lines: each input with what its answer may be (the peer decodes by the
/// same rules).
fn peer_inputs(spec: &TaskSpec, examples: &[Example], inputs: &[(String, String)]) -> String {
    let mut lines = String::new();
    for ((q, c), choice) in inputs.iter().zip(choices(spec, examples, inputs)) {
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
    lines
}

/// This side's answers and speed, to set beside transformers'.
struct Ours<'a> {
    spec: &'a TaskSpec,
    examples: &'a [Example],
    answers: &'a [Key],
    rate: f64,
}

/// Runs the same inputs through Hugging Face transformers where a Python with torch and a
/// float checkpoint are there, and prints its speed, S1 and agreement; else says why not.
fn transformers_side(hf_python_arg: Option<PathBuf>, hf_dir: &Path, peer: &PeerRun, ours: &Ours) {
    match super::runtime::hf_python(hf_python_arg) {
        Some(hf) if hf_dir.join("model.safetensors").is_file() => {
            // The other figures stand when this side cannot run; it says why.
            let (hf_seconds, hf_answers) = match run_peer(&hf, "torch", hf_dir, peer) {
                Ok(x) => x,
                Err(e) => {
                    println!("transformers: not run ({e})");
                    return;
                }
            };
            let hf_rate = ours.examples.len() as f64 / hf_seconds;
            let (s_ours, s_hf) = (s1_of(ours.spec, ours.examples, ours.answers), s1_of(ours.spec, ours.examples, &hf_answers));
            println!("python (transformers on PyTorch, fp32)  : {hf_seconds:>8.3} s  {hf_rate:>9.1} examples/s  S1 {s_hf:.4}");
            println!(
                "ratio rust/transformers: {:.2}x; S1 {:+.2} points; predictions identical: {}",
                ours.rate / hf_rate,
                100.0 * (s_ours - s_hf),
                identical(ours.answers, &hf_answers)
            );
        }
        Some(_) => println!(
            "transformers: not run ({} has no model.safetensors; give --hf with the float checkpoint, e.g. a folder `baseline --finetune --export` wrote)",
            hf_dir.display()
        ),
        None => println!(
            "transformers: not run (no Python with torch and transformers: bash .ci/setup --bench makes ~/.cache/clues-lab/hf-venv, or give --hf-python)"
        ),
    }
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("clues-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot make a temporary folder", e))?;
    Ok(dir)
}
