use super::*;
use crate::report::TaskColumn;
use crate::task::{Context, Gold, QuestionType};
use serde_json::json;

fn spec(family: Family, labels: &[&str]) -> TaskSpec {
    TaskSpec {
        question_types: vec![QuestionType {
            key: "PER".into(),
            question: "people?".into(),
        }],
        ..TaskSpec::plain("T", family, labels)
    }
}

fn ex(text: &str, qtype: Option<&str>, gold: &[&str], extra: serde_json::Value) -> Example {
    Example {
        id: "1".into(),
        context: Context::Single { text: text.into() },
        question: "q?".into(),
        question_type: qtype.map(str::to_string),
        gold: Gold {
            official: gold.iter().map(|g| g.to_string()).collect(),
            spans: Vec::new(),
        },
        extra,
    }
}

fn label(gold: &str) -> Example {
    ex("a film", None, &[gold], json!({}))
}

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|x| x.to_string()).collect()
}

#[test]
fn the_majority_label_is_the_shots_and_a_tie_goes_to_the_task_order() {
    let s = spec(Family::Classification, &["positive", "negative"]);
    let test = [label("positive"), label("negative")];
    let shots = [label("positive"), label("negative"), label("negative")];
    let a = Reference::MajorityLabel.answers(&s, &shots, &test);
    assert_eq!(a, vec![strings(&["negative"]); 2]);
    // One each: the task's first label, although "negative" came first.
    let tied = [label("negative"), label("positive")];
    let a = Reference::MajorityLabel.answers(&s, &tied, &test);
    assert_eq!(a[0], strings(&["positive"]));
    // No shots, no label: an empty answer (scores 0 on a label task).
    assert_eq!(
        Reference::MajorityLabel.answers(&s, &[], &test)[0],
        Vec::<String>::new()
    );
}

#[test]
fn the_listed_entity_counts_mentions_and_a_tie_goes_to_the_first() {
    // "Obama" at 0..5 and 26..31, "Trump" at 10..15 and 33..38 (code points, exclusive end).
    let text = "Obama and Trump met. Then Obama, Trump.";
    let spans = |list: &[(u64, u64)]| json!({"entity_spans": list.iter().map(|(s, e)| json!({"start": s, "end": e})).collect::<Vec<_>>()});
    let more = ex(text, None, &["Trump"], spans(&[(0, 5), (10, 15), (33, 38)]));
    let tie = ex(
        text,
        None,
        &["Trump"],
        spans(&[(10, 15), (0, 5), (26, 31), (33, 38)]),
    );
    let none = ex(text, None, &[], json!({}));
    assert_eq!(more.listed_entities(), vec!["Obama", "Trump", "Trump"]);
    let s = spec(Family::ReadingComprehension, &[]);
    let all = [more.clone(), tie.clone()];
    assert_eq!(Reference::of_task(&s, &all), vec![Reference::ListedEntity]);
    let some = [more.clone(), none.clone()];
    assert_eq!(
        Reference::of_task(&s, &some),
        vec![Reference::NoAnswer, Reference::ListedEntity]
    );
    let a = Reference::ListedEntity.answers(&s, &[], &[more, tie, none]);
    assert_eq!(a[0], strings(&["Trump"]));
    assert_eq!(a[1], strings(&["Trump"]));
    assert!(a[2].is_empty());
    // A span past the text or backwards is no mention.
    let bad = ex("short", None, &[], spans(&[(2, 1), (3, 99)]));
    assert!(bad.listed_entities().is_empty());
}

#[test]
fn the_gazetteer_answers_the_shots_entities_of_the_same_type_as_whole_words() {
    let s = spec(Family::SequenceLabelling, &[]);
    let shots = [
        ex("Lincoln spoke .", Some("PER"), &["Lincoln"], json!({})),
        ex("Paris is big .", Some("LOC"), &["Paris"], json!({})),
        ex("Nothing here .", Some("PER"), &[""], json!({})),
        ex("Lincoln again .", Some("PER"), &["Lincoln"], json!({})),
    ];
    let test = [
        ex(
            "Lincoln went to Lincolnshire and Paris .",
            Some("PER"),
            &["Lincoln"],
            json!({}),
        ),
        ex("Lincolnshire only .", Some("PER"), &[""], json!({})),
        ex("Paris and Lincoln .", Some("LOC"), &["Paris"], json!({})),
        ex("Paris .", Some("ORG"), &[""], json!({})),
    ];
    let a = Reference::Gazetteer.answers(&s, &shots, &test);
    assert_eq!(a[0], strings(&["Lincoln"]));
    assert!(a[1].is_empty(), "{a:?}");
    assert_eq!(a[2], strings(&["Paris"]));
    assert!(a[3].is_empty());
}

#[test]
fn runs_score_every_reference_the_way_humans_are_scored() {
    let s = spec(Family::SequenceLabelling, &[]);
    let test: Vec<(ExampleId, Example)> = vec![
        (
            ExampleId(1),
            ex("Lincoln spoke .", Some("PER"), &["Lincoln"], json!({})),
        ),
        (
            ExampleId(2),
            ex("It rained .", Some("PER"), &[""], json!({})),
        ),
    ];
    let mut groups = BTreeMap::new();
    groups.insert(
        (10, 1),
        vec![ex("Lincoln .", Some("PER"), &["Lincoln"], json!({}))],
    );
    groups.insert(
        (10, 2),
        vec![ex("Grant .", Some("PER"), &["Grant"], json!({}))],
    );
    groups.insert(
        (20, 1),
        vec![ex("Grant .", Some("PER"), &["Grant"], json!({}))],
    );
    let runs = runs(&s, &test, &groups);
    let of = |r: Reference| -> Vec<(u32, u32, f64)> {
        runs.iter()
            .filter(|x| x.system == r.name())
            .map(|x| (x.k, x.split, x.official))
            .collect()
    };
    // "No answer" is right on the empty item only; it needs no shots: k = 0, 10, 20.
    assert_eq!(
        of(Reference::NoAnswer),
        vec![(0, 0, 0.5), (10, 0, 0.5), (20, 0, 0.5)]
    );
    // Split 1 knows Lincoln (both items right); the others know only Grant (the empty item).
    assert_eq!(
        of(Reference::Gazetteer),
        vec![(10, 1, 1.0), (10, 2, 0.5), (20, 1, 0.5)]
    );
    let first = runs
        .iter()
        .find(|x| x.system == Reference::Gazetteer.name())
        .unwrap();
    assert_eq!(
        first.items,
        vec![(ExampleId(1), 1.0, 1.0), (ExampleId(2), 1.0, 1.0)]
    );
    assert!(of(Reference::MajorityLabel).is_empty() && of(Reference::ListedEntity).is_empty());
    // Text-to-text tasks have none.
    assert!(super::runs(&spec(Family::TextToText, &[]), &test, &groups).is_empty());
}

#[test]
fn attach_fills_only_the_report_s_own_tasks_and_shots() {
    let s = spec(Family::SequenceLabelling, &[]);
    let test = vec![(
        ExampleId(1),
        ex("Grant .", Some("PER"), &["Grant"], json!({})),
    )];
    let mut groups = BTreeMap::new();
    groups.insert(
        (10, 1),
        vec![ex("Grant .", Some("PER"), &["Grant"], json!({}))],
    );
    groups.insert((10, 2), vec![ex("Lee .", Some("PER"), &["Lee"], json!({}))]);
    groups.insert((20, 1), vec![ex("Lee .", Some("PER"), &["Lee"], json!({}))]);
    let runs = runs(&s, &test, &groups);
    let mut r = Report {
        tasks: vec![TaskColumn {
            name: "T".into(),
            family: Family::SequenceLabelling,
        }],
        shots: vec![10],
        ..Report::default()
    };
    attach(&mut r, &runs);
    assert_eq!((r.tasks.len(), r.shots.clone()), (1, vec![10]));
    let g = r
        .references
        .iter()
        .find(|c| c.system == Reference::Gazetteer.name())
        .unwrap();
    assert_eq!((g.k, g.splits.clone()), (10, vec![1, 2]));
    assert!((g.official.mean - 0.5).abs() < 1e-12 && (g.official.std_pop - 0.5).abs() < 1e-12);
    assert!(g.official_ci.is_none());
    let n = r
        .references
        .iter()
        .find(|c| c.system == Reference::NoAnswer.name())
        .unwrap();
    assert_eq!((n.k, n.splits.clone(), n.official.mean), (10, vec![0], 0.0));
    assert_eq!(r.references.len(), 2);
    let mut other = Report::default();
    attach(&mut other, &runs);
    assert!(other.references.is_empty());
    // Alone, every k of the runs is a row.
    let a = alone(&runs);
    assert_eq!(
        (a.tasks.len(), a.shots.clone(), a.references.len()),
        (1, vec![0, 10, 20], 5)
    );
}
