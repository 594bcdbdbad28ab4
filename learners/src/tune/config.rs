//! The encoder families fine-tuning takes (BERT, RoBERTa / XLM-R, DeBERTa-v2/v3), read from a
//! Hugging Face `config.json`: what each one's weights are called and what this code can run.

use serde::{Deserialize, Deserializer, Serialize};

/// An encoder family, from `config.json`'s `model_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// BERT and its distillations (MiniLM): absolute positions from 0, two token types.
    Bert,
    /// RoBERTa and XLM-R: BERT's layers, positions counted from `pad_token_id + 1`.
    Roberta,
    /// DeBERTa-v2 and v3: disentangled attention over relative positions (log buckets).
    DebertaV2,
}

impl Family {
    /// The prefix of the encoder's weights in a `...ForQuestionAnswering` checkpoint.
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Bert => "bert",
            Family::Roberta => "roberta",
            Family::DebertaV2 => "deberta",
        }
    }

    /// The Hugging Face class a saved span model loads as.
    pub fn architecture(self) -> &'static str {
        match self {
            Family::Bert => "BertForQuestionAnswering",
            Family::Roberta => "RobertaForQuestionAnswering",
            Family::DebertaV2 => "DebertaV2ForQuestionAnswering",
        }
    }

    /// The names of the attention's query, key and value projections.
    pub fn attention(self) -> [&'static str; 3] {
        match self {
            Family::DebertaV2 => ["query_proj", "key_proj", "value_proj"],
            _ => ["query", "key", "value"],
        }
    }
}

/// The fields of a Hugging Face encoder `config.json` the encoder needs; the DeBERTa ones
/// take the defaults `transformers` gives a config without them.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Config {
    #[serde(default = "bert")]
    pub model_type: String,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default)]
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub hidden_act: String,
    #[serde(default)]
    pub pad_token_id: usize,
    #[serde(default)]
    pub relative_attention: bool,
    #[serde(default = "minus_one")]
    pub position_buckets: i64,
    #[serde(default = "minus_one")]
    pub max_relative_positions: i64,
    /// `["p2c", "c2p"]`; hub configs write it as one string, `"p2c|c2p"`.
    #[serde(default, deserialize_with = "bar_list")]
    pub pos_att_type: Vec<String>,
    #[serde(default)]
    pub share_att_key: bool,
    #[serde(default = "yes")]
    pub position_biased_input: bool,
    #[serde(default = "none")]
    pub norm_rel_ebd: String,
    #[serde(default)]
    pub conv_kernel_size: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_size: Option<usize>,
}

fn bert() -> String {
    "bert".into()
}
fn gelu() -> String {
    "gelu".into()
}
fn minus_one() -> i64 {
    -1
}
fn yes() -> bool {
    true
}
fn none() -> String {
    "none".into()
}

fn bar_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<Either>::deserialize(d)? {
        None => Vec::new(),
        Some(Either::One(s)) => s
            .split('|')
            .map(|x| x.trim().to_lowercase())
            .filter(|x| !x.is_empty())
            .collect(),
        Some(Either::Many(v)) => v,
    })
}

impl Default for Config {
    /// A small BERT (a 2-layer encoder of width 8): what tests start from.
    fn default() -> Self {
        Config {
            model_type: bert(),
            vocab_size: 24,
            hidden_size: 8,
            num_hidden_layers: 2,
            num_attention_heads: 2,
            intermediate_size: 16,
            max_position_embeddings: 32,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
            hidden_act: gelu(),
            pad_token_id: 0,
            relative_attention: false,
            position_buckets: -1,
            max_relative_positions: -1,
            pos_att_type: Vec::new(),
            share_att_key: false,
            position_biased_input: true,
            norm_rel_ebd: none(),
            conv_kernel_size: 0,
            embedding_size: None,
        }
    }
}

impl Config {
    /// The family, or why `model_type` is not one this code fine-tunes.
    pub fn family(&self) -> Result<Family, String> {
        match self.model_type.as_str() {
            "bert" => Ok(Family::Bert),
            "roberta" | "xlm-roberta" => Ok(Family::Roberta),
            "deberta-v2" => Ok(Family::DebertaV2),
            other => Err(format!(
                "model_type {other:?} is not one fine-tuning takes (bert, roberta, xlm-roberta, deberta-v2)"
            )),
        }
    }

    /// What this encoder cannot run, in words (empty when it can).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let family = match self.family() {
            Ok(f) => f,
            Err(e) => return vec![e],
        };
        if self.hidden_act != "gelu" {
            out.push(format!(
                "hidden_act {:?} is not supported (only \"gelu\", the erf form)",
                self.hidden_act
            ));
        }
        if self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            out.push(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if family == Family::DebertaV2 {
            out.extend(self.deberta_problems());
        } else if self.type_vocab_size == 0 {
            out.push("type_vocab_size is 0: BERT and RoBERTa need token types".into());
        }
        out
    }

    fn deberta_problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.relative_attention {
            out.push("DeBERTa without relative_attention is not supported".into());
        }
        if !self.share_att_key {
            out.push("DeBERTa without share_att_key (separate position projections, v2 before xlarge) is not supported".into());
        }
        if let Some(t) = self
            .pos_att_type
            .iter()
            .find(|t| !["c2p", "p2c"].contains(&t.as_str()))
        {
            out.push(format!(
                "pos_att_type {t:?} is not supported (c2p and p2c are)"
            ));
        }
        if self.conv_kernel_size > 0 {
            out.push("DeBERTa's convolution layer (conv_kernel_size > 0) is not supported".into());
        }
        if self.embedding_size.is_some_and(|e| e != self.hidden_size) {
            out.push("an embedding_size other than hidden_size is not supported".into());
        }
        out
    }

    /// The family of a config that passed `problems` (BERT otherwise).
    pub fn kind(&self) -> Family {
        self.family().unwrap_or(Family::Bert)
    }

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }

    /// The first position id: RoBERTa counts from `pad_token_id + 1`, the others from 0.
    pub fn position_offset(&self) -> usize {
        match self.kind() {
            Family::Roberta => self.pad_token_id + 1,
            _ => 0,
        }
    }

    /// Whether the input has absolute position embeddings (DeBERTa-v3 has none).
    pub fn absolute_positions(&self) -> bool {
        self.kind() != Family::DebertaV2 || self.position_biased_input
    }

    /// The longest input the position embeddings allow (relative positions: any; the
    /// buckets' table is cut at `max_position_embeddings`).
    pub fn max_len(&self) -> usize {
        self.max_position_embeddings - self.position_offset()
    }

    /// DeBERTa: the largest relative distance before log buckets (`max_relative_positions`,
    /// or `max_position_embeddings` when below 1).
    pub fn max_relative(&self) -> i64 {
        if self.max_relative_positions < 1 {
            self.max_position_embeddings as i64
        } else {
            self.max_relative_positions
        }
    }

    /// DeBERTa: the attention span, half the rows of `rel_embeddings`.
    pub fn att_span(&self) -> usize {
        if self.position_buckets > 0 {
            self.position_buckets as usize
        } else {
            self.max_relative() as usize
        }
    }

    /// DeBERTa: whether the relative embeddings are layer-normalised.
    pub fn norm_relative(&self) -> bool {
        self.norm_rel_ebd
            .split('|')
            .any(|x| x.trim().eq_ignore_ascii_case("layer_norm"))
    }

    pub fn c2p(&self) -> bool {
        self.pos_att_type.iter().any(|t| t == "c2p")
    }

    pub fn p2c(&self) -> bool {
        self.pos_att_type.iter().any(|t| t == "p2c")
    }

    /// The attention's scale: 1 / sqrt(head size x (1 + the number of position terms)).
    pub fn attention_scale(&self) -> f64 {
        let terms = if self.kind() == Family::DebertaV2 {
            1 + usize::from(self.c2p()) + usize::from(self.p2c())
        } else {
            1
        };
        1.0 / ((self.head_dim() * terms) as f64).sqrt()
    }

    /// Every weight's name and shape, in the Hugging Face naming of the family's encoder,
    /// then the span head (`qa_outputs`, as `...ForQuestionAnswering` names it).
    pub fn shapes(&self) -> Vec<(String, Vec<usize>)> {
        let (h, i) = (self.hidden_size, self.intermediate_size);
        let family = self.kind();
        let mut out = vec![(
            "embeddings.word_embeddings.weight".into(),
            vec![self.vocab_size, h],
        )];
        if self.absolute_positions() {
            out.push((
                "embeddings.position_embeddings.weight".into(),
                vec![self.max_position_embeddings, h],
            ));
        }
        if self.type_vocab_size > 0 {
            out.push((
                "embeddings.token_type_embeddings.weight".into(),
                vec![self.type_vocab_size, h],
            ));
        }
        out.push(("embeddings.LayerNorm.weight".into(), vec![h]));
        out.push(("embeddings.LayerNorm.bias".into(), vec![h]));
        let [q, k, v] = family.attention();
        for l in 0..self.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            for proj in [q, k, v] {
                out.push((format!("{p}.attention.self.{proj}.weight"), vec![h, h]));
                out.push((format!("{p}.attention.self.{proj}.bias"), vec![h]));
            }
            for (name, shape) in [
                ("attention.output.dense.weight", vec![h, h]),
                ("attention.output.dense.bias", vec![h]),
                ("attention.output.LayerNorm.weight", vec![h]),
                ("attention.output.LayerNorm.bias", vec![h]),
                ("intermediate.dense.weight", vec![i, h]),
                ("intermediate.dense.bias", vec![i]),
                ("output.dense.weight", vec![h, i]),
                ("output.dense.bias", vec![h]),
                ("output.LayerNorm.weight", vec![h]),
                ("output.LayerNorm.bias", vec![h]),
            ] {
                out.push((format!("{p}.{name}"), shape));
            }
        }
        if family == Family::DebertaV2 {
            out.push((
                "encoder.rel_embeddings.weight".into(),
                vec![2 * self.att_span(), h],
            ));
            if self.norm_relative() {
                out.push(("encoder.LayerNorm.weight".into(), vec![h]));
                out.push(("encoder.LayerNorm.bias".into(), vec![h]));
            }
        }
        out.push(("qa_outputs.weight".into(), vec![2, h]));
        out.push(("qa_outputs.bias".into(), vec![2]));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_configs_read_as_transformers_reads_them() {
        let c: Config = serde_json::from_str(
            r#"{"model_type": "deberta-v2", "vocab_size": 10, "hidden_size": 8,
                "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16,
                "max_position_embeddings": 512, "type_vocab_size": 0, "layer_norm_eps": 1e-7,
                "relative_attention": true, "position_buckets": 256, "norm_rel_ebd": "layer_norm",
                "share_att_key": true, "pos_att_type": "p2c|c2p", "position_biased_input": false}"#,
        )
        .unwrap();
        assert_eq!(c.problems(), Vec::<String>::new());
        assert_eq!(c.pos_att_type, ["p2c", "c2p"]);
        assert_eq!((c.att_span(), c.max_relative()), (256, 512));
        assert!(!c.absolute_positions() && c.norm_relative());
        assert!((c.attention_scale() - 1.0 / 12f64.sqrt()).abs() < 1e-12);
        let names: Vec<String> = c.shapes().into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"encoder.rel_embeddings.weight".to_string()));
        assert!(!names.iter().any(|n| n.contains("position_embeddings")));
        let roberta = Config {
            model_type: "xlm-roberta".into(),
            pad_token_id: 1,
            max_position_embeddings: 514,
            type_vocab_size: 1,
            ..Config::default()
        };
        assert_eq!(roberta.family(), Ok(Family::Roberta));
        assert_eq!((roberta.position_offset(), roberta.max_len()), (2, 512));
        let other = Config {
            model_type: "electra".into(),
            ..Config::default()
        };
        assert!(
            other.problems()[0].contains("electra"),
            "{:?}",
            other.problems()
        );
    }
}
