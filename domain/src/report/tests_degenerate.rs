//! Data a test cannot be made from: every answer alike, one annotator a scenario. The family's
//! rows stay and say why, and the planner refuses such a pilot with the reason.

use super::draw::scores_csv;
use super::tests::{annotator, data, rules};
use super::*;
use crate::stats::groups::Method;
use std::collections::HashMap;

fn tasks() -> HashMap<String, TaskData> {
    [("Toy".to_string(), data())].into_iter().collect()
}

/// The study's family and planner on these annotators (study 1's rules).
fn study_of(annotators: &[AnnotatorRecord]) -> Report {
    build(&tasks(), annotators, &rules(vec![(2, 1), (4, 1)], false))
}

#[test]
fn degenerate_data_keep_their_rows_and_say_why_there_is_no_test() {
    use crate::report::inference::Refusal;
    use crate::stats::groups::Untestable;
    const R: [&str; 4] = ["positive", "negative", "positive", "negative"];
    // Every answer right: no variance at all.
    let right: Vec<AnnotatorRecord> = (1..=9)
        .map(|n| annotator(n, [0, 2, 4][(n as usize - 1) / 3], 0, R))
        .collect();
    // One annotator a scenario, who differ.
    let one = vec![
        annotator(1, 0, 0, ["positive", "negative", "positive", "negative"]),
        annotator(4, 2, 0, ["positive", "negative", "negative", "negative"]),
        annotator(7, 4, 0, ["negative", "negative", "negative", "negative"]),
    ];
    for (annotators, why, refusal) in [
        (
            right,
            Untestable::AllAlike { score: 1.0 },
            Refusal::NoSpread,
        ),
        (one, Untestable::OneAnnotatorEach, Refusal::OneAnnotatorEach),
    ] {
        let r = study_of(&annotators);
        let c = &r.all.comparisons;
        assert_eq!(c.len(), 4, "{why:?}: every comparison of the family stays");
        for c in c {
            assert_eq!(c.method, Method::NoTest { why }, "{}", c.label);
            assert_eq!(
                (c.p(), c.p_holm, c.test, c.interval),
                (None, None, None, None)
            );
        }
        let md = crate::report::draw::layout::markdown(&r);
        assert!(md.contains(&format!("no test: {}", why.describe())), "{md}");
        let csv = scores_csv::scores_csv(&r);
        assert!(csv
            .lines()
            .any(|l| l.starts_with("comparison,") && l.contains("no test: ")));
        // The planner refuses, with the reason, in every format.
        assert!(r.all.plan.is_empty(), "{:?}", r.all.plan);
        assert_eq!(r.all.plan_refused[0].why, refusal);
        assert!(md.contains(&refusal.describe()), "{md}");
        assert!(csv.contains(&refusal.describe()), "{csv}");
    }
}
