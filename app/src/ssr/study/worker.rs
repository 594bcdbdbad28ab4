//! The worker's view of a study: the current item (recording when it was first shown) or
//! the end with the completion code and the way back to the crowd platform.

use super::items::{current_position, item_row, own_assignment, reveal, stamp_once, Stamp};
use super::places::enter;
use super::{load, CrowdInfo, Study};
use crate::api::study::{Completion, Phase, WorkerItem, WorkerStep, WorkerStudy};
use crate::error::AppError;
use crate::ssr::auth::now_ms;
use crate::ssr::catalog::corrupt;
use sqlx::{Row, SqlitePool};

/// The worker's view of a study, taking a place on first arrival. Showing an item records
/// the first time it was shown (a reload does not reset it).
pub async fn worker_state(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
    crowd: Option<&CrowdInfo>,
) -> Result<WorkerStudy, AppError> {
    let study = load(pool, study_id).await?;
    let (assignment, k, mut status, started_at, _) =
        match own_assignment(pool, study_id, worker).await? {
            Some(a) => a,
            None => {
                enter(pool, &study, worker, crowd).await?;
                own_assignment(pool, study_id, worker)
                    .await?
                    .ok_or_else(|| AppError::internal("assignment vanished after insert"))?
            }
        };
    // A place past its time-out is released only when a new worker arrives (`enter`);
    // until then its worker may go on.
    let now = now_ms();
    let counts: (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(phase = 'training'), 0), COALESCE(SUM(phase = 'test'), 0)
         FROM assignment_items WHERE assignment_id = ?",
    )
    .bind(assignment)
    .fetch_one(pool)
    .await?;
    let step = if status == "abandoned" {
        WorkerStep::Abandoned
    } else {
        match current_position(pool, assignment).await? {
            Some(position) => {
                shown(pool, assignment, position, now).await?;
                let item = item_row(pool, study.spec.family, assignment, position)
                    .await?
                    .ok_or_else(|| AppError::internal("current item missing"))?;
                let (index, of) = match item.phase {
                    Phase::Training => (position + 1, counts.0),
                    Phase::Test => (position - counts.0 + 1, counts.1),
                };
                WorkerStep::Item(WorkerItem {
                    position,
                    phase: item.phase,
                    index,
                    of,
                    reveal: if item.submitted {
                        reveal(&study.spec, &item)
                    } else {
                        None
                    },
                    context: item.context,
                    question: item.question,
                })
            }
            None => {
                if status == "active" {
                    sqlx::query(
                        "UPDATE assignments SET status = 'finished', finished_at = ? WHERE id = ? AND status = 'active'",
                    )
                    .bind(now)
                    .bind(assignment)
                    .execute(pool)
                    .await?;
                    status = "finished".into();
                }
                debug_assert_eq!(status, "finished");
                WorkerStep::Done(completion(pool, &study, assignment, started_at).await?)
            }
        }
    };
    Ok(WorkerStudy {
        study_id,
        study_name: study.name.clone(),
        description: study.spec.description.clone(),
        family: study.spec.family,
        labels: study.spec.labels.clone(),
        k,
        training_items: counts.0,
        test_items: counts.1,
        step,
    })
}

/// Records the first time an item is shown (and that as the worker's activity); showing it
/// again (a reload) writes nothing, not even a transaction.
async fn shown(
    pool: &SqlitePool,
    assignment: i64,
    position: i64,
    now: i64,
) -> Result<(), AppError> {
    let first: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM assignment_items WHERE assignment_id = ? AND position = ? AND shown_at IS NULL",
    )
    .bind(assignment)
    .bind(position)
    .fetch_optional(pool)
    .await?;
    if first.is_none() {
        return Ok(());
    }
    stamp_once(pool, assignment, position, Stamp::Shown, now).await
}

async fn completion(
    pool: &SqlitePool,
    study: &Study,
    assignment: i64,
    started_at: i64,
) -> Result<Completion, AppError> {
    let r = sqlx::query(
        "SELECT
            (SELECT AVG(s1) FROM assignment_items WHERE assignment_id = ?1 AND phase = 'training') AS train_s1,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = ?1 AND phase = 'training') AS n_train,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = ?1 AND phase = 'test') AS n_test,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = ?1 AND skipped = 1) AS skipped,
            (SELECT COALESCE(SUM(submitted_at - shown_at), 0) FROM assignment_items WHERE assignment_id = ?1) AS on_items,
            (SELECT COALESCE(MAX(submitted_at), ?2) FROM assignment_items WHERE assignment_id = ?1) AS last,
            (SELECT crowd_json FROM assignments WHERE id = ?1) AS crowd",
    )
    .bind(assignment)
    .bind(started_at)
    .fetch_one(pool)
    .await?;
    let crowd: CrowdInfo =
        serde_json::from_str(r.get("crowd")).map_err(|e| corrupt("crowd ids", e))?;
    Ok(Completion {
        hand_back: crate::domain::crowd::hand_back(
            crowd.platform.as_deref(),
            &study.config.completion_url,
            &study.config.completion_code,
            crowd.assignment.as_deref(),
            crowd.submit_to.as_deref(),
        ),
        code: study.config.completion_code.clone(),
        training_s1: r.get("train_s1"),
        training_items: r.get("n_train"),
        test_items: r.get("n_test"),
        skipped: r.get("skipped"),
        seconds_on_items: r.get::<i64, _>("on_items") as f64 / 1000.0,
        seconds_elapsed: (r.get::<i64, _>("last") - started_at) as f64 / 1000.0,
    })
}
