//! The models page's server function: every machine evaluation with its live progress
//! (researchers and admins only). Runs are started from the command line.

use crate::error::AppError;
use crate::wire::machine::{GridRow, RunRow};
use leptos::prelude::*;

/// Every shared grid's jobs by status and the workers holding them.
#[server(endpoint = "model_grids")]
pub async fn model_grids() -> Result<Vec<GridRow>, AppError> {
    use crate::ssr::{auth, machine, state::app_state};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            machine::grids(&pool).await
        }
        .await,
    )
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
