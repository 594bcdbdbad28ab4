use super::*;
use crate::task::Gold;
use serde_json::json;

fn spec(family: Family, labels: &[&str]) -> TaskSpec {
    TaskSpec {
        description: "Do the task.".into(),
        ..TaskSpec::plain("T", family, labels)
    }
}

fn ex(text: &str, question: &str, gold: &[&str], extra: serde_json::Value) -> Example {
    Example {
        id: "1".into(),
        context: Context::Single { text: text.into() },
        question: question.into(),
        question_type: None,
        gold: Gold {
            official: gold.iter().map(|g| g.to_string()).collect(),
            spans: Vec::new(),
        },
        extra,
    }
}

#[test]
fn the_prompt_has_the_description_the_shots_with_answers_and_the_open_item() {
    let s = spec(Family::SequenceLabelling, &[]);
    let shots = [
        ex(
            "Lincoln met Grant .",
            "people?",
            &["Lincoln", "Grant"],
            json!({}),
        ),
        ex("It rained .", "people?", &[""], json!({})),
    ];
    let item = ex("Lee left .", "people?", &["Lee"], json!({}));
    let p = prompt(&s, &shots, &item);
    assert_eq!(
        p,
        "Do the task.\nAnswer with text copied exactly from the context; separate several answers with \"|\"; answer \"no answer\" when there is none.\n\n\
         Context: Lincoln met Grant .\nQuestion: people?\nAnswer: Lincoln | Grant\n\n\
         Context: It rained .\nQuestion: people?\nAnswer: no answer\n\n\
         Context: Lee left .\nQuestion: people?\nAnswer:"
    );
    // A pair of sentences and the label choices.
    let nli = spec(Family::Classification, &["entailment", "neutral"]);
    let pair = Example {
        context: Context::Pair {
            premise: "A man sings.".into(),
            hypothesis: "Someone sings.".into(),
        },
        ..ex("", "entailment or neutral?", &["entailment"], json!({}))
    };
    let p = prompt(&nli, std::slice::from_ref(&pair), &pair);
    assert!(p.starts_with("Do the task.\nAnswer with one of: entailment, neutral.\n\nSentence 1: A man sings.\nSentence 2: Someone sings.\nQuestion: entailment or neutral?\nAnswer: entailment\n\n"), "{p}");
    // Reading comprehension: the first annotator's answer stands for the others.
    let rc = spec(Family::ReadingComprehension, &[]);
    let shot = ex(
        "Paris is big.",
        "Which city?",
        &["Paris", "Paris is"],
        json!({}),
    );
    assert!(prompt(&rc, &[shot], &item).contains("Answer: Paris\n\n"));
}

#[test]
fn a_reply_becomes_spans_of_the_context_or_nothing() {
    let s = spec(Family::SequenceLabelling, &[]);
    let item = ex(
        "Lincoln met GRANT in Ohio .",
        "people?",
        &["Lincoln"],
        json!({}),
    );
    let r = read_reply(&s, &item, " Lincoln | grant | Sherman\nContext: more");
    assert_eq!(r.answer, vec!["Lincoln", "GRANT"]);
    let hows: Vec<How> = r.parts.iter().map(|p| p.how).collect();
    assert_eq!(hows, vec![How::Exact, How::CaseFolded, How::Unmatched]);
    for reply in ["no answer", "None.", "  ", "\"no answer\""] {
        let r = read_reply(&s, &item, reply);
        assert!(r.answer.is_empty(), "{reply:?}");
        assert_eq!(r.parts[0].how, How::NoAnswer);
    }
    // The same answer twice counts once; a quoted answer with a full stop is read.
    assert_eq!(read_reply(&s, &item, "Ohio | Ohio").answer, vec!["Ohio"]);
    assert_eq!(read_reply(&s, &item, "\"Ohio.\"").answer, vec!["Ohio"]);
    // Code points, not bytes: a case-folded match after accented text.
    let accented = ex("Élodie met Zoë .", "people?", &["Zoë"], json!({}));
    assert_eq!(read_reply(&s, &accented, "zoË").answer, vec!["Zoë"]);
}

#[test]
fn labels_and_listed_entities_are_read_from_what_the_reply_names() {
    let s = spec(Family::Classification, &["positive", "negative"]);
    let item = ex(
        "a fine film",
        "positive or negative?",
        &["positive"],
        json!({}),
    );
    let r = read_reply(&s, &item, "It is Negative, not positive");
    assert_eq!(
        (r.answer.clone(), r.parts[0].how),
        (vec!["negative".to_string()], How::Label)
    );
    let r = read_reply(&s, &item, "great");
    assert!(r.answer.is_empty() && r.parts[0].how == How::Unmatched);
    // ReCoRD: the listed entity the reply is, else the longest one it holds.
    let rc = spec(Family::ReadingComprehension, &[]);
    let text = "Trump met Donald Trump Jr. in Ohio";
    let spans = json!({"entity_spans": [{"start": 0, "end": 5}, {"start": 10, "end": 26}, {"start": 30, "end": 34}]});
    let item = ex(text, "@placeholder went", &["Ohio"], spans);
    assert_eq!(read_reply(&rc, &item, "ohio").answer, vec!["Ohio"]);
    let r = read_reply(&rc, &item, "It was Donald Trump Jr. surely");
    assert_eq!(
        (r.answer.clone(), r.parts[0].how),
        (vec!["Donald Trump Jr.".to_string()], How::Entity)
    );
    assert!(read_reply(&rc, &item, "Obama").answer.is_empty());
}
