//! Uploading another system's predictions over HTTP: `POST /import/predictions?task=&system=
//! [&k=&split=&replace=&name=]`, the file sent as a multipart form's `file` field (as a
//! browser's form sends it) or as the whole body (`curl --data-binary @file`); researchers
//! and admins only. The file is read piece by piece within the server's body limit.

use app::error::AppError;
use app::ssr::request::{flag, number, Ctx, Params, Staff};
use app::ssr::state::AppState;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header;
use learners::jobs::{self, SystemKind, Target};
use serde::Deserialize;

/// The upload's query string.
#[derive(Deserialize)]
pub struct UploadQuery {
    task: Option<String>,
    system: Option<String>,
    #[serde(default, deserialize_with = "number")]
    k: Option<u32>,
    #[serde(default, deserialize_with = "number")]
    split: Option<u32>,
    #[serde(default, deserialize_with = "flag")]
    replace: bool,
    /// How errors name the file (a multipart field's file name otherwise, else `upload`).
    name: Option<String>,
}

fn needed(v: Option<String>, name: &str) -> Result<String, AppError> {
    v.filter(|v| !v.trim().is_empty())
        .ok_or_else(|| AppError::Invalid(format!("the upload needs {name}=")))
}

/// The file of a request: a multipart form's `file` field (and its file name), or the body.
async fn file_of(req: Request, state: &AppState) -> Result<(Option<String>, Vec<u8>), AppError> {
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    // A body over the server's limit is 413 (the rejection says so); anything else is 400.
    let bad = |status: axum::http::StatusCode, e: String| {
        if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            AppError::TooLarge(format!("the upload is over the server's limit: {e}"))
        } else {
            AppError::Invalid(format!("the upload is malformed: {e}"))
        }
    };
    if !multipart {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| bad(e.status(), e.body_text()))?;
        return Ok((None, bytes.to_vec()));
    }
    let mut form = Multipart::from_request(req, state)
        .await
        .map_err(|e| bad(e.status(), e.body_text()))?;
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| bad(e.status(), e.body_text()))?
    {
        if field.name() != Some("file") {
            continue;
        }
        let name = field.file_name().map(str::to_string);
        let mut bytes = Vec::new();
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| bad(e.status(), e.body_text()))?
        {
            bytes.extend_from_slice(&chunk);
        }
        return Ok((name, bytes));
    }
    Err(AppError::Invalid(
        "the upload's form has no field named file".into(),
    ))
}

pub async fn upload(
    c: Ctx<Staff>,
    Params(q): Params<UploadQuery>,
    req: Request,
) -> Result<String, AppError> {
    let (k, split) =
        domain::shots::run_group(q.k.unwrap_or(0), q.split).map_err(AppError::Invalid)?;
    let t = Target {
        system: needed(q.system, "system")?.trim().to_string(),
        kind: SystemKind::Imported,
        task: needed(q.task, "task")?,
        k,
        split,
        replace: q.replace,
    };
    let (file_name, bytes) = file_of(req, &c.state).await?;
    let name = q.name.or(file_name).unwrap_or_else(|| "upload".into());
    let text = String::from_utf8(bytes)
        .map_err(|_| store::Error::data(&name, None, "the file is not UTF-8 text"))?;
    Ok(jobs::import(c.pool(), &name, &text, t).await?.render())
}
