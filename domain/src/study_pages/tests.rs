use super::attention::{due, passes, too_many_failures};
use super::consent::declined_hand_back;
use super::questionnaire::{check_replies, summarize, Kind};
use super::*;
use crate::answer::{Answer, SpanAnswer};
use crate::crowd::HandBack;
use crate::platform::Platform;
use crate::study::StudyConfig;
use crate::task::{Family, Label, NoAnswer, QuestionType};

fn spec(family: Family) -> TaskSpec {
    let label = |n: &str| Label {
        name: n.into(),
        definition: String::new(),
        example: String::new(),
    };
    TaskSpec {
        name: "t".into(),
        family,
        description: String::new(),
        labels: if family == Family::Classification {
            vec![label("positive"), label("negative")]
        } else {
            Vec::new()
        },
        question_types: vec![QuestionType {
            key: "q".into(),
            question: String::new(),
        }],
        no_answer: NoAnswer::EmptyList,
        metric: None,
    }
}

fn questions() -> Questionnaires {
    serde_json::from_str(
        r#"{
        "before": [
            {"id": "english", "text": "Is English your first language?", "kind": "single_choice", "options": ["yes", "no"], "required": true},
            {"id": "age", "text": "Your age", "kind": "number", "min": 18, "max": 99, "integer": true},
            {"id": "tasks", "text": "Which tasks did you do before?", "kind": "multiple_choice", "options": ["sentiment", "NER", "QA"]}
        ],
        "after": [
            {"id": "difficulty", "text": "How hard was it?", "kind": "likert", "points": 5, "low": "easy", "high": "hard", "required": true},
            {"id": "feedback", "text": "Anything to tell us?", "kind": "short_text", "max_chars": 20}
        ]
    }"#,
    )
    .unwrap()
}

#[test]
fn questionnaire_definitions_are_checked_field_by_field() {
    assert!(
        questions().problems().is_empty(),
        "{:?}",
        questions().problems()
    );
    let bad: Questionnaires = serde_json::from_str(
        r#"{"before": [
            {"id": "Age!", "text": " ", "kind": "number", "min": 5, "max": 1},
            {"id": "one", "text": "One option", "kind": "single_choice", "options": ["a", "a"], "points": 3},
            {"id": "one", "text": "Scale", "kind": "likert", "points": 12}
        ]}"#,
    )
    .unwrap();
    let errs = bad.problems();
    let has = |s: &str| errs.iter().any(|e| e.contains(s));
    assert!(has("question id \"Age!\""), "{errs:?}");
    assert!(has("min below max"), "{errs:?}");
    assert!(has("points do not belong to a single_choice"), "{errs:?}");
    assert!(has("option \"a\" is listed twice"), "{errs:?}");
    assert!(has("2 to 11 points"), "{errs:?}");
    assert!(has("\"one\" is used twice"), "{errs:?}");
    // A misspelt field is refused by the parser, not ignored.
    let typo = serde_json::from_str::<Questionnaires>(
        r#"{"before": [{"id": "a", "text": "A", "kind": "short_text", "requird": true}]}"#,
    );
    assert!(typo.unwrap_err().to_string().contains("requird"));
}

#[test]
fn replies_are_validated_and_cleaned() {
    let q = questions();
    let ok: Replies =
        serde_json::from_str(r#"{"english": "no", "age": 30, "tasks": ["NER", "QA"]}"#).unwrap();
    assert_eq!(check_replies(&q.before, &ok).unwrap(), ok);
    // Optional questions may be left out; a required one may not.
    let only: Replies = serde_json::from_str(r#"{"english": "yes", "tasks": []}"#).unwrap();
    assert_eq!(check_replies(&q.before, &only).unwrap().len(), 1);
    let errs = check_replies(
        &q.before,
        &serde_json::from_str(r#"{"age": 30.5, "tasks": ["NER", "NER"], "colour": "red"}"#)
            .unwrap(),
    )
    .unwrap_err();
    let has = |s: &str| errs.iter().any(|e| e.contains(s));
    assert!(has("no question \"colour\""), "{errs:?}");
    assert!(
        has("please answer \"Is English your first language?\""),
        "{errs:?}"
    );
    assert!(has("give a whole number"), "{errs:?}");
    assert!(has("\"NER\" is chosen twice"), "{errs:?}");
    let errs = check_replies(
        &q.before,
        &serde_json::from_str(r#"{"english": "maybe", "age": 17}"#).unwrap(),
    )
    .unwrap_err();
    assert!(errs[0].contains("choose one of yes, no"), "{errs:?}");
    assert!(errs[1].contains("from 18 to 99"), "{errs:?}");
    // Texts are trimmed and limited; a blank text is no answer; a scale point is whole.
    let after = check_replies(
        &q.after,
        &serde_json::from_str(r#"{"difficulty": 4, "feedback": "  fine  "}"#).unwrap(),
    )
    .unwrap();
    assert_eq!(after["feedback"], Reply::Text("fine".into()));
    let long = check_replies(
        &q.after,
        &serde_json::from_str(r#"{"difficulty": 6, "feedback": "012345678901234567890"}"#).unwrap(),
    )
    .unwrap_err();
    assert!(
        long[0].contains("from 1 to 5") && long[1].contains("at most 20"),
        "{long:?}"
    );
}

#[test]
fn summaries_count_choices_and_spread_numbers() {
    let q = questions();
    let a: Replies =
        serde_json::from_str(r#"{"english": "yes", "age": 20, "tasks": ["NER"]}"#).unwrap();
    let b: Replies =
        serde_json::from_str(r#"{"english": "yes", "age": 40, "tasks": ["NER", "QA"]}"#).unwrap();
    let c: Replies = serde_json::from_str(r#"{"english": "no"}"#).unwrap();
    let s = summarize(Stage::Before, &q.before, &[&a, &b, &c]);
    assert_eq!(s[0].answered, 3);
    assert_eq!(s[0].counts, vec![("yes".into(), 2), ("no".into(), 1)]);
    let age = s[1].spread.unwrap();
    assert_eq!((age.n, age.mean, age.std_pop), (2, 30.0, 10.0));
    assert_eq!(s[2].kind, Kind::MultipleChoice);
    assert_eq!(
        s[2].counts,
        vec![("sentiment".into(), 0), ("NER".into(), 2), ("QA".into(), 1)]
    );
}

fn check(after: u32, text: &str, answer: &[&str]) -> AttentionCheck {
    AttentionCheck {
        after,
        text: text.into(),
        question: "What does the text ask for?".into(),
        answer: answer.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn attention_checks_are_checked_against_the_task() {
    let label = spec(Family::Classification);
    let ok = [check(
        2,
        "Please select 'positive' for this one.",
        &["positive"],
    )];
    assert!(attention::problems(&ok, &label, 10).is_empty());
    let errs = attention::problems(
        &[
            check(11, "Select neutral.", &["neutral"]),
            check(0, " ", &["positive"]),
        ],
        &label,
        10,
    );
    assert!(
        errs[0].contains("after 11 test items, but the test set has 10"),
        "{errs:?}"
    );
    assert!(
        errs[1].contains("one of the labels (positive, negative)"),
        "{errs:?}"
    );
    assert!(
        errs[2].contains("attention check 2: give a text"),
        "{errs:?}"
    );
    let spans = spec(Family::SequenceLabelling);
    let mark = check(1, "Mark the word banana in this sentence.", &["banana"]);
    assert!(attention::problems(std::slice::from_ref(&mark), &spans, 5).is_empty());
    let wrong = attention::problems(&[check(1, "Mark the word apple.", &["banana"])], &spans, 5);
    assert!(
        wrong[0].contains("\"banana\" must be a part of its text"),
        "{wrong:?}"
    );
    // Passing: the same set of strings; no answer where none is asked; never a skip.
    let span = |t: &str, o: usize| SpanAnswer {
        text: t.into(),
        offset: o,
        length: t.chars().count(),
    };
    assert!(passes(
        &mark,
        &Answer::Spans {
            spans: vec![span("banana", 14)]
        }
    ));
    assert!(!passes(
        &mark,
        &Answer::Spans {
            spans: vec![span("word", 9)]
        }
    ));
    assert!(!passes(&mark, &Answer::NoAnswer));
    assert!(passes(
        &check(0, "Nothing to mark.", &[]),
        &Answer::NoAnswer
    ));
    assert!(!passes(
        &check(0, "Nothing to mark.", &[]),
        &Answer::Skip { confidence: None }
    ));
    let pos = &ok[0];
    assert!(passes(
        pos,
        &Answer::Label {
            label: "positive".into(),
            confidence: 3
        }
    ));
    assert!(!passes(
        pos,
        &Answer::Label {
            label: "negative".into(),
            confidence: 5
        }
    ));
}

#[test]
fn the_due_check_comes_in_order_and_once() {
    let checks = [check(5, "a", &[]), check(0, "b", &[]), check(5, "c", &[])];
    assert_eq!(due(&checks, 0, &[]), Some(1));
    assert_eq!(due(&checks, 3, &[1]), None);
    assert_eq!(due(&checks, 5, &[1]), Some(0));
    assert_eq!(due(&checks, 5, &[1, 0]), Some(2));
    assert_eq!(due(&checks, 9, &[0, 1, 2]), None);
    assert!(!too_many_failures(&[false, false], None));
    assert!(!too_many_failures(&[false, true], Some(1)));
    assert!(too_many_failures(&[false, false, true], Some(1)));
}

fn consent() -> Consent {
    Consent {
        text: "# Consent\n\nYou may stop at any time.".into(),
        contact: "Dr. A. Researcher, a@uni.example".into(),
        no_consent_code: "NOCONSENT".into(),
        no_consent_url: String::new(),
    }
}

#[test]
#[cfg(feature = "server")]
fn a_consent_is_hashed_with_its_contact() {
    let h = consent().hash();
    assert_eq!(h.len(), 64);
    let edited = Consent {
        contact: "Dr. B".into(),
        ..consent()
    };
    assert_ne!(edited.hash(), h, "the contact is part of what is agreed to");
}

#[test]
fn consent_is_checked_and_declined_per_platform() {
    assert!(consent().problems().is_empty());
    let bad = Consent {
        contact: " ".into(),
        no_consent_code: "no consent".into(),
        no_consent_url: "http://x".into(),
        ..consent()
    };
    assert_eq!(bad.problems().len(), 3, "{:?}", bad.problems());
    assert_eq!(
        declined_hand_back(Some(Platform::Prolific), &consent()),
        Some(HandBack::Link {
            platform: "Prolific".into(),
            url: "https://app.prolific.com/submissions/complete?cc=NOCONSENT".into()
        })
    );
    let url = Consent {
        no_consent_url: "https://example.org/back?c={code}".into(),
        ..consent()
    };
    assert!(matches!(declined_hand_back(Some(Platform::Prolific), &url),
        Some(HandBack::Link { url, .. }) if url == "https://example.org/back?c=NOCONSENT"));
    let none = Consent {
        no_consent_code: String::new(),
        ..consent()
    };
    assert_eq!(declined_hand_back(Some(Platform::Prolific), &none), None);
    assert_eq!(declined_hand_back(Some(Platform::Mturk), &consent()), None);
    assert!(Platform::declined_message(Some(Platform::Mturk), false).contains("Return"));
    assert!(Platform::declined_message(None, false).contains("close this page"));
}

#[test]
fn a_study_without_pages_is_stored_as_before_and_pages_freeze_once_started() {
    let plain = serde_json::to_value(StudyConfig::default()).unwrap();
    assert!(plain.get("pages").is_none());
    let with = StudyConfig {
        pages: StudyPages {
            consent: Some(consent()),
            questionnaire: questions(),
            attention_checks: vec![check(1, "Select positive.", &["positive"])],
            attention_max_failures: Some(0),
            debriefing: "Thank you. The study was about *annotation*.".into(),
        },
        ..StudyConfig::default()
    };
    let back: StudyConfig = serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
    assert_eq!(back, with);
    assert!(with
        .pages
        .problems(&spec(Family::Classification), 10)
        .is_empty());
    // Once started: the texts may change, the questions and checks may not.
    let mut texts = with.clone();
    texts.pages.debriefing = "Thanks!".into();
    texts.pages.consent.as_mut().unwrap().contact = "Dr. B".into();
    texts.pages.attention_max_failures = None;
    assert!(with.check_edit(&texts, true).is_ok());
    let mut asked = with.clone();
    asked.pages.questionnaire.after.pop();
    assert!(with
        .check_edit(&asked, true)
        .unwrap_err()
        .contains("questionnaires"));
    assert!(with.check_edit(&asked, false).is_ok());
    let mut no_checks = with.clone();
    no_checks.pages.attention_checks.clear();
    no_checks.pages.attention_max_failures = None;
    assert!(with.check_edit(&no_checks, true).is_err());
    let limit_alone = StudyPages {
        attention_max_failures: Some(1),
        ..StudyPages::default()
    };
    assert!(limit_alone.problems(&spec(Family::Classification), 10)[0]
        .contains("needs attention checks"));
}

#[test]
#[cfg(feature = "server")]
fn the_form_is_native_html_and_its_fields_come_back_as_answers() {
    use super::form::{questions_html, replies_from_fields};
    let q = questions();
    let html = questions_html(&q.before);
    assert!(
        html.contains(r#"<legend>Is English your first language? *</legend>"#),
        "{html}"
    );
    assert!(
        html.contains(r#"<input type="radio" name="q-english" value="no" required> no"#),
        "{html}"
    );
    assert!(
        html.contains(
            r#"name="q-age" aria-label="Your age" inputmode="numeric" step="1" min="18" max="99">"#
        ),
        "{html}"
    );
    assert!(
        html.contains(r#"<input type="checkbox" name="q-tasks" value="NER"> NER"#),
        "{html}"
    );
    let scale = questions_html(&q.after);
    assert!(
        scale.contains(r#"value="1" required> 1 easy</label>"#) && scale.contains("5 hard"),
        "{scale}"
    );
    // Text is escaped wherever it goes.
    let mut hostile = q.before[0].clone();
    hostile.text = "<b>\"Bold\"</b>".into();
    hostile.options = vec!["<i>".into(), "x\"y".into()];
    let h = questions_html(&[hostile]);
    assert!(
        !h.contains("<b>")
            && !h.contains("<i>")
            && h.contains("&lt;i&gt;")
            && h.contains("x&quot;y"),
        "{h}"
    );
    let f = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let got = replies_from_fields(
        &q.before,
        &f(&[
            ("q-english", "no"),
            ("q-age", "33"),
            ("q-tasks", "NER"),
            ("q-tasks", "QA"),
        ]),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        r#"{"age":33.0,"english":"no","tasks":["NER","QA"]}"#
    );
    // An empty number field is no answer; a word in it is named; so is a second choice and an
    // unknown field, beside the answers' own problems.
    assert_eq!(
        replies_from_fields(&q.before, &f(&[("q-english", "yes"), ("q-age", "")]))
            .unwrap()
            .len(),
        1
    );
    let errs = replies_from_fields(
        &q.before,
        &f(&[
            ("q-english", "yes"),
            ("q-english", "no"),
            ("q-age", "thirty"),
            ("q-x", "1"),
        ]),
    )
    .unwrap_err();
    let has = |s: &str| errs.iter().any(|e| e.contains(s));
    assert!(
        has("has one answer") && has("no question \"q-x\"") && has("give a number"),
        "{errs:?}"
    );
}
