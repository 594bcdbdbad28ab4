//! The machines page's server functions (researchers and admins only): every machine evaluation
//! with its live progress, the shared queues, and queuing a learner, cancelling or retrying a
//! job from the page; any `clues-lab worker` runs what is queued.

use crate::error::AppError;
use crate::wire::crossfit::LearningQueue;
use crate::wire::machine::{GridRow, RunRow, WorkerRow};
use crate::wire::queue::{GridJobRow, Queue, QueueAnswer, QueueChoices, QueueRequest};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
#[cfg(feature = "ssr")]
use {
    crate::ssr::request::{serve, Ctx, Staff},
    store::{crossfit, machine},
};

/// Every shared grid's jobs by status and the workers holding them.
#[server(endpoint = "machine_grids", output = crate::api::TextJson)]
pub async fn machine_grids() -> Result<Vec<GridRow>, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(machine::grids(c.pool(), &c.state.clock).await?) }).await
}

/// CrossFit's fine-tuning jobs that workers share: by method, and each one not done.
#[server(endpoint = "crossfit_learning", output = crate::api::TextJson)]
pub async fn crossfit_learning() -> Result<LearningQueue, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(crossfit::jobs::queue(c.pool(), &c.state.clock).await?) })
        .await
}

#[server(endpoint = "machine_runs", output = crate::api::TextJson)]
pub async fn machine_runs() -> Result<Vec<RunRow>, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(machine::runs(c.pool()).await?) }).await
}

/// The workers pointed at this database and alive now, each with the kinds it takes, where its
/// models run and the job it holds.
#[server(endpoint = "live_workers", output = crate::api::TextJson)]
pub async fn live_workers() -> Result<Vec<WorkerRow>, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(machine::workers::live(c.pool()).await?) }).await
}

/// Every CLUES grid job not done, running ones first.
#[server(endpoint = "grid_job_list", output = crate::api::TextJson)]
pub async fn grid_job_list() -> Result<Vec<GridJobRow>, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(machine::grid::open_jobs(c.pool()).await?) }).await
}

/// The tasks a learner can be queued on: CLUES-format tasks with a test set, CrossFit tasks,
/// CrossFit's partitions.
#[server(endpoint = "learner_choices", output = crate::api::TextJson)]
pub async fn learner_choices() -> Result<QueueChoices, AppError> {
    serve(|c: Ctx<Staff>| async move {
        let tasks = store::catalog::task_summaries(c.pool())
            .await?
            .into_iter()
            .filter(|t| t.test_items > 0)
            .map(|t| t.name)
            .collect();
        let crossfit_tasks = crossfit::list_tasks(c.pool())
            .await?
            .into_iter()
            .map(|t| t.name)
            .collect();
        let partitions = crossfit::partitions(c.pool())
            .await?
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        Ok(QueueChoices {
            queueing: c.state.door.is_some(),
            tasks,
            crossfit_tasks,
            partitions,
        })
    })
    .await
}

/// Checks a learner as the command line would and queues its jobs for the workers.
#[server(endpoint = "queue_learner", input = Json, output = crate::api::TextJson)]
pub async fn queue_learner(request: QueueRequest) -> Result<QueueAnswer, AppError> {
    serve(|c: Ctx<Staff>| async move {
        let Some(door) = c.state.door.clone() else {
            return Err(AppError::Refused(format!(
                "queueing learners: {}",
                crate::wire::queue::WITHOUT_MODELS
            )));
        };
        Ok(door.queue(c.pool(), request, &c.state.clock).await?)
    })
    .await
}

/// Cancels a queued or running job: it is marked failed, and a worker running it stores nothing.
#[server(endpoint = "cancel_job", output = crate::api::TextJson)]
pub async fn cancel_job(queue: Queue, id: i64) -> Result<(), AppError> {
    serve(|c: Ctx<Staff>| async move {
        c.same_site("a cancellation")?;
        let by = c.who.0.name.clone();
        Ok(store::queues::cancel(c.pool(), queue, id, &by, &c.state.clock).await?)
    })
    .await
}

/// Queues a failed job again, with the recipe it had.
#[server(endpoint = "retry_job", output = crate::api::TextJson)]
pub async fn retry_job(queue: Queue, id: i64) -> Result<(), AppError> {
    serve(|c: Ctx<Staff>| async move {
        c.same_site("a retry")?;
        Ok(store::queues::retry(c.pool(), queue, id, &c.state.clock).await?)
    })
    .await
}
