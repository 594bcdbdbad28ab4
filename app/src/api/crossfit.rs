//! Server functions of the CrossFit pages: the task -> metric table (editable by researchers),
//! runs with their scores, partitions (create, import) and the ARG report. Staff only.

use crate::error::AppError;
use crate::wire::crossfit::{ArgReport, CrossfitData};
use leptos::prelude::*;
#[cfg(feature = "ssr")]
use {
    crate::ssr::request::{serve, Admin, Ctx, Staff},
    store::crossfit as xf,
};

#[server(endpoint = "crossfit_overview", output = crate::api::TextJson)]
pub async fn crossfit_overview() -> Result<CrossfitData, AppError> {
    serve(|c: Ctx<Staff>| async move {
        let runs = xf::run_scores(c.pool()).await?;
        let mut methods: Vec<String> = runs.iter().map(|r| r.method.clone()).collect();
        methods.sort();
        methods.dedup();
        Ok(CrossfitData {
            tasks: xf::list_tasks(c.pool()).await?,
            partitions: xf::partitions(c.pool()).await?,
            runs,
            methods,
        })
    })
    .await
}

/// The task -> metric table: a researcher (or admin) sets a task's ontology path and metric.
#[server(endpoint = "set_crossfit_task", output = crate::api::TextJson)]
pub async fn set_crossfit_task(
    task: String,
    ontology: String,
    metric: String,
) -> Result<(), AppError> {
    serve(|c: Ctx<Staff>| async move {
        Ok(xf::set_task_meta(c.pool(), &task, &ontology, &metric).await?)
    })
    .await
}

/// Stores a partition given as CrossFit's JSON (the create form writes the same JSON).
#[server(endpoint = "save_crossfit_partition", output = crate::api::TextJson)]
pub async fn save_crossfit_partition(name: String, json: String) -> Result<(), AppError> {
    serve(|c: Ctx<Staff>| async move {
        let p =
            domain::crossfit::partition::Partition::from_json(&json).map_err(AppError::Invalid)?;
        Ok(xf::save_partition(c.pool(), &name, &p).await?)
    })
    .await
}

#[server(endpoint = "crossfit_arg", output = crate::api::TextJson)]
pub async fn crossfit_arg(
    partition: String,
    method: String,
    baseline: String,
) -> Result<ArgReport, AppError> {
    serve(|c: Ctx<Staff>| async move {
        Ok(xf::arg_report(c.pool(), &partition, &method, &baseline).await?)
    })
    .await
}

/// Admins: a task for human studies from one seed of a CrossFit task; returns its name.
#[server(endpoint = "make_crossfit_study_task", output = crate::api::TextJson)]
pub async fn make_crossfit_study_task(task: String, seed: u32) -> Result<String, AppError> {
    serve(|c: Ctx<Admin>| async move { Ok(xf::make_study_task(c.pool(), &task, seed).await?.0) })
        .await
}
