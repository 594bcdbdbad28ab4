//! A study's analysis plan on the database: frozen, with the SHA-256 of its JSON, in the
//! transaction of the study's first arrival (later arrivals find it there and change nothing),
//! and read back for the report and the bundle.

use super::Study;
use crate::error::Error;
use domain::analysis_plan::{declare, AnalysisPlan};
use domain::ids::StudyId;
use sqlx::{AnyConnection, AnyPool, FromRow};
use std::collections::HashMap;

/// A plan as stored.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct StoredPlan {
    pub study_id: StudyId,
    pub plan_json: String,
    pub sha256: String,
    pub frozen_at: i64,
}

/// Freezes the study's plan unless it is frozen already; `items` is its task's test set size.
pub(super) async fn freeze_in(
    tx: &mut AnyConnection,
    study: &Study,
    items: usize,
    now: i64,
) -> Result<(), Error> {
    let json = declare(&study.spec.name, &study.config, items).canonical_json();
    sqlx::query(
        "INSERT INTO analysis_plans (study_id, plan_json, sha256, frozen_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (study_id) DO NOTHING",
    )
    .bind(study.id)
    .bind(&json)
    .bind(AnalysisPlan::sha256(&json))
    .bind(now)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The frozen plans of these studies (a study without one is absent).
pub async fn frozen_plans(
    pool: &AnyPool,
    studies: &[StudyId],
) -> Result<HashMap<StudyId, StoredPlan>, Error> {
    let mut out = HashMap::new();
    for &id in studies {
        let row: Option<StoredPlan> = sqlx::query_as(
            "SELECT study_id, plan_json, sha256, frozen_at FROM analysis_plans WHERE study_id = $1",
        )
        .bind(id)
        .fetch_optional(pool)
        .await?;
        out.extend(row.map(|r| (id, r)));
    }
    Ok(out)
}
