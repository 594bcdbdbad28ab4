//! The task catalogue for researchers and admins: tasks, shot groups, the import's quality
//! report, and a preview of test items (context and question only, never the gold).

use crate::error::AppError;
use crate::wire::tasks::{ItemPreview, TaskInfo, TaskSummary};
use leptos::prelude::*;
#[cfg(feature = "ssr")]
use {
    crate::ssr::request::{serve, Ctx, Staff},
    store::catalog,
};

#[server(endpoint = "list_tasks", output = crate::api::TextJson)]
pub async fn list_tasks() -> Result<Vec<TaskSummary>, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(catalog::task_summaries(c.pool()).await?) }).await
}

#[server(endpoint = "task_detail", output = crate::api::TextJson)]
pub async fn task_detail(name: String) -> Result<TaskInfo, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(catalog::task_detail(c.pool(), &name).await?) }).await
}

/// The test item at `position` (wrapping around), in file order.
#[server(endpoint = "preview_item", output = crate::api::TextJson)]
pub async fn preview_item(name: String, position: i64) -> Result<ItemPreview, AppError> {
    serve(
        |c: Ctx<Staff>| async move { Ok(catalog::preview_item(c.pool(), &name, position).await?) },
    )
    .await
}
