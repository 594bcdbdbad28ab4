//! DeBERTa-v2's disentangled attention in candle: the relative-position embeddings and each
//! layer's content-to-position and position-to-content scores, as `transformers` computes them.

use super::config::{relative_indexes, Config};
use super::ops::{layer_norm, linear};
use super::Dropout;
use candle_core::{Device, Result, Tensor};

/// What every layer of one batch shares: the relative embeddings (normalised) and the gather
/// indexes `[s, s]` into their `2 span` rows.
pub struct Relative {
    embeddings: Tensor,
    c2p: Tensor,
    p2c: Tensor,
}

impl Relative {
    /// For inputs of `len` positions.
    /// `get` gives a weight by name.
    pub fn new(
        c: &Config,
        get: &dyn Fn(&str) -> Tensor,
        len: usize,
        device: &Device,
    ) -> Result<Relative> {
        let mut e = get("encoder.rel_embeddings.weight");
        if c.norm_relative() {
            e = layer_norm(
                &e,
                &get("encoder.LayerNorm.weight"),
                &get("encoder.LayerNorm.bias"),
                c.layer_norm_eps,
            )?;
        }
        let (c2p, p2c) = relative_indexes(c, len);
        let index = |v: Vec<i64>| {
            let v: Vec<u32> = v.into_iter().map(|x| x as u32).collect();
            Tensor::from_vec(v, (len, len), device)
        };
        Ok(Relative {
            embeddings: e.unsqueeze(0)?,
            c2p: index(c2p)?,
            p2c: index(p2c)?,
        })
    }

    /// The position terms (before scaling) of layer `p`'s scores `[b, heads, s, s]`, from its
    /// query and key heads `[b, heads, s, head size]`; the embeddings get their own dropout
    /// in every layer, as `transformers`' `pos_dropout` does.
    pub fn bias(
        &self,
        c: &Config,
        get: &dyn Fn(&str) -> Tensor,
        p: &str,
        q: &Tensor,
        k: &Tensor,
        dropout: &mut Dropout,
    ) -> Result<Tensor> {
        let (b, nh, s, hd) = q.dims4()?;
        let rows = 2 * c.att_span();
        let rel = dropout.apply(&self.embeddings)?;
        // [1, rows, hidden] through a projection, as [1, heads, head size, rows].
        let project = |proj: &str| -> Result<Tensor> {
            let t = linear(
                &rel,
                &get(&format!("{p}.attention.self.{proj}.weight")),
                &get(&format!("{p}.attention.self.{proj}.bias")),
            )?;
            t.reshape((rows, nh, hd))?
                .permute((1, 2, 0))?
                .unsqueeze(0)?
                .contiguous()
        };
        let gathered = |x: &Tensor, pos: &Tensor, index: &Tensor| -> Result<Tensor> {
            let all = x.broadcast_matmul(pos)?;
            all.gather(&index.broadcast_as((b, nh, s, s))?.contiguous()?, 3)
        };
        let mut out = Tensor::zeros((b, nh, s, s), q.dtype(), q.device())?;
        if c.c2p() {
            out = (out + gathered(q, &project("key_proj")?, &self.c2p)?)?;
        }
        if c.p2c() {
            let t = gathered(k, &project("query_proj")?, &self.p2c)?;
            out = (out + t.transpose(2, 3)?)?;
        }
        Ok(out)
    }
}
