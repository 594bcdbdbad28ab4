//! Predictions made elsewhere (e.g. a large language model's outputs): read in the official
//! CLUES format or as span lists, checked against the test set, scored and stored.

use super::runs::task_test;
use super::*;

use crate::score::Prediction;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::time::Instant;
use store::error::{Error, Result};

/// Reads predictions from another system: the official CLUES format (`{"id", "answer"}` per
/// line), JSON lines of `{"<id>": [spans]}`, or one JSON object mapping ids to span lists (a
/// span is a string or `{"text": ...}`; a bare string is one span). The last two give span
/// sets, written in the task's official encoding.
pub fn read_imported(label: &str, text: &str) -> Result<(Vec<Prediction>, bool)> {
    let label = label.to_string();
    let spans_of = |v: &serde_json::Value, line: Option<usize>| -> Result<Vec<String>> {
        let list = match v {
            serde_json::Value::Array(a) => a.clone(),
            s @ serde_json::Value::String(_) => vec![s.clone()],
            _ => {
                return Err(Error::data(
                    &label,
                    line,
                    "a prediction must be a list of spans",
                ))
            }
        };
        list.iter()
            .map(|s| match s {
                serde_json::Value::String(t) => Ok(t.clone()),
                serde_json::Value::Object(o) => o
                    .get("text")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| {
                        Error::data(&label, line, "a span object needs a \"text\" string")
                    }),
                _ => Err(Error::data(
                    &label,
                    line,
                    "a span must be a string or {\"text\": ...}",
                )),
            })
            .collect()
    };
    // One object mapping ids to spans (the whole file; also a one-line file of the second form).
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) {
        if !map.contains_key("id") {
            let out = map
                .iter()
                .map(|(id, v)| {
                    Ok(Prediction {
                        id: id.clone(),
                        answer: spans_of(v, None)?,
                        line: 1,
                        skipped: false,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok((out, false));
        }
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let official = serde_json::from_str::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("id")))
        .unwrap_or(true);
    if official {
        return Ok((crate::score::parse_predictions(&label, text)?, true));
    }
    let mut out = Vec::new();
    let mut seen = HashMap::new();
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line = Some(i + 1);
        let v: serde_json::Value = serde_json::from_str(l)
            .map_err(|e| Error::data(&label, line, format!("malformed JSON: {e}")))?;
        let (id, v) = v
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.iter().next())
            .ok_or_else(|| {
                Error::data(
                    &label,
                    line,
                    "expected {\"id\": ..., \"answer\": [...]} or one {\"<id>\": [spans]} per line",
                )
            })?;
        if let Some(prev) = seen.insert(id.clone(), i + 1) {
            return Err(Error::data(
                &label,
                line,
                format!("id {id:?} is predicted twice (also on line {prev})"),
            ));
        }
        out.push(Prediction {
            id: id.clone(),
            answer: spans_of(v, line)?,
            line: i + 1,
            skipped: false,
        });
    }
    Ok((out, false))
}

/// Scores and stores imported predictions under `t`; every test item needs exactly one.
pub async fn import(pool: &AnyPool, label: &str, text: &str, t: Target) -> Result<Summary> {
    let started = Instant::now();
    let (task_id, spec, test) = task_test(pool, &t.task).await?;
    let (preds, official) = read_imported(label, text)?;
    let by_id = crate::score::match_ids(test.iter().map(|(_, e)| e.id.as_str()), &preds, label)?;
    let answers = test
        .iter()
        .map(|(_, e)| {
            let a = &by_id[e.id.as_str()].answer;
            (
                if official {
                    a.clone()
                } else {
                    spec.to_official(a)
                },
                Vec::new(),
                None,
            )
        })
        .collect();
    let items = score_items(&spec, &test, answers)?;
    let (run, (s1, s1_any_of)) =
        store_whole(pool, task_id, &t, (label, "imported"), &items).await?;
    Ok(Summary {
        run,
        items: items.len(),
        s1,
        s1_any_of,
        provider: "imported".into(),
        seconds: started.elapsed().as_secs_f64(),
        target: t,
    })
}
