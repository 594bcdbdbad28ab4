//! Dropout with masks drawn from a seeded generator: the same factors on any number of
//! threads, applied on the CPU by a fused op.

use super::fused;
use candle_core::Tensor;
use domain::rng::SplitMix64;

/// Dropout with masks drawn from a seeded generator (runs repeat exactly); off at evaluation.
/// A clone draws the same masks as the original from where it was cloned.
#[derive(Clone)]
pub struct Dropout {
    p: f32,
    rng: Option<SplitMix64>,
}

impl Dropout {
    pub fn off() -> Dropout {
        Dropout { p: 0.0, rng: None }
    }

    pub fn on(p: f32, seed: u64) -> Dropout {
        Dropout {
            p,
            rng: (p > 0.0).then_some(SplitMix64(seed)),
        }
    }

    /// Zeroes each value with probability p and scales the rest by 1 / (1 - p).
    pub fn apply(&mut self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self.factors(x.elem_count()) {
            Some(mask) if fused::applies(x) => fused::scale_op(x, mask),
            Some(mask) => x * Tensor::from_vec(mask, x.shape(), x.device())?,
            None => Ok(x.clone()),
        }
    }

    /// The factors `apply` multiplies `n` values by (0, or 1 / (1 - p)); none where dropout is
    /// off. Each 64-bit draw gives four values (16 bits each), in order: pieces of the stream
    /// are drawn on rayon's threads from where the generator will be (`SplitMix64::ahead`), so
    /// the factors are the same on any number of threads.
    pub fn factors(&mut self, n: usize) -> Option<Vec<f32>> {
        use rayon::prelude::*;
        /// Values per parallel piece (a multiple of 4).
        const PIECE: usize = 1 << 14;
        let rng = self.rng.as_mut()?;
        let cut = (f64::from(self.p) * 65536.0) as u64;
        let keep = 1.0 / (1.0 - self.p);
        let mut mask = vec![0f32; n];
        mask.par_chunks_mut(PIECE)
            .enumerate()
            .for_each(|(i, piece)| {
                let mut r = rng.ahead((i * PIECE / 4) as u64);
                for four in piece.chunks_mut(4) {
                    let word = r.next_u64();
                    for (j, m) in four.iter_mut().enumerate() {
                        *m = if (word >> (16 * j)) & 0xffff < cut {
                            0.0
                        } else {
                            keep
                        };
                    }
                }
            });
        *rng = rng.ahead(n.div_ceil(4) as u64);
        Some(mask)
    }
}

#[cfg(test)]
mod tests {
    use super::Dropout;
    use domain::rng::SplitMix64;

    /// The factors drawn in parallel pieces are the stream's, four 16-bit draws per number in
    /// order, whatever the threads; the next call goes on from where this one ended.
    #[test]
    fn dropout_factors_follow_one_stream_on_any_number_of_threads() {
        let (p, seed, n) = (0.3f32, 11, 70_001);
        let mut r = SplitMix64(seed);
        let cut = (f64::from(p) * 65536.0) as u64;
        let mut reference = Vec::new();
        while reference.len() < 2 * n + 4 {
            let word = r.next_u64();
            for j in 0..4 {
                let dropped = (word >> (16 * j)) & 0xffff < cut;
                reference.push(if dropped { 0.0 } else { 1.0 / (1.0 - p) });
            }
        }
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut d = Dropout::on(p, seed);
            let first = pool.install(|| d.factors(n)).unwrap();
            let second = pool.install(|| d.factors(n)).unwrap();
            assert_eq!(first, reference[..n]);
            // n is not a multiple of 4: the last number's unused draws are skipped.
            assert_eq!(second, reference[n.div_ceil(4) * 4..][..n]);
        }
        assert!(Dropout::off().factors(5).is_none());
    }
}
