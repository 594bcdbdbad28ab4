//! The researcher's downloads, built from a loaded scope of studies: annotations (JSONL, CSV),
//! scores (JSON, CSV, Markdown), pay (CSV), CLUES-format predictions, the learning-curve SVG,
//! and the study bundle (a tar archive with a content hash).

use crate::domain::report::chart::task_curve;
use crate::domain::report::layout::{self, money, Which};
use crate::domain::report::table::csv_line;
use crate::domain::report::{majority, scenario_annotators, Report};
use crate::domain::shots;
use crate::error::AppError;
use crate::ssr::report::{CrowdIds, Loaded, ANNOTATION_COLUMNS};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

fn json_line<T: Serialize>(v: &T) -> Result<String, AppError> {
    let mut s = serde_json::to_string(v).map_err(AppError::internal)?;
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

/// Rows serialised to JSON objects, written as CSV in the order of `columns`.
fn csv_of<T: Serialize>(columns: &[&str], rows: &[T]) -> Result<String, AppError> {
    let mut out = csv_line(columns);
    for r in rows {
        let v = serde_json::to_value(r).map_err(AppError::internal)?;
        let fields: Vec<String> = columns
            .iter()
            .map(|c| v.get(c).map(cell).unwrap_or_default())
            .collect();
        out.push_str(&csv_line(&fields));
    }
    Ok(out)
}

pub fn annotations_jsonl(l: &Loaded) -> Result<String, AppError> {
    l.rows.iter().map(json_line).collect()
}

pub fn annotations_csv(l: &Loaded) -> Result<String, AppError> {
    csv_of(&ANNOTATION_COLUMNS, &l.rows)
}

pub fn scores_json(r: &Report) -> Result<String, AppError> {
    serde_json::to_string_pretty(r)
        .map(|s| s + "\n")
        .map_err(AppError::internal)
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

/// One worker's line of the pay sheet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PayRow {
    pub worker: String,
    #[serde(flatten)]
    pub crowd: CrowdIds,
    pub study_id: i64,
    pub study: String,
    pub task: String,
    pub k: u32,
    pub status: String,
    pub started_at: String,
    pub ended_at: String,
    pub seconds: f64,
    pub hourly_rate_cents: u32,
    pub pay_cents: i64,
    pub pay: String,
    pub completion_code: String,
}

pub const PAY_COLUMNS: [&str; 18] = [
    "worker",
    "platform",
    "crowd_worker_id",
    "crowd_study_id",
    "crowd_session_id",
    "crowd_assignment_id",
    "study_id",
    "study",
    "task",
    "k",
    "status",
    "started_at",
    "ended_at",
    "seconds",
    "hourly_rate_cents",
    "pay_cents",
    "pay",
    "completion_code",
];

/// Paid time runs from taking the place to finishing, or to the last activity for a worker
/// who has not finished (abandoned places included: the time was worked).
pub fn pay_rows(l: &Loaded, r: &Report) -> Vec<PayRow> {
    r.annotators
        .iter()
        .filter_map(|a| {
            let row = l.rows.iter().find(|x| x.assignment_id == a.assignment)?;
            let study = l.study(a.study)?;
            Some(PayRow {
                worker: a.worker.clone(),
                crowd: row.crowd.clone(),
                study_id: a.study,
                study: study.name.clone(),
                task: a.task.clone(),
                k: a.k,
                status: a.status.clone(),
                started_at: iso_utc(row.started_at),
                ended_at: iso_utc(row.finished_at.unwrap_or(row.last_activity)),
                seconds: a.seconds,
                hourly_rate_cents: study.config.hourly_rate_cents,
                pay_cents: a.pay_cents,
                pay: money(a.pay_cents),
                completion_code: study.config.completion_code.clone(),
            })
        })
        .collect()
}

pub fn pay_csv(l: &Loaded, r: &Report) -> Result<String, AppError> {
    csv_of(&PAY_COLUMNS, &pay_rows(l, r))
}

/// Predictions in the official CLUES format: `{"id": ..., "answer": [...]}` per test item,
/// in test-file order, "no answer" in the task's official encoding. A skipped item is written
/// as no answer with `"skipped": true`: the platform's `score` scores it 0 as the report does,
/// the official scorer ignores the field.
fn predictions(
    l: &Loaded,
    task: &str,
    answers: &HashMap<i64, Vec<String>>,
    skipped: &HashSet<i64>,
) -> Result<String, AppError> {
    let spec = &l.tasks[task].spec;
    let mut out = String::new();
    for (example, id) in &l.test_items[task] {
        let answer = answers.get(example).ok_or_else(|| {
            AppError::Refused(format!("test item {id} of {task} has no answer to export"))
        })?;
        let mut line = serde_json::json!({"id": id, "answer": spec.to_official(answer)});
        if skipped.contains(example) {
            line["skipped"] = Value::Bool(true);
        }
        out.push_str(&json_line(&line)?);
    }
    Ok(out)
}

/// One finished annotator's test answers (a skip exports as no answer marked `skipped`).
pub fn annotator_predictions(l: &Loaded, assignment: i64) -> Result<(String, String), AppError> {
    let a = l
        .annotators
        .iter()
        .find(|a| a.assignment == assignment)
        .ok_or_else(|| AppError::NotFound(format!("no annotator {assignment} in these studies")))?;
    if a.status != "finished" {
        return Err(AppError::Refused(format!(
            "{} has not finished the test set ({}), so there are no predictions for the whole set",
            a.worker, a.status
        )));
    }
    let test = || a.items.iter().filter(|i| !i.training);
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
) -> Result<(String, String), AppError> {
    let data = l
        .tasks
        .get(task)
        .ok_or_else(|| AppError::NotFound(format!("no study of task {task:?} in scope")))?;
    let flags = l.flags();
    let annotators = scenario_annotators(&l.annotators, &flags, task, k, filtered);
    if annotators.is_empty() {
        return Err(AppError::NotFound(format!(
            "{task} has no finished annotators with k = {k}"
        )));
    }
    let answers = majority(&data.spec, &annotators)
        .into_iter()
        .map(|(id, v)| (id, v.answer))
        .collect();
    let which = if filtered { "-filtered" } else { "" };
    Ok((
        format!("{task}-majority-k{k}{which}.jsonl"),
        predictions(l, task, &answers, &HashSet::new())?,
    ))
}

/// The learning-curve chart of a task.
pub fn curve_svg(r: &Report, task: &str, filtered: bool) -> Result<String, AppError> {
    if !r.tasks.iter().any(|t| t.name == task) {
        return Err(AppError::NotFound(format!(
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

/// Study configurations: the one in force and every saved version.
#[derive(Serialize)]
struct ConfigExport {
    study_id: i64,
    name: String,
    task: String,
    config_id: i64,
    config: crate::domain::study::StudyConfig,
    /// The scenarios' training files, e.g. `10_1 ⊂ 20_5 ⊂ 30_5`, and whether they nest.
    training_sets: String,
    nested: bool,
    versions: Vec<Value>,
}

/// Per assignment: which examples the worker saw and in what order.
#[derive(Serialize)]
struct AssignmentExport<'a> {
    assignment_id: i64,
    study_id: i64,
    worker: &'a str,
    k: u32,
    training_split: Option<u32>,
    config_id: i64,
    status: &'a str,
    started_at: i64,
    finished_at: Option<i64>,
    items: Vec<(i64, &'a str, i64, &'a str)>,
}

/// The files of the bundle, by name.
pub async fn bundle_files(
    pool: &sqlx::SqlitePool,
    l: &Loaded,
) -> Result<Vec<(String, Vec<u8>)>, AppError> {
    let r = l.report();
    let mut files: Vec<(String, String)> = Vec::new();
    let mut configs = Vec::new();
    for s in &l.studies {
        let versions: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT id, config_json, created_at FROM study_configs WHERE study_id = ? ORDER BY id",
        )
        .bind(s.id)
        .fetch_all(pool)
        .await?;
        let nested = l
            .tasks
            .get(&s.spec.name)
            .is_none_or(|t| shots::not_nested(&t.shot_sets, &s.config.scenario_files()).is_empty());
        configs.push(ConfigExport {
            study_id: s.id,
            name: s.name.clone(),
            task: s.spec.name.clone(),
            config_id: s.config_id,
            config: s.config.clone(),
            training_sets: s.config.shot_group_text(nested),
            nested,
            versions: versions
                .into_iter()
                .map(|(id, json, at)| {
                    let config: Value = serde_json::from_str(&json).unwrap_or(Value::String(json));
                    serde_json::json!({"config_id": id, "created_at": at, "config": config})
                })
                .collect(),
        });
    }
    files.push((
        "config.json".into(),
        serde_json::to_string_pretty(&configs).map_err(AppError::internal)? + "\n",
    ));
    let mut order = String::new();
    for a in &l.annotators {
        let rows: Vec<_> = l
            .rows
            .iter()
            .filter(|x| x.assignment_id == a.assignment)
            .collect();
        let first = rows[0];
        order.push_str(&json_line(&AssignmentExport {
            assignment_id: a.assignment,
            study_id: a.study,
            worker: &a.worker,
            k: a.k,
            training_split: a.training_split,
            config_id: first.config_id,
            status: &a.status,
            started_at: a.started_at,
            finished_at: a.finished_at,
            items: rows
                .iter()
                .map(|x| {
                    (
                        x.position,
                        x.phase.as_str(),
                        x.example_id,
                        x.item_id.as_str(),
                    )
                })
                .collect(),
        })?);
    }
    files.push(("assignments.jsonl".into(), order));
    files.push(("annotations.jsonl".into(), annotations_jsonl(l)?));
    files.push(("annotations.csv".into(), annotations_csv(l)?));
    files.push(("scores.json".into(), scores_json(&r)?));
    files.push((
        "scores.csv".into(),
        crate::domain::report::scores_csv::scores_csv(&r),
    ));
    files.push(("scores.md".into(), layout::markdown(&r)));
    files.push(("pay.csv".into(), pay_csv(l, &r)?));
    for a in l.annotators.iter().filter(|a| a.status == "finished") {
        let (name, text) = annotator_predictions(l, a.assignment)?;
        files.push((format!("predictions/{name}"), text));
    }
    for cell in &r.all.main {
        let (name, text) = majority_predictions(l, &cell.task, cell.k, false)?;
        files.push((format!("predictions/{name}"), text));
    }
    for t in &r.tasks {
        files.push((
            format!("charts/{}.svg", t.name),
            curve_svg(&r, &t.name, false)?,
        ));
    }
    Ok(files
        .into_iter()
        .map(|(n, t)| (n, t.into_bytes()))
        .collect())
}

/// The content hash of a set of files: SHA-256 of the `sha256sum`-style listing
/// (`<hex>  <name>\n` per file, sorted by name), so it is independent of archive details.
pub fn content_hash(files: &[(String, Vec<u8>)]) -> (String, String) {
    let mut listing: Vec<(String, String)> = files
        .iter()
        .map(|(n, b)| (n.clone(), hex::encode(Sha256::digest(b))))
        .collect();
    listing.sort();
    let text: String = listing.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
    (hex::encode(Sha256::digest(text.as_bytes())), text)
}

/// The bundle as a tar archive (fixed times and modes, so the same data gives the same
/// bytes): the files, `SHA256SUMS` and `manifest.json` with the content hash.
pub async fn bundle(pool: &sqlx::SqlitePool, l: &Loaded) -> Result<(Vec<u8>, String), AppError> {
    let files = bundle_files(pool, l).await?;
    let (hash, listing) = content_hash(&files);
    let manifest = serde_json::json!({
        "format": "clues-lab study bundle, version 1",
        "studies": l.studies.iter().map(|s| s.id).collect::<Vec<_>>(),
        "content_sha256": hash,
        "content_hash_rule": "SHA-256 of SHA256SUMS (sha256sum format, sorted by file name)",
        "files": files.iter().map(|(n, b)| serde_json::json!({"name": n, "bytes": b.len()})).collect::<Vec<_>>(),
    });
    let mut tar = tar::Builder::new(Vec::new());
    let mut add = |name: &str, bytes: &[u8]| -> Result<(), AppError> {
        let mut h = tar::Header::new_ustar();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        tar.append_data(&mut h, format!("clues-lab-bundle/{name}"), bytes)
            .map_err(AppError::internal)
    };
    add(
        "manifest.json",
        (serde_json::to_string_pretty(&manifest).map_err(AppError::internal)? + "\n").as_bytes(),
    )?;
    add("SHA256SUMS", listing.as_bytes())?;
    for (name, bytes) in &files {
        add(name, bytes)?;
    }
    let bytes = tar.into_inner().map_err(AppError::internal)?;
    Ok((bytes, hash))
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

    #[test]
    fn content_hash_ignores_order() {
        let a = vec![
            ("b".to_string(), b"2".to_vec()),
            ("a".to_string(), b"1".to_vec()),
        ];
        let mut b = a.clone();
        b.reverse();
        assert_eq!(content_hash(&a).0, content_hash(&b).0);
        assert!(content_hash(&a).1.ends_with("  b\n"));
    }
}
