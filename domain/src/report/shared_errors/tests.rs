//! Shared errors on hand-made crowds: honest workers who err on the same hard items are not
//! named; two workers who repeat each other's every error are, with their partners counted.

use super::*;
use crate::rng::SplitMix64;

/// A binary task of `n` items, gold all "a"; item `i` is hard when `i % 5 == 0`.
fn honest(rng: &mut SplitMix64, n: usize, easy: f64, hard: f64) -> HashMap<ExampleId, Vec<String>> {
    (0..n)
        .map(|i| {
            let p = if i % 5 == 0 { hard } else { easy };
            let label = if rng.unit() < p { "b" } else { "a" };
            (ExampleId(i as i64), vec![label.to_string()])
        })
        .collect()
}

fn judge(crowd: &[HashMap<ExampleId, Vec<String>>]) -> HashMap<AssignmentId, Shared> {
    let workers: Vec<Answers> = crowd
        .iter()
        .enumerate()
        .map(|(i, answers)| Answers {
            assignment: AssignmentId(i as i64),
            answers,
            wrong: answers
                .iter()
                .filter(|(_, a)| *a != &["a"])
                .map(|(id, _)| *id)
                .collect(),
        })
        .collect();
    shared_errors(&workers)
}

#[test]
fn honest_workers_who_share_the_hard_items_mistakes_are_not_named() {
    // 30 workers on 200 items: 40% wrong on the hard fifth, 5% on the rest, some twice as
    // error-prone; over 50 crowds, no pair is named.
    let mut named = 0;
    for seed in 0..50 {
        let mut rng = SplitMix64(seed);
        let crowd: Vec<_> = (0..30)
            .map(|w| {
                let k = if w % 4 == 0 { 2.0 } else { 1.0 };
                honest(&mut rng, 200, 0.05 * k, 0.4 * k)
            })
            .collect();
        named += judge(&crowd).values().filter(|s| s.partners > 0).count();
    }
    assert_eq!(named, 0);
}

#[test]
fn a_farm_drawing_on_one_source_is_named_with_its_size() {
    let mut rng = SplitMix64(7);
    let source = honest(&mut rng, 200, 0.1, 0.4);
    let mut crowd: Vec<_> = (0..25).map(|_| honest(&mut rng, 200, 0.05, 0.4)).collect();
    crowd.extend(std::iter::repeat_n(source, 5));
    let shared = judge(&crowd);
    for i in 25..30 {
        let s = shared[&AssignmentId(i)];
        assert_eq!(s.partners, 4, "{s:?}");
        assert!(s.strong && s.repeated == s.judged, "{s:?}");
    }
    assert!((0..25).all(|i| shared[&AssignmentId(i)].partners == 0));
}
