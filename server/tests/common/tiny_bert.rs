//! A small BERT with random weights (seeded), in the real formats: candle tensors, or a model
//! folder as fine-tuning reads one (`model.safetensors`, `config.json`, a word-level
//! `tokenizer.json`), so the fine-tuning code runs on it in seconds.

use candle_core::{Device, Tensor};
use learners::tune::encoder::{Config, Weights};
use std::collections::HashMap;
use std::path::Path;
use store::db::cli as db;

/// Random weights (seeded); layer norms near 1 and 0 as trained ones are; no span head (the
/// loader makes one).
pub fn random_weights(c: &Config, seed: u64) -> Weights {
    let mut rng = domain::rng::SplitMix64(seed);
    let tensors: HashMap<String, Tensor> = c
        .shapes()
        .into_iter()
        .filter(|(n, _)| !n.starts_with("qa_outputs"))
        .map(|(name, shape)| {
            let t = random_tensor(&name, &shape, &mut rng);
            (name, t)
        })
        .collect();
    Weights::from_tensors(c.clone(), tensors, seed, &Device::Cpu).unwrap()
}

/// A random tensor (normal, std 0.3) for a weight: layer norms' scales around 1, the rest
/// around 0, as trained ones are.
pub fn random_tensor(name: &str, shape: &[usize], rng: &mut domain::rng::SplitMix64) -> Tensor {
    let n: usize = shape.iter().product();
    let lower = name.to_lowercase();
    let base = if lower.ends_with("norm.weight") || lower.ends_with("layernorm_embedding.weight") {
        1.0
    } else {
        0.0
    };
    let v: Vec<f32> = (0..n).map(|_| (base + 0.3 * rng.normal()) as f32).collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

/// A word-level `tokenizer.json` over `words` split at white space, the first `specials` of
/// them special tokens, unknown words as `unk`, with the given post-processor.
pub fn word_tokenizer(
    words: &[&str],
    specials: usize,
    unk: &str,
    post_processor: serde_json::Value,
) -> serde_json::Value {
    let vocab: serde_json::Map<String, serde_json::Value> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), serde_json::json!(i)))
        .collect();
    let added: Vec<serde_json::Value> = words[..specials]
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}))
        .collect();
    serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": null, "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": post_processor, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": unk}
    })
}

/// The special tokens, then these words; every other word is `[UNK]`.
const WORDS: [&str; 12] = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "positive", "negative", "or", "?", "the", "a", "is", ",",
];

/// Writes a folder to fine-tune: a 1-layer BERT of width 8 over a word-level vocabulary.
pub fn write_model_dir(dir: &Path, seed: u64) {
    write_model_dir_of(dir, Config::default(), seed);
}

/// The same with the family and options of `c` (its sizes and vocabulary are replaced).
pub fn write_model_dir_of(dir: &Path, c: Config, seed: u64) {
    std::fs::create_dir_all(dir).unwrap();
    random_weights(&small(c, WORDS.len()), seed)
        .save_hf(dir)
        .unwrap();
    write_tokenizer(dir, &WORDS);
}

/// `c` at the tests' size: one layer of width 8, two heads, `vocab` words.
fn small(c: Config, vocab: usize) -> Config {
    Config {
        vocab_size: vocab,
        hidden_size: 8,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        intermediate_size: 16,
        max_position_embeddings: 512,
        ..c
    }
}

/// A word-level `tokenizer.json` over `words` (the first four special), split at white space.
fn write_tokenizer(dir: &Path, words: &[&str]) {
    let json = word_tokenizer(words, 4, "[UNK]", serde_json::Value::Null);
    std::fs::write(dir.join("tokenizer.json"), json.to_string()).unwrap();
}

/// Gives the tokenizer of the folder `dir` `n` more words than its `config.json` has
/// embeddings for (the ids past `vocab_size` a mismatched checkpoint would look up).
pub fn widen_tokenizer(dir: &Path, n: usize) {
    let file = dir.join("tokenizer.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let vocab = json["model"]["vocab"].as_object_mut().unwrap();
    let first = vocab.len();
    for i in 0..n {
        vocab.insert(format!("extra{i}"), serde_json::json!(first + i));
    }
    std::fs::write(&file, json.to_string()).unwrap();
}

/// Words a prompt needs beside `WORDS`: the mask, LM-BFF's label words and template words.
const PROMPT_WORDS: [&str; 9] = [
    "[MASK]", "great", "terrible", "It", "was", ".", "Yes", "No", "Maybe",
];

/// The masked-LM head's weights under the names transformers' `...ForMaskedLM` saves them
/// with (DeBERTa: its default, "legacy", class), shaped for a hidden size `h` and `v` words.
pub fn mlm_head(family: &str, h: usize, v: usize) -> Vec<(String, Vec<usize>)> {
    let names: [&str; 5] = match family {
        "roberta" | "xlm-roberta" => [
            "lm_head.dense.weight",
            "lm_head.dense.bias",
            "lm_head.layer_norm.weight",
            "lm_head.layer_norm.bias",
            "lm_head.bias",
        ],
        _ => [
            "cls.predictions.transform.dense.weight",
            "cls.predictions.transform.dense.bias",
            "cls.predictions.transform.LayerNorm.weight",
            "cls.predictions.transform.LayerNorm.bias",
            "cls.predictions.bias",
        ],
    };
    names
        .iter()
        .zip([vec![h, h], vec![h], vec![h], vec![h], vec![v]])
        .map(|(n, s)| (n.to_string(), s))
        .collect()
}

/// Writes a folder for prompt-based fine-tuning: a small encoder of `c`'s family with a
/// random masked-LM head, saved as `...ForMaskedLM` saves one, and a vocabulary with the
/// prompt's words.
pub fn write_mlm_dir(dir: &Path, c: Config, seed: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let words: Vec<&str> = WORDS.iter().chain(&PROMPT_WORDS).copied().collect();
    let c = small(c, words.len());
    let w = random_weights(&c, seed);
    let prefix = c.kind().prefix();
    let mut tensors: HashMap<String, Tensor> = w
        .values()
        .unwrap()
        .into_iter()
        .filter(|(n, _, _)| !n.starts_with("qa_outputs"))
        .map(|(n, s, v)| {
            (
                format!("{prefix}.{n}"),
                Tensor::from_vec(v, s, &Device::Cpu).unwrap(),
            )
        })
        .collect();
    let mut rng = domain::rng::SplitMix64(seed ^ 77);
    for (name, shape) in mlm_head(&c.model_type, c.hidden_size, c.vocab_size) {
        let t = random_tensor(&name, &shape, &mut rng);
        tensors.insert(name, t);
    }
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let arch = c
        .kind()
        .architecture()
        .replace("QuestionAnswering", "MaskedLM");
    let mut config = serde_json::to_value(&c).unwrap();
    config["architectures"] = serde_json::json!([arch]);
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    write_tokenizer(dir, &words);
}

/// A database with the demo tasks and a small BERT folder to fine-tune, in a new temporary
/// directory (kept alive by the first value): (directory, database URL, pool, model folder).
pub async fn demo_with_model(
    name: &str,
    seed: u64,
) -> (tempfile::TempDir, String, sqlx::AnyPool, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let url = super::db_url(&dir.path().join(format!("{name}.db")));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let model = dir.path().join("tiny-bert");
    write_model_dir(&model, seed);
    (dir, url, pool, model)
}

/// A model folder to fine-tune that is wide and deep enough (`hidden` wide, `layers` deep) for
/// a shot group's training to last a while, for tests that stop a worker in the middle of it.
pub fn write_wider_model_dir(dir: &Path, hidden: usize, layers: usize, seed: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let c = Config {
        hidden_size: hidden,
        num_hidden_layers: layers,
        num_attention_heads: 4,
        intermediate_size: 4 * hidden,
        ..small(Config::default(), WORDS.len())
    };
    random_weights(&c, seed).save_hf(dir).unwrap();
    write_tokenizer(dir, &WORDS);
}
