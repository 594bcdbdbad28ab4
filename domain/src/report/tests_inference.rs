//! The report's intervals, study families and planner on the hand-made task of `tests`: each
//! number below is worked out by hand or from `domain::stats` (checked against scipy, R and
//! simulation there).

use super::draw::layout::all_tables;
use super::draw::scores_csv;
use super::inference::{self, Comparison, Status, HUMANS};
use super::tests::{annotator, config, data, report, rules};
use super::*;
use crate::stats;
use crate::stats::groups::{self, Method};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

const P: &str = "positive";
const N: &str = "negative";

#[test]
fn every_cell_has_its_intervals_named_by_what_they_cover() {
    let r = report();
    let zero = r.all.main.iter().find(|c| c.k == 0).unwrap();
    let ci = zero.official_ci.unwrap();
    // Zero-shot annotators score 1, 0.75, 0.5: on the logit scale 0.75 has the half-width
    // t(0.975, 2) · (0.25 / √3) / (0.75 · 0.25).
    let half = stats::dist::t_quantile(0.975, 2.0) * 0.25 / 3f64.sqrt() / (0.75 * 0.25);
    let expit = |z: f64| 1.0 / (1.0 + (-z).exp());
    let units = ci.other_units.unwrap();
    assert!(
        close(units.low, expit(3f64.ln() - half)) && close(units.high, expit(3f64.ln() + half))
    );
    assert!(units.low > 0.0 && units.high < 1.0);
    let items = ci.more_items.unwrap();
    assert!(items.low <= 0.75 && 0.75 <= items.high && items.low >= 0.0 && items.high <= 1.0);
    assert_eq!(ci.items, 4);
    // Reproducible: the same answers give the same report, draws included.
    assert_eq!(report(), r);
}

#[test]
fn each_study_tests_its_declared_family_from_one_fit() {
    let r = report();
    let c = &r.all.comparisons;
    let labels: Vec<&str> = c.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "k=2 vs k=0",
            "k=4 vs k=2",
            "k=4 vs k=0",
            "linear trend over k=0, 2, 4 (per 10 shots)"
        ]
    );
    let status: Vec<Status> = c.iter().map(|c| c.status).collect();
    assert_eq!(
        status,
        [
            Status::Family,
            Status::Family,
            Status::Primary,
            Status::Family
        ]
    );
    // The tests are the model's (or its Welch fallback's) on the study's three scenarios.
    let annotators = report_annotators();
    let m = |k: u32| {
        let cell: Vec<&AnnotatorRecord> = annotators.iter().filter(|a| a.k == k).collect();
        inference::human_matrix(&cell, crate::s1::Scoring::Official)
    };
    let (m0, m2, m4) = (m(0), m(2), m(4));
    let fit = groups::fit(&[&m0.rows, &m2.rows, &m4.rows]);
    let first = &c[0];
    let seed_of = |c: &Comparison| {
        inference::seed(&format!(
            "{}|study {}|{}",
            c.task,
            c.study.unwrap(),
            c.label
        ))
    };
    let tested = fit
        .test(&[-1.0, 1.0, 0.0], first.alpha, seed_of(first))
        .unwrap();
    assert_eq!(
        (&first.method, first.test, first.interval),
        (&tested.method, tested.test, tested.interval)
    );
    // Balanced: the contrast's estimate is the difference of the scenarios' means, 7/12 − 3/4.
    assert!(close(first.difference, -1.0 / 6.0));
    assert_eq!(
        (first.items, first.sides[0].units, first.sides[1].units),
        (4, 3, 3)
    );
    assert_eq!(first.sides[0].who, HUMANS);
    // The trend per 10 shots over k = 0, 2, 4 uses the same fit.
    let trend = fit
        .test(
            &groups::trend_weights(&[0, 2, 4], 10.0).unwrap(),
            c[3].alpha,
            seed_of(&c[3]),
        )
        .unwrap();
    assert_eq!(c[3].test, trend.test);
    // Holm within the family of four.
    let raw: Vec<f64> = c.iter().map(|c| c.p().unwrap()).collect();
    let holm: Vec<Option<f64>> = stats::holm(&raw).into_iter().map(Some).collect();
    assert_eq!(c.iter().map(|c| c.p_holm).collect::<Vec<_>>(), holm);
    // Relabelling annotators: of the 20 ways to split 1, 3/4, 1/2 | 1, 3/4, 0 into two groups
    // of three, 18 differ by 1/6 or more; 3 against 3 cannot go below 2/20.
    let perm = first.permutation.unwrap();
    assert!(perm.exact && perm.relabellings == 20);
    assert!(close(perm.p, 0.9) && close(perm.min_p, 0.1));
    // These annotators on more items: the sign-flip test of the item differences
    // −1/3, 0, −2/3, 1/3, mean −1/6; of the 16 sign patterns 6 reach a mean of −1/6 or below
    // and 14 one of −1/6 or above (the zero's two signs tie): p = 2 · 6/16, exact.
    let items = first.these_annotators.unwrap();
    assert!(items.test.exact && close(items.test.p, 0.75));
    // The effect over the pooled SD of the annotators' scores.
    let sd = stats::pooled_sd(&[1.0, 0.75, 0.5], &[1.0, 0.75, 0.0]).unwrap();
    assert!(close(first.effect.unwrap(), -1.0 / 6.0 / sd));
    // The filtered set drops w6 at k=2: that side has 2 annotators.
    assert_eq!(r.filtered.comparisons[0].sides[1].units, 2);
    // One interval per decision: it leaves zero out exactly where the deciding p is below α.
    for c in c {
        let p = c.p().unwrap();
        assert_eq!(c.interval.is_some_and(|i| !i.contains(0.0)), p <= c.alpha);
        assert!(c.interval.is_none_or(|i| i.contains(c.difference)), "{c:?}");
    }
}

fn report_annotators() -> Vec<AnnotatorRecord> {
    vec![
        annotator(1, 0, 0, [P, N, P, N]),
        annotator(2, 0, 0, [P, N, P, P]),
        annotator(3, 0, 0, [P, P, P, P]),
        annotator(4, 2, 2, [P, N, P, N]),
        annotator(5, 2, 2, [P, N, N, N]),
        annotator(6, 2, 0, [N, P, N, P]),
        annotator(7, 4, 4, [P, N, P, N]),
        annotator(8, 4, 3, [P, N, P, N]),
        annotator(9, 4, 2, [P, N, P, N]),
    ]
}

fn tasks() -> HashMap<String, TaskData> {
    [("Toy".to_string(), data())].into_iter().collect()
}

#[test]
fn the_family_never_depends_on_the_other_studies_in_scope() {
    let alone = report();
    // A second study of the same task joins the scope with annotators of its own.
    let mut annotators = report_annotators();
    for (n, k, test) in [
        (21, 0, [N, N, P, N]),
        (24, 0, [P, N, N, N]),
        (22, 2, [P, P, P, N]),
        (23, 2, [P, N, P, N]),
    ] {
        let mut a = annotator(n, k, 1, test);
        a.study = StudyId(2);
        annotators.push(a);
    }
    let mut rl = rules(vec![(2, 1), (4, 1)], false);
    let other = rl[&StudyId(1)].clone();
    rl.insert(StudyId(2), other);
    let both = build(&tasks(), &annotators, &rl);
    let study_one = |r: &Report| -> Vec<inference::Comparison> {
        r.all
            .comparisons
            .iter()
            .filter(|c| c.study == Some(StudyId(1)))
            .cloned()
            .collect()
    };
    assert_eq!(study_one(&both), study_one(&alone));
    // Study 2 has its own family: its two scenarios, one comparison, Holm over its declared
    // four (those without data count with p = 1).
    let two: Vec<&inference::Comparison> = both
        .all
        .comparisons
        .iter()
        .filter(|c| c.study == Some(StudyId(2)))
        .collect();
    assert_eq!(two.len(), 1);
    assert_eq!(
        two[0].p_holm,
        Some(stats::holm(&[two[0].p().unwrap(), 1.0, 1.0, 1.0])[0])
    );
}

#[test]
fn the_frozen_plans_level_governs_tests_intervals_and_the_planner() {
    let at = |alpha: f64, primary: Option<(u32, u32)>| crate::study::StudyConfig {
        analysis: crate::analysis_plan::AnalysisChoices { alpha, primary },
        ..config(false)
    };
    // Frozen at 0.02 with k=2 vs k=0 as its primary; the configuration says otherwise now.
    let json = crate::analysis_plan::declare("Toy", &at(0.02, Some((2, 0))), 4).canonical_json();
    let now = at(0.05, None);
    let frozen: HashMap<StudyId, StudyRules> = [(
        StudyId(1),
        StudyRules {
            files: vec![(2, 1), (4, 1)],
            chain: vec![(2, 1), (4, 1)],
            ..StudyRules::of(&now)
        }
        .with_frozen(&now, json, "cd".repeat(32), 5)
        .unwrap(),
    )]
    .into_iter()
    .collect();
    let r = build(&tasks(), &report_annotators(), &frozen);
    let family: Vec<&Comparison> = r
        .all
        .comparisons
        .iter()
        .filter(|c| c.study.is_some())
        .collect();
    assert_eq!(family.len(), 4);
    for c in &family {
        assert_eq!(c.alpha, 0.02, "{}", c.label);
        match &c.method {
            Method::MixedModel { .. } => {
                assert_eq!(c.interval, c.test.map(|t| t.interval(0.98)), "{}", c.label);
            }
            Method::Permutation { test, .. } => {
                // Its own interval at 0.98: none, as its smallest p is above 0.02.
                assert!(test.min_p > 0.02 && c.interval.is_none(), "{c:?}");
            }
            Method::Welch { .. } | Method::OneSample { .. } | Method::NoTest { .. } => {
                panic!("{c:?}")
            }
        }
        // These annotators on more items: the item bootstrap at 0.98 too, from the stated seed.
        // (On these few items its ends are those at 0.95 as well; analysis.R's check of the
        // simulated bundles, a third of them at α = 0.02, tells the two levels apart.)
        if let Some(crate::analysis_plan::Contrast::Pair { a, b }) = c.contrast {
            let m = |k: u32| &r.all.items[&("Toy".to_string(), k)];
            let at = |level: f64| {
                let (a, b) = (&m(a).rows, &m(b).rows);
                stats::bootstrap_items_difference(a, b, stats::interval::RESAMPLES, c.seed, level)
                    .unwrap()
            };
            let shown = c.these_annotators.and_then(|i| i.interval);
            assert_eq!(shown, Some(at(0.98)), "{}", c.label);
        }
    }
    let primary: Vec<&str> = family
        .iter()
        .filter(|c| c.status == Status::Primary)
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(primary, ["k=2 vs k=0"]);
    assert!(r.all.plan.iter().all(|p| p.alpha == 0.02));
    assert!(!r.all.plan.is_empty());
    // The departures are reported, each saying which one the report uses.
    for what in [
        "α = 0.05, the frozen plan 0.02",
        "names k=4 vs k=0 as its primary comparison, the frozen plan k=2 vs k=0",
    ] {
        assert!(
            r.notes.iter().any(|n| n.contains(what)),
            "{what}: {:?}",
            r.notes
        );
    }
    // The table reads each interval and Holm's p at the plan's level.
    let table = all_tables(&r)
        .into_iter()
        .find(|t| t.id == "comparisons-all")
        .unwrap();
    assert!(table.rows[0][7].ends_with("(98%)"), "{:?}", table.rows[0]);
    assert!(
        table.rows[0][11].ends_with("(α 0.02)"),
        "{:?}",
        table.rows[0]
    );
    // Without a frozen plan the configuration's level is used.
    let unfrozen: HashMap<StudyId, StudyRules> = [(
        StudyId(1),
        StudyRules {
            files: vec![(2, 1), (4, 1)],
            chain: vec![(2, 1), (4, 1)],
            ..StudyRules::of(&at(0.01, None))
        },
    )]
    .into_iter()
    .collect();
    let r = build(&tasks(), &report_annotators(), &unfrozen);
    assert!(r.all.comparisons.iter().all(|c| c.alpha == 0.01));
}

#[test]
fn comparisons_of_a_study_without_a_frozen_plan_are_exploratory() {
    let unfrozen: HashMap<StudyId, StudyRules> = [(
        StudyId(1),
        StudyRules {
            files: vec![(2, 1), (4, 1)],
            chain: vec![(2, 1), (4, 1)],
            ..StudyRules::of(&config(false))
        },
    )]
    .into_iter()
    .collect();
    let r = build(&tasks(), &report_annotators(), &unfrozen);
    assert!(r
        .all
        .comparisons
        .iter()
        .all(|c| c.status == Status::Exploratory));
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("before an analysis plan was frozen")));
    assert!(r.plans[0].frozen.is_none());
    // Frozen, the plan and its hash are in the report; a margin changed since is noted.
    let later = crate::study::StudyConfig {
        filter_margin: 0.25,
        ..config(false)
    };
    let json = crate::analysis_plan::declare("Toy", &config(false), 4).canonical_json();
    let moved: HashMap<StudyId, StudyRules> = [(
        StudyId(1),
        StudyRules::of(&later)
            .with_frozen(&later, json.clone(), "ab".repeat(32), 5)
            .unwrap(),
    )]
    .into_iter()
    .collect();
    let r = build(&tasks(), &report_annotators(), &moved);
    let frozen = r.plans[0].frozen.as_ref().unwrap();
    assert_eq!((frozen.json.as_str(), frozen.frozen_at), (json.as_str(), 5));
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("departs from its frozen analysis plan")));
    let table = all_tables(&r)
        .into_iter()
        .find(|t| t.id == "analysis-plans")
        .unwrap();
    assert!(
        table.rows[0][2].contains(&"ab".repeat(32)),
        "{:?}",
        table.rows[0]
    );
    assert!(
        table.rows[0][7].contains("margin is 0.25"),
        "{:?}",
        table.rows[0]
    );
}

#[test]
fn the_planner_plans_from_each_studys_variance_components() {
    let r = report();
    let p = &r.all.plan[0];
    assert_eq!(
        (p.study, p.pilot_annotators, p.scenarios, p.items),
        (StudyId(1), 9, 3, 4)
    );
    let c = p.components;
    let pilot = stats::Pilot {
        unit_var: c.sd_annotator.powi(2),
        resid_var: c.sd_residual.powi(2),
        items: 4.0,
        unit_df: 6.0,
        resid_df: (36 + 1 - 9 - 4) as f64,
    };
    let want: Vec<stats::Planned> = inference::PLANNED
        .iter()
        .filter_map(|&d| pilot.plan(d, 4.0, 0.8, 0.05))
        .collect();
    assert_eq!(p.planned, want);
    // The range runs across τ's interval, the smaller SD needing fewer annotators.
    let (lo, hi) = p.planned[1].needed_range.unwrap();
    assert!(lo <= p.planned[1].needed && p.planned[1].needed <= hi);
}

#[test]
fn the_tables_and_the_csv_carry_the_statistics() {
    let r = report();
    let tables = all_tables(&r);
    let ids: Vec<&str> = tables.iter().map(|t| t.id.as_str()).collect();
    for id in [
        "analysis-plans",
        "intervals-all",
        "comparisons-all",
        "planner-all",
        "intervals-filtered",
        "comparisons-filtered",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let intervals = tables.iter().find(|t| t.id == "intervals-all").unwrap();
    assert!(
        intervals.rows[0][2].starts_with("75.0 (other annotators 9.9–98.8; more items "),
        "{:?}",
        intervals.rows[0]
    );
    let comparisons = tables.iter().find(|t| t.id == "comparisons-all").unwrap();
    let row = &comparisons.rows[0];
    assert_eq!(
        row[..7],
        ["1", "Toy", "k=2 vs k=0", "family", "3 vs 3", "4", "-16.7"]
    );
    assert!(
        row[12].starts_with("0.900 (smallest possible 0.100"),
        "{row:?}"
    );
    assert!(row[15].ends_with("p 0.750"), "{row:?}");
    assert_eq!(comparisons.rows[2][3], "primary");
    let csv = scores_csv::scores_csv(&r);
    assert!(csv.lines().next().unwrap().contains(
        ",level,other_units_low,other_units_high,more_items_low,more_items_high,tau_low,tau_high,r_low,r_high,se,df,p,p_holm,method,status,permutation_p,permutation_min_p,items_p,effect,needed,needed_low,needed_high,adjusted,adjusted_se,adjusted_p"
    ));
    let line = csv
        .lines()
        .find(|l| {
            l.starts_with("comparison,all,1,official,Toy,classification,2,k=2 vs k=0,3 vs 3,4,")
        })
        .unwrap();
    assert!(line.contains(",family,0.9,0.1,0.75,"), "{line}");
    let t5 = csv
        .lines()
        .find(|l| l.starts_with("table5,all,,official,Toy,classification,0,"))
        .unwrap();
    let fields: Vec<&str> = t5.split(',').collect();
    let column = |name: &str| {
        let header = csv.lines().next().unwrap();
        header.split(',').position(|c| c == name).unwrap()
    };
    assert_eq!(fields[column("level")], "0.95");
    let low: f64 = fields[column("other_units_low")].parse().unwrap();
    assert!(close(
        low,
        r.all.main[0].official_ci.unwrap().other_units.unwrap().low
    ));
    assert!(csv.contains("\nplanner,all,1,official,Toy,classification,,,9,4,0.05,"));
    assert!(csv.contains("\nanalysis_plan,,1,,Toy,classification,,k=4 vs k=0,3,4,"));
    assert!(layout_rules().contains("Satterthwaite"));
}

fn layout_rules() -> String {
    super::draw::layout::RULES.join(" ")
}

#[test]
fn a_study_on_part_of_a_chain_lists_only_the_files_it_uses() {
    // A 0/10 study on split 2: the chain 10_2 ⊂ 20_2 ⊂ 30_2 is its shot group, but it uses
    // 10_2 alone.
    let c = crate::study::StudyConfig {
        scenarios: vec![0, 10],
        training_split: 2,
        shot_group: vec![(10, 2), (20, 2), (30, 2)],
        ..Default::default()
    };
    let r = StudyRules::of(&c);
    assert_eq!(r.files, vec![(10, 2)]);
    assert_eq!(r.chain, vec![(10, 2), (20, 2), (30, 2)]);
}
