//! SplitMix64, the platform's one small seeded generator: worker item orders, the baseline
//! head's initial weights, the simulated annotators of the tests. Same seed, same numbers.

#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

/// What each draw adds to the state.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The generator as it will be after `n` more draws, without drawing them (the state only
    /// counts), so that pieces of one stream can be drawn in parallel.
    pub fn ahead(&self, n: u64) -> SplitMix64 {
        SplitMix64(self.0.wrapping_add(n.wrapping_mul(GAMMA)))
    }

    /// An index below `n` (> 0), by remainder.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in the open interval (0, 1).
    pub fn open_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.open_unit(), self.open_unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // SplitMix64 from seed 0 (the reference implementation's first outputs).
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        // Jumping ahead lands where drawing does.
        let mut r = SplitMix64(3);
        let ahead = r.ahead(1000);
        for _ in 0..1000 {
            r.next_u64();
        }
        assert_eq!(ahead.0, r.0);
        let mut r = SplitMix64(7);
        let xs: Vec<f64> = (0..1000).map(|_| r.open_unit()).collect();
        assert!(xs.iter().all(|x| *x > 0.0 && *x < 1.0));
    }
}
