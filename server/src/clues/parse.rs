//! One line of an official CLUES JSONL file -> an `Example` in the unified format, with the
//! quality notes the row raises. Each task shape is handled here; malformed rows and answer
//! offsets that do not match the context are errors, everything merely odd is a note.

use domain::spans::{check_span, slice_cp, Span};
use domain::task::{Context, Example, Family, Gold, NoAnswer, TaskSpec};
use serde_json::{Map, Value};

/// A finding about one row: (kind, detail).
pub type RowNote = (&'static str, String);

fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("field `{key}` must be a string")),
        None => Err(format!("missing field `{key}`")),
    }
}

fn parse_id(obj: &Map<String, Value>) -> Result<String, String> {
    match obj.get("id") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err("field `id` must be a string or a number".into()),
        None => Err("missing field `id`".into()),
    }
}

fn parse_context(obj: &Map<String, Value>) -> Result<Context, String> {
    match obj.get("context") {
        Some(Value::String(s)) => Ok(Context::Single { text: s.clone() }),
        Some(Value::Array(parts)) => match parts.as_slice() {
            [Value::String(p), Value::String(h)] => Ok(Context::Pair {
                premise: p.clone(),
                hypothesis: h.clone(),
            }),
            _ => Err(
                "field `context` as a list must hold exactly two strings (premise, hypothesis)"
                    .into(),
            ),
        },
        Some(_) => Err("field `context` must be a string or a list of two strings".into()),
        None => Err("missing field `context`".into()),
    }
}

fn as_offset(v: Option<&Value>, what: &str) -> Result<usize, String> {
    v.and_then(Value::as_u64)
        .map(|n| n as usize)
        .ok_or_else(|| format!("{what} must be a non-negative integer"))
}

/// Reading comprehension: `[{text, answer_start}]`, offsets in code points, checked.
fn parse_rc_answer(answer: &[Value], context: &Context) -> Result<Vec<Span>, String> {
    answer
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let n = i + 1;
            let obj = a
                .as_object()
                .ok_or_else(|| format!("answer {n} must be an object {{text, answer_start}}"))?;
            let text = obj
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("answer {n} needs a string `text`"))?;
            let start = as_offset(
                obj.get("answer_start"),
                &format!("answer {n}'s `answer_start`"),
            )?;
            let span = Span::new(text, Some(start));
            check_span(context.primary(), &span).map_err(|e| format!("answer {n}: {e}"))?;
            Ok(span)
        })
        .collect()
}

/// ReCoRD's candidate entities: `[{start, end}]` with an inclusive `end`, in code points.
/// Returned as `[{start, end, text}]` with an exclusive `end`.
fn parse_entities(entities: &Value, context: &str) -> Result<Value, String> {
    let list = entities
        .as_array()
        .ok_or("field `entities` must be a list")?;
    let len = context.chars().count();
    let mut out = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let n = i + 1;
        let start = as_offset(e.get("start"), &format!("entity {n}'s `start`"))?;
        let end = as_offset(e.get("end"), &format!("entity {n}'s `end`"))?;
        if start > end || end >= len {
            return Err(format!(
                "entity {n} [{start}, {end}] (inclusive end) is outside the context of {len} code points"
            ));
        }
        let text = slice_cp(context, start, end + 1 - start).unwrap_or_default();
        out.push(serde_json::json!({ "start": start, "end": end + 1, "text": text }));
    }
    Ok(Value::Array(out))
}

pub use store::task_write::content_key;

/// Parses one non-blank line of a task's file.
pub fn parse_row(spec: &TaskSpec, line: &str) -> Result<(Example, Vec<RowNote>), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("malformed JSON: {e}"))?;
    let obj = value.as_object().ok_or("a row must be a JSON object")?;
    let id = parse_id(obj)?;
    let question = str_field(obj, "question")?.to_string();
    let context = parse_context(obj)?;
    let answer = match obj.get("answer") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err("field `answer` must be a list".into()),
        None => return Err("missing field `answer`".into()),
    };
    let mut notes: Vec<RowNote> = Vec::new();

    let (official, spans) = gold_of(spec, answer, &context)?;
    family_notes(spec, obj, &context, &official, &spans, &mut notes);
    if context.is_empty() {
        notes.push(("empty_context", "the context is empty".into()));
    }
    if question.trim().is_empty() {
        notes.push(("empty_question", "the question is empty".into()));
    }
    let question_type = spec.question_type_of(&question).map(|q| q.key.clone());
    if question_type.is_none() {
        notes.push((
            "unknown_question",
            format!("question {question:?} is not one of the task's question types"),
        ));
    }

    let mut extra = Map::new();
    for (k, v) in obj {
        if !matches!(k.as_str(), "id" | "context" | "question" | "answer") {
            extra.insert(k.clone(), v.clone());
        }
    }
    if let Some(entities) = obj.get("entities") {
        extra.insert(
            "entity_spans".into(),
            parse_entities(entities, context.primary())?,
        );
    }
    let example = Example {
        id,
        context,
        question,
        question_type,
        gold: Gold { official, spans },
        extra: Value::Object(extra),
    };
    Ok((example, notes))
}

/// The gold of a row: the official strings and the spans they are (located in the context for
/// reading comprehension, the internal encoding's strings otherwise).
fn gold_of(
    spec: &TaskSpec,
    answer: &[Value],
    context: &Context,
) -> Result<(Vec<String>, Vec<Span>), String> {
    Ok(if spec.family == Family::ReadingComprehension {
        let spans = parse_rc_answer(answer, context)?;
        (
            spans.iter().map(|s| s.text.clone()).collect::<Vec<_>>(),
            spans,
        )
    } else {
        let strings = answer
            .iter()
            .enumerate()
            .map(|(i, a)| {
                a.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("answer {} must be a string", i + 1))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let internal = spec.from_official(&strings);
        (
            strings,
            internal
                .into_iter()
                .filter(|s| !s.is_empty())
                .map(|s| Span::new(s, None))
                .collect(),
        )
    })
}

/// The quality notes of a row's gold that depend on its task's family.
fn family_notes(
    spec: &TaskSpec,
    obj: &Map<String, Value>,
    context: &Context,
    official: &[String],
    spans: &[Span],
    notes: &mut Vec<RowNote>,
) {
    match spec.family {
        Family::SequenceLabelling => {
            if official.len() > 1 && official.iter().any(String::is_empty) {
                notes.push((
                    "empty_among_answers",
                    "the answer list mixes \"\" with entity strings".into(),
                ));
            }
            if official.is_empty() && spec.no_answer == NoAnswer::EmptyString {
                notes.push((
                    "empty_answer_list",
                    "the answer is [] where this task writes \"no entity\" as [\"\"]".into(),
                ));
            }
            for s in spans {
                if !context.contains(&s.text) {
                    notes.push((
                        "gold_not_in_context",
                        format!("{:?} does not occur in the context", s.text),
                    ));
                }
            }
        }
        Family::Classification => {
            if official.len() != 1 {
                notes.push((
                    "label_count",
                    format!("{} labels where one is expected", official.len()),
                ));
            }
            for l in official {
                if !spec.labels.iter().any(|x| &x.name == l) {
                    notes.push((
                        "unknown_label",
                        format!("label {l:?} is not one of the task's labels"),
                    ));
                }
            }
        }
        // No CLUES file holds a text-to-text task (those come from CrossFit data).
        Family::TextToText => {}
        Family::ReadingComprehension => {
            if let Some(imp) = obj.get("is_impossible").and_then(Value::as_bool) {
                if imp != official.is_empty() {
                    notes.push((
                        "impossible_mismatch",
                        format!(
                            "is_impossible is {imp} but the row has {} answers",
                            official.len()
                        ),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clues::spec::{clues_task, spec};

    fn task(dir: &str) -> TaskSpec {
        spec(clues_task(dir).unwrap(), dir)
    }

    #[test]
    fn ner_empty_answer_is_a_set_holding_the_empty_string() {
        let (ex, notes) = parse_row(
            &task("CoNLL2003"),
            r#"{"answer": [""], "question": "List all the organizations in the context", "id": "1_2", "context": "Lincoln spoke ."}"#,
        )
        .unwrap();
        assert_eq!(ex.gold.official, vec![String::new()]);
        assert!(ex.gold.spans.is_empty());
        assert_eq!(ex.question_type.as_deref(), Some("organization"));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn ner_gold_missing_from_context_is_a_note_not_an_error() {
        let (ex, notes) = parse_row(
            &task("CoNLL2003"),
            r#"{"answer": ["\"Queen s Park\""], "question": "List all the locations in the context", "id": "9_3", "context": "He went to Queen 's Park ."}"#,
        )
        .unwrap();
        assert_eq!(ex.gold.official, vec!["\"Queen s Park\"".to_string()]);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].0, "gold_not_in_context");
    }

    #[test]
    fn squad_offsets_are_code_points_and_checked() {
        let t = task("SQuAD-v2");
        let ok = r#"{"question": "Who?", "id": "q1", "answer": [{"text": "Zoë", "answer_start": 5}, {"text": "Zoë", "answer_start": 5}], "is_impossible": false, "context": "👍🏽 é Zoë came."}"#;
        // "👍🏽" is 2 code points, then " é " = 3: "Zoë" starts at 5.
        let (ex, notes) = parse_row(&t, ok).unwrap();
        assert_eq!(ex.gold.official, vec!["Zoë", "Zoë"]);
        assert_eq!(ex.gold.spans[0].offset, Some(5));
        assert!(notes.is_empty(), "{notes:?}");
        let bad = ok.replace("\"answer_start\": 5}, {", "\"answer_start\": 6}, {");
        let err = parse_row(&t, &bad).unwrap_err();
        assert!(
            err.contains("answer 1") && err.contains("does not match"),
            "{err}"
        );
        let (ex, _) = parse_row(
            &t,
            r#"{"question": "Q", "id": "q2", "answer": [], "is_impossible": true, "context": "c"}"#,
        )
        .unwrap();
        assert!(ex.gold.official.is_empty());
    }

    #[test]
    fn record_entities_have_inclusive_ends() {
        let t = task("ReCoRD");
        let row = r#"{"id": "r1", "context": "Paris and Rome", "entities": [{"start": 0, "end": 4}, {"start": 10, "end": 13}], "question": "@placeholder is big", "answer": [{"text": "Rome", "answer_start": 10}], "is_impossible": false}"#;
        let (ex, _) = parse_row(&t, row).unwrap();
        let spans = &ex.extra["entity_spans"];
        assert_eq!(spans[0]["text"], "Paris");
        assert_eq!(spans[1]["end"], 14);
        assert_eq!(spans[1]["text"], "Rome");
        let out = row.replace("\"end\": 13", "\"end\": 14");
        assert!(parse_row(&t, &out).unwrap_err().contains("entity 2"));
    }

    #[test]
    fn mnli_context_pair_and_sst_numeric_ids() {
        let (ex, notes) = parse_row(
            &task("MNLI"),
            r#"{"genre": "travel", "answer": ["contradiction"], "question": "entailment, contraction, or neutral?", "id": "7", "context": ["A is here.", "A is not here."]}"#,
        )
        .unwrap();
        assert_eq!(ex.context.second(), Some("A is not here."));
        assert_eq!(ex.extra["genre"], "travel");
        assert!(notes.is_empty(), "{notes:?}");
        let (ex, _) = parse_row(&task("SST-2"), r#"{"answer": ["positive"], "question": "positive or negative?", "id": 1, "context": "fine "}"#).unwrap();
        assert_eq!(ex.id, "1");
        assert_eq!(
            ex.context.primary(),
            "fine ",
            "contexts are kept byte for byte"
        );
    }

    #[test]
    fn malformed_rows_are_errors() {
        let t = task("SST-2");
        assert!(parse_row(&t, "{not json")
            .unwrap_err()
            .contains("malformed JSON"));
        assert!(parse_row(&t, "[1]").unwrap_err().contains("JSON object"));
        assert!(parse_row(&t, r#"{"id": 1, "question": "q", "answer": []}"#)
            .unwrap_err()
            .contains("`context`"));
        assert!(parse_row(
            &t,
            r#"{"id": 1, "question": "q", "context": "c", "answer": "positive"}"#
        )
        .unwrap_err()
        .contains("`answer`"));
        assert!(parse_row(
            &t,
            r#"{"id": [1], "question": "q", "context": "c", "answer": []}"#
        )
        .unwrap_err()
        .contains("`id`"));
        assert!(parse_row(
            &task("MNLI"),
            r#"{"id": 1, "question": "q", "context": ["only one"], "answer": []}"#
        )
        .unwrap_err()
        .contains("two strings"));
    }
}
