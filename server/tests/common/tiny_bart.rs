//! A small BART with random weights (seeded) in the real file layout (`config.json`,
//! `model.safetensors`, a word-level `tokenizer.json` that frames a text as `<s> … </s>`),
//! over the words of the CrossFit demo, so CrossFit's learners run on it in seconds.

use super::tiny_bert::{random_tensor, word_tokenizer};
use candle_core::Tensor;
use learners::seq2seq::bart::Config;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// The special tokens, in BART's order: `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3.
const SPECIAL: [&str; 4] = ["<s>", "<pad>", "</s>", "<unk>"];

/// The demo's words (every whitespace-separated word of its CrossFit files).
fn demo_words() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/crossfit");
    let mut words = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "tsv") {
            let text = std::fs::read_to_string(path).unwrap();
            words.extend(text.split_whitespace().map(str::to_string));
        }
    }
    words.into_iter().collect()
}

/// The small config: `layers` encoder and decoder layers of width 8, two heads.
pub fn config(vocab: usize, layers: usize) -> Config {
    Config {
        vocab_size: vocab,
        d_model: 8,
        encoder_layers: layers,
        decoder_layers: layers,
        encoder_attention_heads: 2,
        decoder_attention_heads: 2,
        encoder_ffn_dim: 16,
        decoder_ffn_dim: 16,
        max_position_embeddings: 64,
        activation_function: "gelu".into(),
        scale_embedding: false,
        pad_token_id: 1,
        eos_token_id: 2,
        decoder_start_token_id: 2,
    }
}

/// Writes the folder; returns its config.
pub fn write_bart_dir(dir: &Path, layers: usize, seed: u64) -> Config {
    std::fs::create_dir_all(dir).unwrap();
    let mut words: Vec<String> = SPECIAL.iter().map(|s| s.to_string()).collect();
    words.extend(demo_words());
    let c = config(words.len(), layers);
    let mut rng = domain::rng::SplitMix64(seed);
    let tensors: HashMap<String, Tensor> = c
        .shapes()
        .into_iter()
        .map(|(name, shape)| {
            let t = random_tensor(&name, &shape, &mut rng);
            (name, t)
        })
        .collect();
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let mut json = serde_json::to_value(&c).unwrap();
    json["model_type"] = "bart".into();
    json["architectures"] = serde_json::json!(["BartForConditionalGeneration"]);
    json["bos_token_id"] = 0.into();
    std::fs::write(dir.join("config.json"), json.to_string()).unwrap();
    let frame = serde_json::json!({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}, "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}});
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let tokenizer = word_tokenizer(&words, SPECIAL.len(), "<unk>", frame);
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    c
}
