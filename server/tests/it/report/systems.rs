//! Humans against a system in the bundle: a system's imported runs on SST-2 give the report its
//! comparisons with the humans (Welch's test across the system's splits, and the one-sample
//! test against its one run), `system_scores.csv` carries their item scores, and the bundle's
//! `analysis.R` reruns those cells (`analysis_systems.R`) and catches one of them changed.

use super::tamper::{kinds_differing, r_over_tampered, PY_TAMPER};
use super::{python, r_available, Line, TaskFiles};
use crate::common::client::{send, Env};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use std::path::Path;

/// The system's runs, (k, split): at k = 0 one zero-shot run; at k = 10 a run on every split
/// (the humans' split 1 among them: one run compared, the one-sample test); at k = 20 runs on
/// splits 2 and 3 only (none on the humans' split: both compared, Welch's test); at k = 30 none.
const RUNS: [(u32, u32); 8] = [
    (0, 0),
    (10, 1),
    (10, 2),
    (10, 3),
    (10, 4),
    (10, 5),
    (20, 2),
    (20, 3),
];

/// Imports the system's runs on `t` (SST-2) over HTTP: each split wrong on its own share of the
/// test items (every third to every fifth), so that the runs' scores spread.
pub(super) async fn import_runs(env: &Env, cookie: &str, t: &TaskFiles) {
    let test: &[Line] = &t.files[&t.test_file];
    let wrong = |gold: &str| {
        if gold == "positive" {
            "negative"
        } else {
            "positive"
        }
    };
    for (k, split) in RUNS {
        let lines: String = test
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let gold = l.answer[0].as_str();
                let answer = if i % (3 + split as usize % 3) == 0 {
                    wrong(gold)
                } else {
                    gold
                };
                format!("{}\n", serde_json::json!({"id": l.id, "answer": [answer]}))
            })
            .collect();
        let uri = format!(
            "/import/predictions?task={}&system=test%20system&k={k}&split={split}",
            t.name
        );
        let req = Request::post(uri)
            .header("cookie", cookie)
            .body(Body::from(lines))
            .unwrap();
        let r = send(&env.state, req).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
}

/// The unpacked bundle `dir`, whose `analysis.R` said `said`: the humans-against-system rows
/// were rerun, both tests among them, and the system's own cells; a copy with one of their
/// p's, one with an interval's end, one with the sign-flip p, one with the item bootstrap's
/// end and one with the training order's first mean changed makes R exit 1 naming it.
pub(super) fn check_bundle(dir: &Path, said: &str) {
    if !r_available() {
        return;
    }
    let rerun: Vec<&str> = said
        .lines()
        .filter(|l| l.contains(" vs humans k=") && l.ends_with(" ok"))
        .collect();
    for cell in [
        "difference",
        "SE",
        "df",
        "p",
        "interval low",
        "effect",
        "method",
        "items_p (sign flip)",
        "more items low",
        "more items high",
    ] {
        assert!(
            rerun.iter().any(|l| l.contains(&format!(" {cell} "))),
            "{cell}\n{said}"
        );
    }
    for test in ["Welch's t-test", "one-sample t-test"] {
        assert!(rerun.iter().any(|l| l.contains(test)), "{test}\n{said}");
    }
    // The system's own cells: its mean over its runs, and (two runs or more) the intervals over
    // other splits and over more items.
    for (k, cells) in [
        (0, &["mean", "more items low"][..]),
        (
            10,
            &[
                "mean",
                "interval low",
                "interval high",
                "more items low",
                "more items high",
            ],
        ),
        (20, &["mean", "interval low", "more items high"]),
    ] {
        for cell in cells {
            let head = format!(" test system k={k} {cell} ");
            assert!(
                said.lines()
                    .any(|l| l.contains(&head) && l.ends_with(" ok")),
                "{head}\n{said}"
            );
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let columns = ["p", "other_units_high", "items_p", "more_items_low"];
    let mut copies: Vec<_> = columns
        .iter()
        .map(|c| {
            let dst = tmp.path().join(format!("tampered-{c}"));
            let (src, to) = (dir.display().to_string(), dst.display().to_string());
            python(PY_TAMPER, &[&src, &to, "comparison", c, " vs humans k="]);
            dst
        })
        .collect();
    // And the training order's first row (the first half's S1 of the first k-shot group).
    let order = tmp.path().join("tampered-training-order");
    let (src, to) = (dir.display().to_string(), order.display().to_string());
    python(PY_TAMPER, &[&src, &to, "training_order", "mean"]);
    copies.push(order);
    let kinds = columns.map(|c| format!("{c}/system"));
    let kinds = kinds
        .iter()
        .map(String::as_str)
        .chain(["training_order mean"]);
    let said = r_over_tampered(&dir.join("analysis.R"), &copies);
    for (dst, kind) in copies.iter().zip(kinds) {
        assert_eq!(kinds_differing(&said, dst), [kind], "{said}");
    }
}
