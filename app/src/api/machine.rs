//! The models page's server function: every machine evaluation with its live progress
//! (researchers and admins only). Runs are started from the command line.

use crate::error::AppError;
use crate::wire::crossfit::LearningQueue;
use crate::wire::machine::{GridRow, RunRow};
use leptos::prelude::*;
#[cfg(feature = "ssr")]
use {
    crate::ssr::request::{serve, Ctx, Staff},
    crate::ssr::{crossfit, machine},
};

/// Every shared grid's jobs by status and the workers holding them.
#[server(endpoint = "model_grids")]
pub async fn model_grids() -> Result<Vec<GridRow>, AppError> {
    serve(|c: Ctx<Staff>| async move { machine::grids(c.pool()).await }).await
}

/// CrossFit's fine-tuning jobs that workers share: by method, and each one not done.
#[server(endpoint = "crossfit_learning")]
pub async fn crossfit_learning() -> Result<LearningQueue, AppError> {
    serve(|c: Ctx<Staff>| async move { crossfit::jobs::queue(c.pool()).await }).await
}

#[server(endpoint = "model_runs")]
pub async fn model_runs() -> Result<Vec<RunRow>, AppError> {
    serve(|c: Ctx<Staff>| async move { machine::runs(c.pool()).await }).await
}
