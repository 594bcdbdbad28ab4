//! The tensor operations the learners compose their models from, each with a backward pass:
//! a linear layer over the last dimension and layer norm from mean and variance; and the
//! checkpoint tensors they train, as variables.

use candle_core::{DType, Device, Result, Tensor, Var, D};
use std::collections::HashMap;

/// `x W^T + b` over the last dimension of `x` (`[b, s, in]`).
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Tensor> {
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
