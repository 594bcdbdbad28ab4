//! BART (CrossFit's BART-Base and BART-Large) in candle for fine-tuning: learned positions from
//! 2, post-norm layers, GELU, the output tied to the shared embeddings plus `final_logits_bias`.

use super::{attention, Decoder, Kv, Named};
use crate::tune::ops::{self, layer_norm, linear};
use crate::tune::Dropout;
use candle_core::{Result, Tensor};
use serde::{Deserialize, Serialize};

/// The fields of a Hugging Face `BartConfig` the model needs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Config {
    pub vocab_size: usize,
    pub d_model: usize,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub encoder_attention_heads: usize,
    pub decoder_attention_heads: usize,
    pub encoder_ffn_dim: usize,
    pub decoder_ffn_dim: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "gelu")]
    pub activation_function: String,
    #[serde(default)]
    pub scale_embedding: bool,
    #[serde(default = "one")]
    pub pad_token_id: u32,
    #[serde(default = "two")]
    pub eos_token_id: u32,
    #[serde(default = "two")]
    pub decoder_start_token_id: u32,
}

fn gelu() -> String {
    "gelu".into()
}
fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}

/// BART's learned positions start at row 2 (fairseq's padding offset).
const OFFSET: usize = 2;
/// `nn.LayerNorm`'s default.
const EPS: f64 = 1e-5;

impl Config {
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.activation_function != "gelu" {
            out.push(format!(
                "activation_function {:?} is not supported (only \"gelu\")",
                self.activation_function
            ));
        }
        for heads in [self.encoder_attention_heads, self.decoder_attention_heads] {
            if heads == 0 || !self.d_model.is_multiple_of(heads) {
                out.push(format!(
                    "d_model {} is not a multiple of {heads} heads",
                    self.d_model
                ));
            }
        }
        out
    }

    /// Every weight's name and shape, as `BartForConditionalGeneration` saves them (the output
    /// layer is the shared embeddings).
    pub fn shapes(&self) -> Vec<(String, Vec<usize>)> {
        let d = self.d_model;
        let mut out = vec![
            ("model.shared.weight".to_string(), vec![self.vocab_size, d]),
            ("final_logits_bias".to_string(), vec![1, self.vocab_size]),
        ];
        let attn = |p: &str, out: &mut Vec<(String, Vec<usize>)>| {
            for proj in ["q_proj", "k_proj", "v_proj", "out_proj"] {
                out.push((format!("{p}.{proj}.weight"), vec![d, d]));
                out.push((format!("{p}.{proj}.bias"), vec![d]));
            }
            out.push((format!("{p}_layer_norm.weight"), vec![d]));
            out.push((format!("{p}_layer_norm.bias"), vec![d]));
        };
        for (side, layers, ffn) in [
            ("encoder", self.encoder_layers, self.encoder_ffn_dim),
            ("decoder", self.decoder_layers, self.decoder_ffn_dim),
        ] {
            let p = format!("model.{side}");
            out.push((
                format!("{p}.embed_positions.weight"),
                vec![self.max_position_embeddings + OFFSET, d],
            ));
            out.push((format!("{p}.layernorm_embedding.weight"), vec![d]));
            out.push((format!("{p}.layernorm_embedding.bias"), vec![d]));
            for l in 0..layers {
                let q = format!("{p}.layers.{l}");
                attn(&format!("{q}.self_attn"), &mut out);
                if side == "decoder" {
                    attn(&format!("{q}.encoder_attn"), &mut out);
                }
                out.push((format!("{q}.fc1.weight"), vec![ffn, d]));
                out.push((format!("{q}.fc1.bias"), vec![ffn]));
                out.push((format!("{q}.fc2.weight"), vec![d, ffn]));
                out.push((format!("{q}.fc2.bias"), vec![d]));
                out.push((format!("{q}.final_layer_norm.weight"), vec![d]));
                out.push((format!("{q}.final_layer_norm.bias"), vec![d]));
            }
        }
        out
    }
}

/// A BART's weights and its config.
pub struct Bart<'a> {
    pub c: &'a Config,
    pub w: &'a Named,
}

impl Bart<'_> {
    fn norm(&self, x: &Tensor, p: &str) -> Result<Tensor> {
        layer_norm(
            x,
            &self.w.get(&format!("{p}.weight")),
            &self.w.get(&format!("{p}.bias")),
            EPS,
        )
    }

    fn lin(&self, x: &Tensor, p: &str) -> Result<Tensor> {
        linear(
            x,
            &self.w.get(&format!("{p}.weight")),
            &self.w.get(&format!("{p}.bias")),
        )
    }

    /// Token and position embeddings of one side, normalised; the tokens stand at positions
    /// from `from`.
    fn embed(&self, ids: &Tensor, side: &str, from: usize, d: &mut Dropout) -> Result<Tensor> {
        let (b, s) = ids.dims2()?;
        if from + s > self.c.max_position_embeddings {
            candle_core::bail!(
                "an input of {s} tokens is longer than BART's {} positions",
                self.c.max_position_embeddings
            );
        }
        let scale = if self.c.scale_embedding {
            (self.c.d_model as f64).sqrt()
        } else {
            1.0
        };
        let table = self.w.get("model.shared.weight");
        let tokens = (ops::embedding(&table, &ids.flatten_all()?)?.reshape((b, s, ()))? * scale)?;
        let p = format!("model.{side}");
        let pos = self
            .w
            .get(&format!("{p}.embed_positions.weight"))
            .narrow(0, OFFSET + from, s)?;
        let x = tokens.broadcast_add(&pos.unsqueeze(0)?)?;
        d.apply(&self.norm(&x, &format!("{p}.layernorm_embedding"))?)
    }

    /// The keys and values of attention `p` over `kv`.
    fn kv(&self, kv: &Tensor, p: &str) -> Result<Kv> {
        Ok((
            self.lin(kv, &format!("{p}.k_proj"))?,
            self.lin(kv, &format!("{p}.v_proj"))?,
        ))
    }

    /// Attention of `p` (`...self_attn` or `...encoder_attn`) from `x` over its keys and
    /// values, with its residual and post-norm.
    fn block(
        &self,
        x: &Tensor,
        (k, v): Kv,
        p: &str,
        bias: &Tensor,
        heads: usize,
        d: &mut Dropout,
    ) -> Result<Tensor> {
        let q = self.lin(x, &format!("{p}.q_proj"))?;
        let scale = 1.0 / ((self.c.d_model / heads) as f64).sqrt();
        let ctx = attention(&(q * scale)?, &k, &v, bias, heads, d)?;
        let out = d.apply(&self.lin(&ctx, &format!("{p}.out_proj"))?)?;
        self.norm(&(out + x)?, &format!("{p}_layer_norm"))
    }

    fn feed_forward(&self, x: &Tensor, q: &str, d: &mut Dropout) -> Result<Tensor> {
        let h = ops::gelu(&self.lin(x, &format!("{q}.fc1"))?)?;
        let out = d.apply(&self.lin(&h, &format!("{q}.fc2"))?)?;
        self.norm(&(out + x)?, &format!("{q}.final_layer_norm"))
    }

    /// The encoder's states `[b, s, d]`; `pad` is the additive padding bias `[b, 1, 1, s]`.
    pub fn encode(&self, src: &Tensor, pad: &Tensor, d: &mut Dropout) -> Result<Tensor> {
        let mut x = self.embed(src, "encoder", 0, d)?;
        for l in 0..self.c.encoder_layers {
            let q = format!("model.encoder.layers.{l}");
            let p = format!("{q}.self_attn");
            let heads = self.c.encoder_attention_heads;
            x = self.block(&x, self.kv(&x, &p)?, &p, pad, heads, d)?;
            x = self.feed_forward(&x, &q, d)?;
        }
        Ok(x)
    }

    /// Next-token logits `[b, t, vocab]` of the decoder inputs `tgt` over the encoder's states;
    /// `causal` is the decoder's additive mask `[1, 1, t, t]`.
    pub fn decode(&self, input: &Decoder, d: &mut Dropout) -> Result<Tensor> {
        let (enc, pad, causal) = (input.enc, input.pad, input.causal);
        let heads = self.c.decoder_attention_heads;
        let mut x = self.embed(input.tgt, "decoder", input.past()?, d)?;
        for l in 0..self.c.decoder_layers {
            let q = format!("model.decoder.layers.{l}");
            let (own, cross) = (format!("{q}.self_attn"), format!("{q}.encoder_attn"));
            let kv = input.own(l, self.kv(&x, &own)?)?;
            x = self.block(&x, kv, &own, causal, heads, d)?;
            let kv = input.cross(l, || self.kv(enc, &cross))?;
            x = self.block(&x, kv, &cross, pad, heads, d)?;
            x = self.feed_forward(&x, &q, d)?;
        }
        let (b, t, dm) = x.dims3()?;
        x.reshape((b * t, dm))?
            .matmul(&self.w.get("model.shared.weight").t()?)?
            .broadcast_add(&self.w.get("final_logits_bias"))?
            .reshape((b, t, ()))
    }
}
