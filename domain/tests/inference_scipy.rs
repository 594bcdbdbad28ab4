//! The tests across annotators against scipy 1.17.1 and statsmodels 0.15.0 themselves
//! (fixtures made by make_inference_fixtures.py): Welch's test and the one-sample test with
//! their intervals, Pearson's r with its p and Fisher-z interval, the ANCOVA coefficient with its
//! standard error, and the chi-square quantiles of the planner.
use domain::stats::{against_fixed, ancova, correlation, dist, welch};
use serde_json::Value;

fn vectors() -> Value {
    let v: Value = serde_json::from_str(include_str!("fixtures/inference_vectors.json")).unwrap();
    assert_eq!(v["scipy"], "1.17.1");
    v
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn fs(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(f).collect()
}

fn pairs(v: &Value) -> Vec<(f64, f64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p[0]), f(&p[1])))
        .collect()
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "{what}: {got} != {want}"
    );
}

#[test]
fn welch_and_one_sample_tests_equal_scipy() {
    let v = vectors();
    for c in v["welch"].as_array().unwrap() {
        let t = welch(&fs(&c["a"]), &fs(&c["b"])).unwrap();
        close(t.t, f(&c["t"]), 1e-12, "welch t");
        close(t.df, f(&c["df"]), 1e-12, "welch df");
        close(t.p, f(&c["p"]), 1e-10, "welch p");
        let i = t.interval(0.95);
        close(i.low, f(&c["low"]), 1e-10, "welch low");
        close(i.high, f(&c["high"]), 1e-10, "welch high");
    }
    for c in v["against_fixed"].as_array().unwrap() {
        let t = against_fixed(&fs(&c["xs"]), f(&c["value"])).unwrap();
        close(t.t, f(&c["t"]), 1e-12, "one-sample t");
        close(t.df, f(&c["df"]), 1e-12, "one-sample df");
        close(t.p, f(&c["p"]), 1e-10, "one-sample p");
        let i = t.interval(0.95);
        close(i.low, f(&c["low"]), 1e-10, "one-sample low");
        close(i.high, f(&c["high"]), 1e-10, "one-sample high");
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
        close(
            fit.difference,
            f(&c["difference"]),
            1e-10,
            "adjusted difference",
        );
        close(fit.slope, f(&c["slope"]), 1e-10, "slope");
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
