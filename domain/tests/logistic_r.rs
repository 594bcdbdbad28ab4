//! The logistic scenario model against R's lme4 1.1-31 itself (fixtures made by
//! make_logistic_fixtures.R): `glmer(y ~ 0 + group + (1|unit) + (1|item), family = binomial)`
//! on 0/1 outcomes of 3 to 10 annotators per group, balanced and with cells missing, more items
//! than annotators and fewer, and annotators who hardly differ. Estimates, their covariance
//! (glmer's, from the Hessian in θ and β), the two standard deviations, the deviance and each
//! contrast's Wald z and p agree to 1e-4, and the deviance at R's estimates, computed here, equals
//! R's to 1e-8 (the same criterion).
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use domain::stats::mixed::logistic::{deviance_at, fit};

mod common;
use common::{close as near, f, fixture, fs, observations};

#[test]
fn fits_equal_glmer() {
    let v = fixture(include_str!("fixtures/logistic_vectors.json"));
    assert_eq!(v["lme4"], "1.1.31");
    let sets = v["sets"].as_array().unwrap();
    assert!(sets.len() >= 7);
    for set in sets {
        let name = set["name"].as_str().unwrap();
        let obs = observations(set);
        // The same criterion: the deviance at R's optimum, as R gives it.
        let at_r = deviance_at(
            &obs,
            f(&set["sd_unit"]),
            f(&set["sd_item"]),
            &fs(&set["beta"]),
        );
        near(
            at_r.unwrap(),
            f(&set["deviance"]),
            1e-8,
            &format!("{name}: deviance at R's estimates"),
        );
        let m = fit(&obs).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.singular, set["singular"].as_bool().unwrap(), "{name}");
        near(
            m.deviance,
            f(&set["deviance"]),
            1e-6,
            &format!("{name}: deviance"),
        );
        near(
            m.sd_unit,
            f(&set["sd_unit"]),
            1e-4,
            &format!("{name}: annotator SD"),
        );
        near(
            m.sd_item,
            f(&set["sd_item"]),
            1e-4,
            &format!("{name}: item SD"),
        );
        for (g, w) in m.beta.iter().zip(fs(&set["beta"])) {
            near(*g, w, 1e-4, &format!("{name}: beta"));
        }
        // R writes the covariance column by column; it is symmetric.
        for (g, w) in m.vcov.iter().zip(fs(&set["vcov"])) {
            near(*g, w, 1e-4, &format!("{name}: vcov"));
        }
        for c in set["contrasts"].as_array().unwrap() {
            let l = fs(&c["l"]);
            let what = format!("{name}: contrast {l:?}");
            let t = m.wald(&l).unwrap_or_else(|| panic!("{what}: no test"));
            near(
                t.estimate,
                f(&c["estimate"]),
                1e-4,
                &format!("{what} estimate"),
            );
            near(t.se, f(&c["se"]), 1e-4, &format!("{what} se"));
            near(t.z, f(&c["z"]), 1e-4, &format!("{what} z"));
            near(t.p, f(&c["p"]), 1e-4, &format!("{what} p"));
        }
    }
}
