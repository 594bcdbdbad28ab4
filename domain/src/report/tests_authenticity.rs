//! The report's authenticity on a hand-made crowd: honest workers, one who copies a system's
//! answers (its errors too) with assisted-looking items, one who straight-lines at speed.

use super::authenticity::SystemAnswers;
use super::draw::layout;
use super::*;
use crate::authenticity::{ItemSignals, Level};
use crate::ids::{AssignmentId, ExampleId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::spans::Span;

const ITEMS: i64 = 20;

fn gold_of(i: i64) -> &'static str {
    if i % 2 == 0 {
        "positive"
    } else {
        "negative"
    }
}

fn flip(l: &str) -> &'static str {
    if l == "positive" {
        "negative"
    } else {
        "positive"
    }
}

/// The system: right on items 0..15, wrong on the last 5.
fn system_of(i: i64) -> &'static str {
    if i < 15 {
        gold_of(i)
    } else {
        flip(gold_of(i))
    }
}

fn task() -> TaskData {
    let gold = |l: &str| Gold {
        official: vec![l.into()],
        spans: vec![Span::new(l, None)],
    };
    TaskData {
        spec: TaskSpec::plain("Toy", Family::Classification, &["negative", "positive"]),
        test_golds: (0..ITEMS)
            .map(|i| (ExampleId(i), gold(gold_of(i))))
            .collect(),
        shot_sets: HashMap::new(),
        words: (0..ITEMS).map(|i| (ExampleId(i), 50)).collect(),
        systems: vec![SystemAnswers {
            name: "llm k=0 split=0".into(),
            answers: (0..ITEMS)
                .map(|i| (ExampleId(i), vec![system_of(i).to_string()]))
                .collect(),
            wrong: (15..ITEMS).map(ExampleId).collect(),
        }],
    }
}

/// A worker answering `answer(i)` in `ms` per item, `signals(i)` sent with each answer.
fn worker(
    n: i64,
    answer: impl Fn(i64) -> &'static str,
    ms: i64,
    signals: impl Fn(i64) -> ItemSignals,
) -> AnnotatorRecord {
    let items = (0..ITEMS)
        .map(|i| {
            let s1 = f64::from(u8::from(answer(i) == gold_of(i)));
            ItemRecord {
                phase: Phase::Test,
                example_id: ExampleId(i),
                content_key: String::new(),
                answer: Some(vec![answer(i).to_string()]),
                skipped: false,
                confidence: Some(4),
                s1: Some(s1),
                s1_any_of: Some(s1),
                shown_at: Some(i * 100_000),
                submitted_at: Some(i * 100_000 + ms),
                signals: Some(signals(i)),
            }
        })
        .collect();
    AnnotatorRecord {
        assignment: AssignmentId(n),
        study: StudyId(1),
        worker: format!("w{n}"),
        task: "Toy".into(),
        k: 0,
        status: PlaceStatus::Finished,
        training_split: None,
        started_at: 0,
        finished_at: Some(ITEMS * 100_000),
        last_activity: ITEMS * 100_000,
        items,
        pages: Default::default(),
    }
}

fn reading(ms: u64) -> ItemSignals {
    ItemSignals {
        active_ms: ms,
        wall_ms: ms,
        first_input_ms: Some(ms / 2),
        ..Default::default()
    }
}

fn chatbot(ms: u64) -> ItemSignals {
    ItemSignals {
        away_count: 1,
        away_ms: 25_000,
        copy_count: 1,
        copy_chars: 300,
        copy_from_item: 1,
        wall_ms: ms + 25_000,
        ..reading(ms)
    }
}

#[test]
fn a_copied_system_is_found_and_the_authentic_view_leaves_its_copier_out() {
    let honest = |n: i64| {
        worker(
            n,
            move |i| if i == n { flip(gold_of(i)) } else { gold_of(i) },
            9_000,
            |_| reading(9_000),
        )
    };
    let annotators = vec![
        honest(1),
        honest(2),
        honest(3),
        worker(4, system_of, 30_000, |i| {
            if i % 3 == 0 {
                chatbot(5_000)
            } else {
                reading(5_000)
            }
        }),
        worker(5, |_| "positive", 1_000, |_| reading(1_000)),
    ];
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), task())].into_iter().collect();
    let r = build(&tasks, &annotators, &HashMap::new());
    let level = |n: usize| r.annotators[n].authenticity.as_ref().unwrap();
    for n in 0..3 {
        assert_eq!(level(n).level, Level::High, "{:?}", level(n));
    }
    let copier = level(3);
    assert_eq!(copier.level, Level::Low);
    let m = copier.machine.as_ref().unwrap();
    assert_eq!((m.with_system, m.system_wrong, m.same_wrong), (1.0, 5, 5));
    assert!(copier.evidence.machine_signal);
    assert_eq!(copier.evidence.assisted_items, 7);
    assert_eq!(copier.totals.away_ms, 7 * 25_000);
    let fast = level(4);
    assert_eq!(fast.level, Level::Mixed);
    assert_eq!(fast.evidence.straight_line.as_deref(), Some("positive"));
    assert_eq!(
        (fast.evidence.fast_answers, fast.evidence.timed_answers),
        (20, 20)
    );
    // The authentic view has the four others; all finished annotators are five.
    let n = |t: &Tables| t.main[0].official.n;
    assert_eq!((n(&r.all), n(&r.authentic)), (5, 4));
    let md = layout::markdown(&r);
    assert!(md.contains("without the annotators of low authenticity"));
    assert!(
        md.contains("| w4 | 1 | Toy | 0 | low authenticity (authentic view) |"),
        "{md}"
    );
    assert!(md.contains("the authentic view 1 of low authenticity; 1 of mixed authenticity"));
}

#[test]
fn answers_without_the_pages_record_are_named_as_such() {
    let mut a = worker(1, gold_of, 9_000, |_| reading(9_000));
    a.items.iter_mut().for_each(|i| i.signals = None);
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), task())].into_iter().collect();
    let r = build(&tasks, &[a], &HashMap::new());
    let x = r.annotators[0].authenticity.as_ref().unwrap();
    assert_eq!(x.level, Level::Low);
    assert_eq!(
        (x.evidence.items_with_signals, x.evidence.unsent_answers),
        (0, 20)
    );
    assert!(x.reasons[0].starts_with("answers not sent by the study page: 20 of 20"));
}

#[test]
fn claimed_times_are_read_against_the_servers_clock() {
    // Clean 9 s records on answers the server received 60 ms after each showing.
    let forged = worker(1, gold_of, 60, |_| reading(9_000));
    let tasks: HashMap<String, TaskData> = [("Toy".to_string(), task())].into_iter().collect();
    let r = build(&tasks, &[forged], &HashMap::new());
    let x = r.annotators[0].authenticity.as_ref().unwrap();
    assert_eq!(x.level, Level::Low);
    assert_eq!(x.evidence.clock_items, 20);
    // The reading floor is the server's: 60 ms is faster than 50 words at 1,000 a minute,
    // whatever the page claims.
    assert_eq!(
        (x.evidence.fast_answers, x.evidence.timed_answers),
        (20, 20)
    );
    assert!(x.reasons[0].contains("inconsistent with the server's clock"));
}
