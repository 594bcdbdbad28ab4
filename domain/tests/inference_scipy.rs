//! The tests across annotators against scipy 1.17.1 and statsmodels 0.15.0 themselves
//! (fixtures made by make_inference_fixtures.py): Welch's test and the one-sample test with
//! their intervals, Pearson's r with its p and Fisher-z interval, the ANCOVA coefficient with its
//! standard error, and the chi-square quantiles of the planner.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use domain::stats::{against_fixed, ancova, correlation, dist, welch};
use serde_json::Value;

mod common;
use common::{close, f, fixture, fs, pairs, same_adjustment};

fn vectors() -> Value {
    let v = fixture(include_str!("fixtures/inference_vectors.json"));
    assert_eq!(v["scipy"], "1.17.1");
    v
}

/// A t-test's statistic, df, p and 95% interval against scipy's.
fn same_test(t: domain::stats::TTest, c: &Value, what: &str) {
    close(t.t, f(&c["t"]), 1e-12, &format!("{what} t"));
    close(t.df, f(&c["df"]), 1e-12, &format!("{what} df"));
    close(t.p, f(&c["p"]), 1e-10, &format!("{what} p"));
    let i = t.interval(0.95);
    close(i.low, f(&c["low"]), 1e-10, &format!("{what} low"));
    close(i.high, f(&c["high"]), 1e-10, &format!("{what} high"));
}

#[test]
fn welch_and_one_sample_tests_equal_scipy() {
    let v = vectors();
    for c in v["welch"].as_array().unwrap() {
        same_test(welch(&fs(&c["a"]), &fs(&c["b"])).unwrap(), c, "welch");
    }
    for c in v["against_fixed"].as_array().unwrap() {
        let t = against_fixed(&fs(&c["xs"]), f(&c["value"])).unwrap();
        same_test(t, c, "one-sample");
    }
}

#[test]
fn pearson_and_ancova_equal_scipy_and_statsmodels() {
    let v = vectors();
    for c in v["pearson"].as_array().unwrap() {
        let r = correlation(&fs(&c["x"]), &fs(&c["y"]), 0.95).unwrap();
        close(r.r, f(&c["r"]), 1e-12, "r");
        close(r.p, f(&c["p"]), 1e-10, "r's p");
        match (r.interval, c.get("low")) {
            (Some(i), Some(low)) => {
                close(i.low, f(low), 1e-10, "r low");
                close(i.high, f(&c["high"]), 1e-10, "r high");
            }
            (None, None) => {}
            other => panic!("interval {other:?}"),
        }
    }
    for c in v["ancova"].as_array().unwrap() {
        let fit = ancova(&pairs(&c["a"]), &pairs(&c["b"])).unwrap();
        same_adjustment(&fit, c);
        let t = fit.test.unwrap();
        close(t.se, f(&c["se"]), 1e-10, "se");
        close(t.df, f(&c["df"]), 1e-12, "df");
        close(t.p, f(&c["p"]), 1e-10, "p");
    }
}

#[test]
fn chi_square_quantiles_equal_scipy() {
    let v = vectors();
    for c in v["chi2_quantile"].as_array().unwrap() {
        let got = dist::chi2_quantile(f(&c["p"]), f(&c["df"]));
        close(got, f(&c["x"]), 1e-10, &format!("chi2.ppf {c}"));
    }
}
