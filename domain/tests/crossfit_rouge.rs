//! CrossFit's Rouge-L against values made by the `rouge` package 1.0.0 itself (fixtures/crossfit,
//! made by make_rouge_fixtures.py): every item to the last bit, and a test set's mean.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use domain::crossfit::metrics::{evaluate, item_score, Metric};
use serde_json::Value;

fn items() -> Vec<(String, Vec<String>, f64)> {
    let v: Value =
        serde_json::from_str(include_str!("fixtures/crossfit/rouge_vectors.json")).unwrap();
    assert_eq!(v["rouge_version"], "1.0.0");
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let golds = i["golds"].as_array().unwrap();
            (
                i["prediction"].as_str().unwrap().to_string(),
                golds
                    .iter()
                    .map(|g| g.as_str().unwrap().to_string())
                    .collect(),
                i["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_item_equals_the_rouge_package() {
    let items = items();
    assert!(items.len() > 300);
    let mut wrong = Vec::new();
    for (pred, golds, want) in &items {
        let got = item_score(Metric::RougeL, pred, golds).unwrap();
        if got.to_bits() != want.to_bits() {
            wrong.push(format!("{pred:?} vs {golds:?}: {got} != {want}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} items differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn a_test_set_mean_equals_the_package_mean() {
    let items = items();
    let preds: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
    let golds: Vec<Vec<String>> = items.iter().map(|i| i.1.clone()).collect();
    let want = items.iter().map(|i| i.2).sum::<f64>() / items.len() as f64;
    let got = evaluate(Metric::RougeL, &preds, &golds)
        .unwrap()
        .value
        .unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
}
