//! The researcher's downloads, built from a loaded scope of studies: annotations (JSONL, CSV),
//! scores (JSON, CSV, Markdown), CLUES-format predictions, the learning-curve SVG (the pay
//! sheet is `store::pay`). The row-by-row files are streamed (`store::stream`); the bundle is
//! in `store::bundle`.

use crate::error::Error;
use crate::report::Loaded;
use domain::ids::{AssignmentId, ExampleId, StudyId};
use domain::place::{Phase, PlaceStatus};
use domain::report::draw::chart::task_curve;
use domain::report::draw::table::csv_line;
use domain::report::{majority, scenario_annotators, Report, Which};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

pub(crate) fn json_line<T: Serialize>(v: &T) -> Result<String, Error> {
    let mut s = serde_json::to_string(v).map_err(Error::internal)?;
    s.push('\n');
    Ok(s)
}

/// A JSON value as a CSV cell: null empty, booleans `true`/`false`, lists and objects as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// One row serialised to a JSON object, written as a CSV line in the order of `columns`.
pub(crate) fn csv_row<T: Serialize>(columns: &[&str], row: &T) -> Result<String, Error> {
    let v = serde_json::to_value(row).map_err(Error::internal)?;
    let fields: Vec<String> = columns
        .iter()
        .map(|c| v.get(c).map(cell).unwrap_or_default())
        .collect();
    Ok(csv_line(&fields))
}

/// Rows written as CSV, the header first.
pub(crate) fn csv_of<T: Serialize>(columns: &[&str], rows: &[T]) -> Result<String, Error> {
    let mut out = csv_line(columns);
    for r in rows {
        out.push_str(&csv_row(columns, r)?);
    }
    Ok(out)
}

pub fn scores_json(r: &Report) -> Result<String, Error> {
    serde_json::to_string_pretty(r)
        .map(|s| s + "\n")
        .map_err(Error::internal)
}

/// Unix milliseconds as an ISO 8601 UTC time with milliseconds.
pub fn iso_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms.rem_euclid(1000)
    )
}

/// One answer to one question, a line of `questionnaires.csv` (long format: pivot on
/// `question` for a table per worker).
#[derive(Serialize)]
struct AnswerRow<'a> {
    study_id: StudyId,
    assignment_id: domain::ids::AssignmentId,
    worker: &'a str,
    k: u32,
    stage: &'static str,
    question: &'a str,
    kind: domain::study_pages::questionnaire::Kind,
    /// The choice or text; multiple choices joined by `|`; the number as text.
    answer: String,
    /// Scale points and numbers as numbers (empty for the other kinds).
    number: Option<f64>,
    submitted_at: String,
    /// Time on the whole questionnaire (answer minus first showing).
    seconds: f64,
}

const ANSWER_COLUMNS: [&str; 11] = [
    "study_id",
    "assignment_id",
    "worker",
    "k",
    "stage",
    "question",
    "kind",
    "answer",
    "number",
    "submitted_at",
    "seconds",
];

/// Every answered question of the scope, one line each, in the questions' order.
pub fn questionnaires_csv(l: &Loaded) -> Result<String, Error> {
    use domain::study_pages::{questionnaire::reply_text, Reply};
    let mut rows = Vec::new();
    for q in &l.pages.questionnaires {
        let (Some(study), Some(at)) = (l.study(q.study_id), q.submitted_at) else {
            continue;
        };
        for question in study.config.pages.questionnaire.of(q.stage) {
            let Some(reply) = q.answers.get(&question.id) else {
                continue;
            };
            rows.push(AnswerRow {
                study_id: q.study_id,
                assignment_id: q.assignment_id,
                worker: &q.worker,
                k: q.k,
                stage: q.stage.as_str(),
                question: &question.id,
                kind: question.kind,
                answer: reply_text(reply),
                number: match reply {
                    Reply::Number(x) => Some(*x),
                    _ => None,
                },
                submitted_at: iso_utc(at),
                seconds: (at - q.shown_at) as f64 / 1000.0,
            });
        }
    }
    csv_of(&ANSWER_COLUMNS, &rows)
}

/// One line per questionnaire answered, its answers as an object (numbers as numbers).
pub fn questionnaires_jsonl(l: &Loaded) -> Result<String, Error> {
    let mut out = String::new();
    for q in l
        .pages
        .questionnaires
        .iter()
        .filter(|q| q.submitted_at.is_some())
    {
        out.push_str(&json_line(q)?);
    }
    Ok(out)
}

const CHECK_COLUMNS: [&str; 12] = [
    "study_id",
    "assignment_id",
    "worker",
    "k",
    "check",
    "after",
    "expected",
    "answer",
    "skipped",
    "passed",
    "shown_at",
    "submitted_at",
];

/// Every attention check shown, with the answer and whether it passed (times in unix ms).
pub fn attention_csv(l: &Loaded) -> Result<String, Error> {
    csv_of(&CHECK_COLUMNS, &l.pages.checks)
}

const CONSENT_COLUMNS: [&str; 8] = [
    "study_id",
    "config_id",
    "decision",
    "assignment_id",
    "worker",
    "platform",
    "consent_hash",
    "at",
];

/// Every consent decision: accepted (by whom, the hash of the text) and declined (nobody
/// named); times in unix ms.
pub fn consent_csv(l: &Loaded) -> Result<String, Error> {
    csv_of(&CONSENT_COLUMNS, &l.pages.consents)
}

/// What a skipped item's answer is in exported predictions: a string that is no label and no
/// span of any text, so the official CLUES scorer (which ignores `"skipped"`) scores it 0, as
/// the report does, also where the gold is empty and "no answer" would score 1.
pub const SKIPPED: &str = "<skipped>";

/// Predictions in the official CLUES format: `{"id": ..., "answer": [...]}` per test item,
/// in test-file order, "no answer" in the task's official encoding. A skipped item (and a
/// majority item every annotator skipped) is written as `[SKIPPED]` with `"skipped": true`:
/// the platform's `score` and the official scorer both score it 0, as the report does.
fn predictions(
    l: &Loaded,
    task: &str,
    answers: &HashMap<ExampleId, Vec<String>>,
    skipped: &HashSet<ExampleId>,
) -> Result<String, Error> {
    let spec = &l.tasks[task].spec;
    let mut out = String::new();
    for (example, id) in &l.test_items[task] {
        let answer = answers.get(example).ok_or_else(|| {
            Error::Refused(format!("test item {id} of {task} has no answer to export"))
        })?;
        let line = if skipped.contains(example) {
            serde_json::json!({"id": id, "answer": [SKIPPED], "skipped": true})
        } else {
            serde_json::json!({"id": id, "answer": spec.to_official(answer)})
        };
        out.push_str(&json_line(&line)?);
    }
    Ok(out)
}

/// One finished annotator's test answers (a skip exports as `SKIPPED`, marked `skipped`).
pub fn annotator_predictions(
    l: &Loaded,
    assignment: AssignmentId,
) -> Result<(String, String), Error> {
    let a = l
        .annotators
        .iter()
        .find(|a| a.assignment == assignment)
        .ok_or_else(|| Error::NotFound(format!("no annotator {assignment} in these studies")))?;
    predictions_of(l, a)
}

/// The same for an annotator at hand (the bundle writes every finished one).
pub fn predictions_of(
    l: &Loaded,
    a: &domain::report::AnnotatorRecord,
) -> Result<(String, String), Error> {
    if a.status != PlaceStatus::Finished {
        return Err(Error::Refused(format!(
            "{} has not finished the test set ({}), so there are no predictions for the whole set",
            a.worker,
            a.status.as_str()
        )));
    }
    let test = || a.items.iter().filter(|i| i.phase == Phase::Test);
    let answers = test()
        .filter_map(|i| Some((i.example_id, i.answer.clone()?)))
        .collect();
    let skipped = test().filter(|i| i.skipped).map(|i| i.example_id).collect();
    Ok((
        format!("{}-{}-k{}.jsonl", a.task, a.worker.replace(':', "_"), a.k),
        predictions(l, &a.task, &answers, &skipped)?,
    ))
}

/// The majority vote of a scenario's finished annotators (without the flagged ones if
/// `filtered`).
pub fn majority_predictions(
    l: &Loaded,
    task: &str,
    k: u32,
    filtered: bool,
) -> Result<(String, String), Error> {
    let data = l
        .tasks
        .get(task)
        .ok_or_else(|| Error::NotFound(format!("no study of task {task:?} in scope")))?;
    let flags = l.flags();
    let annotators = scenario_annotators(&l.annotators, &flags, task, k, filtered);
    if annotators.is_empty() {
        return Err(Error::NotFound(format!(
            "{task} has no finished annotators with k = {k}"
        )));
    }
    let votes = majority(&data.spec, &annotators);
    // An item every annotator skipped has no vote: it is exported as a skip.
    let skipped = votes
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(id, _)| *id)
        .collect();
    let answers = votes
        .into_iter()
        .map(|(id, v)| (id, v.map(|v| v.answer).unwrap_or_default()))
        .collect();
    let which = if filtered { "-filtered" } else { "" };
    Ok((
        format!("{task}-majority-k{k}{which}.jsonl"),
        predictions(l, task, &answers, &skipped)?,
    ))
}

/// The learning-curve chart of a task.
pub fn curve_svg(r: &Report, task: &str, filtered: bool) -> Result<String, Error> {
    if !r.tasks.iter().any(|t| t.name == task) {
        return Err(Error::NotFound(format!(
            "no annotators of task {task:?} in these studies"
        )));
    }
    let which = if filtered {
        Which::Filtered
    } else {
        Which::All
    };
    Ok(task_curve(r, task, which))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z");
        // 2026-11-21T12:34:56.789Z
        assert_eq!(iso_utc(1_795_264_496_789), "2026-11-21T12:34:56.789Z");
        assert_eq!(iso_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn csv_cells() {
        assert_eq!(cell(&Value::Null), "");
        assert_eq!(cell(&serde_json::json!(true)), "true");
        assert_eq!(
            cell(&serde_json::json!([{"text": "a"}])),
            "[{\"text\":\"a\"}]"
        );
    }
}
