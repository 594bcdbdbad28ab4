//! Uploading another system's predictions over HTTP: `POST /import/predictions?task=&system=
//! [&k=&split=&replace=]` with the file as the body; researchers and admins only.

use super::store::{self, SystemKind, Target};
use crate::error::ServerError;
use app::error::AppError;
use app::ssr::auth;
use app::ssr::state::AppState;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use domain::people::Role;
use std::collections::HashMap;

fn number(q: &HashMap<String, String>, name: &str) -> Result<u32, AppError> {
    match q.get(name).map(String::as_str) {
        None | Some("") => Ok(0),
        Some(v) => v
            .parse()
            .map_err(|_| AppError::Invalid(format!("{name} must be a whole number, not {v:?}"))),
    }
}

/// The file's problems are the researcher's to fix (400/409); anything else is logged.
fn to_app(e: ServerError) -> AppError {
    match e {
        ServerError::Data { .. } | ServerError::Usage(_) => AppError::Invalid(e.to_string()),
        ServerError::Conflict(m) => AppError::Refused(m),
        ServerError::App(a) => a,
        other => {
            tracing::error!("prediction upload failed: {other}");
            AppError::Internal
        }
    }
}

pub async fn upload(
    State(state): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let result = async {
        auth::require_in(&state.pool, &headers, |r| {
            matches!(r, Role::Admin | Role::Researcher)
        })
        .await?;
        let need = |name: &str| {
            q.get(name)
                .filter(|v| !v.trim().is_empty())
                .cloned()
                .ok_or_else(|| AppError::Invalid(format!("the upload needs {name}=")))
        };
        let t = Target {
            system: need("system")?.trim().to_string(),
            kind: SystemKind::Imported,
            task: need("task")?,
            k: number(&q, "k")?,
            split: number(&q, "split")?,
            replace: q.get("replace").is_some_and(|v| v == "true" || v == "1"),
        };
        let name = q.get("name").cloned().unwrap_or_else(|| "upload".into());
        store::import(&state.pool, &name, &body, t)
            .await
            .map_err(to_app)
    }
    .await;
    match result {
        Ok(s) => s.render().into_response(),
        Err(e) => e.into_response(),
    }
}
