//! The encoder families against Hugging Face `transformers`: a random checkpoint of each
//! family, saved as fine-tuning saves one, gives `transformers` the start and end logits candle
//! gives (where `.ci/setup --bench` made the Python that has it); and refusals in words.

use crate::common;

use common::clues;
use common::families::{families, some_features};
use common::tiny_bert::random_weights;
use learners::features::Feature;
use learners::tune::encoder::Config;
use learners::tune::train;

/// Loads a folder with `AutoModelForQuestionAnswering` and prints its logits on a padded batch.
fn peer() -> String {
    common::hf_peer(
        "AutoModelForQuestionAnswering",
        r#"    kw = {"input_ids": torch.tensor(x["ids"]), "attention_mask": torch.tensor(x["mask"])}
    if x["types"] is not None:
        kw["token_type_ids"] = torch.tensor(x["types"])
    o = model(**kw)
    out = {"start": o.start_logits.tolist(), "end": o.end_logits.tolist()}"#,
    )
}

/// The features as one batch padded with the family's pad token.
fn batch(c: &Config, fs: &[Feature]) -> serde_json::Value {
    let len = fs.iter().map(|f| f.len()).max().unwrap_or(0);
    let pad = |v: &[i64], with: i64| {
        let mut v = v.to_vec();
        v.resize(len, with);
        v
    };
    let ids: Vec<Vec<i64>> = fs
        .iter()
        .map(|f| pad(&f.ids, c.pad_token_id as i64))
        .collect();
    let types: Vec<Vec<i64>> = fs.iter().map(|f| pad(&f.type_ids, 0)).collect();
    let mask: Vec<Vec<i64>> = fs.iter().map(|f| pad(&vec![1; f.len()], 0)).collect();
    serde_json::json!({
        "ids": ids,
        "mask": mask,
        "types": (c.type_vocab_size > 0).then_some(types),
    })
}

#[test]
fn transformers_gives_the_logits_candle_gives_for_every_family() {
    let Some(python) = common::hf_python("transformers_gives_the_logits_candle_gives") else {
        return;
    };
    for (c, frame) in families() {
        let family = c.model_type.clone();
        let w = random_weights(&c, 21);
        let dir = tempfile::tempdir().unwrap();
        w.save_hf(dir.path()).unwrap();
        let fs = some_features(&frame);
        let input = dir.path().join("batch.json");
        std::fs::write(&input, batch(&c, &fs).to_string()).unwrap();
        let out = std::process::Command::new(&python)
            .args(["-c", &peer()])
            .arg(dir.path())
            .arg(&input)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{family}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let ours = train::logits(&w, &fs, fs.len()).unwrap();
        let mut worst = 0f64;
        for (i, (s, e)) in ours.iter().enumerate() {
            for (key, mine) in [("start", s), ("end", e)] {
                for (p, v) in mine.iter().enumerate() {
                    let t = theirs[key][i][p].as_f64().unwrap();
                    worst = worst.max((t - f64::from(*v)).abs());
                }
            }
        }
        assert!(
            worst < 1e-4,
            "{family}: candle and transformers differ by {worst}"
        );
        eprintln!("{family}: candle and transformers differ by at most {worst:.2e}");
    }
}

#[test]
fn checkpoints_this_code_cannot_run_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let write = |config: serde_json::Value| {
        std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
        std::fs::write(dir.path().join("model.safetensors"), b"").unwrap();
        match learners::tune::load(dir.path(), 0) {
            Ok(_) => panic!("{config} was accepted"),
            Err(e) => e.to_string(),
        }
    };
    let base = serde_json::to_value(Config::default()).unwrap();
    let with = |k: &str, v: serde_json::Value| {
        let mut c = base.clone();
        c[k] = v;
        c
    };
    let e = write(with("model_type", "electra".into()));
    assert!(
        e.contains("\"electra\" is not one fine-tuning takes"),
        "{e}"
    );
    let mut v2 = with("model_type", "deberta-v2".into());
    v2["relative_attention"] = true.into();
    v2["pos_att_type"] = "c2p|p2c".into();
    let e = write(v2.clone());
    assert!(e.contains("without share_att_key"), "{e}");
    v2["share_att_key"] = true.into();
    v2["conv_kernel_size"] = 3.into();
    let e = write(v2);
    assert!(e.contains("convolution layer"), "{e}");
    let e = write(with("hidden_act", "relu".into()));
    assert!(e.contains("hidden_act \"relu\""), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deberta_folder_is_fine_tuned_exported_and_stored_under_its_own_name() {
    let (dir, url, pool, _) = common::tiny_bert::demo_with_model("deberta", 6).await;
    let (v3, _) = families().remove(2);
    assert_eq!(v3.model_type, "deberta-v2");
    let weights = dir.path().join("tiny-deberta");
    common::tiny_bert::write_model_dir_of(&weights, v3, 6);
    let export = dir.path().join("models");
    let w = weights.to_str().unwrap();
    let group = ["--task", "demo-SST-2", "--k", "2", "--split", "1"];
    let tune = ["baseline", "--finetune", "--weights", w];
    let to = ["--export", export.to_str().unwrap()];
    let (ok, text) = clues(&url, &[&tune[..], &group, &to].concat());
    assert!(ok, "{text}");
    let (provider, settings): (String, String) = sqlx::query_as(
        "SELECT r.provider, r.settings_json FROM machine_runs r
         JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = 'tiny-deberta fine-tuned' AND r.status = 'done'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(
        provider.contains("answers 2 of 2 shots as candle does"),
        "{provider}"
    );
    assert!(
        settings.contains(r#""model_type":"deberta-v2""#),
        "{settings}"
    );
    let out = export.join("demo-SST-2-finetuned-k2-s1");
    let config = std::fs::read_to_string(out.join("config.json")).unwrap();
    assert!(config.contains("DebertaV2ForQuestionAnswering"), "{config}");
    // DeBERTa-v3 has no token types: the exported graph takes none.
    let onnx = std::fs::read(out.join("model.onnx")).unwrap();
    assert!(!onnx.windows(14).any(|x| x == b"token_type_ids"));

    // A second system name on the same group; the first is kept.
    let again = ["--system", "DeBERTa again"];
    let (ok, text) = clues(&url, &[&tune[..], &again, &group].concat());
    assert!(ok, "{text}");
    let systems: Vec<String> = sqlx::query_scalar(
        "SELECT s.name FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE r.status = 'done' ORDER BY s.name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(systems, ["DeBERTa again", "tiny-deberta fine-tuned"]);

    // Refusals: a folder without a tokenizer, weights without --finetune, an empty name.
    let bare = dir.path().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::copy(weights.join("config.json"), bare.join("config.json")).unwrap();
    std::fs::copy(
        weights.join("model.safetensors"),
        bare.join("model.safetensors"),
    )
    .unwrap();
    let b = bare.to_str().unwrap();
    let (ok, text) = clues(
        &url,
        &[&["baseline", "--finetune", "--weights", b][..], &group].concat(),
    );
    assert!(!ok && text.contains("has no tokenizer.json"), "{text}");
    let (ok, text) = clues(&url, &[&["baseline", "--weights", w][..], &group].concat());
    assert!(!ok && text.contains("--finetune"), "{text}");
    let (ok, text) = clues(&url, &[&tune[..], &["--system", " "], &group].concat());
    assert!(!ok && text.contains("--system must not be empty"), "{text}");
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM machine_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 2, "a refused command stores nothing");
}
