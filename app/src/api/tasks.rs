//! The task catalogue for researchers and admins: tasks, shot groups, the import's quality
//! report, and a preview of test items (context and question only, never the gold).

use crate::error::AppError;
use crate::wire::tasks::{ItemPreview, TaskInfo, TaskSummary};
use leptos::prelude::*;

#[server(endpoint = "list_tasks")]
pub async fn list_tasks() -> Result<Vec<TaskSummary>, AppError> {
    use crate::ssr::{auth, catalog, state::app_state};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            catalog::task_summaries(&pool).await
        }
        .await,
    )
}

#[server(endpoint = "task_detail")]
pub async fn task_detail(name: String) -> Result<TaskInfo, AppError> {
    use crate::ssr::{auth, catalog, state::app_state};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            catalog::task_detail(&pool, &name).await
        }
        .await,
    )
}

/// The test item at `position` (wrapping around), in file order.
#[server(endpoint = "preview_item")]
pub async fn preview_item(name: String, position: i64) -> Result<ItemPreview, AppError> {
    use crate::ssr::{auth, catalog, state::app_state};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            catalog::preview_item(&pool, &name, position).await
        }
        .await,
    )
}
