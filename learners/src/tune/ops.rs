//! The tensor operations the learners compose their models from, each with a backward pass:
//! a linear layer over the last dimension and layer norm from mean and variance.

use candle_core::{Result, Tensor, D};

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
