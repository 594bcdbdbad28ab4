//! The tensor operations the learners compose their models from, each with a backward pass:
//! a linear layer, layer norm, GELU, the attention and its softmax (fused kernels on the CPU,
//! `fused`); and the checkpoint tensors they train, as variables.

use super::{fused, Dropout};
use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Result, Tensor, Var, D};
use std::collections::HashMap;

/// `x W^T + b` over the last dimension of `x` (`[b, s, in]`): one fused op on the CPU, else
/// composed.
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
    if fused::applies(x) {
        return fused::linear_op(x, w, b);
    }
    linear_composed(x, w, b)
}

/// The linear layer from candle's ops (reshape, transpose, matmul, broadcast add).
pub fn linear_composed(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (bs, s, i) = x.dims3()?;
    x.reshape((bs * s, i))?
        .matmul(&w.t()?)?
        .broadcast_add(b)?
        .reshape((bs, s, ()))
}

/// The rows of `table` (`[n, h]`) at `ids` (integers, one dimension): the fused kernel on the CPU,
/// else candle's lookup.
pub fn embedding(table: &Tensor, ids: &Tensor) -> Result<Tensor> {
    if fused::applies(table) {
        return fused::embedding_op(table, ids);
    }
    table.embedding(ids)
}

/// The gradients of `loss`, every weight's: candle's backward pass, in which the fused kernels
/// add their weights' gradients in place (`fused::sink`). The training loops take them here.
pub fn backward(loss: &Tensor) -> Result<GradStore> {
    fused::backward(loss)
}

/// `f` run on one of rayon's threads (at once where the caller is one of them), as the training
/// loop runs each update and `logits` its batches: a kernel's parallel pieces then start on the
/// calling thread while the others take what is left, where a thread outside the pool hands
/// every piece over and sleeps until it is done. At 1 thread that hand-over, twice per op, took
/// a tenth of a BERT-base update (3,590 against 3,214 ms, medians of 12, 2026-12-02); at 2 it
/// made no difference.
pub fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

/// Layer norm over the last dimension: the fused kernel on the CPU, else composed.
pub fn layer_norm(x: &Tensor, w: &Tensor, b: &Tensor, eps: f64) -> Result<Tensor> {
    if fused::applies(x) {
        return fused::layer_norm_op(x, w, b, eps);
    }
    layer_norm_composed(x, w, b, eps)
}

/// Layer norm from mean and variance (candle-nn's fused kernel has no backward pass).
pub fn layer_norm_composed(x: &Tensor, w: &Tensor, b: &Tensor, eps: f64) -> Result<Tensor> {
    let mean = x.mean_keepdim(D::Minus1)?;
    let centred = x.broadcast_sub(&mean)?;
    let var = centred.sqr()?.mean_keepdim(D::Minus1)?;
    centred
        .broadcast_div(&(var + eps)?.sqrt()?)?
        .broadcast_mul(w)?
        .broadcast_add(b)
}

/// GELU with erf: the fused kernel on the CPU, else candle's op.
pub fn gelu(x: &Tensor) -> Result<Tensor> {
    if fused::applies(x) {
        return fused::gelu_op(x);
    }
    x.gelu_erf()
}

/// softmax(scale · scores + bias) over the last dimension of the attention's `scores`
/// (`[b, heads, s, s]`), with the padding's `bias` `[b, 1, 1, s]`: fused on the CPU, else
/// composed.
pub fn masked_softmax(scores: &Tensor, bias: &Tensor, scale: f64) -> Result<Tensor> {
    if fused::applies(scores) {
        return fused::masked_softmax_op(scores, bias, scale);
    }
    masked_softmax_composed(scores, bias, scale)
}

/// The attention's softmax from candle's ops (scale, broadcast add, softmax).
pub fn masked_softmax_composed(scores: &Tensor, bias: &Tensor, scale: f64) -> Result<Tensor> {
    candle_nn::ops::softmax(&(scores * scale)?.broadcast_add(bias)?, D::Minus1)
}

/// What every layer's attention shares: the padding's bias `[b, 1, 1, s]` (0 where attended),
/// the number of heads and the scale of the scores.
pub struct Attend<'a> {
    pub bias: &'a Tensor,
    pub heads: usize,
    pub scale: f64,
}

/// A term added to the scores q kᵀ before the softmax (DeBERTa's relative positions), from the
/// heads of q and k (`[b, heads, s, d]`) and the dropout that its own weights get.
pub type ScoreTerm<'a> = &'a dyn Fn(&Tensor, &Tensor, &mut Dropout) -> Result<Tensor>;

/// Self-attention of the linear layers' `q`, `k`, `v` (`[b, s, heads · d]`), dropout on the
/// probabilities, into `[b, s, heads · d]`: one fused op on the CPU, else composed.
pub fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    a: &Attend,
    d: &mut Dropout,
) -> Result<Tensor> {
    if fused::applies(q) {
        let (b, s, _) = q.dims3()?;
        let keep = d.factors(b * a.heads * s * s);
        return fused::attention_op(q, k, v, a.bias, a.heads, a.scale, keep);
    }
    attention_composed(q, k, v, a, None, d)
}

/// The attention from candle's ops, with a score `term` where one is given: the heads split
/// out, the scores, the softmax, dropout, the values, the heads merged.
pub fn attention_composed(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    a: &Attend,
    term: Option<ScoreTerm>,
    dropout: &mut Dropout,
) -> Result<Tensor> {
    let (b, s, h) = q.dims3()?;
    let heads = |t: &Tensor| {
        t.reshape((b, s, a.heads, h / a.heads))?
            .transpose(1, 2)?
            .contiguous()
    };
    let (q, k, v) = (heads(q)?, heads(k)?, heads(v)?);
    let mut scores = q.matmul(&k.t()?.contiguous()?)?;
    if let Some(term) = term {
        scores = (scores + term(&q, &k, dropout)?)?;
    }
    let probs = dropout.apply(&masked_softmax(&scores, a.bias, a.scale)?)?;
    probs
        .matmul(&v)?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((b, s, ()))
}

/// A checkpoint's tensor `name` (or `prefix.name`), taken out of `tensors` and checked against
/// `shape`, as a trainable f32 variable on `device`.
pub fn take_var(
    tensors: &mut HashMap<String, Tensor>,
    name: &str,
    prefix: Option<&str>,
    shape: &[usize],
    device: &Device,
) -> std::result::Result<Var, String> {
    let t = tensors
        .remove(name)
        .or_else(|| prefix.and_then(|p| tensors.remove(&format!("{p}.{name}"))))
        .ok_or_else(|| format!("the weights have no tensor {name:?}"))?;
    if t.dims() != shape {
        return Err(format!(
            "tensor {name:?} has shape {:?}, expected {shape:?}",
            t.dims()
        ));
    }
    t.to_dtype(DType::F32)
        .and_then(|t| t.to_device(device))
        .and_then(|t| Var::from_tensor(&t))
        .map_err(|e| e.to_string())
}

/// A weight of `vars` as a tensor that shares the variable's storage (and gradient identity).
pub fn var(vars: &candle_nn::VarMap, name: &str) -> Tensor {
    vars.data()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)[name]
        .as_tensor()
        .clone()
}

/// The variables of `vars` sorted by name: a fixed order, so that sums over them (the gradient
/// norm) and so the runs repeat exactly from one process to the next.
pub fn sorted_vars(vars: &candle_nn::VarMap) -> Vec<Var> {
    let data = vars
        .data()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut named: Vec<(&String, &Var)> = data.iter().collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named.into_iter().map(|(_, v)| v.clone()).collect()
}
