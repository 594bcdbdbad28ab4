//! Server functions of the crowd protocol: admins configure studies; workers take their
//! place, see one item at a time, submit (training golds are revealed and locked) and finish.

use crate::error::AppError;
use crate::wire::study::{StudyOverview, StudySummary, SubmitAck, WorkerStep, WorkerStudy};
use domain::answer::Answer;
use domain::ids::StudyId;
use domain::study::StudyConfig;
use domain::study_pages::Stage;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[server(endpoint = "list_studies")]
pub async fn list_studies() -> Result<Vec<StudySummary>, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            study::list(&pool).await
        }
        .await,
    )
}

#[server(endpoint = "study_admin")]
pub async fn study_admin(id: StudyId) -> Result<StudyOverview, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            auth::require(|r| r.is_staff()).await?;
            study::admin_view(&pool, id).await
        }
        .await,
    )
}

/// Admins only. Returns the new study's id.
#[server(endpoint = "create_study", input = Json)]
pub async fn create_study(
    task: String,
    name: String,
    config: StudyConfig,
) -> Result<StudyId, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            let admin = auth::require(|r| r == Role::Admin).await?;
            study::create(&pool, Some(admin.id), &task, &name, config).await
        }
        .await,
    )
}

/// Admins only. Refused once workers started if it would alter what they saw.
#[server(endpoint = "update_study", input = Json)]
pub async fn update_study(id: StudyId, name: String, config: StudyConfig) -> Result<(), AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            let admin = auth::require(|r| r == Role::Admin).await?;
            study::update(&pool, Some(admin.id), id, &name, config).await
        }
        .await,
    )
}

/// The signed-in worker's place in a study (taking one on first arrival) and current step.
#[server(endpoint = "study_state")]
pub async fn study_state(study_id: StudyId) -> Result<WorkerStudy, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            let worker = auth::require(|r| r == Role::Worker).await?;
            study::worker_state(&pool, study_id, worker.id, None).await
        }
        .await,
    )
}

/// Stores the answer to the worker's current item. `client_id` identifies the submission: a
/// resend with the same id is acknowledged again and stored once.
#[server(endpoint = "submit_answer", input = Json)]
pub async fn submit_answer(
    study_id: StudyId,
    position: i64,
    client_id: String,
    answer: Answer,
) -> Result<SubmitAck, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let state = app_state()?;
            let worker = auth::require(|r| r == Role::Worker).await?;
            study::submit(
                &state.pool,
                &state.writer,
                study_id,
                worker.id,
                position,
                &client_id,
                answer,
            )
            .await
        }
        .await,
    )
}

/// After a training item's gold was revealed: move on; answers the worker's next step.
#[server(endpoint = "continue_study")]
pub async fn continue_study(study_id: StudyId, position: i64) -> Result<WorkerStep, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            let worker = auth::require(|r| r == Role::Worker).await?;
            study::acknowledge(&pool, study_id, worker.id, position).await
        }
        .await,
    )
}

/// The worker accepts (or declines) the study's consent text; answers the next step. Declining
/// frees the place and keeps nothing but the refusal.
#[server(endpoint = "give_consent")]
pub async fn give_consent(study_id: StudyId, accept: bool) -> Result<WorkerStep, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            let worker = auth::require(|r| r == Role::Worker).await?;
            // Declining deletes the place: no other site's form may send it for the worker.
            let headers: http::HeaderMap =
                leptos_axum::extract().await.map_err(AppError::internal)?;
            if crate::ssr::guard::from_another_site(&headers) {
                return Err(AppError::Forbidden(
                    "a consent posted from another site".into(),
                ));
            }
            study::consent(&pool, study_id, worker.id, accept).await
        }
        .await,
    )
}

/// The worker's answers to the questionnaire of `stage`: the form's fields (name, value) as
/// the browser sends them, read and checked on the server and stored once; answers the next
/// step.
#[server(endpoint = "answer_questionnaire", input = Json)]
pub async fn answer_questionnaire(
    study_id: StudyId,
    stage: Stage,
    fields: Vec<(String, String)>,
) -> Result<WorkerStep, AppError> {
    use crate::ssr::{auth, state::app_state, study};
    use domain::people::Role;
    crate::error::respond(
        async {
            let pool = app_state()?.pool;
            let worker = auth::require(|r| r == Role::Worker).await?;
            study::questionnaire(&pool, study_id, worker.id, stage, fields).await
        }
        .await,
    )
}
