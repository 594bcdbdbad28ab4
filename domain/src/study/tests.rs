//! Unit tests of the crowd protocol's rules (study configuration, scenarios, orders, filter).

use super::*;

#[test]
fn training_orders_are_per_seed_and_apart_from_the_test_order() {
    let a = training_order(7, 30);
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..30).collect::<Vec<_>>());
    assert_eq!(a, training_order(7, 30));
    assert_ne!(a, training_order(8, 30));
    assert_ne!(a, item_order(7, 30));
    let started = StudyConfig::default();
    let shuffled = StudyConfig {
        shuffle_training: true,
        ..StudyConfig::default()
    };
    assert!(started.check_edit(&shuffled, false).is_ok());
    assert!(started
        .check_edit(&shuffled, true)
        .unwrap_err()
        .contains("the order of the training examples"));
    // Left out of the stored JSON when off: configurations made before read the same.
    assert!(!serde_json::to_string(&started).unwrap().contains("shuffle"));
}

#[test]
fn screening_items_come_from_a_file_no_training_set_shares() {
    let with = |f| StudyConfig {
        screening: Some(f),
        ..StudyConfig::default()
    };
    // 10_1 ⊂ 20_1 ⊂ 30_1 is the default chain; say 10_2 shares items with 20_1.
    let overlap = |a: ShotFile, b: ShotFile| a == b || (a == (10, 2) && b == (20, 1));
    assert!(with((10, 3))
        .screening_problems(&full_grid(), &overlap)
        .is_empty());
    let shared = with((10, 2)).screening_problems(&full_grid(), &overlap);
    assert_eq!(shared.len(), 1);
    assert!(shared[0].contains("share items with the 20-shot training set (20_1)"));
    assert!(with((10, 1)).screening_problems(&full_grid(), &overlap)[0]
        .contains("the 10-shot training set (10_1)"));
    assert!(with((40, 1)).screening_problems(&full_grid(), &overlap)[0]
        .contains("the task has no training file 40_1"));
    assert!(StudyConfig::default()
        .screening_problems(&full_grid(), &overlap)
        .is_empty());
    assert!(StudyConfig::default()
        .check_edit(&with((10, 3)), true)
        .unwrap_err()
        .contains("the screening items"));
}

fn open() -> StudyConfig {
    StudyConfig {
        open: true,
        ..StudyConfig::default()
    }
}

fn full_grid() -> Vec<(u32, u32)> {
    [10, 20, 30]
        .iter()
        .flat_map(|&k| (1..=5).map(move |s| (k, s)))
        .collect()
}

#[test]
fn default_config_is_valid_and_errors_are_all_reported() {
    assert!(StudyConfig::default()
        .validate(&full_grid(), &nested)
        .is_ok());
    let bad = StudyConfig {
        scenarios: vec![10, 10, 40],
        annotators: 0,
        ..StudyConfig::default()
    };
    let errs = bad.validate(&full_grid(), &nested).unwrap_err();
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert!(errs.iter().any(|e| e.contains("40-shot")));
}

fn nested(_: ShotFile, _: ShotFile) -> bool {
    true
}

#[test]
fn scenarios_must_nest_unless_the_admin_allows_otherwise() {
    // SQuAD v2's shape: 10_1 lies within 20_5 and 30_5, not within 20_1.
    let within = |a: ShotFile, b: ShotFile| {
        matches!(
            (a, b),
            ((10, 1), (20, 5)) | ((20, 5), (30, 5)) | ((10, 1), (30, 5))
        )
    };
    let same_split = StudyConfig::default();
    let errs = same_split.validate(&full_grid(), &within).unwrap_err();
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].contains("10-shot training set (10_1) is not within the 20-shot set (20_1)"));
    let allowed = StudyConfig {
        allow_unnested: true,
        ..StudyConfig::default()
    };
    assert!(allowed.validate(&full_grid(), &within).is_ok());
    let chain = StudyConfig {
        shot_group: vec![(10, 1), (20, 5), (30, 5)],
        ..StudyConfig::default()
    };
    assert!(chain.validate(&full_grid(), &within).is_ok());
    assert_eq!(chain.split_for(20), 5);
    assert_eq!(chain.scenario_files(), vec![(10, 1), (20, 5), (30, 5)]);
    assert_eq!(chain.shot_group_text(true), "10_1 ⊂ 20_5 ⊂ 30_5");
    assert_eq!(
        same_split.shot_group_text(false),
        "10_1, 20_1, 30_1 (not nested)"
    );
    // Scenarios 0 and 30 alone have nothing to nest.
    let one = StudyConfig {
        scenarios: vec![0, 30],
        ..StudyConfig::default()
    };
    assert!(one.validate(&full_grid(), &within).is_ok());
    let missing = StudyConfig {
        shot_group: vec![(10, 1), (20, 9)],
        ..StudyConfig::default()
    };
    let errs = missing.validate(&full_grid(), &within).unwrap_err();
    assert!(
        errs.iter().any(|e| e.contains("no training file 20_9")),
        "{errs:?}"
    );
    let mismatch = StudyConfig {
        training_split: 2,
        ..chain.clone()
    };
    let errs = mismatch.validate(&full_grid(), &within).unwrap_err();
    assert!(
        errs[0].contains("not the split of the shot group's smallest set (10_1)"),
        "{errs:?}"
    );
    // Once started, the files may not change; allowing unnested sets may.
    assert!(chain
        .check_edit(&same_split, true)
        .unwrap_err()
        .contains("the training files"));
    let relaxed = StudyConfig {
        allow_unnested: true,
        ..chain.clone()
    };
    assert!(chain.check_edit(&relaxed, true).is_ok());
}

#[test]
fn edits_after_start_may_not_change_what_workers_saw() {
    let c = StudyConfig::default();
    let other_split = StudyConfig {
        training_split: 2,
        ..c.clone()
    };
    assert!(c.check_edit(&other_split, false).is_ok());
    assert!(c
        .check_edit(&other_split, true)
        .unwrap_err()
        .contains("the training files"));
    let pay = StudyConfig {
        hourly_rate_cents: 1500,
        open: true,
        ..c.clone()
    };
    assert!(c.check_edit(&pay, true).is_ok());
    let more = StudyConfig {
        annotators: 5,
        ..c.clone()
    };
    assert!(c.check_edit(&more, true).is_ok());
}

#[test]
fn scenarios_fill_evenly_and_never_beyond_n() {
    let c = open();
    let mut loads: Vec<ScenarioLoad> = c
        .scenarios
        .iter()
        .map(|&k| ScenarioLoad { k, taken: 0 })
        .collect();
    for _ in 0..12 {
        let k = choose_scenario(&c, &loads, &[]).unwrap();
        loads.iter_mut().find(|l| l.k == k).unwrap().taken += 1;
    }
    assert!(loads.iter().all(|l| l.taken == 3));
    assert_eq!(choose_scenario(&c, &loads, &[]), Err(Refusal::Full));
    assert_eq!(
        choose_scenario(&StudyConfig::default(), &[], &[]),
        Err(Refusal::Closed)
    );
}

#[test]
fn a_worker_of_a_task_is_never_assigned_again() {
    let c = open();
    assert_eq!(
        choose_scenario(&c, &[], &[20]),
        Err(Refusal::OtherScenario { k: 20 })
    );
    let only_zero = StudyConfig {
        scenarios: vec![0],
        ..open()
    };
    assert_eq!(
        choose_scenario(&only_zero, &[], &[10]),
        Err(Refusal::OtherScenario { k: 10 })
    );
    assert_eq!(choose_scenario(&only_zero, &[], &[]), Ok(0));
}

#[test]
fn orders_are_permutations_and_reproducible() {
    let a = item_order(42, 200);
    let mut sorted = a.clone();
    sorted.sort();
    assert_eq!(sorted, (0..200).collect::<Vec<_>>());
    assert_eq!(a, item_order(42, 200));
    assert_ne!(a, item_order(43, 200));
    assert!(item_order(1, 0).is_empty());
}

#[test]
fn abandoned_slots() {
    let c = StudyConfig {
        item_timeout_secs: Some(600),
        ..open()
    };
    assert!(is_abandoned(&c, 0, 601, false));
    // Waiting at the consent page: ten minutes at most, or the study's own time-out.
    assert!(consent_left(&open(), 0, 601) && !consent_left(&open(), 0, 600));
    assert!(consent_left(&c, 0, 601) && !consent_left(&c, 0, 600));
    let short = StudyConfig {
        item_timeout_secs: Some(60),
        ..open()
    };
    assert!(consent_left(&short, 0, 61) && !consent_left(&short, 0, 60));
    assert!(!is_abandoned(&c, 0, 600, false));
    assert!(!is_abandoned(&c, 0, 10_000, true));
    let never = StudyConfig {
        item_timeout_secs: None,
        ..open()
    };
    assert!(!is_abandoned(&never, 0, 10_000_000, false));
    // New studies release a place after 30 idle minutes.
    assert!(is_abandoned(&open(), 0, 1801, false) && !is_abandoned(&open(), 0, 1800, false));
}

#[test]
fn filter_compares_with_the_mean_of_the_others() {
    // c: mean of others (0.8 + 0.9) / 2 = 0.85; 0.85 - 0.5 = 0.35 > 0.2 -> flagged.
    // a: others (0.9 + 0.5) / 2 = 0.7; 0.7 - 0.8 < 0 -> kept.
    let scores = [("a", 0.8), ("b", 0.9), ("c", 0.5)];
    assert_eq!(flag_low_performers(&scores, 0.2), vec!["c"]);
    assert!(flag_low_performers(&scores, 0.4).is_empty());
    assert!(flag_low_performers(&[("solo", 0.0)], 0.1).is_empty());
}

/// A training S1 as the report computes it: the mean of k item scores.
fn mean_of(right: usize, k: usize) -> f64 {
    let items: Vec<f64> = (0..k).map(|i| f64::from(u8::from(i < right))).collect();
    crate::s1::mean(&items).unwrap()
}

#[test]
fn loads_leave_out_places_the_time_out_releases_now() {
    let c = StudyConfig {
        item_timeout_secs: Some(60),
        ..StudyConfig::default()
    };
    // At 1000 s: an active place idle for 30 s counts, one idle for 100 s does not, a
    // finished one counts however long ago it ended.
    let held = [
        (0, false, 970),
        (0, false, 900),
        (10, true, 0),
        (10, false, 999),
    ];
    assert_eq!(
        loads_now(&c, &held, 1000),
        vec![
            ScenarioLoad { k: 0, taken: 1 },
            ScenarioLoad { k: 10, taken: 2 }
        ]
    );
}

#[test]
fn a_worker_exactly_at_the_margin_is_kept() {
    // 10/10, 8/10, 7/10 with margin 0.2: the 7/10 worker is exactly 0.2 below the others'
    // mean (0.9); in f64 the difference is 0.20000000000000007, which must not flag.
    let at = [
        ("a", mean_of(10, 10)),
        ("b", mean_of(8, 10)),
        ("c", mean_of(7, 10)),
    ];
    assert!(
        (0.9 - mean_of(7, 10)) > 0.2,
        "the f64 trap this guards against"
    );
    assert!(flag_low_performers(&at, 0.2).is_empty());
    // One item lower (6/10) is 0.3 below: flagged.
    let below = [
        ("a", mean_of(10, 10)),
        ("b", mean_of(8, 10)),
        ("c", mean_of(6, 10)),
    ];
    assert_eq!(flag_low_performers(&below, 0.2), vec!["c"]);
    // Every boundary of k = 10, 20, 30 and the default margin: exactly 0.2 below is kept,
    // one more wrong item is flagged.
    for k in [10usize, 20, 30] {
        for top in 0..=k {
            let gap = k / 5; // 0.2 of k items
            let Some(low) = top.checked_sub(gap) else {
                continue;
            };
            let at = [
                ("x", mean_of(top, k)),
                ("y", mean_of(top, k)),
                ("z", mean_of(low, k)),
            ];
            assert!(flag_low_performers(&at, 0.2).is_empty(), "k={k} top={top}");
            if low > 0 {
                let under = [
                    ("x", mean_of(top, k)),
                    ("y", mean_of(top, k)),
                    ("z", mean_of(low - 1, k)),
                ];
                assert_eq!(
                    flag_low_performers(&under, 0.2),
                    vec!["z"],
                    "k={k} top={top}"
                );
            }
        }
    }
}
