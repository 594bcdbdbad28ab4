//! `bench --train`: milliseconds per fine-tuning update of a BERT-base-shaped span model, this
//! crate's loop on candle against the same loop in PyTorch (transformers'
//! BertForQuestionAnswering) on the same random weights, at 1 thread and at all threads, the
//! two sides alternating over rounds. Each update is split into forward, backward and
//! optimiser step, so the table says where candle loses time.

use crate::features::Feature;
use crate::runtime::Device;
use crate::tune::adam::Adam;
use crate::tune::train::{loss, Sample};
use crate::tune::{model_error, ops::sorted_vars, Dropout};
use candle_nn::ParamsAdamW;
use domain::rng::SplitMix64;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use store::error::{Error, Result};

#[derive(Debug, Clone, clap::Args)]
pub struct TrainArgs {
    /// Time fine-tuning updates (candle against PyTorch) instead of evaluation; needs no
    /// --model or --task, and PyTorch with transformers (`.ci/setup --bench`).
    #[arg(long)]
    pub train: bool,
    /// Rounds; each runs both sides at 1 thread and at all threads, in turn.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Timed updates per run, after one untimed warm-up update.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub updates: u32,
    /// Inputs per update.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=512))]
    pub batch: u32,
    /// Tokens per input.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(2..=512))]
    pub length: u32,
    /// One candle run in this process on the model in --work, with the thread count of
    /// RAYON_NUM_THREADS (the comparison starts a process per run, as candle reads it once).
    #[arg(long, hide = true, requires = "work")]
    pub candle_side: bool,
    #[arg(long, hide = true)]
    pub work: Option<PathBuf>,
}

/// The PyTorch side's script, carried in the binary.
const PEER: &str = include_str!("../bench/train_peer.py");

/// One update's milliseconds: forward, backward, optimiser step (with clipping).
type Update = [f64; 3];

fn ms(from: Instant, to: Instant) -> f64 {
    (to - from).as_secs_f64() * 1000.0
}

/// Times `a.updates` updates of the span model in `dir` after a warm-up one, as the
/// fine-tuning loop (`tune::train::fit`) makes them: span loss, backward, clipping at 1 and
/// AdamW (`tune::adam`).
fn candle_side(dir: &Path, a: &TrainArgs, device: Device) -> Result<Vec<Update>> {
    let (dev, _) = crate::tune::device(device)?;
    let w = crate::tune::load_on(dir, 0, &dev)?;
    let (b, len, vocab) = (a.batch as usize, a.length as usize, w.config.vocab_size);
    let mut rng = SplitMix64(1);
    // Word pieces past the special tokens (a small test vocabulary: any).
    let low = if vocab > 2000 { 1000 } else { 0 };
    let samples: Vec<Sample> = (0..b)
        .map(|_| Sample {
            feature: Feature {
                item: 0,
                ids: (0..len)
                    .map(|_| (low + rng.below(vocab - low)) as i64)
                    .collect(),
                type_ids: vec![0; len],
                map: vec![None; len],
            },
            positions: (0..len).collect(),
            starts: vec![rng.below(len)],
            ends: vec![rng.below(len)],
        })
        .collect();
    let batch: Vec<&Sample> = samples.iter().collect();
    let vars = sorted_vars(&w.vars);
    let params = ParamsAdamW {
        lr: 3e-5,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
    };
    let mut opt = Adam::new(vars, params).map_err(model_error)?;
    let mut dropout = Dropout::on(0.1, 7);
    let mut times = Vec::new();
    // On a GPU the work is queued: each part ends when the device has done it.
    let done = || {
        dev.synchronize()
            .map_err(model_error)
            .map(|()| Instant::now())
    };
    for i in 0..=a.updates {
        let t0 = done()?;
        let l = loss(&w, &batch, &mut dropout).map_err(model_error)?;
        let t1 = done()?;
        let mut grads = crate::tune::ops::backward(&l).map_err(model_error)?;
        let t2 = done()?;
        opt.clip_and_step(&mut grads, 1.0).map_err(model_error)?;
        let t3 = done()?;
        if i > 0 {
            times.push([ms(t0, t1), ms(t1, t2), ms(t2, t3)]);
        }
    }
    Ok(times)
}

/// Runs a command and reads the JSON it prints last; `what` names it in errors.
fn json_of(mut c: Command, what: &str) -> Result<serde_json::Value> {
    let out = c
        .output()
        .map_err(|e| Error::io(format!("cannot start {what}"), e))?;
    if !out.status.success() {
        return Err(Error::Model(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).map_err(|e| Error::Model(format!("{what} printed {last:?}: {e}")))
}

/// The updates a side printed.
fn updates_of(v: &serde_json::Value) -> Vec<Update> {
    v["updates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|u| {
                    let at = |i: usize| u[i].as_f64().unwrap_or(f64::NAN);
                    [at(0), at(1), at(2)]
                })
                .collect()
        })
        .unwrap_or_default()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The two sides of the comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Peer {
    Candle,
    PyTorch,
}

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Candle => "candle",
            Peer::PyTorch => "PyTorch",
        }
    }
}

/// How each side's run is started: this binary's candle side, or the PyTorch script, on the
/// same model, sizes and device.
struct Side {
    me: PathBuf,
    python: PathBuf,
    script: PathBuf,
    model: PathBuf,
    device: &'static str,
    sizes: [(&'static str, String); 3],
}

impl Side {
    fn command(&self, peer: Peer, threads: usize) -> Command {
        let mut c = match peer {
            Peer::Candle => {
                let mut c = Command::new(&self.me);
                c.args(["bench", "--train", "--candle-side", "--work"])
                    .arg(&self.model)
                    .env("RAYON_NUM_THREADS", threads.to_string());
                c
            }
            Peer::PyTorch => {
                let mut c = Command::new(&self.python);
                c.arg(&self.script).arg("time").arg(&self.model);
                c.args(["--threads", &threads.to_string()]);
                c
            }
        };
        c.args(["--device", self.device]);
        for (flag, v) in &self.sizes {
            c.args([*flag, v.as_str()]);
        }
        c
    }
}

/// `bench --train` (or, with the hidden `--candle-side`, one candle run printing its JSON) on
/// `device`: the CPU at 1 thread and at all threads, or the GPU (both sides on CUDA).
pub fn run(a: &TrainArgs, hf_python: Option<PathBuf>, device: Device) -> Result<()> {
    if a.candle_side {
        let dir = a.work.as_ref().ok_or_else(|| {
            Error::Invalid("--candle-side needs --work (the folder of the run)".into())
        })?;
        // On rayon's threads, as the training loop runs its updates (`ops::on_pool`).
        let times = crate::tune::ops::on_pool(|| candle_side(dir, a, device))?;
        println!("{}", serde_json::json!({ "updates": times }));
        return Ok(());
    }
    // The device first: a GPU that cannot be used is said before PyTorch writes the model.
    let (dev, said) = crate::tune::device(device)?;
    let python = super::runtime::hf_python(hf_python).ok_or_else(|| {
        Error::Invalid(
            "bench --train needs PyTorch and transformers: run `.ci/setup --bench`, or give --hf-python".into(),
        )
    })?;
    let work = std::env::temp_dir().join(format!("clues-train-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| Error::io("cannot make a temporary folder", e))?;
    let script = work.join("train_peer.py");
    std::fs::write(&script, PEER).map_err(|e| Error::io("cannot write the PyTorch script", e))?;
    let model = work.join("bert-base-random");
    let mut make = Command::new(&python);
    make.arg(&script).arg("make").arg(&model);
    let made = make
        .status()
        .map_err(|e| Error::io("cannot start the PyTorch side", e))?;
    if !made.success() {
        return Err(Error::Model(
            "the PyTorch side could not write the model".into(),
        ));
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Where each run goes: (its label, threads); on a GPU, the threads only feed it.
    let places: Vec<(String, usize)> = if dev.is_cuda() {
        vec![("GPU".into(), all)]
    } else {
        vec![("1".into(), 1), (all.to_string(), all)]
    };
    let side = Side {
        me: std::env::current_exe().map_err(|e| Error::io("cannot find this binary", e))?,
        python,
        script,
        model,
        device: if dev.is_cuda() { "cuda" } else { "cpu" },
        sizes: [
            ("--batch", a.batch.to_string()),
            ("--length", a.length.to_string()),
            ("--updates", a.updates.to_string()),
        ],
    };
    println!(
        "fine-tuning updates of a BERT-base-shaped span model (random weights) on {said}, batch {} x {} tokens, {} timed updates per run after a warm-up; ms per update (forward + backward + optimiser step)",
        a.batch, a.length, a.updates
    );
    table(&side, &places, a.rounds, dev.is_cuda())?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Runs both sides `rounds` times at each place and prints each run's row, then the medians'
/// ratio per place.
fn table(side: &Side, places: &[(String, usize)], rounds: u32, gpu: bool) -> Result<()> {
    println!("| round | threads | side | forward | backward | step | update |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut totals: Vec<(&str, Peer, f64)> = Vec::new();
    for round in 1..=rounds {
        for (place, threads) in places {
            // The two sides take turns going first.
            let peers = if (round + *threads as u32).is_multiple_of(2) {
                [Peer::Candle, Peer::PyTorch]
            } else {
                [Peer::PyTorch, Peer::Candle]
            };
            for peer in peers {
                let name = peer.name();
                let ups = updates_of(&json_of(side.command(peer, *threads), name)?);
                let part = |i: usize| median(ups.iter().map(|u| u[i]).collect());
                let whole = median(ups.iter().map(|u| u.iter().sum()).collect());
                println!(
                    "| {round} | {place} | {name} | {:.0} | {:.0} | {:.0} | {whole:.0} |",
                    part(0),
                    part(1),
                    part(2)
                );
                totals.push((place, peer, whole));
            }
        }
    }
    for (place, _) in places {
        let of = |peer: Peer| {
            median(
                totals
                    .iter()
                    .filter(|t| t.0 == place && t.1 == peer)
                    .map(|t| t.2)
                    .collect(),
            )
        };
        let (c, t) = (of(Peer::Candle), of(Peer::PyTorch));
        let on = if gpu {
            "the GPU".to_string()
        } else {
            format!("{place} thread(s)")
        };
        println!(
            "{on}: candle {c:.0} ms, PyTorch {t:.0} ms per update (medians over rounds): candle takes {:.2}x PyTorch's time",
            c / t
        );
    }
    Ok(())
}
