//! T5 (the original and v1.1, CrossFit's appendix) in candle for fine-tuning: pre-norm layers
//! with RMS norm, relative position buckets shared by a stack's layers, no attention scaling.

use super::{attention, Decoder, Kv, Named};
use crate::tune::{ops, Dropout};
use candle_core::{Result, Tensor, D};
use serde::{Deserialize, Serialize};

/// The fields of a Hugging Face `T5Config` the model needs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Config {
    pub vocab_size: usize,
    pub d_model: usize,
    pub d_kv: usize,
    pub d_ff: usize,
    pub num_layers: usize,
    #[serde(default)]
    pub num_decoder_layers: Option<usize>,
    pub num_heads: usize,
    #[serde(default = "buckets")]
    pub relative_attention_num_buckets: usize,
    #[serde(default = "distance")]
    pub relative_attention_max_distance: usize,
    #[serde(default = "eps")]
    pub layer_norm_epsilon: f64,
    #[serde(default = "relu")]
    pub feed_forward_proj: String,
    /// The original T5 ties the output layer to the embeddings and scales the decoder's
    /// output by d_model^-0.5; v1.1 has its own `lm_head` and no scaling.
    #[serde(default = "yes")]
    pub tie_word_embeddings: bool,
    #[serde(default)]
    pub pad_token_id: u32,
    #[serde(default = "one")]
    pub eos_token_id: u32,
    #[serde(default)]
    pub decoder_start_token_id: u32,
}

fn buckets() -> usize {
    32
}
fn distance() -> usize {
    128
}
fn eps() -> f64 {
    1e-6
}
fn relu() -> String {
    "relu".into()
}
fn yes() -> bool {
    true
}
fn one() -> u32 {
    1
}

impl Config {
    pub fn problems(&self) -> Vec<String> {
        match self.feed_forward_proj.as_str() {
            "relu" | "gated-gelu" => Vec::new(),
            other => vec![format!(
                "feed_forward_proj {other:?} is not supported (\"relu\" or \"gated-gelu\")"
            )],
        }
    }

    fn decoder_layers(&self) -> usize {
        self.num_decoder_layers.unwrap_or(self.num_layers)
    }

    fn gated(&self) -> bool {
        self.feed_forward_proj == "gated-gelu"
    }

    /// Every weight's name and shape, as `T5ForConditionalGeneration` saves them.
    pub fn shapes(&self) -> Vec<(String, Vec<usize>)> {
        let (d, inner, ff) = (self.d_model, self.num_heads * self.d_kv, self.d_ff);
        let mut out = vec![("shared.weight".to_string(), vec![self.vocab_size, d])];
        let attn = |p: String, first: bool, out: &mut Vec<(String, Vec<usize>)>| {
            for m in ["q", "k", "v"] {
                out.push((format!("{p}.{m}.weight"), vec![inner, d]));
            }
            out.push((format!("{p}.o.weight"), vec![d, inner]));
            if first {
                out.push((
                    format!("{p}.relative_attention_bias.weight"),
                    vec![self.relative_attention_num_buckets, self.num_heads],
                ));
            }
        };
        for (side, layers) in [
            ("encoder", self.num_layers),
            ("decoder", self.decoder_layers()),
        ] {
            for l in 0..layers {
                let b = format!("{side}.block.{l}.layer");
                attn(format!("{b}.0.SelfAttention"), l == 0, &mut out);
                let mut n = 1;
                if side == "decoder" {
                    attn(format!("{b}.1.EncDecAttention"), false, &mut out);
                    n = 2;
                }
                for i in 0..n {
                    out.push((format!("{b}.{i}.layer_norm.weight"), vec![d]));
                }
                let wi: &[&str] = if self.gated() {
                    &["wi_0", "wi_1"]
                } else {
                    &["wi"]
                };
                for w in wi {
                    out.push((format!("{b}.{n}.DenseReluDense.{w}.weight"), vec![ff, d]));
                }
                out.push((format!("{b}.{n}.DenseReluDense.wo.weight"), vec![d, ff]));
                out.push((format!("{b}.{n}.layer_norm.weight"), vec![d]));
            }
            out.push((format!("{side}.final_layer_norm.weight"), vec![d]));
        }
        if !self.tie_word_embeddings {
            out.push(("lm_head.weight".into(), vec![self.vocab_size, d]));
        }
        out
    }
}

/// T5's bucket of a relative position (key minus query), as `transformers` computes it (f32).
pub fn bucket(relative: i64, bidirectional: bool, buckets: usize, max_distance: usize) -> usize {
    let (mut n, mut out) = (buckets as i64, 0i64);
    let r = if bidirectional {
        n /= 2;
        if relative > 0 {
            out += n;
        }
        relative.abs()
    } else {
        -relative.min(0)
    };
    let exact = n / 2;
    if r < exact {
        return (out + r) as usize;
    }
    let large = exact
        + ((r as f32 / exact as f32).ln() / (max_distance as f32 / exact as f32).ln()
            * (n - exact) as f32) as i64;
    (out + large.min(n - 1)) as usize
}

/// A T5's weights and its config.
pub struct T5<'a> {
    pub c: &'a Config,
    pub w: &'a Named,
}

/// `x W^T` over the last dimension of `x` (`[b, s, in]`).
fn project(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let (b, s, i) = x.dims3()?;
    x.reshape((b * s, i))?.matmul(&w.t()?)?.reshape((b, s, ()))
}

impl T5<'_> {
    fn norm(&self, x: &Tensor, name: &str) -> Result<Tensor> {
        let var = x.sqr()?.mean_keepdim(D::Minus1)?;
        x.broadcast_div(&(var + self.c.layer_norm_epsilon)?.sqrt()?)?
            .broadcast_mul(&self.w.get(name))
    }

    /// The relative position bias `[1, heads, q, k]` of a stack (`encoder` or `decoder`), the
    /// queries at positions from `from`, the keys from 0.
    fn position_bias(&self, side: &str, from: usize, q: usize, k: usize) -> Result<Tensor> {
        let ids: Vec<u32> = (0..q * k)
            .map(|n| {
                let rel = (n % k) as i64 - (from + n / k) as i64;
                bucket(
                    rel,
                    side == "encoder",
                    self.c.relative_attention_num_buckets,
                    self.c.relative_attention_max_distance,
                ) as u32
            })
            .collect();
        let table = self.w.get(&format!(
            "{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        ));
        let ids = Tensor::from_vec(ids, q * k, &self.w.device)?;
        ops::embedding(&table, &ids)?
            .reshape((q, k, self.c.num_heads))?
            .permute((2, 0, 1))?
            .unsqueeze(0)
    }

    /// The keys and values of attention block `p` over `kv`.
    fn kv(&self, kv: &Tensor, p: &str) -> Result<Kv> {
        let g = |m: &str| self.w.get(&format!("{p}.{m}.weight"));
        Ok((project(kv, &g("k"))?, project(kv, &g("v"))?))
    }

    /// Attention block `p` with its residual on `res`: the normalised input attends over the
    /// keys and values `kv` gives (from the normalised input, for self-attention).
    fn block(
        &self,
        res: &Tensor,
        kv: &dyn Fn(&Tensor) -> Result<Kv>,
        p: &str,
        norm: &str,
        bias: &Tensor,
        d: &mut Dropout,
    ) -> Result<Tensor> {
        let x = self.norm(res, norm)?;
        let (k, v) = kv(&x)?;
        let q = project(&x, &self.w.get(&format!("{p}.q.weight")))?;
        let ctx = attention(&q, &k, &v, bias, self.c.num_heads, d)?;
        res + d.apply(&project(&ctx, &self.w.get(&format!("{p}.o.weight")))?)?
    }

    fn feed_forward(&self, res: &Tensor, b: &str, d: &mut Dropout) -> Result<Tensor> {
        let x = self.norm(res, &format!("{b}.layer_norm.weight"))?;
        let w = |n: &str| self.w.get(&format!("{b}.DenseReluDense.{n}.weight"));
        let h = if self.c.gated() {
            (project(&x, &w("wi_0"))?.gelu()? * project(&x, &w("wi_1"))?)?
        } else {
            project(&x, &w("wi"))?.relu()?
        };
        let h = d.apply(&h)?;
        res + d.apply(&project(&h, &w("wo"))?)?
    }

    fn embed(&self, ids: &Tensor, d: &mut Dropout) -> Result<Tensor> {
        let (b, s) = ids.dims2()?;
        let e = ops::embedding(&self.w.get("shared.weight"), &ids.flatten_all()?)?;
        d.apply(&e.reshape((b, s, ()))?)
    }

    /// The encoder's states; `pad` is the additive padding bias `[b, 1, 1, s]`.
    pub fn encode(&self, src: &Tensor, pad: &Tensor, d: &mut Dropout) -> Result<Tensor> {
        let s = src.dim(1)?;
        let bias = self.position_bias("encoder", 0, s, s)?.broadcast_add(pad)?;
        let mut x = self.embed(src, d)?;
        for l in 0..self.c.num_layers {
            let b = format!("encoder.block.{l}.layer");
            let p = format!("{b}.0.SelfAttention");
            let own = |x: &Tensor| self.kv(x, &p);
            x = self.block(&x, &own, &p, &format!("{b}.0.layer_norm.weight"), &bias, d)?;
            x = self.feed_forward(&x, &format!("{b}.1"), d)?;
        }
        d.apply(&self.norm(&x, "encoder.final_layer_norm.weight")?)
    }

    /// Next-token logits `[b, t, vocab]`; `causal` is the decoder's mask `[1, 1, t, t]`.
    pub fn decode(&self, input: &Decoder, d: &mut Dropout) -> Result<Tensor> {
        let (t, past) = (input.tgt.dim(1)?, input.past()?);
        let bias = self
            .position_bias("decoder", past, t, past + t)?
            .broadcast_add(input.causal)?;
        let mut x = self.embed(input.tgt, d)?;
        for l in 0..self.c.decoder_layers() {
            let b = format!("decoder.block.{l}.layer");
            let n = |i: usize| format!("{b}.{i}.layer_norm.weight");
            let (own, cross) = (
                format!("{b}.0.SelfAttention"),
                format!("{b}.1.EncDecAttention"),
            );
            let own_kv = |x: &Tensor| input.own(l, self.kv(x, &own)?);
            x = self.block(&x, &own_kv, &own, &n(0), &bias, d)?;
            let cross_kv = |_: &Tensor| input.cross(l, || self.kv(input.enc, &cross));
            x = self.block(&x, &cross_kv, &cross, &n(1), input.pad, d)?;
            x = self.feed_forward(&x, &format!("{b}.2"), d)?;
        }
        let mut x = d.apply(&self.norm(&x, "decoder.final_layer_norm.weight")?)?;
        let head = if self.c.tie_word_embeddings {
            x = (x * (self.c.d_model as f64).powf(-0.5))?;
            self.w.get("shared.weight")
        } else {
            self.w.get("lm_head.weight")
        };
        project(&x, &head)
    }
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn buckets_match_transformers() {
        // transformers 5.24's T5Attention._relative_position_bucket, 32 buckets, distance 128.
        let enc: Vec<usize> = [-200, -100, -20, -8, -7, -1, 0, 1, 7, 8, 20, 100, 200]
            .iter()
            .map(|&r| bucket(r, true, 32, 128))
            .collect();
        assert_eq!(enc, [15, 15, 10, 8, 7, 1, 0, 17, 23, 24, 26, 31, 31]);
        let dec: Vec<usize> = [-200, -100, -20, -16, -15, -1, 0, 5]
            .iter()
            .map(|&r| bucket(r, false, 32, 128))
            .collect();
        assert_eq!(dec, [31, 30, 17, 16, 15, 1, 0, 0]);
    }
}
