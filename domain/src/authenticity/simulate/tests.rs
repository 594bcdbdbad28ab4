//! The rules' rates per strategy on simulated sessions of five task shapes: at most 1% of each
//! kind of honest session low, at least 95% of each detectable assisted strategy low but where
//! `Strategy::below_goal` states less.

use super::measure::{measure, measure_crowd, Tally};
use super::*;

/// The task shapes with the sessions of each strategy on them: short and long label items,
/// free-text items, a short study, the benchmark's 40 items of 45 words, and a long study (300
/// sessions: its sessions cost five times the others').
fn shapes() -> Vec<(&'static str, Vec<ItemShape>, usize)> {
    vec![
        ("30 x 25 words", items(30, 25, false), 1_000),
        ("30 x 150 words", items(30, 150, false), 1_000),
        ("100 x 40 words, free text", items(100, 40, true), 1_000),
        ("12 x 120 words", items(12, 120, false), 1_000),
        ("40 x 45 words", items(40, 45, false), 1_000),
        ("200 x 40 words", items(200, 40, false), 300),
    ]
}

/// Whether a strategy's rate can be asserted on a shape: machine copying needs enough items
/// the system got wrong (the simulated system misses 15%: 15 of 100 items, 6 of 40), and is
/// asserted on its own on a large test set (below).
fn judged(strategy: Strategy) -> bool {
    strategy != Strategy::Assisted(Assisted::MachineCopying)
}

#[test]
fn every_strategy_is_rated_as_the_docs_say() {
    let mut failures = Vec::new();
    for (seed, (name, shape, sessions)) in shapes().into_iter().enumerate() {
        for (k, strategy) in Strategy::ALL.into_iter().enumerate() {
            let t: Tally = measure(strategy, sessions, &shape, 1_000 * seed as u64 + k as u64);
            let low = t.low_share();
            println!(
                "{name:<28} {:<26} low {:5.1}%  mixed {:5.1}%  {:?}",
                strategy.name(),
                100.0 * low,
                100.0 * t.mixed as f64 / t.sessions as f64,
                t.low_signals
            );
            let goal = strategy
                .below_goal(shape.len())
                .map_or(0.95, |(_, least)| least);
            let ok = match (strategy.is_honest(), strategy.undetectable()) {
                (true, _) => low <= 0.01,
                (false, None) => !judged(strategy) || low >= goal,
                // Undetectable by design: the page's record can say nothing of them.
                (false, Some(_)) => true,
            };
            if !ok {
                failures.push(format!("{name}: {} low {:.3}", strategy.name(), low));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn machine_copying_is_caught_where_the_system_errs_often_enough() {
    // 200 items: the system gets about 30 wrong. Honest workers of every kind stay high.
    let shape = items(200, 40, false);
    let copying = measure(Strategy::Assisted(Assisted::MachineCopying), 400, &shape, 9);
    println!("200 items: machine-copying low {:.3}", copying.low_share());
    assert!(copying.low_share() >= 0.95, "{copying:?}");
    for (k, strategy) in Strategy::ALL
        .into_iter()
        .filter(|s| s.is_honest())
        .enumerate()
    {
        let t = measure(strategy, 400, &shape, 10 + k as u64);
        assert!(t.low_share() <= 0.01, "{}: {t:?}", strategy.name());
    }
}

#[test]
fn sessions_are_seeded_and_their_records_consistent() {
    let items = items(10, 30, false);
    for strategy in Strategy::ALL {
        let a = session(7, strategy, &items);
        assert_eq!(a, session(7, strategy, &items));
        for answer in &a {
            if let Some(s) = &answer.signals {
                assert_eq!(s.check(), Ok(()), "{}", strategy.name());
            }
        }
    }
    let chatbot = session(7, Strategy::Assisted(Assisted::ChatbotTab), &items);
    assert!(chatbot
        .iter()
        .any(|a| a.signals.is_some_and(|s| s.away_ms >= 15_000)));
    // The page's answers reach the server after the page sent them; a forging script's do not.
    let honest = session(8, Strategy::Honest(Honest::Typical), &items);
    assert!(honest
        .iter()
        .all(|a| a.server_ms >= a.signals.unwrap().wall_ms));
    let forged = session(8, Strategy::Assisted(Assisted::ScriptForgedSignals), &items);
    assert!(forged.iter().all(|a| a.server_ms <= 150));
}

/// Copiers of one system who are 10% to 60% of a task's 40 workers and finish first, so that
/// they are that share or more of the first 20, the other humans that machine agreement
/// compares with: the copiers stay low and the honest high (on 200 items, where a copier is
/// found at all: the system gets about 30 wrong).
#[test]
fn copiers_who_outnumber_the_reference_are_still_found() {
    let shape = items(200, 40, false);
    let copier = Strategy::Assisted(Assisted::MachineCopying);
    let honest = Strategy::Honest(Honest::Typical);
    let mut failures = Vec::new();
    for share in [0.1, 0.3, 0.5, 0.6] {
        let copiers = (share * 40.0_f64).round() as usize;
        let crowd: Vec<Strategy> = std::iter::repeat_n(copier, copiers)
            .chain(std::iter::repeat_n(honest, 40 - copiers))
            .collect();
        let (mut c, mut h) = (Tally::default(), Tally::default());
        for seed in 0..10 {
            for (who, level, e) in measure_crowd(&crowd, &shape, 100 + seed, true) {
                match who.is_honest() {
                    true => h.add(level, &e),
                    false => c.add(level, &e),
                }
            }
        }
        println!(
            "{:.0}% copiers: copiers low {:.3}, honest low {:.3}",
            100.0 * share,
            c.low_share(),
            h.low_share()
        );
        if c.low_share() < 0.95 || h.low_share() > 0.01 {
            failures.push(format!("{share}: copiers {c:?} honest {h:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Farms of paced forging scripts (each undetectable by the page's record alone) answering from
/// one source, among 30 honest workers, with no system run to agree with: found by the wrong
/// answers they share, from the farm size and study length the docs state; the honest stay high.
#[test]
fn farms_of_paced_scripts_are_found_by_their_shared_errors() {
    let farm = Strategy::Assisted(Assisted::ScriptForgedPaced);
    let honest = Strategy::Honest(Honest::Typical);
    let mut failures = Vec::new();
    for (items_n, sizes, least) in [
        (40, [2, 5, 10], 0.0),
        (100, [2, 5, 10], 0.0),
        (200, [2, 5, 10], 0.95),
    ] {
        let shape = items(items_n, 40, false);
        for size in sizes {
            let crowd: Vec<Strategy> = std::iter::repeat_n(honest, 30)
                .chain(std::iter::repeat_n(farm, size))
                .collect();
            let (mut f, mut h) = (Tally::default(), Tally::default());
            let mut honest_sharing = 0;
            for seed in 0..10 {
                for (who, level, e) in measure_crowd(&crowd, &shape, 300 + seed, false) {
                    match who.is_honest() {
                        true => h.add(level, &e),
                        false => f.add(level, &e),
                    }
                    honest_sharing += usize::from(who.is_honest() && e.shared_with > 0);
                }
            }
            // Honest workers share the hard items' mistakes, never past chance.
            assert_eq!(honest_sharing, 0, "{items_n} items, farm of {size}");
            println!(
                "{items_n} items, farm of {size}: farm low {:.3}, mixed {:.3}, honest low {:.3} {:?}",
                f.low_share(),
                f.mixed as f64 / f.sessions as f64,
                h.low_share(),
                f.low_signals
            );
            if f.low_share() < least || h.low_share() > 0.01 {
                failures.push(format!("{items_n} items, {size}: farm {f:?} honest {h:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
