//! CrossFit's upstream learners on a small random BART: one first-order MAML update and one
//! Reptile update equal the same update computed by hand (inner SGD, clipping, AdamW's first
//! step), and `crossfit upstream` learns a partition's seen tasks, writes the chosen checkpoint,
//! fine-tunes each test task from it and gives its ARG against direct fine-tuning.

use crate::common;

use candle_core::Tensor;
use common::tiny_seq2seq::{pairs, write_seq2seq_dir, Kind};
use learners::seq2seq::text::Text;
use learners::seq2seq::train::{loss, Pair};
use learners::seq2seq::upstream::{meta_step, outer_gradient, outer_optimizer, Method, Settings};
use learners::seq2seq::Model;
use learners::tune::ops::sorted_vars;
use learners::tune::Dropout;

/// Every weight's gradient of the loss on `batch` at the model's current weights.
fn gradients(m: &Model, batch: &[&Pair]) -> Vec<Tensor> {
    let grads = loss(m, batch, &mut Dropout::off())
        .unwrap()
        .backward()
        .unwrap();
    sorted_vars(&m.weights.vars)
        .iter()
        .map(|v| grads.get(v.as_tensor()).unwrap().clone())
        .collect()
}

/// AdamW's first step (weight decay 0) on `theta` with gradient `g` clipped at norm 1:
/// theta - lr * g / (|g| + 1e-8), as the bias corrections make it.
fn first_adam_step(theta: &[Tensor], g: &[Tensor], lr: f64) -> Vec<Tensor> {
    let norm: f64 = g
        .iter()
        .map(|t| {
            f64::from(
                t.sqr()
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .to_scalar::<f32>()
                    .unwrap(),
            )
        })
        .sum::<f64>()
        .sqrt();
    let scale = if norm > 1.0 { 1.0 / (norm + 1e-6) } else { 1.0 };
    theta
        .iter()
        .zip(g)
        .map(|(t, g)| {
            let g = (g * scale).unwrap();
            let step = g
                .broadcast_div(&(g.abs().unwrap() + 1e-8).unwrap())
                .unwrap();
            (t - (step * lr).unwrap()).unwrap()
        })
        .collect()
}

fn worst(a: &[Tensor], b: &[Tensor]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            (x - y)
                .unwrap()
                .abs()
                .unwrap()
                .max_keepdim(0)
                .unwrap()
                .flatten_all()
                .unwrap()
                .max(0)
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
        })
        .fold(0f32, f32::max)
}

/// A small random BART's folder and one seen task: two support pairs and two query pairs.
fn one_task(seed: u64) -> (tempfile::TempDir, Vec<Pair>, Vec<Pair>) {
    let dir = tempfile::tempdir().unwrap();
    write_seq2seq_dir(dir.path(), Kind::Bart, 1, seed);
    let tok = Text::open(&dir.path().join("tokenizer.json")).unwrap();
    let support = [
        ("the nurses were gentle", "positive"),
        ("the room smelled of smoke", "negative"),
    ];
    let query = [
        ("a bright little bakery", "positive"),
        ("the hotel room was cold", "negative"),
    ];
    (dir, pairs(&tok, &support), pairs(&tok, &query))
}

/// One update of `method` without dropout, on whole batches of two.
fn settings(method: Method, outer: f64, inner: f64, inner_steps: usize) -> Settings {
    Settings {
        method,
        learning_rate: outer,
        inner_learning_rate: inner,
        inner_steps,
        batch_size: 2,
        steps: 1,
        warmup: 0,
        eval_every: 1,
        dropout: 0.0,
        seed: 1,
    }
}

#[test]
fn first_order_maml_and_reptile_updates_equal_a_hand_computation() {
    let (dir, support, query) = one_task(4);
    let (s, q): (Vec<&Pair>, Vec<&Pair>) = (support.iter().collect(), query.iter().collect());
    let (alpha, beta) = (0.05, 1e-3);
    for method in [Method::Fomaml, Method::Reptile] {
        let settings = settings(method, beta, alpha, 2);
        // By hand, on a second copy of the same weights.
        let hand = Model::load(dir.path(), &candle_core::Device::Cpu).unwrap();
        let vars = sorted_vars(&hand.weights.vars);
        let theta: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().copy().unwrap()).collect();
        let inner = |m: &Model| {
            let g = gradients(m, &s);
            for (v, g) in vars.iter().zip(&g) {
                v.set(&(v.as_tensor() - (g * alpha).unwrap()).unwrap())
                    .unwrap();
            }
        };
        let outer: Vec<Tensor> = match method {
            Method::Fomaml => {
                inner(&hand);
                gradients(&hand, &q)
            }
            _ => {
                inner(&hand);
                inner(&hand);
                theta
                    .iter()
                    .zip(&vars)
                    .map(|(t, v)| (t - v.as_tensor()).unwrap())
                    .collect()
            }
        };
        let expected = first_adam_step(&theta, &outer, beta);
        // The learner's update.
        let m = Model::load(dir.path(), &candle_core::Device::Cpu).unwrap();
        let mut opt = outer_optimizer(&m, &settings).unwrap();
        meta_step(&m, &mut opt, &settings, &s, &q, &mut Dropout::off()).unwrap();
        let got: Vec<Tensor> = sorted_vars(&m.weights.vars)
            .iter()
            .map(|v| v.as_tensor().copy().unwrap())
            .collect();
        let off = worst(&got, &expected);
        let moved = worst(&got, &theta);
        assert!(off < 1e-6, "{method:?}: off the hand computation by {off}");
        assert!(
            moved > 1e-4,
            "{method:?}: the update moved the weights by only {moved}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn upstream_learning_writes_its_checkpoint_fine_tunes_the_test_tasks_and_gives_arg() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::db_url(&tmp.path().join("up.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let model = tmp.path().join("tiny-bart");
    write_seq2seq_dir(&model, Kind::Bart, 1, 6);
    let m = model.to_str().unwrap();
    let tune = [
        "--learning-rates",
        "0.02",
        "--batch-sizes",
        "2",
        "--steps",
        "80",
        "--warmup",
        "2",
        "--eval-every",
        "20",
        "--max-output-tokens",
        "6",
    ];
    // The baseline: direct fine-tuning on the partition's test tasks.
    for task in ["demo-xf-sentiment", "demo-xf-topic", "demo-xf-headline"] {
        let args = [
            &["crossfit", "learn", "--model", m, "--task", task][..],
            &tune,
        ]
        .concat();
        let (ok, text) = common::clues(&url, &args);
        assert!(ok, "{text}");
    }
    let upstream = |method: &'static str, out: &std::path::Path| -> Vec<String> {
        let head = [
            "crossfit",
            "upstream",
            "--model",
            m,
            "--partition",
            "demo",
            "--method",
            method,
        ];
        let own = [
            "--upstream-steps",
            "4",
            "--upstream-eval-every",
            "2",
            "--inner-steps",
            "2",
            "--upstream-batch-size",
            "2",
            "--upstream-learning-rate",
            "0.001",
            "--inner-learning-rate",
            "0.01",
            "--upstream-warmup",
            "1",
        ];
        let out = ["--out".to_string(), out.display().to_string()];
        head.iter()
            .chain(&own)
            .chain(&tune)
            .map(|s| s.to_string())
            .chain(out)
            .collect()
    };
    for method in ["reptile", "fomaml", "maml", "mtl"] {
        let out = tmp.path().join(format!("up-{method}"));
        let args = upstream(method, &out);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, text) = common::clues(&url, &refs);
        assert!(ok, "{method}: {text}");
        assert!(text.contains("over 5 seeds"), "{method}: {text}");
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("upstream.json")).unwrap())
                .unwrap();
        assert_eq!(record["settings"]["method"], method);
        assert!(out.join("model.safetensors").is_file() && out.join("tokenizer.json").is_file());
        let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM crossfit_runs WHERE method = $1")
            .bind(format!("up-{method} fine-tuning"))
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(runs, 15, "{method}: three test tasks, five seeds");
        // Started again: the folder is reused and every run kept.
        let (ok, text) = common::clues(&url, &refs);
        assert!(
            ok && text.contains("already done, reused"),
            "{method}: {text}"
        );
    }
    let settings: String = sqlx::query_scalar(
        "SELECT settings_json FROM crossfit_runs WHERE method = 'up-reptile fine-tuning' LIMIT 1",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(settings.contains(r#""method":"reptile""#), "{settings}");
    // The paper's Table 2: a row per upstream method against direct fine-tuning.
    let methods =
        "up-reptile fine-tuning,up-fomaml fine-tuning,up-maml fine-tuning,up-mtl fine-tuning";
    let (ok, text) = common::clues(
        &url,
        &[
            "crossfit",
            "table",
            "--partition",
            "demo",
            "--methods",
            methods,
            "--baseline",
            "tiny-bart direct fine-tuning",
        ],
    );
    assert!(ok, "{text}");
    assert!(
        text.starts_with("| method | demo-xf-sentiment | demo-xf-topic | demo-xf-headline | ARG (mean ± population std over seeds) |"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.contains("(5 seeds)")).count(),
        4,
        "{text}"
    );
    // Two workers started at once on one folder: both learn, the first to finish writes the
    // folder whole, the other uses it, and they share the test tasks' seeds.
    let twice = tmp.path().join("up-twice");
    let args = upstream("fomaml", &twice);
    let workers: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
                .args(["--database", &url])
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut said = String::new();
    for w in workers {
        let out = w.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{text}");
        said.push_str(&text);
    }
    assert!(twice.join("upstream.json").is_file(), "{said}");
    assert_eq!(said.matches("; written to").count(), 1, "{said}");
    assert!(
        said.contains("finished the same upstream learning first")
            || said.contains("already done, reused"),
        "{said}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".partial-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM crossfit_runs WHERE method = $1")
        .bind("up-twice fine-tuning")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 15, "{said}");
    // The same folder with other settings is refused.
    let mut other = upstream("reptile", &tmp.path().join("up-reptile"));
    let at = other.iter().position(|a| a == "--inner-steps").unwrap();
    other[at + 1] = "3".into();
    let refs: Vec<&str> = other.iter().map(String::as_str).collect();
    let (ok, text) = common::clues(&url, &refs);
    assert!(
        !ok && text.contains("learned with other settings"),
        "{text}"
    );
}

/// The query loss after one inner SGD step from the model's weights, `theta + h u`.
fn meta_objective(
    m: &Model,
    theta: &[Tensor],
    u: &[Tensor],
    h: f64,
    alpha: f64,
    s: &[&Pair],
    q: &[&Pair],
) -> f64 {
    let vars = sorted_vars(&m.weights.vars);
    for ((v, t), d) in vars.iter().zip(theta).zip(u) {
        v.set(&(t + (d * h).unwrap()).unwrap()).unwrap();
    }
    let g = gradients(m, s);
    for (v, g) in vars.iter().zip(&g) {
        v.set(&(v.as_tensor() - (g * alpha).unwrap()).unwrap())
            .unwrap();
    }
    let l = f64::from(
        loss(m, q, &mut Dropout::off())
            .unwrap()
            .to_scalar::<f32>()
            .unwrap(),
    );
    for (v, t) in vars.iter().zip(theta) {
        v.set(t).unwrap();
    }
    l
}

#[test]
fn the_maml_gradient_is_the_derivative_through_the_inner_step() {
    let (dir, support, query) = one_task(9);
    let (s, q): (Vec<&Pair>, Vec<&Pair>) = (support.iter().collect(), query.iter().collect());
    let m = Model::load(dir.path(), &candle_core::Device::Cpu).unwrap();
    let alpha = 0.5;
    let maml = outer_gradient(
        &m,
        &settings(Method::Maml, 1e-3, alpha, 1),
        &s,
        &q,
        &mut Dropout::off(),
    )
    .unwrap();
    let first = outer_gradient(
        &m,
        &settings(Method::Fomaml, 1e-3, alpha, 1),
        &s,
        &q,
        &mut Dropout::off(),
    )
    .unwrap();
    let theta: Vec<Tensor> = sorted_vars(&m.weights.vars)
        .iter()
        .map(|v| v.as_tensor().copy().unwrap())
        .collect();
    let dot = |a: &[Tensor], b: &[Tensor]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                f64::from(
                    (x * y)
                        .unwrap()
                        .sum_all()
                        .unwrap()
                        .to_scalar::<f32>()
                        .unwrap(),
                )
            })
            .sum()
    };
    // Along the MAML gradient itself (unit length): the meta-objective's slope by central
    // differences, against the two gradients' components.
    let norm = dot(&maml, &maml).sqrt();
    let u: Vec<Tensor> = maml.iter().map(|t| (t / norm).unwrap()).collect();
    let h = 1e-2;
    let slope = (meta_objective(&m, &theta, &u, h, alpha, &s, &q)
        - meta_objective(&m, &theta, &u, -h, alpha, &s, &q))
        / (2.0 * h);
    let (by_maml, by_first) = (dot(&maml, &u), dot(&first, &u));
    let (e_maml, e_first) = ((by_maml - slope).abs(), (by_first - slope).abs());
    eprintln!("slope {slope}, MAML {by_maml}, first-order {by_first}");
    assert!(
        e_maml < 0.02 * slope.abs(),
        "MAML {by_maml} against the slope {slope}"
    );
    assert!(
        e_maml * 5.0 < e_first,
        "MAML off by {e_maml}, first-order by {e_first}"
    );
    // The weights are where they were.
    let after: Vec<Tensor> = sorted_vars(&m.weights.vars)
        .iter()
        .map(|v| v.as_tensor().copy().unwrap())
        .collect();
    assert_eq!(worst(&after, &theta), 0.0);
}
