//! A BERT, RoBERTa or DeBERTa-v2 encoder with a span head, written in candle for fine-tuning:
//! layer norm, GELU and softmax from `ops` (fused on the CPU), so every weight gets a gradient.

pub use super::config::Config;
use super::config::Family;
use super::ops::{
    attention, attention_composed, embedding, gelu, layer_norm, linear, take_var, Attend,
};
use super::relative::Relative;
use super::Dropout;
use candle_core::{Device, IndexOp, Result, Tensor};
use candle_nn::VarMap;
use std::collections::HashMap;

/// A weight's name, shape and values (row-major).
pub type NamedValues = (String, Vec<usize>, Vec<f32>);

/// The trainable weights by name (candle `Var`s, which the optimiser updates in place).
pub struct Weights {
    pub config: Config,
    pub vars: VarMap,
    /// Where the weights live and the maths runs (CPU, or CUDA with the `cuda` feature).
    pub device: Device,
}

impl Weights {
    /// Weights from named tensors (a safetensors file's): every encoder weight must be there
    /// with its shape; a missing span head is made from `seed` (normal, std 0.02; zero bias).
    pub fn from_tensors(
        config: Config,
        mut tensors: HashMap<String, Tensor>,
        seed: u64,
        device: &Device,
    ) -> std::result::Result<Weights, String> {
        let problems = config.problems();
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let h = config.hidden_size;
        let prefix = config.kind().prefix();
        if !tensors.contains_key("qa_outputs.weight") {
            let mut rng = domain::rng::SplitMix64(seed);
            let w: Vec<f32> = (0..2 * h).map(|_| (0.02 * rng.normal()) as f32).collect();
            let t = |v: Vec<f32>, s: &[usize]| Tensor::from_vec(v, s, &Device::Cpu);
            tensors.insert(
                "qa_outputs.weight".into(),
                t(w, &[2, h]).map_err(|e| e.to_string())?,
            );
            tensors.insert(
                "qa_outputs.bias".into(),
                t(vec![0.0; 2], &[2]).map_err(|e| e.to_string())?,
            );
        }
        let vars = VarMap::new();
        {
            let mut data = vars
                .data()
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (name, shape) in config.shapes() {
                // Checkpoints saved from `...ForQuestionAnswering` (or `...ForMaskedLM`) prefix
                // the encoder with the family's name ("bert.", "roberta.", "deberta.").
                let v = take_var(&mut tensors, &name, Some(prefix), &shape, device)?;
                data.insert(name, v);
            }
        }
        Ok(Weights {
            config,
            vars,
            device: device.clone(),
        })
    }

    /// A weight as a tensor that shares the variable's storage (and gradient identity).
    pub fn get(&self, name: &str) -> Tensor {
        super::ops::var(&self.vars, name)
    }

    /// Writes the weights as a Hugging Face `...ForQuestionAnswering` checkpoint of the family
    /// (`model.safetensors` with the encoder under `bert.`, `roberta.` or `deberta.`, and
    /// `config.json`) in `dir`.
    pub fn save_hf(&self, dir: &std::path::Path) -> std::result::Result<(), String> {
        let family = self.config.kind();
        let tensors: HashMap<String, Tensor> = self
            .config
            .shapes()
            .into_iter()
            .map(|(name, _)| {
                let t = self.get(&name);
                let key = if name.starts_with("qa_outputs") {
                    name
                } else {
                    format!("{}.{name}", family.prefix())
                };
                (key, t)
            })
            .collect();
        candle_core::safetensors::save(&tensors, dir.join("model.safetensors"))
            .map_err(|e| e.to_string())?;
        let mut config = serde_json::to_value(&self.config).map_err(|e| e.to_string())?;
        config["architectures"] = serde_json::json!([family.architecture()]);
        std::fs::write(dir.join("config.json"), config.to_string()).map_err(|e| e.to_string())
    }

    /// Every weight's current values, by name.
    pub fn values(&self) -> Result<Vec<NamedValues>> {
        self.config
            .shapes()
            .into_iter()
            .map(|(name, shape)| {
                let v = self.get(&name).flatten_all()?.to_vec1::<f32>()?;
                Ok((name, shape, v))
            })
            .collect()
    }
}

/// One batch of inputs, padded: ids and token types `[b, s]` (u32), mask `[b, s]` (f32, 1 for
/// real positions).
pub struct Inputs {
    pub ids: Tensor,
    pub types: Tensor,
    pub mask: Tensor,
}

impl Weights {
    /// Words, token types and (absolute) positions, normalised; DeBERTa zeroes padding.
    fn embed(&self, x: &Inputs, dropout: &mut Dropout) -> Result<Tensor> {
        let c = &self.config;
        let (b, s) = x.ids.dims2()?;
        let g = |n: &str| self.get(n);
        let table = |n: &str, ids: &Tensor| -> Result<Tensor> {
            embedding(&g(n), &ids.flatten_all()?)?.reshape((b, s, ()))
        };
        let mut emb = table("embeddings.word_embeddings.weight", &x.ids)?;
        if c.type_vocab_size > 0 {
            emb = (emb + table("embeddings.token_type_embeddings.weight", &x.types)?)?;
        }
        if c.absolute_positions() {
            if c.position_offset() + s > c.max_position_embeddings {
                candle_core::bail!(
                    "an input of {s} positions is longer than the model's {}",
                    c.max_len()
                );
            }
            let positions =
                g("embeddings.position_embeddings.weight").narrow(0, c.position_offset(), s)?;
            emb = emb.broadcast_add(&positions.unsqueeze(0)?)?;
        }
        let mut h = self.norm(&emb, "embeddings.LayerNorm")?;
        if c.kind() == Family::DebertaV2 {
            h = h.broadcast_mul(&x.mask.unsqueeze(2)?)?;
        }
        dropout.apply(&h)
    }

    fn norm(&self, x: &Tensor, p: &str) -> Result<Tensor> {
        layer_norm(
            x,
            &self.get(&format!("{p}.weight")),
            &self.get(&format!("{p}.bias")),
            self.config.layer_norm_eps,
        )
    }

    fn linear(&self, x: &Tensor, p: &str) -> Result<Tensor> {
        linear(
            x,
            &self.get(&format!("{p}.weight")),
            &self.get(&format!("{p}.bias")),
        )
    }

    /// The last hidden state `[b, s, hidden]` of a batch; `dropout` is on while training.
    pub fn encode(&self, x: &Inputs, dropout: &mut Dropout) -> Result<Tensor> {
        let c = &self.config;
        let (b, s) = x.ids.dims2()?;
        let mut h = self.embed(x, dropout)?;
        // 0 where attended, -10000 at padding: [b, 1, 1, s].
        let bias = ((x.mask.ones_like()? - &x.mask)? * -10000.0)?.reshape((b, 1, 1, s))?;
        let relative = match c.kind() {
            Family::DebertaV2 => Some(Relative::new(c, &|n| self.get(n), s, &self.device)?),
            _ => None,
        };
        let [qn, kn, vn] = c.kind().attention();
        let attend = Attend {
            bias: &bias,
            heads: c.num_attention_heads,
            scale: c.attention_scale(),
        };
        for l in 0..c.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let q = self.linear(&h, &format!("{p}.attention.self.{qn}"))?;
            let k = self.linear(&h, &format!("{p}.attention.self.{kn}"))?;
            let v = self.linear(&h, &format!("{p}.attention.self.{vn}"))?;
            let ctx = match &relative {
                Some(r) => {
                    let term = |q: &Tensor, k: &Tensor, d: &mut Dropout| {
                        r.bias(c, &|n| self.get(n), &p, q, k, d)
                    };
                    attention_composed(&q, &k, &v, &attend, Some(&term), dropout)?
                }
                None => attention(&q, &k, &v, &attend, dropout)?,
            };
            let att = dropout.apply(&self.linear(&ctx, &format!("{p}.attention.output.dense"))?)?;
            h = self.norm(&(att + &h)?, &format!("{p}.attention.output.LayerNorm"))?;
            let ff = gelu(&self.linear(&h, &format!("{p}.intermediate.dense"))?)?;
            let out = dropout.apply(&self.linear(&ff, &format!("{p}.output.dense"))?)?;
            h = self.norm(&(out + &h)?, &format!("{p}.output.LayerNorm"))?;
        }
        Ok(h)
    }

    /// Start and end logits `[b, s]` of a batch; `dropout` is on while training.
    pub fn forward(&self, x: &Inputs, dropout: &mut Dropout) -> Result<(Tensor, Tensor)> {
        let h = self.encode(x, dropout)?;
        let logits = self.linear(&h, "qa_outputs")?;
        Ok((
            logits.i((.., .., 0))?.contiguous()?,
            logits.i((.., .., 1))?.contiguous()?,
        ))
    }
}
