//! The distributions the report's statistics need: Student's t (quantiles for intervals and
//! tests), the standard normal, and the noncentral t (the power of a t-test).
//!
//! Student's t and the normal come from `statrs`; its t quantile is polished by Newton steps on
//! its own CDF (statrs inverts through an inverse incomplete beta that is only good to about
//! 1e-9, the CDF to about 1e-15). `statrs` has no noncentral t, so `nct_cdf` is Lenth's
//! algorithm AS 243 (Applied Statistics 38, 1989) written out here: the power planner's numbers
//! must equal statsmodels', which uses the exact noncentral t, not a normal approximation.

use statrs::distribution::{
    Binomial, ChiSquared, Continuous, ContinuousCDF, DiscreteCDF, Normal, StudentsT,
};
use statrs::function::beta::beta_reg;
use statrs::function::gamma::ln_gamma;

// Each distribution's parameters are its callers' contract (df > 0), as statrs checks them.
#[expect(clippy::expect_used, reason = "df > 0 is the callers' contract")]
fn t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df).expect("df > 0")
}

#[expect(
    clippy::expect_used,
    reason = "a standard normal's parameters are fixed"
)]
fn normal() -> Normal {
    Normal::new(0.0, 1.0).expect("a standard normal")
}

/// P(T <= x) for Student's t with `df` (> 0) degrees of freedom.
pub fn t_cdf(x: f64, df: f64) -> f64 {
    t(df).cdf(x)
}

/// The `p` quantile (0 < p < 1) of Student's t with `df` (> 0) degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    polished(&t(df), p)
}

/// The `p` quantile (0 < p < 1) of the chi-square distribution with `df` (> 0) degrees of
/// freedom (the interval of a standard deviation). statrs' own quantile is NaN in the lower
/// tail at small df, so the root of the CDF is found here: bisection on a bracket (the CDF is
/// increasing on (0, ∞)) until Newton steps from statrs' start, or the bracket's middle, stay
/// inside it.
#[expect(clippy::expect_used, reason = "df > 0 is the callers' contract")]
pub fn chi2_quantile(p: f64, df: f64) -> f64 {
    let dist = ChiSquared::new(df).expect("df > 0");
    let (mut lo, mut hi) = (0.0_f64, df.max(1.0));
    while dist.cdf(hi) < p {
        hi *= 2.0;
    }
    let start = dist.inverse_cdf(p);
    let mut x = if start.is_finite() && start > lo && start < hi {
        start
    } else {
        0.5 * (lo + hi)
    };
    for _ in 0..200 {
        let gap = dist.cdf(x) - p;
        if gap < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - gap / dist.pdf(x);
        let next = if newton.is_finite() && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - x).abs() <= 1e-15 * x.abs() || hi - lo <= 1e-300 {
            return next;
        }
        x = next;
    }
    x
}

/// statrs' quantile polished by Newton steps on its CDF.
fn polished<D: Continuous<f64, f64> + ContinuousCDF<f64, f64>>(dist: &D, p: f64) -> f64 {
    let mut x = dist.inverse_cdf(p);
    for _ in 0..3 {
        let density = dist.pdf(x);
        if density.is_nan() || density <= 0.0 {
            break;
        }
        let step = (dist.cdf(x) - p) / density;
        if !step.is_finite() {
            break;
        }
        x -= step;
    }
    x
}

/// P(Z <= x) for the standard normal.
pub fn normal_cdf(x: f64) -> f64 {
    normal().cdf(x)
}

/// The `p` quantile (0 < p < 1) of the standard normal.
pub fn normal_quantile(p: f64) -> f64 {
    normal().inverse_cdf(p)
}

/// P(T <= x) for the noncentral t with `df` (> 0) degrees of freedom and noncentrality `delta`
/// (AS 243: Guenther's twin series of incomplete beta functions; exact to about 1e-12 for
/// |delta| up to 37, far beyond what a power computation reaches).
pub fn nct_cdf(x: f64, df: f64, delta: f64) -> f64 {
    const MAX_TERMS: f64 = 2000.0;
    const ERROR_MAX: f64 = 1e-13;
    let r2pi = (2.0 / std::f64::consts::PI).sqrt();
    let ln_sqrt_pi = 0.5 * std::f64::consts::PI.ln();
    let (tt, del, negative) = if x >= 0.0 {
        (x, delta, false)
    } else {
        (-x, -delta, true)
    };
    let mut tnc = 0.0;
    let x2 = tt * tt / (tt * tt + df);
    if x2 > 0.0 {
        let lambda = del * del;
        let mut p = 0.5 * (-0.5 * lambda).exp();
        let mut q = r2pi * p * del;
        let mut s = 0.5 - p;
        let mut a = 0.5;
        let b = 0.5 * df;
        let rxb = (1.0 - x2).powf(b);
        let ln_beta = ln_sqrt_pi + ln_gamma(b) - ln_gamma(a + b);
        let mut x_odd = beta_reg(a, b, x2);
        let mut g_odd = 2.0 * rxb * (a * x2.ln() - ln_beta).exp();
        let mut x_even = 1.0 - rxb;
        let mut g_even = b * x2 * rxb;
        tnc = p * x_odd + q * x_even;
        let mut en = 1.0;
        loop {
            a += 1.0;
            x_odd -= g_odd;
            x_even -= g_even;
            g_odd *= x2 * (a + b - 1.0) / a;
            g_even *= x2 * (a + b - 0.5) / (a + 0.5);
            p *= lambda / (2.0 * en);
            q *= lambda / (2.0 * en + 1.0);
            s -= p;
            en += 1.0;
            tnc += p * x_odd + q * x_even;
            let bound = 2.0 * s * (x_odd - g_odd);
            if bound <= ERROR_MAX || en > MAX_TERMS {
                break;
            }
        }
    }
    tnc += 1.0 - normal_cdf(del);
    let cdf = if negative { 1.0 - tnc } else { tnc };
    cdf.clamp(0.0, 1.0)
}

/// P(X >= k) for X binomial with `n` trials of probability `p` (the upper tail, k included).
pub fn binomial_tail(k: u64, n: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    Binomial::new(p.clamp(0.0, 1.0), n).map_or(f64::NAN, |b| b.sf(k - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_values() {
        // t_{0.975, 2} and z_{0.975} as scipy gives them
        assert!((t_quantile(0.975, 2.0) - 4.302652729749462).abs() < 1e-12);
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-12);
        assert!((t_cdf(t_quantile(0.2, 7.0), 7.0) - 0.2).abs() < 1e-14);
        // With no noncentrality the noncentral t is Student's t.
        for x in [-3.0, -0.5, 0.0, 0.7, 2.5] {
            assert!((nct_cdf(x, 5.0, 0.0) - t_cdf(x, 5.0)).abs() < 1e-12, "{x}");
        }
        // Symmetry: P(T <= x; d) = 1 - P(T <= -x; -d).
        assert!((nct_cdf(1.3, 8.0, 2.0) + nct_cdf(-1.3, 8.0, -2.0) - 1.0).abs() < 1e-12);
        // scipy.stats.binom.sf(4, 6, 0.3) and binom.sf(10, 15, 0.3).
        assert!((binomial_tail(5, 6, 0.3) - 0.010935).abs() < 1e-12);
        assert!((binomial_tail(11, 15, 0.3) - 0.000_672_234_069_807).abs() < 1e-12);
        assert_eq!(binomial_tail(0, 6, 0.3), 1.0);
        assert_eq!(binomial_tail(6, 6, 0.0), 0.0);
    }
}
