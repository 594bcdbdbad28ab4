//! The bundle's `analysis_draws.R` makes the report's seeded draws again: R's SplitMix64, item
//! bootstrap, sign flips and random relabellings give the report's own numbers on designs too
//! large to enumerate (which simulated bundles rarely reach with a p away from its floor).

use super::{r_available, stdout_of};
use domain::rng::SplitMix64;
use domain::stats::{self, relabel};
use std::fmt::Write as _;
use std::process::Command;

/// An R vector literal of `xs`, every digit kept.
fn r_vector(xs: &[f64]) -> String {
    let parts: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    format!("c({})", parts.join(", "))
}

/// An R matrix literal of `rows` (a row per unit).
fn r_matrix(rows: &[Vec<f64>]) -> String {
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    format!(
        "matrix({}, nrow = {}, byrow = TRUE)",
        r_vector(&flat),
        rows.len()
    )
}

/// Unit scores with no difference between groups (so that p is away from its floor: the test
/// asserts tens of relabellings as extreme as the observed).
fn scores(rng: &mut SplitMix64, n: usize) -> Vec<f64> {
    (0..n).map(|_| 0.6 + 0.1 * rng.normal()).collect()
}

#[test]
fn r_draws_what_the_report_drew() {
    if !r_available() {
        return;
    }
    let mut rng = SplitMix64(20_261_207);
    let seed = 0x9a3f_0c11_d00d_beef_u64;
    let hex = format!("{seed:016x}");
    let (a, b) = (scores(&mut rng, 13), scores(&mut rng, 13));
    let pair = stats::relabel_test(&a, &b, seed).unwrap();
    assert!(!pair.exact && pair.p > 0.001, "{pair:?}");
    let groups: Vec<Vec<f64>> = (0..4).map(|_| scores(&mut rng, 10)).collect();
    let views: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
    let w = [-1.5, -0.5, 0.5, 1.5];
    let trend = stats::contrast_relabel_test(&views, &w, seed).unwrap();
    assert!(!trend.exact && trend.p > 0.001, "{trend:?}");
    let trend_ends = stats::shift_interval(&views, &w, 0.05, seed).unwrap();
    let d: Vec<f64> = (0..150).map(|_| 0.2 * rng.normal()).collect();
    let flips = stats::sign_flip_test(&d, stats::paired::RESAMPLES, seed).unwrap();
    assert!(!flips.exact);
    let small = stats::sign_flip_test(&d[..12], stats::paired::RESAMPLES, seed).unwrap();
    assert!(small.exact);
    let cell = |rng: &mut SplitMix64| -> Vec<Vec<f64>> {
        (0..3)
            .map(|_| {
                (0..57)
                    .map(|_| f64::from(u8::from(rng.unit() < 0.7)))
                    .collect()
            })
            .collect()
    };
    let (ca, cb) = (cell(&mut rng), cell(&mut rng));
    let one = stats::bootstrap_items(&ca, stats::interval::RESAMPLES, seed).unwrap();
    let diff = stats::bootstrap_items_difference(&ca, &cb, stats::interval::RESAMPLES, seed, 0.98)
        .unwrap();

    let mut script = String::new();
    let draws = concat!(env!("CARGO_MANIFEST_DIR"), "/../store/src/");
    writeln!(
        script,
        "exact_limit <- {}; resamples <- {}",
        relabel::EXACT_LIMIT,
        relabel::RESAMPLES
    )
    .unwrap();
    for part in ["analysis_draws.R", "analysis_relabel.R"] {
        writeln!(script, "source('{draws}{part}')").unwrap();
    }
    writeln!(
        script,
        "s <- '{hex}'; a <- {}; b <- {}",
        r_vector(&a),
        r_vector(&b)
    )
    .unwrap();
    writeln!(script, "pair <- relabel_design(list(a, b), c(-1, 1), s)").unwrap();
    let g: Vec<String> = groups.iter().map(|x| r_vector(x)).collect();
    writeln!(
        script,
        "trend <- relabel_design(list({}), {}, s)",
        g.join(", "),
        r_vector(&w)
    )
    .unwrap();
    writeln!(
        script,
        "d <- {}; ca <- {}; cb <- {}",
        r_vector(&d),
        r_matrix(&ca),
        r_matrix(&cb)
    )
    .unwrap();
    writeln!(
        script,
        "out <- c(relabel_p(pair), relabel_p(trend), shift_interval(trend, 0.05), \
         sign_flip_p(d, s), sign_flip_p(d[1:12], s), bootstrap_interval(list(ca), s, 0.95), \
         bootstrap_interval(list(ca, cb), s, 0.98))\n\
         cat(sprintf('%.17g', out), sep = '\\n')"
    )
    .unwrap();
    let said = stdout_of(
        Command::new("Rscript").args(["-e", &script]),
        "Rscript (.ci/setup installs R)",
    );
    let r: Vec<f64> = said.lines().map(|l| l.parse().unwrap()).collect();
    let report = [
        pair.p,
        trend.p,
        trend_ends.low,
        trend_ends.high,
        flips.p,
        small.p,
        one.low,
        one.high,
        diff.low,
        diff.high,
    ];
    let names = [
        "pair p",
        "trend p",
        "trend low",
        "trend high",
        "sign flip p",
        "exact sign flip p",
        "bootstrap low",
        "bootstrap high",
        "difference low",
        "difference high",
    ];
    assert_eq!(r.len(), report.len(), "{said}");
    for ((name, r), report) in names.iter().zip(&r).zip(report) {
        assert!(
            (r - report).abs() <= 1e-9,
            "{name}: R {r} vs the report {report}"
        );
    }
}
