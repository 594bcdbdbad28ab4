//! Prompt-based fine-tuning (the CLUES paper's PT, as LM-BFF does it): the encoder's masked-LM
//! head scores each label's verbaliser word at the template's mask; encoder and head train on the k shots.

use super::config::Family;
use super::encoder::{Inputs, Weights};
use super::ops::{layer_norm, linear};
use super::train::fit;
use super::{model_error, read_config, Dropout, Recipe};
use crate::tokenizer::Tokenizer;
use candle_core::{Device, Tensor, Var, D};
use domain::prompt::{render, Prompt};
use domain::task::Example;
use std::path::Path;
use store::error::{Error, Result};

/// The masked-LM head as this code names its weights, each with the names checkpoints of the
/// family give it (the first one found is read). Its decoder is the word embeddings (tied, as
/// every family here ties it).
fn head_names(f: Family) -> [(&'static str, &'static [&'static str]); 5] {
    match f {
        Family::Bert => [
            (
                "mlm.dense.weight",
                &["cls.predictions.transform.dense.weight"],
            ),
            ("mlm.dense.bias", &["cls.predictions.transform.dense.bias"]),
            (
                "mlm.norm.weight",
                &["cls.predictions.transform.LayerNorm.weight"],
            ),
            (
                "mlm.norm.bias",
                &["cls.predictions.transform.LayerNorm.bias"],
            ),
            (
                "mlm.bias",
                &["cls.predictions.bias", "cls.predictions.decoder.bias"],
            ),
        ],
        Family::Roberta => [
            ("mlm.dense.weight", &["lm_head.dense.weight"]),
            ("mlm.dense.bias", &["lm_head.dense.bias"]),
            ("mlm.norm.weight", &["lm_head.layer_norm.weight"]),
            ("mlm.norm.bias", &["lm_head.layer_norm.bias"]),
            ("mlm.bias", &["lm_head.bias", "lm_head.decoder.bias"]),
        ],
        // The hub's DeBERTa-v3 checkpoints name it lm_predictions.lm_head; transformers'
        // default ("legacy") class saves it as BERT does.
        Family::DebertaV2 => [
            (
                "mlm.dense.weight",
                &[
                    "lm_predictions.lm_head.dense.weight",
                    "cls.predictions.transform.dense.weight",
                ],
            ),
            (
                "mlm.dense.bias",
                &[
                    "lm_predictions.lm_head.dense.bias",
                    "cls.predictions.transform.dense.bias",
                ],
            ),
            (
                "mlm.norm.weight",
                &[
                    "lm_predictions.lm_head.LayerNorm.weight",
                    "cls.predictions.transform.LayerNorm.weight",
                ],
            ),
            (
                "mlm.norm.bias",
                &[
                    "lm_predictions.lm_head.LayerNorm.bias",
                    "cls.predictions.transform.LayerNorm.bias",
                ],
            ),
            (
                "mlm.bias",
                &["lm_predictions.lm_head.bias", "cls.predictions.bias"],
            ),
        ],
    }
}

/// The encoder of `dir` with its masked-LM head; refused in words when it has none (a
/// sentence encoder, a checkpoint saved from `...Model`).
pub fn load_mlm(dir: &Path, device: &Device) -> Result<Weights> {
    let config = read_config(dir)?;
    let file = dir.join("model.safetensors");
    let mut tensors = candle_core::safetensors::load(&file, &Device::Cpu)
        .map_err(|e| Error::Model(format!("{}: {e}", file.display())))?;
    let (h, v) = (config.hidden_size, config.vocab_size);
    let mut head = Vec::new();
    for ((ours, theirs), shape) in
        head_names(config.kind())
            .iter()
            .zip([vec![h, h], vec![h], vec![h], vec![h], vec![v]])
    {
        let Some(t) = theirs.iter().find_map(|n| tensors.remove(*n)) else {
            return Err(Error::Invalid(format!(
                "{}: the checkpoint has no masked-LM head (no {}); prompt-based fine-tuning \
                 predicts label words with one: give a folder saved from {}ForMaskedLM",
                dir.display(),
                theirs.join(" or "),
                match config.kind() {
                    Family::Bert => "Bert",
                    Family::Roberta => "Roberta",
                    Family::DebertaV2 => "DebertaV2",
                }
            )));
        };
        if t.dims() != shape.as_slice() {
            return Err(Error::Model(format!(
                "{}: {} has shape {:?}, expected {shape:?}",
                file.display(),
                theirs[0],
                t.dims()
            )));
        }
        head.push((*ours, t));
    }
    let w = Weights::from_tensors(config, tensors, 0, device)
        .map_err(|e| Error::Model(format!("{}: {e}", file.display())))?;
    {
        let mut data = w
            .vars
            .data()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (name, t) in head {
            let t = t
                .to_dtype(candle_core::DType::F32)
                .and_then(|t| t.to_device(device))
                .and_then(|t| Var::from_tensor(&t))
                .map_err(model_error)?;
            data.insert(name.to_string(), t);
        }
    }
    Ok(w)
}

/// The vocabulary id of each label's word, in the verbaliser's order: the word as it follows
/// a space (" great"), which must be one token (LM-BFF's rule).
pub fn word_ids(tok: &Tokenizer, p: &Prompt) -> Result<Vec<u32>> {
    p.verbaliser
        .iter()
        .map(|(label, word)| {
            let toks = tok.tokens(&format!(" {word}"))?;
            match toks.as_slice() {
                [one] if Some(one.id) == tok.unknown_id() => Err(Error::Invalid(format!(
                    "the word {word:?} for {label:?} is not in the tokenizer's vocabulary"
                ))),
                [one] => Ok(one.id),
                _ => Err(Error::Invalid(format!(
                    "the word {word:?} for {label:?} is {} tokens for this tokenizer; \
                     prompt-based fine-tuning needs a word that is one token",
                    toks.len()
                ))),
            }
        })
        .collect()
}

/// One item as the model reads it: the template's text around the mask token, framed by the
/// tokenizer's special tokens, and where the mask is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub ids: Vec<u32>,
    pub mask_at: usize,
}

/// An item's input of at most `max_len` positions: a longer one loses tokens from the start
/// of the text before the mask or from the end of the text after it, whichever is longer.
pub fn input(
    tok: &Tokenizer,
    mask: u32,
    template: &str,
    item: &Example,
    max_len: usize,
) -> Result<Input> {
    let (before, after) = render(template, item);
    let ids = |t: &str| -> Result<Vec<u32>> { Ok(tok.tokens(t)?.iter().map(|t| t.id).collect()) };
    let (mut b, mut a) = (ids(before.trim_end())?, ids(&after)?);
    let f = &tok.frame;
    let specials = f.before.len() + f.after.len() + 1;
    let room = max_len.saturating_sub(specials);
    if b.len() + a.len() > room {
        let cut = b.len() + a.len() - room;
        for _ in 0..cut {
            if b.len() >= a.len() {
                b.remove(0);
            } else {
                a.pop();
            }
        }
    }
    let mut out: Vec<u32> = f.before.iter().map(|&(id, _)| id).collect();
    out.extend(b);
    let mask_at = out.len();
    out.push(mask);
    out.extend(a);
    out.extend(f.after.iter().map(|&(id, _)| id));
    Ok(Input { ids: out, mask_at })
}

/// A batch of inputs padded to the longest (token type 0 throughout: one text).
fn batch(xs: &[&Input], dev: &Device) -> candle_core::Result<Inputs> {
    let len = xs.iter().map(|x| x.ids.len()).max().unwrap_or(0);
    let (mut ids, mut mask) = (vec![0u32; xs.len() * len], vec![0f32; xs.len() * len]);
    for (r, x) in xs.iter().enumerate() {
        for (i, &id) in x.ids.iter().enumerate() {
            ids[r * len + i] = id;
            mask[r * len + i] = 1.0;
        }
    }
    Ok(Inputs {
        ids: Tensor::from_vec(ids, (xs.len(), len), dev)?,
        types: Tensor::zeros((xs.len(), len), candle_core::DType::U32, dev)?,
        mask: Tensor::from_vec(mask, (xs.len(), len), dev)?,
    })
}

/// The masked-LM head's scores `[b, labels]` of each label's word at each input's mask.
pub fn label_logits(
    w: &Weights,
    xs: &[&Input],
    words: &[u32],
    dropout: &mut Dropout,
) -> candle_core::Result<Tensor> {
    let dev = &w.device;
    let h = w.encode(&batch(xs, dev)?, dropout)?;
    let (b, s, hidden) = h.dims3()?;
    let at: Vec<u32> = xs
        .iter()
        .enumerate()
        .map(|(r, x)| (r * s + x.mask_at) as u32)
        .collect();
    let picked = h
        .reshape((b * s, hidden))?
        .index_select(&Tensor::from_vec(at, b, dev)?, 0)?
        .unsqueeze(0)?;
    let t = linear(
        &picked,
        &w.get("mlm.dense.weight"),
        &w.get("mlm.dense.bias"),
    )?
    .gelu_erf()?;
    let t = layer_norm(
        &t,
        &w.get("mlm.norm.weight"),
        &w.get("mlm.norm.bias"),
        w.config.layer_norm_eps,
    )?
    .squeeze(0)?;
    let words = Tensor::from_vec(words.to_vec(), words.len(), dev)?;
    let e = w
        .get("embeddings.word_embeddings.weight")
        .index_select(&words, 0)?;
    let bias = w.get("mlm.bias").index_select(&words, 0)?;
    t.matmul(&e.t()?)?.broadcast_add(&bias)
}

/// Trains encoder and head on the shots (`labels`: each shot's label index) with the shared
/// optimisation; returns each epoch's mean loss (cross-entropy over the label words).
pub fn train(
    w: &Weights,
    xs: &[Input],
    labels: &[u32],
    words: &[u32],
    r: &Recipe,
    progress: &mut dyn FnMut(usize, usize),
) -> candle_core::Result<Vec<f64>> {
    fit(
        super::ops::sorted_vars(&w.vars),
        xs.len(),
        r,
        progress,
        &mut |chunk, dropout| {
            let batch: Vec<&Input> = chunk.iter().map(|&i| &xs[i]).collect();
            let gold: Vec<u32> = chunk.iter().map(|&i| labels[i]).collect();
            let logits = label_logits(w, &batch, words, dropout)?;
            let gold = Tensor::from_vec(gold, chunk.len(), &w.device)?;
            candle_nn::loss::cross_entropy(&logits, &gold)
        },
    )
}

/// Each input's label index and its probability (a softmax over the label words), `batch` at a time.
pub fn predict(
    w: &Weights,
    xs: &[Input],
    words: &[u32],
    batch: usize,
) -> candle_core::Result<Vec<(usize, f32)>> {
    let mut out = Vec::with_capacity(xs.len());
    for chunk in xs.chunks(batch.max(1)) {
        let refs: Vec<&Input> = chunk.iter().collect();
        let logits = label_logits(w, &refs, words, &mut Dropout::off())?;
        let probs = candle_nn::ops::softmax(&logits, D::Minus1)?.to_vec2::<f32>()?;
        for row in probs {
            let (best, p) =
                row.iter()
                    .enumerate()
                    .fold((0, f32::MIN), |m, (i, &p)| if p > m.1 { (i, p) } else { m });
            out.push((best, p));
        }
    }
    Ok(out)
}
