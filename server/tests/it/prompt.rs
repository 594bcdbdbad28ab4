//! Prompt-based fine-tuning (`clues-lab prompt`) on small random checkpoints with a masked-LM
//! head: every weight learns, transformers scores the label words as candle does, a run is
//! stored with its template and verbaliser, and what cannot work is refused before anything is stored.

use crate::common;

use common::clues;
use common::families::families;
use common::tiny_bert::{demo_with_model, write_mlm_dir};
use domain::prompt::default_prompt;
use domain::task::{Context, Example, Family, Gold, TaskSpec};
use learners::tokenizer::Tokenizer;
use learners::tune::prompt::{input, label_logits, load_mlm, train, word_ids, Input};
use learners::tune::{Dropout, Recipe};

fn item(text: &str, label: &str) -> Example {
    Example {
        id: text.into(),
        context: Context::Single { text: text.into() },
        question: "positive or negative?".into(),
        question_type: None,
        gold: Gold {
            official: vec![label.into()],
            spans: vec![],
        },
        extra: serde_json::Value::Null,
    }
}

/// The SST-2 prompt's inputs of a few items, and their label indexes.
fn sst_inputs(tok: &Tokenizer) -> (Vec<Input>, Vec<u32>, Vec<u32>) {
    let spec = TaskSpec::plain("SST-2", Family::Classification, &["positive", "negative"]);
    let p = default_prompt(&spec, false).unwrap();
    let words = word_ids(tok, &p).unwrap();
    let mask = tok.mask_id().unwrap();
    let items = [
        item("the a is great", "positive"),
        item("a terrible , the", "negative"),
        item("great the a", "positive"),
        item("or terrible the is a", "negative"),
    ];
    let xs: Vec<Input> = items
        .iter()
        .map(|e| input(tok, mask, &p.template, e, 64).unwrap())
        .collect();
    let labels = items
        .iter()
        .map(|e| u32::from(e.gold.official[0] == "negative"))
        .collect();
    (xs, labels, words)
}

#[test]
fn every_weight_and_the_head_learn_the_label_words_in_every_family() {
    for (c, _) in families() {
        let family = c.model_type.clone();
        let dir = tempfile::tempdir().unwrap();
        write_mlm_dir(dir.path(), c, 5);
        let tok = Tokenizer::open(&dir.path().join("tokenizer.json")).unwrap();
        let (xs, labels, words) = sst_inputs(&tok);
        // The template's mask sits where "It was" ends, inside [CLS] ... [SEP].
        assert_eq!(xs[0].ids[xs[0].mask_at], tok.mask_id().unwrap());
        let w = load_mlm(dir.path(), &candle_core::Device::Cpu).unwrap();
        let before = w.values().unwrap();
        let head: Vec<Vec<f32>> = ["mlm.dense.weight", "mlm.norm.bias", "mlm.bias"]
            .iter()
            .map(|n| w.get(n).flatten_all().unwrap().to_vec1().unwrap())
            .collect();
        let r = Recipe {
            learning_rate: 1e-2,
            batch_size: 2,
            dropout: 0.0,
            steps: Some(60),
            ..Recipe::default()
        };
        let losses = train(&w, &xs, &labels, &words, &r, &mut |_, _| {}).unwrap();
        assert_eq!(losses.len(), 30, "{family}: 60 updates of 2 batches");
        assert!(
            losses.last().unwrap() < &(losses[0] * 0.5),
            "{family}: losses {losses:?}"
        );
        for ((name, _, a), (_, _, b)) in before.iter().zip(w.values().unwrap()) {
            if name.starts_with("qa_outputs") {
                continue;
            }
            assert!(a != &b, "{family}: {name} did not move");
        }
        for (n, was) in ["mlm.dense.weight", "mlm.norm.bias", "mlm.bias"]
            .iter()
            .zip(head)
        {
            let now: Vec<f32> = w.get(n).flatten_all().unwrap().to_vec1().unwrap();
            assert!(now != was, "{family}: {n} did not move");
        }
        // The shots are learned: each one's own label scores highest.
        let refs: Vec<&Input> = xs.iter().collect();
        let scores = label_logits(&w, &refs, &words, &mut Dropout::off())
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        for (row, &gold) in scores.iter().zip(&labels) {
            let best = if row[0] >= row[1] { 0 } else { 1 };
            assert_eq!(best, gold, "{family}: {scores:?}");
        }
    }
}

/// Loads a folder with `AutoModelForMaskedLM` and prints the logits of the given words at
/// each input's mask.
fn peer() -> String {
    common::hf_peer(
        "AutoModelForMaskedLM",
        r#"    for ids, at in zip(x["ids"], x["at"]):
        logits = model(input_ids=torch.tensor([ids])).logits[0, at]
        out.append([logits[w].item() for w in x["words"]])"#,
    )
}

#[test]
fn transformers_scores_the_label_words_as_candle_does() {
    let Some(python) = common::hf_python("transformers_scores_the_label_words_as_candle_does")
    else {
        return;
    };
    for (c, _) in families() {
        let family = c.model_type.clone();
        let dir = tempfile::tempdir().unwrap();
        write_mlm_dir(dir.path(), c, 9);
        let tok = Tokenizer::open(&dir.path().join("tokenizer.json")).unwrap();
        let (xs, _, words) = sst_inputs(&tok);
        let w = load_mlm(dir.path(), &candle_core::Device::Cpu).unwrap();
        let refs: Vec<&Input> = xs.iter().collect();
        let ours = label_logits(&w, &refs, &words, &mut Dropout::off())
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let batch = dir.path().join("batch.json");
        let ids: Vec<&Vec<u32>> = xs.iter().map(|x| &x.ids).collect();
        let at: Vec<usize> = xs.iter().map(|x| x.mask_at).collect();
        let json = serde_json::json!({"ids": ids, "at": at, "words": words});
        std::fs::write(&batch, json.to_string()).unwrap();
        let out = std::process::Command::new(&python)
            .args(["-c", &peer()])
            .arg(dir.path())
            .arg(&batch)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{family}: {err}");
        let theirs: Vec<Vec<f64>> = serde_json::from_slice(&out.stdout).unwrap();
        let worst = ours
            .iter()
            .flatten()
            .zip(theirs.iter().flatten())
            .fold(0f64, |m, (a, b)| m.max((f64::from(*a) - b).abs()));
        assert!(
            worst < 1e-4,
            "{family}: candle and transformers differ by {worst}"
        );
        eprintln!("{family}: label-word logits differ by at most {worst:.2e}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_run_is_stored_with_its_template_and_verbaliser_and_bad_ones_store_nothing() {
    let (dir, url, pool, qa_only) = demo_with_model("prompt", 4).await;
    let (roberta, _) = families().remove(1);
    let mlm = dir.path().join("tiny-roberta-mlm");
    write_mlm_dir(&mlm, roberta, 4);
    let m = mlm.to_str().unwrap();
    let group = ["--k", "2", "--split", "1", "--steps", "20"];
    let sst = ["prompt", "--weights", m, "--task", "demo-SST-2"];
    let (ok, text) = clues(&url, &[&sst[..], &group].concat());
    assert!(ok, "{text}");
    assert!(text.contains("20 updates"), "{text}");
    // The pair template on the inference task, with a verbaliser of our own.
    let nli = [
        "prompt",
        "--weights",
        m,
        "--task",
        "demo-MNLI",
        "--system",
        "PT nli",
    ];
    let words = [
        "--verbaliser",
        "entailment=Yes,neutral=Maybe,contradiction=No",
    ];
    let (ok, text) = clues(&url, &[&nli[..], &words, &group].concat());
    assert!(ok, "{text}");
    let runs: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT s.name, r.settings_json, r.provider FROM machine_runs r
         JOIN machine_systems s ON s.id = r.system_id WHERE r.status = 'done' ORDER BY s.name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0].0, "PT nli");
    assert!(
        runs[0]
            .1
            .contains(r#""template":"{premise} ? {mask} , {hypothesis}""#),
        "{}",
        runs[0].1
    );
    assert_eq!(runs[1].0, "tiny-roberta-mlm prompt-tuned");
    let settings: serde_json::Value = serde_json::from_str(&runs[1].1).unwrap();
    assert_eq!(settings["template"], "{text} It was {mask}.");
    assert_eq!(
        settings["verbaliser"],
        serde_json::json!([["positive", "great"], ["negative", "terrible"]])
    );
    assert_eq!(settings["recipe"]["steps"], 20);
    assert_eq!(settings["recipe"]["learning_rate"], 1e-5);
    assert_eq!(settings["model_type"], "roberta");
    assert!(
        runs[1].2.contains("prompt-based fine-tuning with candle"),
        "{}",
        runs[1].2
    );
    // Every answer is one of the task's labels, with its probability.
    let answers: Vec<(String, Option<f64>)> = sqlx::query_as(
        "SELECT p.answer_json, p.probability FROM machine_predictions p
         JOIN machine_runs r ON r.id = p.run_id JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = 'tiny-roberta-mlm prompt-tuned'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(!answers.is_empty());
    for (a, p) in &answers {
        assert!(a == r#"["positive"]"# || a == r#"["negative"]"#, "{a}");
        assert!(p.is_some_and(|p| (0.5..=1.0).contains(&p)), "{p:?}");
    }

    // Refused, each before a run is stored.
    let qa = qa_only.to_str().unwrap();
    let sst = ["prompt", "--weights", m, "--task", "demo-SST-2"];
    let with = |more: &[&'static str]| -> Vec<&str> { [&sst[..], more].concat() };
    for (args, says) in [
        (
            vec!["prompt", "--weights", qa, "--task", "demo-SST-2"],
            "has no masked-LM head",
        ),
        (
            vec!["prompt", "--weights", m, "--task", "demo-CoNLL2003"],
            "is not a label task",
        ),
        (
            with(&["--template", "{text} It was."]),
            "{mask} exactly once",
        ),
        (
            with(&["--verbaliser", "positive=good,negative=bad"]),
            "\"good\" for \"positive\" is not in the tokenizer's vocabulary",
        ),
        (with(&group), "already has a finished evaluation"),
        (with(&["--k", "3", "--split", "1"]), "no shot group k=3"),
    ] {
        let (ok, text) = clues(&url, &args);
        assert!(!ok && text.contains(says), "{args:?}: {text}");
    }
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored, 2, "a refused command stores nothing");
}
