//! exp, GELU and GELU's slope eight values at a time (`wide`'s vectors: SSE on any x86-64), for
//! the softmaxes and GELU: libm's scalar erf and exp took about 4% of a fine-tuning update.
//!
//! By hand because no crate has a vector erf: GELU's is Abramowitz and Stegun's 7.1.26 (absolute
//! error under 1.5e-7), the formula PyTorch's CPU GELU vectorizes: GELU and its slope stay
//! within 3e-7 of candle's `gelu_erf` and its derivative (2.2e-7 and 2.4e-7 at worst on a
//! grid). exp is `wide`'s (Cephes' polynomial), with NaN and overflow as `f32::exp` gives them.
//! Every value takes the same lanes (a slice's tail is padded), so a value's result does not
//! depend on where it lies in the slice or on the threads.

use wide::{f32x8, CmpGe, CmpLt};

/// Values per vector.
const LANES: usize = 8;

/// eˣ.
pub fn exp(x: f32x8) -> f32x8 {
    // `wide` gives 0 at and beyond ±87.3 and for NaN: overflow is ∞, NaN stays NaN.
    let y = x
        .cmp_ge(f32x8::from(87.3))
        .blend(f32x8::from(f32::INFINITY), x.exp());
    x.is_nan().blend(x, y)
}

/// Φ(x), the standard normal's distribution function, and e^(−x²/2).
fn phi(x: f32x8) -> (f32x8, f32x8) {
    let u = x * f32x8::from(std::f32::consts::FRAC_1_SQRT_2);
    let a = u.abs();
    let t = f32x8::from(1.0) / (f32x8::from(0.327_591_1) * a + f32x8::from(1.0));
    let [p1, p2, p3, p4, p5] = [
        0.254_829_6,
        -0.284_496_72,
        1.421_413_8,
        -1.453_152_1,
        1.061_405_4,
    ]
    .map(f32x8::from);
    let r = (((p5 * t + p4) * t + p3) * t + p2) * t + p1;
    let density = exp(-(u * u));
    // erf(|u|) = 1 − r t e^(−u²); erf is odd.
    let erf_abs = f32x8::from(1.0) - r * t * density;
    let erf = u.cmp_lt(f32x8::from(0.0)).blend(-erf_abs, erf_abs);
    ((erf + f32x8::from(1.0)) * f32x8::from(0.5), density)
}

/// GELU (erf): x Φ(x).
pub fn gelu(x: f32x8) -> f32x8 {
    phi(x).0 * x
}

/// GELU's derivative: Φ(x) + x φ(x).
pub fn gelu_slope(x: f32x8) -> f32x8 {
    const INV_SQRT_2PI: f32 = 0.398_942_3;
    let (phi, density) = phi(x);
    phi + x * density * f32x8::from(INV_SQRT_2PI)
}

/// `f` over the values of `v`, in place.
pub fn in_place(v: &mut [f32], f: impl Fn(f32x8) -> f32x8) {
    for c in v.chunks_mut(LANES) {
        let y = f(vector(c)).to_array();
        c.copy_from_slice(&y[..c.len()]);
    }
}

/// Up to eight values as a vector, padded with zeros.
fn vector(s: &[f32]) -> f32x8 {
    let mut x = [0f32; LANES];
    x[..s.len()].copy_from_slice(s);
    f32x8::from(x)
}

/// `out[i] = f(a[i])` (both of one length).
pub fn map_into(out: &mut [f32], a: &[f32], f: impl Fn(f32x8) -> f32x8) {
    for (o, a) in out.chunks_mut(LANES).zip(a.chunks(LANES)) {
        o.copy_from_slice(&f(vector(a)).to_array()[..o.len()]);
    }
}

/// `out[i] = f(a[i], b[i])` (all three of one length).
pub fn zip_into(out: &mut [f32], a: &[f32], b: &[f32], f: impl Fn(f32x8, f32x8) -> f32x8) {
    for ((o, a), b) in out
        .chunks_mut(LANES)
        .zip(a.chunks(LANES))
        .zip(b.chunks(LANES))
    {
        o.copy_from_slice(&f(vector(a), vector(b)).to_array()[..o.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: impl Fn(f32x8) -> f32x8, x: f32) -> f32 {
        f(f32x8::from(x)).to_array()[0]
    }

    /// exp within 2 ulps of libm's over the softmax's range, 0 far below it, and libm's
    /// answers at the edges (overflow, NaN).
    #[test]
    fn exp_is_libms_to_two_ulps() {
        for i in 0..=20_000 {
            let x = -87.0 + 97.0 * i as f32 / 20_000.0;
            let (a, b) = (one(exp, x), x.exp());
            assert!(
                (a - b).abs() <= 2.0 * f32::EPSILON * b,
                "exp({x}): {a} against {b}"
            );
        }
        assert_eq!(one(exp, -10_000.0), 0.0);
        assert_eq!(one(exp, 100.0), f32::INFINITY);
        assert!(one(exp, f32::NAN).is_nan());
    }

    /// GELU and its slope within 3e-7 of libm's erf and exp (scaled by |x| where |x| > 1),
    /// over [−10, 10]: 7.1.26's error and the f32 rounding of its evaluation (2.2e-7 and
    /// 2.4e-7 at worst, 2026-12-02).
    #[test]
    fn gelu_and_its_slope_are_within_3e7_of_erfs() {
        let erf = |x: f32| candle_core::cpu::erf::erf_f32(x * std::f32::consts::FRAC_1_SQRT_2);
        for i in 0..=40_000 {
            let x = -10.0 + 20.0 * i as f32 / 40_000.0;
            let exact = (erf(x) + 1.0) * 0.5 * x;
            let slope = 0.5 * (1.0 + erf(x)) + x * 0.398_942_3 * (-0.5 * x * x).exp();
            let within = 3e-7 * x.abs().max(1.0);
            assert!((one(gelu, x) - exact).abs() <= within, "gelu({x})");
            assert!((one(gelu_slope, x) - slope).abs() <= within, "slope({x})");
        }
    }

    /// A value's result is the same wherever it lies: in a full vector or in the padded tail.
    #[test]
    fn tails_take_the_same_lanes() {
        let x: Vec<f32> = (0..21).map(|i| i as f32 * 0.37 - 3.0).collect();
        let mut whole = x.clone();
        in_place(&mut whole, gelu);
        for (i, v) in x.iter().enumerate() {
            assert_eq!(whole[i], one(gelu, *v));
        }
        let mut mapped = vec![0f32; x.len()];
        map_into(&mut mapped, &x, gelu);
        assert_eq!(mapped, whole);
        let mut zipped = vec![0f32; x.len()];
        zip_into(&mut zipped, &x, &x, |a, b| a * b);
        assert_eq!(zipped, x.iter().map(|v| v * v).collect::<Vec<_>>());
    }
}
