//! The researcher dashboard's server function: studies with their progress, the score tables,
//! the learning curves and the export links of a scope of studies. Researchers and admins only.

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::ssr::request::{serve, Ctx, Staff};
use crate::wire::report::DashboardData;
use leptos::prelude::*;

/// `studies`: comma-separated study ids, empty for every study; `synthetic`: with the workers
/// `load fill` made (left out unless asked for).
#[server(endpoint = "dashboard", output = crate::api::TextJson)]
pub async fn dashboard(
    studies: String,
    #[server(default)] synthetic: bool,
) -> Result<DashboardData, AppError> {
    serve(|c: Ctx<Staff>| async move {
        crate::ssr::dashboard::dashboard(&c.state, &studies, synthetic).await
    })
    .await
}
