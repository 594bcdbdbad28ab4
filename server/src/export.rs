//! Researcher downloads over HTTP: `GET /export/{file}?studies=1,2&…` (no `studies`: every
//! study). Researchers and admins only; each answer is an attachment named after its scope.

use app::domain::people::Role;
use app::error::AppError;
use app::ssr::state::AppState;
use app::ssr::{auth, export, report};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;

/// The files `/export/{file}` serves.
pub const FILES: [&str; 10] = [
    "annotations.jsonl",
    "annotations.csv",
    "scores.json",
    "scores.csv",
    "scores.md",
    "pay.csv",
    "predictions.jsonl",
    "curve.svg",
    "bundle.tar",
    "partition.json",
];

pub async fn export(
    State(state): State<AppState>,
    Path(file): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    build(&state, &file, &q, &headers)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// Letters, digits, `.`, `-` and `_` only, for a download's file name.
fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn flag(q: &HashMap<String, String>, name: &str) -> Result<bool, AppError> {
    match q.get(name).map(String::as_str) {
        None | Some("") | Some("0") | Some("false") => Ok(false),
        Some("1") | Some("true") => Ok(true),
        Some(other) => Err(AppError::Invalid(format!(
            "{name} must be true or false, not {other:?}"
        ))),
    }
}

fn number<T: std::str::FromStr>(
    q: &HashMap<String, String>,
    name: &str,
) -> Result<Option<T>, AppError> {
    q.get(name)
        .map(|v| {
            v.parse()
                .map_err(|_| AppError::Invalid(format!("{name} must be a number, not {v:?}")))
        })
        .transpose()
}

fn task_of(q: &HashMap<String, String>) -> Result<&str, AppError> {
    q.get("task")
        .map(String::as_str)
        .ok_or_else(|| AppError::Invalid("name the task: ?task=…".into()))
}

async fn build(
    state: &AppState,
    file: &str,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
) -> Result<Response, AppError> {
    auth::require_in(&state.pool, headers, Role::is_staff).await?;
    if !FILES.contains(&file) {
        return Err(AppError::NotFound(format!(
            "there is no export {file:?}; there are {}",
            FILES.join(", ")
        )));
    }
    if file == "partition.json" {
        let name = q
            .get("name")
            .ok_or_else(|| AppError::Invalid("name the partition: ?name=…".into()))?;
        let p = app::ssr::crossfit::partition(&state.pool, name).await?;
        let disposition = format!(
            "attachment; filename=\"{}\"",
            safe_name(&format!("crossfit-partition-{name}.json"))
        );
        return Ok((
            [
                (header::CONTENT_TYPE, "application/json".to_string()),
                (header::CONTENT_DISPOSITION, disposition),
            ],
            p.to_json(),
        )
            .into_response());
    }
    let scope = report::parse_scope(q.get("studies").map(String::as_str))?;
    let loaded = report::load(&state.pool, &scope).await?;
    let scope_name = if scope.is_empty() {
        "all-studies".to_string()
    } else {
        format!(
            "studies-{}",
            scope
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join("-")
        )
    };
    let mut name = format!("clues-lab-{scope_name}-{file}");
    let mut hash = None;
    let (mime, body): (&str, Vec<u8>) = match file {
        "annotations.jsonl" => (
            "application/x-ndjson",
            export::annotations_jsonl(&loaded)?.into(),
        ),
        "annotations.csv" => (
            "text/csv; charset=utf-8",
            export::annotations_csv(&loaded)?.into(),
        ),
        "scores.json" => (
            "application/json",
            export::scores_json(&loaded.report())?.into(),
        ),
        "scores.csv" => (
            "text/csv; charset=utf-8",
            app::domain::report::scores_csv::scores_csv(&loaded.report()).into(),
        ),
        "scores.md" => (
            "text/markdown; charset=utf-8",
            app::domain::report::layout::markdown(&loaded.report()).into(),
        ),
        "pay.csv" => (
            "text/csv; charset=utf-8",
            export::pay_csv(&loaded, &loaded.report())?.into(),
        ),
        "predictions.jsonl" => {
            let (n, text) = match number::<i64>(q, "assignment")? {
                Some(a) => export::annotator_predictions(&loaded, a)?,
                None => {
                    let k = number::<u32>(q, "k")?.ok_or_else(|| {
                        AppError::Invalid(
                            "name an annotator (?assignment=…) or a scenario (?task=…&k=…)".into(),
                        )
                    })?;
                    export::majority_predictions(&loaded, task_of(q)?, k, flag(q, "filtered")?)?
                }
            };
            name = format!("clues-lab-{n}");
            ("application/x-ndjson", text.into())
        }
        "curve.svg" => {
            let task = task_of(q)?;
            name = format!("clues-lab-{task}-learning-curve.svg");
            (
                "image/svg+xml",
                export::curve_svg(&loaded.report(), task, flag(q, "filtered")?)?.into(),
            )
        }
        _ => {
            let (bytes, h) = export::bundle(&state.pool, &loaded).await?;
            name = format!("clues-lab-{scope_name}-bundle-{}.tar", &h[..12]);
            hash = Some(h);
            ("application/x-tar", bytes)
        }
    };
    let disposition = format!("attachment; filename=\"{}\"", safe_name(&name));
    let mut res = (
        [
            (header::CONTENT_TYPE, mime.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response();
    if let Some(h) = hash {
        res.headers_mut().insert(
            "x-content-sha256",
            HeaderValue::from_str(&h).map_err(AppError::internal)?,
        );
    }
    Ok(res)
}
