//! Small text-to-text models with random weights (seeded) in the real file layout
//! (`config.json`, `model.safetensors`, a word-level `tokenizer.json` that adds the family's
//! special tokens) over the words of the CrossFit demo, so CrossFit's learners run in seconds.

use super::tiny_bert::{random_tensor, word_tokenizer};
use candle_core::Tensor;
use learners::seq2seq::{bart, t5, Config};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// The families the tests build: BART, T5 as first published (ReLU, output tied to the
/// embeddings) and T5 v1.1 (gated GELU, its own output layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bart,
    T5,
    T5v11,
}

pub const KINDS: [Kind; 3] = [Kind::Bart, Kind::T5, Kind::T5v11];

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

/// The family's special tokens in its order (BART: `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3;
/// T5: `<pad>` 0, `</s>` 1, `<unk>` 2), and its config at the tests' size.
fn shape_of(kind: Kind, vocab: usize, layers: usize) -> (&'static [&'static str], Config) {
    match kind {
        Kind::Bart => (
            &["<s>", "<pad>", "</s>", "<unk>"],
            Config::Bart(bart::Config {
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
            }),
        ),
        Kind::T5 | Kind::T5v11 => (
            &["<pad>", "</s>", "<unk>"],
            Config::T5(t5::Config {
                vocab_size: vocab,
                d_model: 8,
                d_kv: 4,
                d_ff: 16,
                num_layers: layers,
                num_decoder_layers: Some(layers),
                num_heads: 2,
                relative_attention_num_buckets: 8,
                relative_attention_max_distance: 20,
                layer_norm_epsilon: 1e-6,
                feed_forward_proj: if kind == Kind::T5 {
                    "relu"
                } else {
                    "gated-gelu"
                }
                .into(),
                tie_word_embeddings: kind == Kind::T5,
                pad_token_id: 0,
                eos_token_id: 1,
                decoder_start_token_id: 0,
            }),
        ),
    }
}

/// Writes the folder; returns its config.
pub fn write_seq2seq_dir(dir: &Path, kind: Kind, layers: usize, seed: u64) -> Config {
    std::fs::create_dir_all(dir).unwrap();
    let demo = demo_words();
    let (special, _) = shape_of(kind, 0, layers);
    let words: Vec<&str> = special
        .iter()
        .copied()
        .chain(demo.iter().map(String::as_str))
        .collect();
    let (_, c) = shape_of(kind, words.len(), layers);
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
    let (mut json, class, model_type) = match &c {
        Config::Bart(b) => (
            serde_json::to_value(b).unwrap(),
            "BartForConditionalGeneration",
            "bart",
        ),
        Config::T5(t) => (
            serde_json::to_value(t).unwrap(),
            "T5ForConditionalGeneration",
            "t5",
        ),
    };
    json["model_type"] = model_type.into();
    json["architectures"] = serde_json::json!([class]);
    std::fs::write(dir.join("config.json"), json.to_string()).unwrap();
    // The family's frame of one text: BART `<s> A </s>`, T5 `A </s>`.
    let token = |w: &str| serde_json::json!({"SpecialToken": {"id": w, "type_id": 0}});
    let text = serde_json::json!({"Sequence": {"id": "A", "type_id": 0}});
    let single = if kind == Kind::Bart {
        vec![token("<s>"), text, token("</s>")]
    } else {
        vec![text, token("</s>")]
    };
    let tokens: serde_json::Map<String, serde_json::Value> = special
        .iter()
        .enumerate()
        .filter(|(_, w)| ["<s>", "</s>"].contains(w))
        .map(|(i, w)| {
            (
                w.to_string(),
                serde_json::json!({"id": w, "ids": [i], "tokens": [w]}),
            )
        })
        .collect();
    let frame = serde_json::json!({"type": "TemplateProcessing", "single": single,
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}],
        "special_tokens": tokens});
    let tokenizer = word_tokenizer(&words, special.len(), "<unk>", frame);
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    c
}

/// Training pairs of (input, output) texts: inputs cut at 64 tokens, outputs at 16.
pub fn pairs(
    tok: &learners::seq2seq::text::Text,
    items: &[(&str, &str)],
) -> Vec<learners::seq2seq::train::Pair> {
    items
        .iter()
        .map(|(i, o)| learners::seq2seq::train::Pair {
            src: tok.ids(i, 64).unwrap(),
            tgt: tok.ids(o, 16).unwrap(),
        })
        .collect()
}
