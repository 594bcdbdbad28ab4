//! A BERT encoder (MiniLM-L6's shape) with a span head, written in candle for fine-tuning:
//! layer norm and softmax composed from differentiable ops, so every weight gets a gradient.

use super::Dropout;
use candle_core::{DType, Device, IndexOp, Result, Tensor, Var, D};
use candle_nn::VarMap;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The fields of a Hugging Face BERT `config.json` the encoder needs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub hidden_act: String,
}

fn gelu() -> String {
    "gelu".into()
}

impl Config {
    /// What this encoder cannot run, in words (empty when it can).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
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
        out
    }

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }

    /// Every weight's name and shape, in the Hugging Face `BertModel` naming, then the span
    /// head (`qa_outputs`, as `BertForQuestionAnswering` names it).
    pub fn shapes(&self) -> Vec<(String, Vec<usize>)> {
        let (h, i) = (self.hidden_size, self.intermediate_size);
        let mut out = vec![
            (
                "embeddings.word_embeddings.weight".into(),
                vec![self.vocab_size, h],
            ),
            (
                "embeddings.position_embeddings.weight".into(),
                vec![self.max_position_embeddings, h],
            ),
            (
                "embeddings.token_type_embeddings.weight".into(),
                vec![self.type_vocab_size, h],
            ),
            ("embeddings.LayerNorm.weight".into(), vec![h]),
            ("embeddings.LayerNorm.bias".into(), vec![h]),
        ];
        for l in 0..self.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            for (name, shape) in [
                ("attention.self.query.weight", vec![h, h]),
                ("attention.self.query.bias", vec![h]),
                ("attention.self.key.weight", vec![h, h]),
                ("attention.self.key.bias", vec![h]),
                ("attention.self.value.weight", vec![h, h]),
                ("attention.self.value.bias", vec![h]),
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
        out.push(("qa_outputs.weight".into(), vec![2, h]));
        out.push(("qa_outputs.bias".into(), vec![2]));
        out
    }
}

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
            let mut data = vars.data().lock().expect("a fresh lock");
            for (name, shape) in config.shapes() {
                // Checkpoints saved from BertForQuestionAnswering prefix the encoder with "bert.".
                let t = tensors
                    .remove(&name)
                    .or_else(|| tensors.remove(&format!("bert.{name}")))
                    .ok_or_else(|| format!("the weights have no tensor {name:?}"))?;
                if t.dims() != shape.as_slice() {
                    return Err(format!(
                        "tensor {name:?} has shape {:?}, expected {shape:?}",
                        t.dims()
                    ));
                }
                let t = t
                    .to_dtype(DType::F32)
                    .and_then(|t| t.to_device(device))
                    .map_err(|e| e.to_string())?;
                data.insert(name, Var::from_tensor(&t).map_err(|e| e.to_string())?);
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
        self.vars.data().lock().expect("weights lock")[name]
            .as_tensor()
            .clone()
    }

    /// Writes the weights as a Hugging Face `BertForQuestionAnswering` checkpoint
    /// (`model.safetensors` with the encoder under `bert.`, and `config.json`) in `dir`.
    pub fn save_hf(&self, dir: &std::path::Path) -> std::result::Result<(), String> {
        let tensors: HashMap<String, Tensor> = self
            .config
            .shapes()
            .into_iter()
            .map(|(name, _)| {
                let t = self.get(&name);
                let key = if name.starts_with("qa_outputs") {
                    name
                } else {
                    format!("bert.{name}")
                };
                (key, t)
            })
            .collect();
        candle_core::safetensors::save(&tensors, dir.join("model.safetensors"))
            .map_err(|e| e.to_string())?;
        let mut config = serde_json::to_value(&self.config).map_err(|e| e.to_string())?;
        config["model_type"] = "bert".into();
        config["architectures"] = serde_json::json!(["BertForQuestionAnswering"]);
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

/// `x W^T + b` over the last dimension of `x` (`[b, s, in]`).
fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (bs, s, i) = x.dims3()?;
    x.reshape((bs * s, i))?
        .matmul(&w.t()?)?
        .broadcast_add(b)?
        .reshape((bs, s, ()))
}

/// Layer norm over the last dimension, from mean and variance (candle-nn's fused kernel has
/// no backward pass).
pub fn layer_norm(x: &Tensor, w: &Tensor, b: &Tensor, eps: f64) -> Result<Tensor> {
    let mean = x.mean_keepdim(D::Minus1)?;
    let centred = x.broadcast_sub(&mean)?;
    let var = centred.sqr()?.mean_keepdim(D::Minus1)?;
    centred
        .broadcast_div(&(var + eps)?.sqrt()?)?
        .broadcast_mul(w)?
        .broadcast_add(b)
}

/// One batch of inputs, padded: ids and token types `[b, s]` (u32), mask `[b, s]` (f32, 1 for
/// real positions).
pub struct Inputs {
    pub ids: Tensor,
    pub types: Tensor,
    pub mask: Tensor,
}

impl Weights {
    /// Start and end logits `[b, s]` of a batch; `dropout` is on while training.
    pub fn forward(&self, x: &Inputs, dropout: &mut Dropout) -> Result<(Tensor, Tensor)> {
        let c = &self.config;
        let (b, s) = x.ids.dims2()?;
        let (nh, hd) = (c.num_attention_heads, c.head_dim());
        let g = |n: &str| self.get(n);
        let positions = g("embeddings.position_embeddings.weight").narrow(0, 0, s)?;
        let emb = g("embeddings.word_embeddings.weight")
            .embedding(&x.ids.flatten_all()?)?
            .reshape((b, s, ()))?
            .add(
                &g("embeddings.token_type_embeddings.weight")
                    .embedding(&x.types.flatten_all()?)?
                    .reshape((b, s, ()))?,
            )?
            .broadcast_add(&positions.unsqueeze(0)?)?;
        let ln = |x: &Tensor, p: &str| {
            layer_norm(
                x,
                &g(&format!("{p}.weight")),
                &g(&format!("{p}.bias")),
                c.layer_norm_eps,
            )
        };
        let mut h = dropout.apply(&ln(&emb, "embeddings.LayerNorm")?)?;
        // 0 where attended, -10000 at padding: [b, 1, 1, s].
        let bias = ((x.mask.ones_like()? - &x.mask)? * -10000.0)?.reshape((b, 1, 1, s))?;
        let scale = 1.0 / (hd as f64).sqrt();
        for l in 0..c.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let lin = |x: &Tensor, n: &str| {
                linear(
                    x,
                    &g(&format!("{p}.{n}.weight")),
                    &g(&format!("{p}.{n}.bias")),
                )
            };
            let heads = |t: Tensor| t.reshape((b, s, nh, hd))?.transpose(1, 2)?.contiguous();
            let q = heads(lin(&h, "attention.self.query")?)?;
            let k = heads(lin(&h, "attention.self.key")?)?;
            let v = heads(lin(&h, "attention.self.value")?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let probs = dropout.apply(&candle_nn::ops::softmax(&scores, D::Minus1)?)?;
            let ctx = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((b, s, ()))?;
            let att = dropout.apply(&lin(&ctx, "attention.output.dense")?)?;
            h = ln(&(att + &h)?, &format!("{p}.attention.output.LayerNorm"))?;
            let ff = lin(&h, "intermediate.dense")?.gelu_erf()?;
            let out = dropout.apply(&lin(&ff, "output.dense")?)?;
            h = ln(&(out + &h)?, &format!("{p}.output.LayerNorm"))?;
        }
        let logits = linear(&h, &g("qa_outputs.weight"), &g("qa_outputs.bias"))?;
        Ok((
            logits.i((.., .., 0))?.contiguous()?,
            logits.i((.., .., 1))?.contiguous()?,
        ))
    }
}
