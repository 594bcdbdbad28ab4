//! CrossFit's direct fine-tuning (`crossfit learn`) on a small random BART in the real file
//! layout: every weight learns, greedy decoding equals transformers' on the same folder, runs
//! are stored per seed with their settings, a run cut off by kill -9 goes on to the same
//! predictions an uninterrupted one gives, and `crossfit arg` compares them.

use crate::common;

use common::clues;
use common::tiny_seq2seq::{pairs, write_seq2seq_dir, Kind, KINDS};
use learners::seq2seq::text::Text;
use learners::seq2seq::train::{decode_all, loss, Pair};
use learners::seq2seq::{greedy, Model};
use learners::tune::train::fit;
use learners::tune::{Dropout, Recipe};

const SENTENCES: [(&str, &str); 4] = [
    ("the nurses were gentle and quick", "positive"),
    ("the hotel room smelled of smoke", "negative"),
    ("a bright little bakery with friendly faces", "positive"),
    ("the hotel room was cold", "negative"),
];

/// Trains the model on the pairs (150 updates at 2e-2, no dropout); returns each epoch's loss.
fn learn_pairs(m: &Model, ps: &[Pair]) -> Vec<f64> {
    let r = Recipe {
        learning_rate: 2e-2,
        batch_size: 2,
        steps: Some(150),
        warmup: 5,
        dropout: 0.0,
        ..Recipe::default()
    };
    fit(
        learners::tune::ops::sorted_vars(&m.weights.vars),
        ps.len(),
        &r,
        &mut |_, _| {},
        &mut |chunk, d| {
            let b: Vec<&Pair> = chunk.iter().map(|&i| &ps[i]).collect();
            loss(m, &b, d)
        },
    )
    .unwrap()
}

#[test]
fn every_weight_gets_a_gradient_and_the_pairs_are_learned_in_bart_and_t5() {
    for kind in KINDS {
        learns(kind);
    }
}

fn learns(kind: Kind) {
    let what = format!("{kind:?}");
    let dir = tempfile::tempdir().unwrap();
    write_seq2seq_dir(dir.path(), kind, 2, 3);
    let tok = Text::open(&dir.path().join("tokenizer.json")).unwrap();
    let m = Model::load(dir.path(), &candle_core::Device::Cpu).unwrap();
    let ps = pairs(&tok, &SENTENCES);
    assert_eq!(
        *ps[0].tgt.last().unwrap(),
        m.eos(),
        "{what}: the end token last"
    );
    let batch: Vec<&Pair> = ps.iter().collect();
    let grads = loss(&m, &batch, &mut Dropout::off())
        .unwrap()
        .backward()
        .unwrap();
    let snapshot = m.weights.snapshot().unwrap();
    let names = snapshot.iter().map(|(n, _)| n.as_str());
    common::assert_gradients(&grads, names, &|n| m.weights.get(n), &what);
    let losses = learn_pairs(&m, &ps);
    assert!(
        losses.last().unwrap() < &(losses[0] * 0.1),
        "{what}: losses {losses:?}"
    );
    let srcs: Vec<&[u32]> = ps.iter().map(|p| p.src.as_slice()).collect();
    let out = greedy(&m, &srcs, 8).unwrap();
    for ((_, gold), ids) in SENTENCES.iter().zip(&out) {
        assert_eq!(
            tok.text(ids).unwrap(),
            *gold,
            "{out:?} after losses {losses:?}"
        );
    }
}

/// Greedy decoding keeps each step's keys and values and computes the new token only: what
/// it decodes is what the whole decoder picks over the tokens so far, row by row of a padded
/// batch (teacher-forced along each output, every token is the argmax, then the end token).
#[test]
fn cached_greedy_steps_pick_what_the_whole_decoder_picks() {
    for kind in KINDS {
        let what = format!("{kind:?}");
        let dir = tempfile::tempdir().unwrap();
        write_seq2seq_dir(dir.path(), kind, 2, 11);
        let tok = Text::open(&dir.path().join("tokenizer.json")).unwrap();
        let m = Model::load(dir.path(), &candle_core::Device::Cpu).unwrap();
        // Random weights: outputs of many tokens, so that most steps read the cache.
        let ps = pairs(&tok, &SENTENCES);
        let srcs: Vec<&[u32]> = ps.iter().map(|p| p.src.as_slice()).collect();
        let out = greedy(&m, &srcs, 10).unwrap();
        assert!(out.iter().any(|o| o.len() >= 3), "{what}: {out:?}");
        let dev = &m.weights.device;
        for (src, ids) in srcs.iter().zip(&out) {
            let (s, mask) = learners::seq2seq::pad_rows(&[src], m.pad(), dev).unwrap();
            let (enc, bias) = m.encode(&s, &mask, &mut Dropout::off()).unwrap();
            let mut tgt = vec![m.start()];
            tgt.extend(ids);
            let t = candle_core::Tensor::from_vec(tgt.clone(), (1, tgt.len()), dev).unwrap();
            let picks: Vec<u32> = m
                .logits(&enc, &bias, &t, &mut Dropout::off())
                .unwrap()
                .argmax(candle_core::D::Minus1)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .to_vec1()
                .unwrap();
            let mut want = ids.clone();
            if ids.len() < 10 {
                want.push(m.eos());
            }
            assert_eq!(&picks[..want.len()], &want[..], "{what}: {src:?}");
        }
    }
}

/// Loads the folder with `AutoModelForSeq2SeqLM`; prints its greedy outputs and the
/// logits along them.
fn peer() -> String {
    common::hf_peer(
        "AutoModelForSeq2SeqLM",
        r#"    for ids in x["rows"]:
        g = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            num_beams=1, do_sample=False, max_new_tokens=12, min_length=0, no_repeat_ngram_size=0,
            forced_bos_token_id=None, forced_eos_token_id=None, decoder_start_token_id=x["start"],
            eos_token_id=x["eos"], pad_token_id=x["pad"])
        logits = model(input_ids=torch.tensor([ids]), decoder_input_ids=g[:, :-1]).logits[0]
        out.append({"ids": g[0].tolist(), "logits": logits.tolist()})"#,
    )
}

#[test]
fn transformers_decodes_greedily_as_candle_does() {
    let Some(python) = common::hf_python("transformers_decodes_greedily_as_candle_does") else {
        return;
    };
    for kind in KINDS {
        same_as_transformers(&python, kind);
    }
}

fn same_as_transformers(python: &std::path::Path, kind: Kind) {
    let what = format!("{kind:?}");
    let dir = tempfile::tempdir().unwrap();
    write_seq2seq_dir(dir.path(), kind, 2, 8);
    let tok = Text::open(&dir.path().join("tokenizer.json")).unwrap();
    let m = Model::load(dir.path(), &candle_core::Device::Cpu).unwrap();
    // Trained first, so that greedy outputs are words rather than one token repeated.
    let ps = pairs(&tok, &SENTENCES);
    learn_pairs(&m, &ps);
    let saved = dir.path().join("trained");
    m.save(&saved).unwrap();
    let mut srcs: Vec<Vec<u32>> = ps.into_iter().map(|p| p.src).collect();
    srcs.push(tok.ids("the bakery was gentle", 64).unwrap());
    srcs.push(tok.ids("smoke and faces", 64).unwrap());
    let rows: Vec<&[u32]> = srcs.iter().map(Vec::as_slice).collect();
    let ours = greedy(&m, &rows, 12).unwrap();
    let input = dir.path().join("rows.json");
    let (pad, eos, start) = m.config.tokens();
    let x = serde_json::json!({"rows": srcs, "pad": pad, "eos": eos, "start": start});
    std::fs::write(&input, x.to_string()).unwrap();
    let out = std::process::Command::new(python)
        .args(["-c", &peer()])
        .arg(&saved)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut worst = 0f64;
    for ((a, src), t) in ours.iter().zip(&srcs).zip(&theirs) {
        let b: Vec<u32> = serde_json::from_value(t["ids"].clone()).unwrap();
        // transformers' rows start with the decoder's start token and keep the end token.
        let generated: Vec<u32> = b[1..].iter().copied().take_while(|&t| t != eos).collect();
        assert_eq!(a, &generated, "{what}");
        // The teacher-forced logits along the generated row, position by position.
        let (s, mask) = learners::seq2seq::pad_rows(&[src], pad, &m.weights.device).unwrap();
        let (enc, bias) = m.encode(&s, &mask, &mut Dropout::off()).unwrap();
        let (tgt, _) =
            learners::seq2seq::pad_rows(&[&b[..b.len() - 1]], pad, &m.weights.device).unwrap();
        let mine = m
            .logits(&enc, &bias, &tgt, &mut Dropout::off())
            .unwrap()
            .squeeze(0)
            .unwrap();
        let mine: Vec<Vec<f32>> = mine.to_vec2().unwrap();
        for (row, their_row) in mine.iter().zip(t["logits"].as_array().unwrap()) {
            for (x, y) in row.iter().zip(their_row.as_array().unwrap()) {
                worst = worst.max((f64::from(*x) - y.as_f64().unwrap()).abs());
            }
        }
    }
    assert!(
        worst < 1e-4,
        "{what}: candle and transformers logits differ by {worst}"
    );
    eprintln!("{what}: greedy outputs {ours:?}; logits differ by at most {worst:.2e}");
    // Words that end before the limit, not one answer for every input.
    assert!(
        ours.iter().all(|o| !o.is_empty() && o.len() < 12),
        "{what}: {ours:?}"
    );
    assert!(ours.windows(2).any(|w| w[0] != w[1]), "{what}: {ours:?}");
}

/// The runs of a method: (task, seed, predictions), in order.
async fn runs_of(pool: &sqlx::AnyPool, method: &str) -> Vec<(String, i64, String)> {
    sqlx::query_as(
        "SELECT t.name, r.seed, r.predictions FROM crossfit_runs r JOIN crossfit_tasks t ON t.id = r.task_id
         WHERE r.method = $1 ORDER BY t.name, r.seed",
    )
    .bind(method)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_are_stored_per_seed_a_killed_run_goes_on_to_the_same_predictions_and_arg_compares_them(
) {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("tiny-bart");
    write_seq2seq_dir(&model, Kind::Bart, 1, 5);
    let m = model.to_str().unwrap();
    let open = |name: &str| {
        let url = common::db_url(&tmp.path().join(format!("{name}.db")));
        async move {
            let pool = store::db::cli::connect(&url).await.unwrap();
            server::demo::ensure_demo(&pool).await.unwrap();
            (url, pool)
        }
    };
    let grid = [
        "--learning-rates",
        "0.003",
        "--batch-sizes",
        "2,4",
        "--steps",
        "6",
        "--warmup",
        "2",
        "--eval-every",
        "3",
        "--max-output-tokens",
        "6",
        "--lease-seconds",
        "2",
    ];
    let learn = |task: &'static str| -> Vec<&str> {
        [
            &["crossfit", "learn", "--model", m, "--task", task][..],
            &grid,
        ]
        .concat()
    };
    let (url, pool) = open("whole").await;
    for task in ["demo-xf-sentiment", "demo-xf-topic", "demo-xf-headline"] {
        let (ok, text) = clues(&url, &learn(task));
        assert!(ok, "{text}");
        assert!(text.contains("seed 100:"), "{text}");
    }
    let method = "tiny-bart direct fine-tuning";
    let whole = runs_of(&pool, method).await;
    assert_eq!(whole.len(), 15, "three tasks, five seeds each");
    let settings: String =
        sqlx::query_scalar("SELECT settings_json FROM crossfit_runs WHERE method = $1 LIMIT 1")
            .bind(method)
            .fetch_one(&pool)
            .await
            .unwrap();
    let s: serde_json::Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(s["tried"].as_array().unwrap().len(), 2, "{s}");
    assert_eq!(s["decoding"]["strategy"], "greedy");
    assert_eq!(
        s["decoding"]["decoder_start_token_id"], 2,
        "BART starts from </s>"
    );
    assert_eq!(s["grid"]["steps"], 6);
    // Run again: every seed has its run, nothing is trained or stored.
    let (ok, text) = clues(&url, &learn("demo-xf-sentiment"));
    assert!(ok && text.contains("already have a run"), "{text}");
    assert_eq!(runs_of(&pool, method).await.len(), 15);
    // ARG of the learned runs against the majority output, per seed, as the paper lays it out.
    let arg = [
        "crossfit",
        "arg",
        "--partition",
        "demo",
        "--method",
        method,
        "--baseline",
        "majority-output",
    ];
    let (ok, text) = clues(&url, &arg);
    assert!(ok, "{text}");
    assert!(text.contains("ARG over 5 seeds"), "{text}");
    assert!(text.contains("demo-xf-headline"), "{text}");

    // Cut off by kill -9 after its first stored seed, then started again: the same predictions.
    let (url2, pool2) = open("cut").await;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
        .args(["--database", &url2])
        .args(learn("demo-xf-sentiment"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while runs_of(&pool2, method).await.is_empty() {
        assert!(started.elapsed().as_secs() < 300, "no seed stored");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let cut = runs_of(&pool2, method).await.len();
    assert!(cut < 5, "killed after {cut} seeds");
    let (ok, text) = clues(&url2, &learn("demo-xf-sentiment"));
    assert!(ok, "{text}");
    let again = runs_of(&pool2, method).await;
    let first: Vec<_> = whole
        .iter()
        .filter(|r| r.0 == "demo-xf-sentiment")
        .cloned()
        .collect();
    assert_eq!(
        again, first,
        "a cut-off run goes on to what an uninterrupted one stores"
    );

    // `--keep`: each seed's chosen checkpoint, which reproduces the stored predictions outside
    // the run (the folder read back, the test inputs decoded as decoding.json says).
    let keep = tmp.path().join("kept");
    let mut kept_args = learn("demo-xf-sentiment");
    kept_args.extend(["--method", "kept", "--keep", keep.to_str().unwrap()]);
    let (ok, text) = clues(&url2, &kept_args);
    assert!(ok, "{text}");
    let stored = runs_of(&pool2, "kept").await;
    assert_eq!(stored.len(), 5);
    let folder = keep.join(format!("demo-xf-sentiment-seed{}", stored[0].1));
    let decoding: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("decoding.json")).unwrap())
            .unwrap();
    assert_eq!(decoding["strategy"], "greedy");
    let reloaded = Model::load(&folder, &candle_core::Device::Cpu).unwrap();
    let text_of = Text::open(&folder.join("tokenizer.json")).unwrap();
    let max_in = decoding["max_input_tokens"].as_u64().unwrap() as usize;
    let max_out = decoding["max_output_tokens"].as_u64().unwrap() as usize;
    let tsv = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/crossfit/sentiment.test.tsv"),
    )
    .unwrap();
    let inputs: Vec<Vec<u32>> = tsv
        .lines()
        .map(|l| text_of.ids(l.split('\t').next().unwrap(), max_in).unwrap())
        .collect();
    let decoded: Vec<String> = decode_all(&reloaded, &inputs, max_out)
        .unwrap()
        .iter()
        .map(|ids| text_of.text(ids).unwrap())
        .collect();
    let predictions: Vec<String> = serde_json::from_str(&stored[0].2).unwrap();
    assert_eq!(
        decoded, predictions,
        "the kept checkpoint gives the stored predictions"
    );
    let (ok, text) = clues(
        &url2,
        &[
            &learn("demo-xf-topic")[..],
            &["--keep", "/proc/no-such-folder"],
        ]
        .concat(),
    );
    assert!(
        !ok && text.contains("--keep /proc/no-such-folder"),
        "{text}"
    );

    // Refused before anything is trained: not a text-to-text folder, a bad grid.
    let bert = tmp.path().join("bert");
    common::tiny_bert::write_model_dir(&bert, 1);
    let b = bert.to_str().unwrap();
    for (args, says) in [
        (
            vec!["crossfit", "learn", "--model", b, "--task", "demo-xf-topic"],
            "is not a text-to-text model",
        ),
        (
            vec![
                "crossfit",
                "learn",
                "--model",
                m,
                "--task",
                "demo-xf-topic",
                "--batch-sizes",
                "0",
            ],
            "--batch-sizes must be positive",
        ),
        (
            vec!["crossfit", "learn", "--model", m, "--task", "no-such-task"],
            "no-such-task",
        ),
    ] {
        let (ok, text) = clues(&url2, &args);
        assert!(!ok && text.contains(says), "{args:?}: {text}");
    }
    assert_eq!(runs_of(&pool2, method).await.len(), 5);
}
