//! DeBERTa-v2's disentangled attention in candle: the relative-position embeddings and each
//! layer's content-to-position and position-to-content scores, and the log-bucket relative
//! positions they gather by, as `transformers` computes them.

use super::config::Config;
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

/// DeBERTa's relative position of query `i` to key `j` (`i - j`), in log buckets beyond half
/// the bucket count, as `transformers`' `make_log_bucket_position` computes it (in f32).
pub fn relative_position(i: usize, j: usize, buckets: i64, max_position: i64) -> i64 {
    let r = i as i64 - j as i64;
    if buckets <= 0 || max_position <= 0 {
        return r;
    }
    let mid = buckets / 2;
    let abs = if r < mid && r > -mid {
        mid - 1
    } else {
        r.abs()
    };
    if abs <= mid {
        return r;
    }
    let ratio = ((abs as f32) / (mid as f32)).ln() / ((max_position - 1) as f32 / mid as f32).ln();
    let log = (ratio * (mid - 1) as f32).ceil() + mid as f32;
    log as i64 * r.signum()
}

/// DeBERTa's gather indexes for `len` positions, row-major `[len, len]`: content-to-position
/// `clamp(R + span)` and position-to-content `clamp(-R + span)`, both within `0..2 span`.
pub fn relative_indexes(c: &Config, len: usize) -> (Vec<i64>, Vec<i64>) {
    let span = c.att_span() as i64;
    let (mut c2p, mut p2c) = (Vec::with_capacity(len * len), Vec::with_capacity(len * len));
    for i in 0..len {
        for j in 0..len {
            let r = relative_position(i, j, c.position_buckets, c.max_relative());
            c2p.push((r + span).clamp(0, 2 * span - 1));
            p2c.push((span - r).clamp(0, 2 * span - 1));
        }
    }
    (c2p, p2c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_buckets_match_transformers() {
        // transformers 5.24's make_log_bucket_position on the same distances.
        let at = |r: i64, b, m| {
            let (i, j) = if r >= 0 {
                (r as usize, 0)
            } else {
                (0, (-r) as usize)
            };
            relative_position(i, j, b, m)
        };
        let got: Vec<i64> = [100, -128, 200, -300, 511, 129, -129, 130, 5]
            .iter()
            .map(|&r| at(r, 256, 512))
            .collect();
        assert_eq!(got, [100, -128, 169, -207, 255, 129, -129, 130, 5]);
        let small: Vec<i64> = (-40..=40).map(|r| at(r, 8, 32)).collect();
        let mut want = vec![-8; 9];
        want.extend([-7; 16]);
        want.extend([-6; 8]);
        want.extend([-5, -5, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 5, 5]);
        want.extend([6; 8]);
        want.extend([7; 16]);
        want.extend([8; 9]);
        assert_eq!(small, want);
        assert_eq!(at(5, -1, 512), 5);
    }
}
