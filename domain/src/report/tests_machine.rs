//! Humans against systems, the training order's correlation, screening and corpus-level
//! metrics on the hand-made task of `tests`.

use super::draw::layout::all_tables;
use super::draw::scores_csv;
use super::inference::{self, Status};
use super::machine::{attach, MachineRun};
use super::tests::{annotator, data, report, rules};
use super::*;
use crate::stats;
use crate::stats::groups::Method;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn machine(split: u32, right: [bool; 4]) -> MachineRun {
    let s = |b: bool| f64::from(u8::from(b));
    MachineRun {
        system: "m".into(),
        task: "Toy".into(),
        family: Family::Classification,
        k: 2,
        split,
        official: right.iter().map(|&b| s(b)).sum::<f64>() / 4.0,
        any_of: right.iter().map(|&b| s(b)).sum::<f64>() / 4.0,
        device: format!("running on CPU (test machine {split})"),
        items: right
            .iter()
            .enumerate()
            .map(|(i, &b)| (ExampleId(i as i64 + 1), s(b), s(b)))
            .collect(),
    }
}

fn against_m(r: &Report) -> Vec<&inference::Comparison> {
    r.all
        .comparisons
        .iter()
        .filter(|c| c.sides.get(1).is_some_and(|s| s.who == "m"))
        .collect()
}

#[test]
fn humans_against_a_system_carry_both_sides_spread() {
    let mut r = report();
    attach(
        &mut r,
        &[machine(1, [true; 4]), machine(2, [true, true, true, false])],
    );
    let m = &r.machines[0];
    // Splits score 1 and 0.75: on the logit scale 0.875 ± t(0.975, 1) · 0.125 / (0.875 · 0.125).
    let i = m.official_ci.unwrap().other_units.unwrap();
    assert!(i.low > 0.0 && i.high < 1.0 && i.low < 0.875 && 0.875 < i.high);
    let c = against_m(&r);
    assert_eq!(c.len(), 1);
    // The 2-shot humans (1, 0.75, 0) trained on split 1, where the system also ran: it is
    // compared on that split alone, its score taken as fixed.
    assert_eq!(c[0].test, stats::against_fixed(&[1.0, 0.75, 0.0], 1.0));
    let Method::OneSample { reason } = &c[0].method else {
        panic!("{:?}", c[0].method)
    };
    assert!(
        reason.contains("the system: its run on split 1, the humans' training split(s)"),
        "{reason}"
    );
    assert!(close(c[0].difference, 1.0 - 1.75 / 3.0));
    assert_eq!(
        (&c[0].sides[0].splits, &c[0].sides[1].splits),
        (&vec![1], &vec![1])
    );
    assert_eq!(
        (c[0].status, c[0].p_holm, c[0].study),
        (Status::Exploratory, None, None)
    );
    // The study's family is untouched by the system.
    assert_eq!(report().all.comparisons, r.all.comparisons[..4]);
    // A system without a run on the humans' split: Welch across the annotators and all its
    // splits (1 and 0.75), and the cell says so.
    let mut elsewhere = report();
    attach(
        &mut elsewhere,
        &[machine(2, [true; 4]), machine(3, [true, true, true, false])],
    );
    let c = against_m(&elsewhere);
    assert_eq!(c[0].test, stats::welch(&[1.0, 0.75, 0.0], &[1.0, 0.75]));
    let Method::Welch { reason } = &c[0].method else {
        panic!("{:?}", c[0].method)
    };
    assert!(
        reason.contains(
            "the system: its runs on splits 2, 3, all it has, as it has no run on one of the humans' training splits (1)"
        ),
        "{reason}"
    );
    assert_eq!((c[0].sides[0].k, c[0].sides[1].units), (2, 2));
    assert_eq!(c[0].sides[1].units_text(), "2 on splits 2, 3");
    // The tables show it, and a system without item scores gets no interval or comparison.
    let tables = all_tables(&r);
    let comparisons = tables.iter().find(|t| t.id == "comparisons-all").unwrap();
    assert!(comparisons
        .rows
        .iter()
        .any(|row| row[2] == "m k=2 vs humans k=2"
            && row[3] == "exploratory"
            && row[4] == "3 on split 1 vs 1 on split 1"
            && row[11] == "not in a family"));
    // Each run's hardware is in the cell, the tables and the CSV.
    assert_eq!(
        r.machines[0].devices,
        [
            "running on CPU (test machine 1)",
            "running on CPU (test machine 2)"
        ]
    );
    let runs = tables.iter().find(|t| t.id == "machine-runs").unwrap();
    assert_eq!(
        runs.rows[1],
        ["m", "Toy", "2", "2", "running on CPU (test machine 2)"]
    );
    let csv = scores_csv::scores_csv(&r);
    assert!(
        csv.lines().any(|l| l.starts_with("machine_run,machine:m,")
            && l.contains(",split 2,")
            && l.contains("running on CPU (test machine 2)")),
        "{csv}"
    );
    // Zero-shot humans against the system's zero-shot run: the cell names that run.
    let mut zero = report();
    attach(
        &mut zero,
        &[MachineRun {
            k: 0,
            split: 0,
            ..machine(0, [true; 4])
        }],
    );
    let c = against_m(&zero);
    assert_eq!(c[0].sides[0].k, 0);
    assert!(
        c[0].method
            .describe()
            .contains("the system's zero-shot run"),
        "{:?}",
        c[0].method
    );
    let mut bare = report();
    let mut run = machine(1, [true; 4]);
    run.items.clear();
    attach(&mut bare, &[run]);
    assert_eq!(bare.machines[0].official_ci, None);
    assert_eq!(bare.all.comparisons.len(), 4);
}

#[test]
fn the_training_step_by_position_and_time() {
    use super::order::Order;
    let (p, n) = ("positive", "negative");
    let mut annotators = vec![
        annotator(4, 2, 2, [p, n, p, n]),
        annotator(5, 2, 2, [p, n, n, n]),
        annotator(6, 2, 0, [n, p, n, p]),
        annotator(7, 4, 4, [p, n, p, n]),
        annotator(8, 4, 3, [p, n, p, n]),
        annotator(9, 4, 2, [p, n, p, n]),
    ];
    // The 2-shot workers take 2, 4 and 6 seconds per training example.
    for (a, seconds) in annotators.iter_mut().zip([2, 4, 6]) {
        for i in a
            .items
            .iter_mut()
            .filter(|i| i.phase == crate::place::Phase::Training)
        {
            i.submitted_at = Some(1_000 + 1_000 * seconds);
        }
    }
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), data())].into_iter().collect();
    let mut shuffled = rules(vec![(2, 1), (4, 1)], false);
    shuffled.get_mut(&StudyId(1)).unwrap().shuffle_training = true;
    let r = build(&tasks, &annotators, &shuffled);
    let cells = &r.all.order;
    assert_eq!(cells.iter().map(|c| c.k).collect::<Vec<_>>(), vec![2, 4]);
    // k=2, one example a half: w4 1 | 1, w5 1 | 1, w6 0 | 0.
    let two = &cells[0];
    assert_eq!(two.order, Order::Random);
    assert!(close(two.first_half.mean, 2.0 / 3.0) && close(two.second_half.mean, 2.0 / 3.0));
    assert!(close(two.seconds_per_example.mean, 4.0));
    // Test S1 1, 0.75, 0 against 2, 4, 6 seconds: r with its n and p; three pairs have no
    // Fisher-z interval.
    let want = stats::correlation(&[2.0, 4.0, 6.0], &[1.0, 0.75, 0.0], 0.95).unwrap();
    let got = two.time_vs_test.unwrap();
    assert_eq!(got, want);
    assert_eq!((got.n, got.interval), (3, None));
    // k=4, two a half in the order shown: w7 1 | 1, w8 1 | 0.5, w9 1 | 0; every worker 2 s.
    let four = &cells[1];
    assert!(close(four.first_half.mean, 1.0) && close(four.second_half.mean, 0.5));
    assert_eq!(four.time_vs_test, None);
    let table = all_tables(&r)
        .into_iter()
        .find(|t| t.id == "training-order-all")
        .unwrap();
    assert_eq!(
        table.rows[1][..5],
        [
            "Toy",
            "4",
            "random per worker",
            "100.0 ± 0.0 (n=3)",
            "50.0 ± 40.8 (n=3)"
        ]
    );
    assert!(
        table.rows[0][6] == format!("{:.2} (n=3, no p below 5 pairs)", want.r),
        "{:?}",
        table.rows[0]
    );
    let csv = scores_csv::scores_csv(&r);
    assert!(csv.contains("\ntraining_order,all,,official,Toy,classification,4,second half,3,,0.5,"));
    // In the file's order the table says so.
    let plain = build(&tasks, &annotators, &rules(vec![(2, 1), (4, 1)], false));
    assert_eq!(plain.all.order[0].order, Order::File);
}

#[test]
fn screening_scores_each_group_and_adjusts_the_differences() {
    use crate::place::Phase;
    let (p, n) = ("positive", "negative");
    let mut annotators = vec![
        annotator(1, 0, 0, [p, n, p, n]),
        annotator(2, 0, 0, [p, n, p, p]),
        annotator(3, 0, 0, [p, p, p, p]),
        annotator(4, 2, 2, [p, n, p, n]),
        annotator(5, 2, 2, [p, n, n, n]),
        annotator(6, 2, 0, [n, p, n, p]),
    ];
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), data())].into_iter().collect();
    let plain = build(&tasks, &annotators, &rules(vec![(2, 1), (4, 1)], false));
    // Two screening items each, answered first: right on 2, 1, 0 (k=0) and 2, 2, 1 (k=2).
    for (a, right) in annotators.iter_mut().zip([2, 1, 0, 2, 2, 1]) {
        let mut first = a.items[0].clone();
        first.phase = Phase::Screening;
        let screening = (0..2).map(|j| ItemRecord {
            example_id: ExampleId(300 + j),
            content_key: String::new(),
            s1: Some(f64::from(u8::from(j < right))),
            s1_any_of: Some(f64::from(u8::from(j < right))),
            ..first.clone()
        });
        a.items.splice(0..0, screening);
    }
    let r = build(&tasks, &annotators, &rules(vec![(2, 1), (4, 1)], false));
    // Screening items enter no other score: test and training S1 as without them.
    for (x, y) in r.annotators.iter().zip(&plain.annotators) {
        assert_eq!((x.test_s1, x.training_s1), (y.test_s1, y.training_s1));
        assert_eq!(x.test_done, y.test_done);
    }
    let screening: Vec<Option<f64>> = r.annotators.iter().map(|a| a.screening_s1).collect();
    let want = [1.0, 0.5, 0.0, 1.0, 1.0, 0.5];
    assert_eq!(screening, want.iter().map(|&x| Some(x)).collect::<Vec<_>>());
    assert_eq!(plain.annotators[0].screening_s1, None);
    let cell = |k| r.all.main.iter().find(|c| c.k == k).unwrap();
    assert!(close(cell(0).screening.unwrap().mean, 0.5));
    assert!(close(cell(2).screening.unwrap().mean, 2.5 / 3.0));
    // The k=2 group started abler: the adjusted difference is the ANCOVA's, with its test.
    let c = &r.all.comparisons[0];
    let a = [(1.0, 1.0), (0.5, 0.75), (0.0, 0.5)];
    let b = [(1.0, 1.0), (1.0, 0.75), (0.5, 0.0)];
    let want = stats::ancova(&a, &b).unwrap();
    assert_eq!(c.adjusted, Some(want));
    assert_eq!(want.test.unwrap().df, 3.0);
    assert!(close(c.difference, -1.0 / 6.0));
    assert_eq!(plain.all.comparisons[0].adjusted, None);
    let tables = all_tables(&r);
    let t = tables.iter().find(|t| t.id == "screening-all").unwrap();
    assert_eq!(t.rows[0][1], "50.0 ± 40.8 (n=3)");
    assert!(!all_tables(&plain).iter().any(|t| t.id == "screening-all"));
    let row = &tables
        .iter()
        .find(|t| t.id == "comparisons-all")
        .unwrap()
        .rows[0];
    let signed = format!("{:+.1}", 100.0 * want.difference);
    assert!(
        row[14].starts_with(&signed) && row[14].contains("df 3"),
        "{row:?}"
    );
    let csv = scores_csv::scores_csv(&r);
    assert!(csv.contains("\nscreening,all,,official,Toy,classification,0,,3,,0.5,"));
}

#[test]
fn a_corpus_level_metric_gets_the_interval_over_annotators_only() {
    use crate::crossfit::metrics::Metric;
    let (p, n) = ("positive", "negative");
    let annotators = vec![
        annotator(1, 0, 0, [p, n, p, n]),
        annotator(2, 0, 0, [p, n, p, p]),
        annotator(4, 2, 2, [p, n, p, n]),
        annotator(5, 2, 2, [p, n, n, n]),
    ];
    let mut task = data();
    task.spec.metric = Some(Metric::ClassificationF1);
    let r = build(
        &[("Toy".to_string(), task)].into_iter().collect(),
        &annotators,
        &rules(vec![(2, 1), (4, 1)], false),
    );
    let ci = r.all.main[0].official_ci.unwrap();
    assert!(ci.other_units.is_some());
    assert_eq!((ci.more_items, ci.items), (None, 0));
    assert!(r.all.comparisons.is_empty());
}
