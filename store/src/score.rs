//! Scoring a predictions file with S1: against an official CLUES test file (no database) or
//! against an imported task. A missing, unknown or repeated id is an error that names it.

use crate::error::{read_text, Error, Result};
use domain::s1::{mean, Scoring};
use domain::task::{Family, Gold};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One line of a predictions file: `{"id": ..., "answer": [strings]}` (official encoding).
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    pub id: String,
    pub answer: Vec<String>,
    pub line: usize,
    /// `"skipped": true` in the line: a crowd worker skipped the item. It scores 0 (a skip is
    /// not an answer), whatever `answer` holds; the official scorer ignores the field.
    pub skipped: bool,
}

/// A gold item to score against.
#[derive(Clone, Debug, PartialEq)]
pub struct GoldItem {
    pub id: String,
    pub gold: Gold,
}

fn id_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Non-blank lines with their 1-based numbers, each parsed as a JSON object.
fn json_lines(path: &Path, text: &str) -> Result<Vec<(usize, serde_json::Map<String, Value>)>> {
    let label = path.display().to_string();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l)
                .map_err(|e| Error::data(&label, Some(i + 1), format!("malformed JSON: {e}")))?;
            match v {
                Value::Object(o) => Ok((i + 1, o)),
                _ => Err(Error::data(
                    &label,
                    Some(i + 1),
                    "a line must be a JSON object",
                )),
            }
        })
        .collect()
}

pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>> {
    parse_predictions(&path.display().to_string(), &read_text(path)?)
}

/// Predictions in the official encoding from `text`; errors name `label` and the line.
pub fn parse_predictions(label: &str, text: &str) -> Result<Vec<Prediction>> {
    let label = label.to_string();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (line, obj) in json_lines(Path::new(&label), text)? {
        let id = id_of(obj.get("id"))
            .ok_or_else(|| Error::data(&label, Some(line), "needs an `id` (string or number)"))?;
        let answer = obj
            .get("answer")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|s| s.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                Error::data(
                    &label,
                    Some(line),
                    "needs an `answer` that is a list of strings",
                )
            })?;
        let skipped = match obj.get("skipped") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(Error::data(
                    &label,
                    Some(line),
                    "`skipped` must be true or false",
                ))
            }
        };
        if let Some(prev) = seen.insert(id.clone(), line) {
            return Err(Error::data(
                &label,
                Some(line),
                format!("id {id:?} is predicted twice (also on line {prev})"),
            ));
        }
        out.push(Prediction {
            id,
            answer,
            line,
            skipped,
        });
    }
    Ok(out)
}

/// Reads an official CLUES test file for scoring only: ids and answers, any task shape.
/// Returns the items and whether they are reading comprehension (`{text, answer_start}`).
pub fn read_gold_file(path: &Path) -> Result<(Vec<GoldItem>, Family)> {
    let label = path.display().to_string();
    let mut family = Family::Classification;
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (line, obj) in json_lines(path, &read_text(path)?)? {
        let err = |m: &str| Error::data(&label, Some(line), m.to_string());
        let id = id_of(obj.get("id")).ok_or_else(|| err("needs an `id` (string or number)"))?;
        let answer = obj
            .get("answer")
            .and_then(Value::as_array)
            .ok_or_else(|| err("needs an `answer` list"))?;
        let official = answer
            .iter()
            .map(|a| match a {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => {
                    family = Family::ReadingComprehension;
                    o.get("text").and_then(Value::as_str).map(str::to_string)
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| err("answers must be strings or {text, answer_start} objects"))?;
        if let Some(prev) = seen.insert(id.clone(), line) {
            return Err(err(&format!(
                "id {id:?} occurs twice (also on line {prev}); the file cannot be scored by id"
            )));
        }
        out.push(GoldItem {
            id,
            gold: Gold {
                official,
                spans: Vec::new(),
            },
        });
    }
    Ok((out, family))
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ScoreReport {
    pub items: usize,
    pub family: Family,
    /// S1 with the official scoring.
    #[serde(rename = "s1_official")]
    pub official: f64,
    /// S1 with the any-of scoring (equal to the official one outside reading comprehension).
    #[serde(rename = "s1_any_of")]
    pub any_of: f64,
}

impl ScoreReport {
    /// Printable report; its last line ends with the official S1. Numbers are printed in full:
    /// the shortest decimal that reads back as the same double (at most 17 significant digits,
    /// as Python's `repr`), so a score can be compared exactly.
    pub fn render(&self, what: &str) -> String {
        let mut out = format!("{what}: {} items\n", self.items);
        if self.family == Family::ReadingComprehension {
            out.push_str(&format!(
                "S1 ({}): {}\n",
                Scoring::AnyOf.describe(),
                self.any_of
            ));
        }
        out.push_str(&format!(
            "S1 ({}): {}\n",
            Scoring::Official.describe(),
            self.official
        ));
        out
    }

    /// The report as one JSON object: `target`, `items`, `family` and both scorings as numbers.
    pub fn to_json(&self, what: &str) -> String {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["target"] = serde_json::Value::String(what.to_string());
        format!("{v}\n")
    }
}

/// The prediction of every test id: an unknown id (with its line) or a test id without a
/// prediction is an error naming them.
pub fn match_ids<'a, 'p>(
    test_ids: impl Iterator<Item = &'a str> + Clone,
    preds: &'p [Prediction],
    preds_label: &str,
) -> Result<HashMap<&'p str, &'p Prediction>> {
    let by_id: HashMap<&str, &Prediction> = preds.iter().map(|p| (p.id.as_str(), p)).collect();
    let gold_ids: HashSet<&str> = test_ids.clone().collect();
    if let Some(p) = preds.iter().find(|p| !gold_ids.contains(p.id.as_str())) {
        return Err(Error::data(
            preds_label,
            Some(p.line),
            format!("unknown id {:?}: no such test item", p.id),
        ));
    }
    let missing: Vec<&str> = test_ids.filter(|id| !by_id.contains_key(id)).collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing
            .iter()
            .take(10)
            .map(|id| format!("{id:?}"))
            .collect();
        return Err(Error::data(
            preds_label,
            None,
            format!(
                "no prediction for {} test item(s): {}{}",
                missing.len(),
                shown.join(", "),
                if missing.len() > 10 { ", …" } else { "" }
            ),
        ));
    }
    Ok(by_id)
}

/// Scores predictions against gold items; every gold item needs exactly one prediction.
pub fn score(
    golds: &[GoldItem],
    family: Family,
    preds: &[Prediction],
    preds_label: &str,
) -> Result<ScoreReport> {
    let by_id = match_ids(golds.iter().map(|g| g.id.as_str()), preds, preds_label)?;
    let per = |scoring| -> Vec<f64> {
        golds
            .iter()
            .map(|g| {
                let p = by_id[g.id.as_str()];
                if p.skipped {
                    0.0
                } else {
                    g.gold.score(family, &p.answer, scoring)
                }
            })
            .collect()
    };
    Ok(ScoreReport {
        items: golds.len(),
        family,
        official: mean(&per(Scoring::Official)).unwrap_or(0.0),
        any_of: mean(&per(Scoring::AnyOf)).unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &tempfile::TempDir, name: &str, body: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        p
    }

    #[test]
    fn official_self_test_through_files() {
        let d = tempfile::tempdir().unwrap();
        let gold = write(
            &d,
            "g.jsonl",
            concat!(
            "{\"id\": \"1\", \"answer\": [\"b\", \"c\", \"d\"]}\n{\"id\": \"2\", \"answer\": []}\n",
            "{\"id\": \"3\", \"answer\": []}\n{\"id\": \"4\", \"answer\": [\"f\", \"g\"]}\n"),
        );
        let pred = write(&d, "p.jsonl", concat!(
            "{\"id\": \"4\", \"answer\": [\"d\", \"e\"]}\n{\"id\": \"1\", \"answer\": [\"a\", \"b\"]}\n",
            "{\"id\": \"2\", \"answer\": []}\n{\"id\": \"3\", \"answer\": [\"c\"]}\n"));
        let (golds, family) = read_gold_file(&gold).unwrap();
        let r = score(&golds, family, &read_predictions(&pred).unwrap(), "p").unwrap();
        assert!((r.official - 0.35).abs() < 1e-12);
        assert!(r.render("x").trim_end().ends_with(
            "S1 (official CLUES scoring: F1 against the set of distinct gold strings): 0.35"
        ));
    }

    #[test]
    fn ids_must_match_exactly_once() {
        let d = tempfile::tempdir().unwrap();
        let gold = write(
            &d,
            "g.jsonl",
            "{\"id\": 1, \"answer\": [\"positive\"]}\n{\"id\": 2, \"answer\": [\"negative\"]}\n",
        );
        let (golds, fam) = read_gold_file(&gold).unwrap();
        let dup = write(
            &d,
            "dup.jsonl",
            "{\"id\": 1, \"answer\": []}\n{\"id\": \"1\", \"answer\": []}\n",
        );
        let e = read_predictions(&dup).unwrap_err().to_string();
        assert!(
            e.contains("dup.jsonl:2") && e.contains("\"1\" is predicted twice"),
            "{e}"
        );
        let unknown = write(&d, "u.jsonl", "{\"id\": 1, \"answer\": []}\n{\"id\": 2, \"answer\": []}\n{\"id\": 9, \"answer\": []}\n");
        let e = score(&golds, fam, &read_predictions(&unknown).unwrap(), "u.jsonl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("u.jsonl:3") && e.contains("unknown id \"9\""),
            "{e}"
        );
        let missing = write(&d, "m.jsonl", "{\"id\": 2, \"answer\": [\"negative\"]}\n");
        let e = score(&golds, fam, &read_predictions(&missing).unwrap(), "m.jsonl")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no prediction for 1 test item(s): \"1\""), "{e}");
        let bad = write(&d, "b.jsonl", "{\"id\": 1, \"answer\": [1]}\n");
        assert!(read_predictions(&bad)
            .unwrap_err()
            .to_string()
            .contains("b.jsonl:1"));
    }

    #[test]
    fn reading_comprehension_reports_both_scorings() {
        let d = tempfile::tempdir().unwrap();
        let gold = write(&d, "g.jsonl", "{\"id\": \"q\", \"answer\": [{\"text\": \"the Normans\", \"answer_start\": 0}, {\"text\": \"Normans\", \"answer_start\": 4}]}\n");
        let pred = write(
            &d,
            "p.jsonl",
            "{\"id\": \"q\", \"answer\": [\"Normans\"]}\n",
        );
        let (golds, fam) = read_gold_file(&gold).unwrap();
        assert_eq!(fam, Family::ReadingComprehension);
        let r = score(&golds, fam, &read_predictions(&pred).unwrap(), "p").unwrap();
        assert_eq!(r.any_of, 1.0);
        assert!((r.official - 2.0 / 3.0).abs() < 1e-12);
        let text = r.render("q");
        assert!(
            text.contains("any-of") && text.trim_end().ends_with(": 0.6666666666666666"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&r.to_json("q")).unwrap();
        assert_eq!(json["s1_official"].as_f64(), Some(r.official));
        assert_eq!(json["s1_any_of"].as_f64(), Some(1.0));
        assert_eq!(json["target"], "q");
    }
}
