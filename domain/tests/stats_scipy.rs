//! The report's statistics against scipy 1.17.1 and statsmodels 0.15.0 themselves
//! (fixtures/stats, made by make_stats_fixtures.py): distributions, intervals, the paired
//! permutation test, Holm's adjustment and the power planner to the printed precision; the
//! seeded bootstraps within their Monte Carlo error of scipy's (and of a numpy run of the same
//! two-level scheme).
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use domain::stats::{dist, interval, paired, power};
use serde_json::Value;

mod common;
use common::{close, f, fixture, fs, pairs, rows, same_adjustment};

fn vectors() -> Value {
    let v = fixture(include_str!("fixtures/stats_vectors.json"));
    assert_eq!(v["scipy"], "1.17.1");
    v
}

#[test]
fn distributions_equal_scipy() {
    let v = vectors();
    for c in v["t_quantile"].as_array().unwrap() {
        let got = dist::t_quantile(f(&c["p"]), f(&c["df"]));
        close(got, f(&c["x"]), 1e-10, &format!("t.ppf {c}"));
    }
    for c in v["normal_quantile"].as_array().unwrap() {
        close(
            dist::normal_quantile(f(&c["p"])),
            f(&c["x"]),
            1e-12,
            "norm.ppf",
        );
    }
    for c in v["nct_cdf"].as_array().unwrap() {
        let got = dist::nct_cdf(f(&c["x"]), f(&c["df"]), f(&c["nc"]));
        close(got, f(&c["cdf"]), 1e-9, &format!("nct.cdf {c}"));
    }
}

#[test]
fn t_intervals_and_percentiles_equal_scipy_and_numpy() {
    let v = vectors();
    for c in v["t_interval"].as_array().unwrap() {
        let i = interval::t_interval(&fs(&c["xs"]), 0.95).unwrap();
        close(i.low, f(&c["low"]), 1e-12, "t.interval low");
        close(i.high, f(&c["high"]), 1e-12, "t.interval high");
    }
    for c in v["percentile"].as_array().unwrap() {
        let xs = fs(&c["xs"]);
        for (q, want) in fs(&c["q"]).into_iter().zip(fs(&c["values"])) {
            close(interval::percentile(&xs, q), want, 1e-12, "np.percentile");
        }
    }
}

#[test]
fn the_permutation_test_equals_scipy() {
    let v = vectors();
    for c in v["permutation_exact"].as_array().unwrap() {
        let t = paired::sign_flip_test(&fs(&c["d"]), paired::RESAMPLES, 1).unwrap();
        assert!(t.exact);
        close(t.statistic, f(&c["statistic"]), 1e-12, "statistic");
        close(t.p, f(&c["p"]), 1e-12, &format!("exact p of {}", c["d"]));
    }
    for c in v["permutation_random"].as_array().unwrap() {
        let t = paired::sign_flip_test(&fs(&c["d"]), paired::RESAMPLES, 1).unwrap();
        assert!(!t.exact);
        // scipy drew 199,999 patterns, we draw 9,999: equal within four standard errors of
        // ours (p is twice a tail share m, whose error is √(m(1 − m)/9,999)).
        let want = f(&c["p"]);
        let m = (want / 2.0).min(0.5);
        let se = 2.0 * (m * (1.0 - m) / paired::RESAMPLES as f64).sqrt();
        assert!(
            (t.p - want).abs() <= 4.0 * se + 1e-3,
            "random p: {} != {want}",
            t.p
        );
    }
    for c in v["holm"].as_array().unwrap() {
        for (got, want) in paired::holm(&fs(&c["p"]))
            .into_iter()
            .zip(fs(&c["adjusted"]))
        {
            close(got, want, 1e-12, "holm");
        }
    }
}

#[test]
fn pearson_equals_scipy() {
    let v = vectors();
    for c in v["pearson"].as_array().unwrap() {
        let got = domain::stats::pearson(&fs(&c["x"]), &fs(&c["y"])).unwrap();
        close(got, f(&c["r"]), 1e-12, "pearsonr");
    }
}

#[test]
fn the_screening_adjustment_equals_statsmodels_ols() {
    let v = vectors();
    for c in v["adjusted"].as_array().unwrap() {
        let fit = domain::stats::ancova(&pairs(&c["a"]), &pairs(&c["b"])).unwrap();
        same_adjustment(&fit, c);
    }
}

#[test]
fn the_planner_equals_statsmodels() {
    let v = vectors();
    for c in v["power"].as_array().unwrap() {
        let got =
            power::two_sample_power(f(&c["effect"]), f(&c["n1"]), f(&c["n2"]), f(&c["alpha"]));
        close(got, f(&c["power"]), 1e-9, &format!("power {c}"));
    }
    for c in v["units_needed"].as_array().unwrap() {
        let got = power::units_needed(f(&c["effect"]), f(&c["power"]), f(&c["alpha"])).unwrap();
        close(got, f(&c["n"]), 1e-6, &format!("solve_power {c}"));
    }
}

#[test]
fn bootstraps_agree_within_monte_carlo_error() {
    let v = vectors();
    let b = &v["bootstrap_items"];
    let i = interval::bootstrap_mean(&[fs(&b["x"])], 50_000, 11).unwrap();
    close(i.low, f(&b["low"]), 0.005, "items low");
    close(i.high, f(&b["high"]), 0.005, "items high");
    let t = &v["bootstrap_two_level"];
    let (a, bb) = (rows(&t["a"]), rows(&t["b"]));
    let m = interval::bootstrap_mean(&bb, 40_000, 12).unwrap();
    let want = fs(&t["mean_b"]);
    close(m.low, want[0], 0.006, "two-level low");
    close(m.high, want[1], 0.006, "two-level high");
    let d = interval::bootstrap_difference(&a, &bb, 40_000, 13).unwrap();
    let want = fs(&t["difference"]);
    close(d.low, want[0], 0.006, "difference low");
    close(d.high, want[1], 0.006, "difference high");
}
