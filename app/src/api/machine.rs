//! The models page's server function: every machine evaluation with its live progress
//! (researchers and admins only). Runs are started from the command line.

use crate::error::AppError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One evaluation as the models page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub system: String,
    pub kind: String,
    pub task: String,
    pub k: u32,
    pub split: u32,
    pub status: String,
    pub done: i64,
    pub total: i64,
    pub provider: String,
    pub error: Option<String>,
    pub s1: Option<f64>,
    pub s1_any_of: Option<f64>,
    pub seconds: Option<f64>,
}

#[server(endpoint = "model_runs")]
pub async fn model_runs() -> Result<Vec<RunRow>, AppError> {
    use crate::ssr::{auth, machine, state::app_state};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            machine::runs(&pool).await
        }
        .await,
    )
}
