//! The report's intervals, comparisons and planner on the hand-made task of `tests`: each
//! number below is worked out by hand or from `domain::stats` (checked against scipy there).

use super::draw::layout::{self, all_tables};
use super::draw::scores_csv;
use super::inference::{self, HUMANS};
use super::machine::{attach, MachineRun};
use super::tests::report;
use super::*;
use crate::ids::ExampleId;
use crate::stats;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn every_cell_has_its_intervals() {
    let r = report();
    let zero = r.all.main.iter().find(|c| c.k == 0).unwrap();
    let ci = zero.official_ci.unwrap();
    // Zero-shot annotators score 1, 0.75, 0.5: t-interval 0.75 ± t(0.975, 2) · 0.25 / √3.
    let half = stats::dist::t_quantile(0.975, 2.0) * 0.25 / 3f64.sqrt();
    let t = ci.t.unwrap();
    assert!(close(t.low, 0.75 - half) && close(t.high, 0.75 + half));
    let b = ci.bootstrap.unwrap();
    assert!(b.low <= 0.75 && 0.75 <= b.high && b.low >= 0.0 && b.high <= 1.0);
    assert_eq!(ci.items, 4);
    // Reproducible: the same answers give the same report, draws included.
    assert_eq!(report(), r);
}

#[test]
fn each_scenario_is_tested_against_the_next_smaller() {
    let r = report();
    let c = &r.all.comparisons;
    let pairs: Vec<(u32, u32)> = c.iter().map(|c| (c.a.k, c.b.k)).collect();
    assert_eq!(pairs, vec![(0, 2), (2, 4)]);
    // Items' S1 at k=0: 1, 2/3, 1, 1/3; at k=2: 2/3, 2/3, 1/3, 2/3 (w4 1111, w5 1101, w6 0000).
    // d = -1/3, 0, -2/3, 1/3: mean -1/6; of the 8 sign patterns of the non-zero ones, 3 lie at
    // or below -2/3 and 7 at or above: p = 2 · 3/8, exact (4 items).
    let first = &c[0];
    assert_eq!((first.items, first.a.units, first.b.units), (4, 3, 3));
    assert_eq!(first.a.who, HUMANS);
    assert!(close(first.difference, -1.0 / 6.0));
    assert!(first.test.exact && close(first.test.p, 0.75));
    assert!(close(first.effect_dz.unwrap(), -(0.15f64).sqrt()));
    // Holm over the two comparisons: the larger p times 1, the smaller times 2 (kept >= it).
    let raw: Vec<f64> = c.iter().map(|c| c.test.p).collect();
    let adjusted: Vec<f64> = c.iter().map(|c| c.p_holm).collect();
    assert_eq!(adjusted, stats::holm(&raw));
    // Three annotators a side cannot be expected to find 1/6 against a pooled SD of √(1/6).
    let d = first.design.unwrap();
    assert!(close(d.pooled_sd, (1.0f64 / 6.0).sqrt()));
    let effect = (-1.0 / 6.0) / d.pooled_sd;
    assert!(close(
        d.power,
        stats::two_sample_power(effect, 3.0, 3.0, 0.05)
    ));
    assert!(first.underpowered() && d.power < 0.2);
    let needed = stats::units_needed(effect, 0.8, 0.05).unwrap().ceil() as u32;
    assert_eq!(d.needed, Some(needed));
    // The filtered set drops w6 at k=2: its comparison has 2 units on that side.
    assert_eq!(r.filtered.comparisons[0].b.units, 2);
    let interval = first.interval.unwrap();
    assert!(interval.low <= first.difference && first.difference <= interval.high);
}

#[test]
fn the_planner_pools_the_spread_within_scenarios() {
    let r = report();
    let p = &r.all.plan[0];
    // Sums of squares 0.125 (k=0), 0.541666.. (k=2), 0 (k=4) over 9 - 3 degrees of freedom.
    assert_eq!((p.task.as_str(), p.pilot_annotators), ("Toy", 9));
    assert!(close(p.pooled_sd, 1.0 / 3.0));
    let want: Vec<(f64, Option<u32>)> = inference::PLANNED
        .iter()
        .map(|&d| {
            (
                d,
                stats::units_needed(d * 3.0, 0.8, 0.05).map(|n| n.ceil() as u32),
            )
        })
        .collect();
    assert_eq!(p.needed, want);
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
        items: right
            .iter()
            .enumerate()
            .map(|(i, &b)| (ExampleId(i as i64 + 1), s(b), s(b)))
            .collect(),
    }
}

#[test]
fn humans_are_compared_with_each_system_at_the_same_k() {
    let mut r = report();
    attach(
        &mut r,
        &[machine(1, [true; 4]), machine(2, [true, true, true, false])],
    );
    let m = &r.machines[0];
    let t = m.official_ci.unwrap().t.unwrap();
    // Splits score 1 and 0.75: s = 0.25 / √2, so 0.875 ± t(0.975, 1) · s / √2 = ± t · 0.125.
    let half = stats::dist::t_quantile(0.975, 1.0) * 0.125;
    assert!(close(t.low, 0.875 - half) && close(t.high, 0.875 + half));
    let c: Vec<&inference::Comparison> = r
        .all
        .comparisons
        .iter()
        .filter(|c| c.b.who == "m")
        .collect();
    assert_eq!(c.len(), 1);
    // Machine item means 1, 1, 1, 1/2 against the 2-shot humans' 2/3, 2/3, 1/3, 2/3.
    assert!(close(
        c[0].difference,
        (1.0 / 3.0 + 1.0 / 3.0 + 2.0 / 3.0 - 1.0 / 6.0) / 4.0
    ));
    assert_eq!((c[0].a.k, c[0].b.units), (2, 2));
    // Holm now runs over three comparisons.
    let raw: Vec<f64> = r.all.comparisons.iter().map(|c| c.test.p).collect();
    let adjusted: Vec<f64> = r.all.comparisons.iter().map(|c| c.p_holm).collect();
    assert_eq!(adjusted, stats::holm(&raw));
    assert_eq!(
        r.filtered
            .comparisons
            .iter()
            .filter(|c| c.b.who == "m")
            .count(),
        1
    );
    // The tables show it, and a system without item scores gets no interval or comparison.
    let tables = all_tables(&r);
    let comparisons = tables.iter().find(|t| t.id == "comparisons-all").unwrap();
    assert!(comparisons
        .rows
        .iter()
        .any(|row| row[1] == "m k=2 vs humans k=2" && row[3] == "+29.2"));
    let mut bare = report();
    let mut run = machine(1, [true; 4]);
    run.items.clear();
    attach(&mut bare, &[run]);
    assert_eq!(bare.machines[0].official_ci, None);
    assert_eq!(bare.all.comparisons.len(), 2);
}

#[test]
fn the_tables_and_the_csv_carry_the_statistics() {
    let r = report();
    let tables = all_tables(&r);
    let ids: Vec<&str> = tables.iter().map(|t| t.id.as_str()).collect();
    for id in [
        "intervals-all",
        "comparisons-all",
        "planner-all",
        "intervals-filtered",
        "comparisons-filtered",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let intervals = tables.iter().find(|t| t.id == "intervals-all").unwrap();
    // k=0: 75.0 with its t-interval 0.75 ± 0.621 -> 12.9–137.1.
    assert!(
        intervals.rows[0][2].starts_with("75.0 (t 12.9–137.1; bootstrap "),
        "{:?}",
        intervals.rows[0]
    );
    let comparisons = tables.iter().find(|t| t.id == "comparisons-all").unwrap();
    let row = &comparisons.rows[0];
    assert_eq!(row[..4], ["Toy", "humans k=2 vs humans k=0", "4", "-16.7"]);
    assert_eq!(row[5], "0.750 (exact)");
    assert!(
        row[10].starts_with("too few annotators (3 vs 3)"),
        "{row:?}"
    );
    let csv = scores_csv::scores_csv(&r);
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .ends_with(",t_low,t_high,boot_low,boot_high,p,p_holm,effect,power,needed,adjusted"));
    let line = csv
        .lines()
        .find(|l| {
            l.starts_with(
                "comparison,all,official,Toy,classification,2,humans k=2 vs humans k=0,3 vs 3,4,",
            )
        })
        .unwrap();
    assert!(line.contains(",difference,,,"), "{line}");
    assert!(line.contains(",0.75,"), "{line}");
    let t5 = csv
        .lines()
        .find(|l| l.starts_with("table5,all,official,Toy,classification,0,"))
        .unwrap();
    let fields: Vec<&str> = t5.split(',').collect();
    let t_low: f64 = fields[14].parse().unwrap();
    assert!(close(
        t_low,
        r.all.main[0].official_ci.unwrap().t.unwrap().low
    ));
    assert!(csv.contains("\nplanner,all,official,Toy,classification,,,9,,0.05,"));
    assert!(layout::RULES
        .iter()
        .any(|r| r.contains("sign-flip permutation test")));
}

#[test]
fn the_training_step_by_position_and_time() {
    use super::order::Order;
    use super::tests::{annotator, data, rules};
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
    // Test S1 1, 0.75, 0 against 2, 4, 6 seconds.
    let want = stats::pearson(&[2.0, 4.0, 6.0], &[1.0, 0.75, 0.0]).unwrap();
    assert!(close(two.time_vs_test.unwrap(), want));
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
    let csv = scores_csv::scores_csv(&r);
    assert!(csv.contains("\ntraining_order,all,official,Toy,classification,4,second half,3,,0.5,"));
    // In the file's order the table says so.
    let plain = build(&tasks, &annotators, &rules(vec![(2, 1), (4, 1)], false));
    assert_eq!(plain.all.order[0].order, Order::File);
}

#[test]
fn screening_scores_each_group_and_adjusts_the_differences() {
    use super::tests::{annotator, data, rules};
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
    let plain = build(
        &[("Toy".to_string(), data())].into_iter().collect(),
        &annotators,
        &rules(vec![(2, 1), (4, 1)], false),
    );
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
    let r = build(
        &[("Toy".to_string(), data())].into_iter().collect(),
        &annotators,
        &rules(vec![(2, 1), (4, 1)], false),
    );
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
    // The k=2 group started abler: the adjusted difference is the ANCOVA's.
    let c = &r.all.comparisons[0];
    let a = [(1.0, 1.0), (0.5, 0.75), (0.0, 0.5)];
    let b = [(1.0, 1.0), (1.0, 0.75), (0.5, 0.0)];
    let f = stats::ancova(&a, &b).unwrap();
    let (d, slope) = (f.difference, f.slope);
    let adj = c.adjusted.unwrap();
    assert!(close(adj.difference, d) && close(adj.slope, slope));
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
    assert!(row[11].starts_with(&signed(d)), "{row:?}");
    let csv = scores_csv::scores_csv(&r);
    assert!(csv.contains("\nscreening,all,official,Toy,classification,0,,3,,0.5,"));
}

fn signed(x: f64) -> String {
    format!("{}{:.1}", if x > 0.0 { "+" } else { "" }, 100.0 * x)
}

#[test]
fn a_corpus_level_metric_gets_the_t_interval_only() {
    use super::tests::{annotator, data, rules};
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
    assert!(ci.t.is_some());
    assert_eq!((ci.bootstrap, ci.items), (None, 0));
    assert!(r.all.comparisons.is_empty());
}
