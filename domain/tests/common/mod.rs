//! Reading the reference fixtures (JSON written by scipy, statsmodels or R): numbers, lists of
//! numbers and rows, and a comparison that names what differs.
#![allow(dead_code)]

use domain::stats::mixed::Obs;
use serde_json::Value;

/// A fixture file's JSON.
pub fn fixture(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

pub fn fs(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(f).collect()
}

pub fn rows(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(fs).collect()
}

/// `got` within `tol` of `want`, relative to `want` where it exceeds 1.
pub fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "{what}: {got} != {want}"
    );
}

/// `[[x, y], …]` as pairs.
pub fn pairs(v: &Value) -> Vec<(f64, f64)> {
    rows(v).iter().map(|p| (p[0], p[1])).collect()
}

/// An ANCOVA fit's adjusted difference and slope against statsmodels' OLS coefficients.
pub fn same_adjustment(fit: &domain::stats::Ancova, c: &Value) {
    close(
        fit.difference,
        f(&c["difference"]),
        1e-10,
        "adjusted difference",
    );
    close(fit.slope, f(&c["slope"]), 1e-10, "slope");
}

/// A fixture's data set as observations: `unit`, `item`, `group` (0-based) and `y` columns, the
/// fixed effects one indicator per group (`y ~ 0 + group`).
pub fn observations(set: &Value) -> Vec<Obs> {
    let (unit, item, group, y) = (
        fs(&set["unit"]),
        fs(&set["item"]),
        fs(&set["group"]),
        fs(&set["y"]),
    );
    let groups = group.iter().fold(0.0_f64, |m, g| m.max(*g)) as usize + 1;
    (0..y.len())
        .map(|k| {
            let mut x = vec![0.0; groups];
            x[group[k] as usize] = 1.0;
            Obs {
                unit: unit[k] as usize,
                item: item[k] as usize,
                x,
                y: y[k],
            }
        })
        .collect()
}
