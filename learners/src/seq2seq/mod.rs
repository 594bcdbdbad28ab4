//! Encoder-decoder (text-to-text) models in candle for CrossFit's learners: BART and T5 as
//! Hugging Face saves them, trained with teacher forcing on (input, output) pairs, decoded greedily.

pub mod bart;
pub mod t5;
pub mod text;
pub mod train;
pub mod upstream;

use crate::tune::ops::take_var;
use crate::tune::{model_error, Dropout};
use candle_core::{Device, Tensor, D};
use candle_nn::VarMap;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use store::error::{read_text, Error, Result};

/// Trainable weights by name (candle `Var`s, updated in place by the optimiser).
pub struct Named {
    pub vars: VarMap,
    pub device: Device,
}

impl Named {
    /// The named tensors of `shapes`, each required with its shape; the rest are ignored.
    pub fn from_tensors(
        shapes: &[(String, Vec<usize>)],
        mut tensors: HashMap<String, Tensor>,
        device: &Device,
    ) -> std::result::Result<Named, String> {
        let vars = VarMap::new();
        {
            let mut data = vars
                .data()
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (name, shape) in shapes {
                let v = take_var(&mut tensors, name, None, shape, device)?;
                data.insert(name.clone(), v);
            }
        }
        Ok(Named {
            vars,
            device: device.clone(),
        })
    }

    pub fn get(&self, name: &str) -> Tensor {
        crate::tune::ops::var(&self.vars, name)
    }

    /// Every weight's values by name, sorted by name (to compare and to restore).
    pub fn snapshot(&self) -> candle_core::Result<Vec<(String, Tensor)>> {
        let data = self
            .vars
            .data()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out: Vec<(String, Tensor)> = data
            .iter()
            .map(|(n, v)| Ok((n.clone(), v.as_tensor().copy()?)))
            .collect::<candle_core::Result<_>>()?;
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Sets every weight to a snapshot's values.
    pub fn restore(&self, snapshot: &[(String, Tensor)]) -> candle_core::Result<()> {
        let data = self
            .vars
            .data()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (name, t) in snapshot {
            data[name].set(t)?;
        }
        Ok(())
    }
}

/// Multi-head attention of `q` `[b, tq, d]` (already scaled) over `k`, `v` `[b, tk, d]`, with
/// an additive `bias` broadcast to `[b, heads, tq, tk]`; the heads' outputs joined `[b, tq, d]`.
pub fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    bias: &Tensor,
    heads: usize,
    _dropout: &mut Dropout,
) -> candle_core::Result<Tensor> {
    let (b, tq, d) = q.dims3()?;
    let tk = k.dim(1)?;
    let hd = d / heads;
    let split = |t: &Tensor, n: usize| t.reshape((b, n, heads, hd))?.transpose(1, 2)?.contiguous();
    let (q, k, v) = (split(q, tq)?, split(k, tk)?, split(v, tk)?);
    let scores = q.matmul(&k.t()?.contiguous()?)?.broadcast_add(bias)?;
    let probs = candle_nn::ops::softmax(&scores, D::Minus1)?;
    probs
        .matmul(&v)?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((b, tq, d))
}

/// What a decoder pass reads: the encoder's states `[b, s, d]` and padding bias, the decoder
/// inputs `[b, t]` and the causal mask `[1, 1, t, t]`.
#[derive(Clone, Copy)]
pub struct Decoder<'a> {
    pub enc: &'a Tensor,
    pub pad: &'a Tensor,
    pub tgt: &'a Tensor,
    pub causal: &'a Tensor,
    /// While decoding step by step: the keys and values of the steps before (`tgt` is then the
    /// new tokens only, at positions from `past()`, so the output layer, a vocabulary wide,
    /// runs for the new positions only).
    pub cache: Option<&'a RefCell<Cache>>,
}

/// A layer's attention keys and values `[b, t, d]`.
pub type Kv = (Tensor, Tensor);

/// What greedy decoding keeps from step to step, so that a step computes its new token only:
/// each decoder layer's self-attention keys and values of the tokens so far, and its
/// cross-attention keys and values of the encoder's states (the same at every step).
#[derive(Default)]
pub struct Cache {
    own: Vec<Option<Kv>>,
    cross: Vec<Option<Kv>>,
}

impl Cache {
    /// Layer `l`'s self-attention keys and values: those kept with `new`'s appended (and kept).
    pub fn extend(&mut self, l: usize, new: Kv) -> candle_core::Result<Kv> {
        if self.own.len() <= l {
            self.own.resize(l + 1, None);
        }
        let kv = match self.own[l].take() {
            Some((k, v)) => (
                Tensor::cat(&[&k, &new.0], 1)?,
                Tensor::cat(&[&v, &new.1], 1)?,
            ),
            None => new,
        };
        self.own[l] = Some(kv.clone());
        Ok(kv)
    }

    /// Layer `l`'s cross-attention keys and values, made by `make` at the first step.
    pub fn cross(
        &mut self,
        l: usize,
        make: impl FnOnce() -> candle_core::Result<Kv>,
    ) -> candle_core::Result<Kv> {
        if self.cross.len() <= l {
            self.cross.resize(l + 1, None);
        }
        match &self.cross[l] {
            Some(kv) => Ok(kv.clone()),
            None => {
                let kv = make()?;
                self.cross[l] = Some(kv.clone());
                Ok(kv)
            }
        }
    }

    /// How many tokens were decoded before this step.
    pub fn past(&self) -> candle_core::Result<usize> {
        match self.own.first() {
            Some(Some((k, _))) => k.dim(1),
            _ => Ok(0),
        }
    }
}

impl Decoder<'_> {
    /// Tokens decoded before this pass (0 without a cache).
    pub fn past(&self) -> candle_core::Result<usize> {
        self.cache.map_or(Ok(0), |c| c.borrow().past())
    }

    /// Layer `l`'s self-attention keys and values from this pass's `new` ones.
    pub fn own(&self, l: usize, new: Kv) -> candle_core::Result<Kv> {
        match self.cache {
            Some(c) => c.borrow_mut().extend(l, new),
            None => Ok(new),
        }
    }

    /// Layer `l`'s cross-attention keys and values (`make` from the encoder's states).
    pub fn cross(
        &self,
        l: usize,
        make: impl FnOnce() -> candle_core::Result<Kv>,
    ) -> candle_core::Result<Kv> {
        match self.cache {
            Some(c) => c.borrow_mut().cross(l, make),
            None => make(),
        }
    }
}

/// The additive padding bias `[b, 1, 1, s]` of a mask `[b, s]` (1 real, 0 padding).
pub fn padding_bias(mask: &Tensor) -> candle_core::Result<Tensor> {
    let (b, s) = mask.dims2()?;
    ((mask.ones_like()? - mask)? * -1e9)?.reshape((b, 1, 1, s))
}

/// The decoder's causal bias `[1, 1, t, t]`: 0 on and below the diagonal, -1e9 above.
pub fn causal_bias(t: usize, device: &Device) -> candle_core::Result<Tensor> {
    let v: Vec<f32> = (0..t * t)
        .map(|i| if i % t > i / t { -1e9 } else { 0.0 })
        .collect();
    Tensor::from_vec(v, (1, 1, t, t), device)
}

/// A text-to-text model's config, by family (`model_type`).
#[derive(Clone, Debug, PartialEq)]
pub enum Config {
    Bart(bart::Config),
    T5(t5::Config),
}

impl Config {
    /// Reads a `config.json`'s value; refused in words for another family or what this code
    /// cannot run.
    pub fn read(json: serde_json::Value) -> std::result::Result<Config, String> {
        let kind = json["model_type"].as_str().unwrap_or_default().to_string();
        let c = match kind.as_str() {
            "bart" => Config::Bart(serde_json::from_value(json).map_err(|e| e.to_string())?),
            "t5" => Config::T5(serde_json::from_value(json).map_err(|e| e.to_string())?),
            _ => {
                return Err(format!(
                    "model_type {kind:?} is not a text-to-text model this code trains (bart, t5)"
                ))
            }
        };
        let problems = match &c {
            Config::Bart(b) => b.problems(),
            Config::T5(t) => t.problems(),
        };
        if problems.is_empty() {
            Ok(c)
        } else {
            Err(problems.join("; "))
        }
    }

    pub fn shapes(&self) -> Vec<(String, Vec<usize>)> {
        match self {
            Config::Bart(c) => c.shapes(),
            Config::T5(c) => c.shapes(),
        }
    }

    /// The padding, end and decoder-start token ids.
    pub fn tokens(&self) -> (u32, u32, u32) {
        match self {
            Config::Bart(c) => (c.pad_token_id, c.eos_token_id, c.decoder_start_token_id),
            Config::T5(c) => (c.pad_token_id, c.eos_token_id, c.decoder_start_token_id),
        }
    }

    /// `model_type` and the Hugging Face class a saved folder loads as.
    fn names(&self) -> (&'static str, &'static str) {
        match self {
            Config::Bart(_) => ("bart", "BartForConditionalGeneration"),
            Config::T5(_) => ("t5", "T5ForConditionalGeneration"),
        }
    }

    fn json(&self) -> serde_json::Result<serde_json::Value> {
        match self {
            Config::Bart(c) => serde_json::to_value(c),
            Config::T5(c) => serde_json::to_value(c),
        }
    }
}

/// A text-to-text model: its config and weights.
pub struct Model {
    pub config: Config,
    pub weights: Named,
}

impl Model {
    /// Reads a `config.json` + `model.safetensors` folder (BART or T5).
    pub fn load(dir: &Path, device: &Device) -> Result<Model> {
        let path = dir.join("config.json");
        let text = read_text(&path)?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::data(path.display().to_string(), Some(e.line()), e.to_string()))?;
        let config =
            Config::read(json).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        let file = dir.join("model.safetensors");
        let tensors = candle_core::safetensors::load(&file, &Device::Cpu)
            .map_err(|e| Error::Model(format!("{}: {e}", file.display())))?;
        let weights = Named::from_tensors(&config.shapes(), tensors, device)
            .map_err(|e| Error::Model(format!("{}: {e}", file.display())))?;
        Ok(Model { config, weights })
    }

    pub fn pad(&self) -> u32 {
        self.config.tokens().0
    }

    pub fn eos(&self) -> u32 {
        self.config.tokens().1
    }

    pub fn start(&self) -> u32 {
        self.config.tokens().2
    }

    /// The encoder's states of a padded batch, and its padding bias.
    pub fn encode(
        &self,
        src: &Tensor,
        mask: &Tensor,
        d: &mut Dropout,
    ) -> candle_core::Result<(Tensor, Tensor)> {
        let pad = padding_bias(mask)?;
        let w = &self.weights;
        let enc = match &self.config {
            Config::Bart(c) => bart::Bart { c, w }.encode(src, &pad, d)?,
            Config::T5(c) => t5::T5 { c, w }.encode(src, &pad, d)?,
        };
        Ok((enc, pad))
    }

    /// Next-token logits `[b, t, vocab]` of decoder inputs `tgt` `[b, t]`.
    pub fn logits(
        &self,
        enc: &Tensor,
        pad: &Tensor,
        tgt: &Tensor,
        d: &mut Dropout,
    ) -> candle_core::Result<Tensor> {
        self.decode(enc, pad, tgt, None, d)
    }

    /// The logits `[b, vocab]` of the token after `new` `[b, 1]`, the tokens before it kept
    /// in `cache` (which keeps `new` too; no dropout).
    pub fn next_logits(
        &self,
        enc: &Tensor,
        pad: &Tensor,
        new: &Tensor,
        cache: &RefCell<Cache>,
    ) -> candle_core::Result<Tensor> {
        self.decode(enc, pad, new, Some(cache), &mut Dropout::off())?
            .squeeze(1)
    }

    fn decode(
        &self,
        enc: &Tensor,
        pad: &Tensor,
        tgt: &Tensor,
        cache: Option<&RefCell<Cache>>,
        d: &mut Dropout,
    ) -> candle_core::Result<Tensor> {
        // With a cache, the one new token sees every key: no mask.
        let causal = causal_bias(tgt.dim(1)?, &self.weights.device)?;
        let input = Decoder {
            enc,
            pad,
            tgt,
            causal: &causal,
            cache,
        };
        let w = &self.weights;
        match &self.config {
            Config::Bart(c) => bart::Bart { c, w }.decode(&input, d),
            Config::T5(c) => t5::T5 { c, w }.decode(&input, d),
        }
    }

    /// Writes the weights as a Hugging Face checkpoint folder (`model.safetensors`,
    /// `config.json`) that `...ForConditionalGeneration` loads.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let tensors: HashMap<String, Tensor> = self
            .weights
            .snapshot()
            .map_err(model_error)?
            .into_iter()
            .collect();
        candle_core::safetensors::save(&tensors, dir.join("model.safetensors"))
            .map_err(model_error)?;
        let (kind, class) = self.config.names();
        let mut config = self.config.json().map_err(model_error)?;
        config["model_type"] = kind.into();
        config["architectures"] = serde_json::json!([class]);
        std::fs::write(dir.join("config.json"), config.to_string())
            .map_err(|e| Error::io(format!("cannot write {}", dir.display()), e))
    }
}

/// A padded batch of token id rows: ids `[b, len]` (padded with `pad`) and the mask.
pub fn pad_rows(rows: &[&[u32]], pad: u32, dev: &Device) -> candle_core::Result<(Tensor, Tensor)> {
    let len = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let (mut ids, mut mask) = (vec![pad; rows.len() * len], vec![0f32; rows.len() * len]);
    for (r, row) in rows.iter().enumerate() {
        for (i, &id) in row.iter().enumerate() {
            ids[r * len + i] = id;
            mask[r * len + i] = 1.0;
        }
    }
    Ok((
        Tensor::from_vec(ids, (rows.len(), len), dev)?,
        Tensor::from_vec(mask, (rows.len(), len), dev)?,
    ))
}

/// Greedy decoding of each source row: from the decoder's start token, the most likely next
/// token until the end token or `max_tokens` new tokens (the end token not included). Each
/// step computes its new token only, the keys and values before it kept in a [`Cache`].
pub fn greedy(m: &Model, srcs: &[&[u32]], max_tokens: usize) -> candle_core::Result<Vec<Vec<u32>>> {
    let dev = &m.weights.device;
    let (src, mask) = pad_rows(srcs, m.pad(), dev)?;
    let mut off = Dropout::off();
    let (enc, pad) = m.encode(&src, &mask, &mut off)?;
    let n = srcs.len();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut done = vec![false; n];
    let cache = RefCell::new(Cache::default());
    // Every row takes a token at every step (a finished row its end token again), so the rows
    // stay as long as each other and the cache needs no padding.
    let mut last: Vec<u32> = vec![m.start(); n];
    for _ in 0..max_tokens {
        if done.iter().all(|&d| d) {
            break;
        }
        let t = Tensor::from_vec(last.clone(), (n, 1), dev)?;
        let next: Vec<u32> = m
            .next_logits(&enc, &pad, &t, &cache)?
            .argmax(D::Minus1)?
            .to_vec1()?;
        for (i, &tok) in next.iter().enumerate() {
            if done[i] {
                continue;
            }
            if tok == m.eos() {
                done[i] = true;
            } else {
                out[i].push(tok);
            }
        }
        last = next;
    }
    Ok(out)
}
