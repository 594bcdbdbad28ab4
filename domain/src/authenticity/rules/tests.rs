//! The rules on hand-made workers: one event never flags, patterns accumulate over the study,
//! the server's clock and answers from elsewhere are signals of their own.

use super::*;

fn item(copy: u32, paste: u32, away_ms: u64) -> ItemSignals {
    ItemSignals {
        away_count: u32::from(away_ms > 0),
        away_ms,
        copy_count: copy,
        copy_chars: 120 * copy,
        copy_from_item: copy,
        paste_count: paste,
        wall_ms: away_ms + 10_000,
        active_ms: 10_000,
        hidden_ms: Some(away_ms),
        away_after_copy_ms: Some(if copy > 0 { away_ms } else { 0 }),
        // Back on the page a while before answering.
        since_return_ms: (away_ms > 0).then_some(30_000),
        ..Default::default()
    }
}

/// The server saw each item for as long as the page says, and 200 ms more.
fn evidence(items: &[ItemSignals]) -> Evidence {
    let mut e = Evidence::default();
    items
        .iter()
        .for_each(|s| e.add(Some(s), Some(s.wall_ms as i64 + 200)));
    e
}

#[test]
fn one_event_alone_never_lowers_a_level_below_mixed() {
    let mut items = vec![item(0, 0, 0); 30];
    assert_eq!(evidence(&items).level(), Level::High);
    // A phone call: one long stretch away.
    items[3] = item(0, 0, 180_000);
    assert_eq!(evidence(&items).level(), Level::High);
    // A word copied to look it up, then 12 s away: not what carries an item elsewhere.
    items[5] = ItemSignals {
        copy_chars: 9,
        ..item(1, 0, 12_000)
    };
    assert_eq!(evidence(&items).assisted_items, 0);
    // A sentence copied, then 12 s away: one assisted-looking item.
    items[7] = item(1, 0, 12_000);
    let e = evidence(&items);
    assert_eq!((e.assisted_items, e.level()), (1, Level::Mixed));
    // A second one flags.
    items[9] = item(0, 1, 20_000);
    assert_eq!(evidence(&items).level(), Level::Low);
}

#[test]
fn many_items_need_two_percent() {
    let mut items = vec![item(0, 0, 0); 300];
    for s in items.iter_mut().take(5) {
        *s = item(1, 0, 15_000);
    }
    assert_eq!(evidence(&items).level(), Level::Mixed);
    items[5] = item(1, 0, 15_000);
    assert_eq!(evidence(&items).level(), Level::Low);
}

#[test]
fn data_signals_combine_with_the_machine_signal() {
    let mut e = evidence(&vec![item(0, 0, 0); 20]);
    e.machine_signal = true;
    assert_eq!(e.level(), Level::Mixed);
    e.timed_answers = 20;
    e.fast_answers = 10;
    assert_eq!(e.level(), Level::Low);
    assert_eq!(e.reasons().len(), 2);
    // Away 10 s or more on 6 of 12 items: more than honest workers are but once in 1,000.
    let mut away = evidence(&[vec![item(0, 0, 0); 6], vec![item(0, 0, 11_000); 6]].concat());
    assert_eq!(away.level(), Level::Mixed);
    let five = evidence(&[vec![item(0, 0, 0); 7], vec![item(0, 0, 11_000); 5]].concat());
    assert_eq!(five.level(), Level::High);
    away.straight_line = Some("positive".into());
    assert_eq!(away.level(), Level::Mixed);
    // Strong machine agreement is enough on its own.
    let mut strong = evidence(&vec![item(0, 0, 0); 20]);
    strong.machine_strong = true;
    assert_eq!(strong.level(), Level::Low);
    assert!(strong.reasons()[0].contains("strong machine agreement"));
}

#[test]
fn short_copies_then_time_away_accumulate() {
    // A piece of the question (12 characters) carried to another tab on 6 of 30 items: no
    // single item looks assisted, the pattern does.
    let short = ItemSignals {
        copy_chars: 12,
        ..item(1, 0, 8_000)
    };
    assert!(!assisted_item(&short) && pattern_item(&short));
    // An honest worker copies and looks up on 2% of the items: 4 of 30 happens once in 300
    // honest sessions, 5 of 30 less than once in 3,000.
    assert_eq!(
        least_beyond_honest(30, HONEST_LOOKUP_RATE, HONEST_BOUND / 3.0),
        Some(5)
    );
    let mut items = vec![item(0, 0, 0); 30];
    for s in items.iter_mut().take(4) {
        *s = short;
    }
    let e = evidence(&items);
    assert_eq!((e.pattern_items, e.level()), (4, Level::High));
    items[4] = short;
    let e = evidence(&items);
    assert_eq!(e.level(), Level::Low);
    assert!(e.reasons()[0].contains("assistance patterns on 5 of 30 items (item text copied"));
}

#[test]
fn a_window_beside_the_page_before_answers_accumulates() {
    // Out of focus for 6 s of 16 with the page still visible, answered 2 s after coming back.
    let beside = ItemSignals {
        hidden_ms: Some(0),
        since_return_ms: Some(2_000),
        ..item(0, 0, 6_000)
    };
    assert!(pattern_item(&beside));
    // The same glance early in the item, long before the answer: no pattern.
    assert!(!pattern_item(&ItemSignals {
        since_return_ms: Some(25_000),
        ..beside
    }));
    // A short glance at another tab (hidden) just before answering: no pattern.
    assert!(!pattern_item(&ItemSignals {
        hidden_ms: Some(6_000),
        ..beside
    }));
    // A short look beside a long item: under a third of its time, no pattern.
    assert!(!pattern_item(&ItemSignals {
        wall_ms: 40_000,
        active_ms: 34_000,
        ..beside
    }));
    // From an older page that did not tell hidden from beside: no pattern either.
    assert!(!pattern_item(&ItemSignals {
        hidden_ms: None,
        ..beside
    }));
    // Honest workers answer right after a look beside the page on up to 15% of the items: on
    // 20 items, the rule needs 10.
    let needed = least_beyond_honest(20, HONEST_BESIDE_RATE, HONEST_BOUND / 3.0).unwrap();
    assert_eq!(needed, 10);
    let mut items = vec![item(0, 0, 0); 20];
    for s in items.iter_mut().take(needed - 1) {
        *s = beside;
    }
    assert_eq!(evidence(&items).level(), Level::High);
    items[needed - 1] = beside;
    assert_eq!(evidence(&items).level(), Level::Low);
}

#[test]
fn times_the_server_did_not_see_are_a_signal_of_their_own() {
    // Clean signals claiming 12 s on each item, each answer 80 ms after its showing.
    let clean = item(0, 0, 0);
    let mut e = Evidence::default();
    e.add(Some(&clean), Some(80));
    assert_eq!((e.clock_items, e.level()), (1, Level::Mixed));
    assert!(e.reasons()[0].contains("inconsistent with the server's clock"));
    for _ in 0..19 {
        e.add(Some(&clean), Some(80));
    }
    assert_eq!(e.level(), Level::Low);
    // Without the server's times (an unanswered item) nothing is judged.
    let mut e = Evidence::default();
    e.add(Some(&clean), None);
    assert_eq!(e.level(), Level::High);
}

#[test]
fn answers_from_elsewhere_are_named() {
    let page = item(0, 0, 0);
    let mut e = Evidence::default();
    for i in 0..20 {
        e.add((i % 5 != 0).then_some(&page), Some(20_000));
    }
    // 4 of 20 without the record: a signal, not yet low.
    assert_eq!((e.unsent_answers, e.level()), (4, Level::Mixed));
    assert!(e.reasons()[0].starts_with("answers not sent by the study page: 4 of 20"));
    // With any other signal it is low.
    e.timed_answers = 20;
    e.fast_answers = 12;
    assert_eq!(e.level(), Level::Low);
    // One stray answer without the record is nothing.
    let mut one = Evidence::default();
    (0..20).for_each(|i| one.add((i != 3).then_some(&page), Some(20_000)));
    assert_eq!(one.level(), Level::High);
    // No record at all: low on its own.
    let mut none = Evidence::default();
    (0..20).for_each(|_| none.add(None, Some(20_000)));
    assert_eq!(none.level(), Level::Low);
}

#[test]
fn the_evidence_rule_states_the_counts_it_uses() {
    let needed = |of, rate, bound| least_beyond_honest(of, rate, bound).unwrap();
    let rule = RULES_TEXT
        .iter()
        .find(|t| t.starts_with("The evidence rule"))
        .unwrap();
    for (of, words) in [
        (12, "On 12 items that takes"),
        (40, "on 40 items"),
        (200, "on 200 items"),
    ] {
        let counts = [
            needed(of, HONEST_LOOKUP_RATE, HONEST_BOUND / 3.0),
            needed(of, HONEST_BESIDE_RATE, HONEST_BOUND / 3.0),
            needed(of, HONEST_ROUND_TRIP_RATE, HONEST_BOUND / 3.0),
            needed(of, HONEST_LONG_AWAY_RATE, HONEST_BOUND),
        ];
        let stated = if of == 12 {
            format!(
                "{words} {} items copied then away, {} answers after a window beside the page, {} after a round trip, {} stretches away",
                counts[0], counts[1], counts[2], counts[3]
            )
        } else {
            format!(
                "{words} {}, {}, {} and {}",
                counts[0], counts[1], counts[2], counts[3]
            )
        };
        assert!(rule.contains(&stated), "{stated}");
    }
}

#[test]
fn an_honest_worker_glancing_beside_a_short_study_stays_high() {
    // Issue 77: three looks of 3-8 s at another window on a 12-item study, each answered soon
    // after coming back, were "a fifth of the items". At the honest rates they are nothing.
    let glance = ItemSignals {
        hidden_ms: Some(0),
        since_return_ms: Some(2_000),
        ..item(0, 0, 5_000)
    };
    assert!(patterns(&glance).beside);
    let mut items = vec![item(0, 0, 0); 12];
    for s in items.iter_mut().take(3) {
        *s = glance;
    }
    assert_eq!(evidence(&items).level(), Level::High);
    // A chatbot window beside the page on most of the items is low.
    for s in items.iter_mut().take(10) {
        *s = glance;
    }
    let e = evidence(&items);
    assert_eq!(e.level(), Level::Low);
    assert!(e.reasons()[0].contains("10 of 12 items (answers right after a window beside"));
}
