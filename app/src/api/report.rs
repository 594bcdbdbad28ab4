//! The researcher dashboard's server function: studies with their progress, the score tables,
//! the learning curves and the export links of a scope of studies. Researchers and admins only.

use crate::error::AppError;
use crate::wire::report::DashboardData;
use leptos::prelude::*;

/// `studies`: comma-separated study ids, empty for every study.
#[server(endpoint = "dashboard")]
pub async fn dashboard(studies: String) -> Result<DashboardData, AppError> {
    use crate::ssr::{auth, state::app_state};
    crate::error::respond(
        async {
            let state = app_state()?;
            auth::require(|r| r.is_staff()).await?;
            crate::ssr::dashboard::dashboard(&state, &studies).await
        }
        .await,
    )
}
