//! A learner command that cannot run is refused at the door, before its first row: a truncated
//! `model.safetensors`, a `vocab_size` that does not match the weights, a tokenizer of token
//! types the model does not have, a tokenizer with ids past the checkpoint's vocabulary
//! (prompts), and `--device cuda` where CUDA cannot be used (fine-tuning, prompts, CrossFit, the frozen
//! baseline and ONNX evaluations, queued or run) store no system,
//! no job and no run (`common::snapshot` of every table, before and after), so that the
//! corrected command starts clean.
use crate::common;

use common::clues;
use common::families::families;
use common::tiny_bert::write_mlm_dir;
use common::tiny_seq2seq::{write_seq2seq_dir, Kind};
use std::path::Path;

/// A copy of the checkpoint folder `from` at `to`, with `change` applied to it.
fn variant(from: &Path, to: &Path, change: impl FnOnce(&Path)) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["model.safetensors", "config.json", "tokenizer.json"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
    change(to);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_learner_that_cannot_run_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("door.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let before = common::snapshot(&pool).await;

    let mut configs = families().into_iter().map(|f| f.0);
    let (bert, roberta) = (configs.next().unwrap(), configs.next().unwrap());
    let good = dir.path().join("tiny-bert");
    write_mlm_dir(&good, bert, 4);
    // A RoBERTa (one token type) with a tokenizer that types the context 1, as BERT's does.
    let types = dir.path().join("types");
    write_mlm_dir(&types, roberta, 4);
    let truncated = dir.path().join("truncated");
    variant(&good, &truncated, |d| {
        let f = d.join("model.safetensors");
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
    });
    let vocab = dir.path().join("vocab");
    variant(&good, &vocab, |d| {
        let f = d.join("config.json");
        let mut c: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        c["vocab_size"] = (c["vocab_size"].as_u64().unwrap() + 7).into();
        std::fs::write(&f, c.to_string()).unwrap();
    });
    let group = ["--k", "2", "--split", "1"];
    let finetune = |w: &Path| -> Vec<String> {
        ["baseline", "--finetune", "--weights", w.to_str().unwrap()]
            .into_iter()
            .chain(["--task", "demo-SQuAD-v2"])
            .chain(group)
            .map(String::from)
            .collect()
    };
    let prompt = |w: &Path| -> Vec<String> {
        [
            "prompt",
            "--weights",
            w.to_str().unwrap(),
            "--task",
            "demo-SST-2",
        ]
        .into_iter()
        .chain(group)
        .chain(["--steps", "2"])
        .map(String::from)
        .collect()
    };
    // A masked-LM checkpoint whose tokenizer has 20 ids past config.json's vocab_size.
    let (roberta_mlm, _) = families().remove(1);
    let wide = dir.path().join("wide");
    common::tiny_bert::write_mlm_dir(&wide, roberta_mlm, 4);
    common::tiny_bert::widen_tokenizer(&wide, 20);
    let mut refused: Vec<(Vec<String>, &str)> = vec![
        (prompt(&wide), "config.json's vocab_size"),
        (finetune(&truncated), "model.safetensors"),
        (finetune(&vocab), "has shape"),
        (prompt(&truncated), "model.safetensors"),
        (prompt(&vocab), "has shape"),
        (
            finetune(&types),
            "token type 1 but config.json's type_vocab_size is 1",
        ),
    ];
    // CUDA asked for where it cannot run (a build without the cuda feature, or no GPU).
    let seq2seq = dir.path().join("tiny-bart");
    write_seq2seq_dir(&seq2seq, Kind::Bart, 1, 5);
    if !candle_core::utils::cuda_is_available() {
        let cuda = |mut a: Vec<String>| {
            a.extend(["--device", "cuda"].map(String::from));
            a
        };
        refused.push((cuda(finetune(&good)), "--features cuda"));
        refused.push((cuda(prompt(&good)), "--features cuda"));
        let learn = ["crossfit", "learn", "--model", seq2seq.to_str().unwrap()]
            .into_iter()
            .chain(["--task", "demo-xf-sentiment"])
            .map(String::from)
            .collect();
        refused.push((cuda(learn), "--features cuda"));
        // A worker whose every kind needs the device: refused before it connects.
        let worker = [
            "worker",
            "--exit-when-idle",
            "--kinds",
            "fine-tuning,crossfit",
        ]
        .map(String::from)
        .to_vec();
        refused.push((cuda(worker), "--features cuda"));
    } else {
        eprintln!("this build runs on CUDA: the --device cuda refusals are not tried");
    }
    // The frozen baseline and ONNX evaluations run on ONNX Runtime: CUDA asked for where its
    // CUDA provider cannot load is refused, queued or not.
    if learners::runtime::check_device(learners::runtime::Device::Cuda).is_err() {
        let says = "CUDA was asked for but";
        let line = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let task = ["--task", "demo-SQuAD-v2", "--device", "cuda"];
        refused.push((line(&[&["baseline"][..], &task].concat()), says));
        let queued = [&["baseline", "--all", "--queue-only", "--device", "cuda"][..]].concat();
        refused.push((line(&queued), says));
        let eval = [&["eval", "--model", good.to_str().unwrap()][..], &task].concat();
        refused.push((line(&eval), says));
    } else {
        eprintln!(
            "this ONNX Runtime runs on CUDA: the baseline's --device cuda refusals are not tried"
        );
    }
    for (args, says) in &refused {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, text) = clues(&url, &args);
        assert!(!ok && text.contains(says), "{args:?}: {text}");
        assert_eq!(
            common::snapshot(&pool).await,
            before,
            "{args:?} stored rows: {text}"
        );
    }

    // The corrected commands run, from a clean start.
    let (ok, text) = clues(
        &url,
        &finetune(&good)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(ok, "{text}");
    let done: Vec<String> = sqlx::query_scalar(
        "SELECT r.status FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = 'tiny-bert fine-tuned'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(done, ["done"]);
}
