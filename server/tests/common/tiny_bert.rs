//! A small BERT with random weights (seeded), in the real formats: candle tensors, or a model
//! folder as fine-tuning reads one (`model.safetensors`, `config.json`, a word-level
//! `tokenizer.json`), so the fine-tuning code runs on it in seconds.

use app::ssr::db::cli as db;
use candle_core::{Device, Tensor};
use learners::tune::encoder::{Config, Weights};
use std::collections::HashMap;
use std::path::Path;

/// Random weights (seeded); layer norms near 1 and 0 as trained ones are; no span head (the
/// loader makes one).
pub fn random_weights(c: &Config, seed: u64) -> Weights {
    let mut rng = domain::rng::SplitMix64(seed);
    let tensors: HashMap<String, Tensor> = c
        .shapes()
        .into_iter()
        .filter(|(n, _)| !n.starts_with("qa_outputs"))
        .map(|(name, shape)| {
            let n: usize = shape.iter().product();
            let base = if name.ends_with("LayerNorm.weight") {
                1.0
            } else {
                0.0
            };
            let v: Vec<f32> = (0..n).map(|_| (base + 0.3 * rng.normal()) as f32).collect();
            (name, Tensor::from_vec(v, shape, &Device::Cpu).unwrap())
        })
        .collect();
    Weights::from_tensors(c.clone(), tensors, seed, &Device::Cpu).unwrap()
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
    let c = Config {
        vocab_size: WORDS.len(),
        hidden_size: 8,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        intermediate_size: 16,
        max_position_embeddings: 512,
        ..c
    };
    random_weights(&c, seed).save_hf(dir).unwrap();
    let vocab: serde_json::Map<String, serde_json::Value> = WORDS
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), serde_json::json!(i)))
        .collect();
    let added: Vec<serde_json::Value> = WORDS[..4]
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}))
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": null, "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
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
