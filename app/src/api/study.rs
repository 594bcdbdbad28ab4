//! Server functions of the crowd protocol: admins configure studies; workers take their
//! place, see one item at a time, submit (training golds are revealed and locked) and finish.

use crate::error::AppError;
use crate::wire::study::{StudyOverview, StudySummary, SubmitAck, WorkerStep, WorkerStudy};
use domain::answer::Answer;
use domain::authenticity::ItemSignals;
use domain::ids::StudyId;
use domain::study::StudyConfig;
use domain::study_pages::Stage;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
#[cfg(feature = "ssr")]
use {
    crate::ssr::request::{serve, Admin, Ctx, Staff, Worker},
    domain::people::Role,
    store::study,
};

#[server(endpoint = "list_studies", output = crate::api::TextJson)]
pub async fn list_studies() -> Result<Vec<StudySummary>, AppError> {
    serve(|c: Ctx<Staff>| async move { Ok(study::list(c.pool()).await?) }).await
}

#[server(endpoint = "study_admin", output = crate::api::TextJson)]
pub async fn study_admin(id: StudyId) -> Result<StudyOverview, AppError> {
    serve(|c: Ctx<Staff>| async move {
        let mut view = study::admin_view(c.pool(), id).await?;
        view.can_edit = c.who.0.role == Role::Admin;
        Ok(view)
    })
    .await
}

/// Admins only. Returns the new study's id.
#[server(endpoint = "create_study", input = Json, output = crate::api::TextJson)]
pub async fn create_study(
    task: String,
    name: String,
    config: StudyConfig,
) -> Result<StudyId, AppError> {
    serve(|c: Ctx<Admin>| async move {
        Ok(study::create(c.pool(), Some(c.who.0.id), &task, &name, config).await?)
    })
    .await
}

/// Admins only. Refused once workers started if it would alter what they saw.
#[server(endpoint = "update_study", input = Json, output = crate::api::TextJson)]
pub async fn update_study(id: StudyId, name: String, config: StudyConfig) -> Result<(), AppError> {
    serve(|c: Ctx<Admin>| async move {
        Ok(study::update(c.pool(), Some(c.who.0.id), id, &name, config).await?)
    })
    .await
}

/// The signed-in worker's place in a study and current step. A place is taken only by the
/// study link's Start (`/join/{study}`): without one this answers 404 and writes nothing.
#[server(endpoint = "study_state", output = crate::api::TextJson)]
pub async fn study_state(study_id: StudyId) -> Result<WorkerStudy, AppError> {
    serve(|c: Ctx<Worker>| async move {
        let now = c.state.now_ms();
        Ok(study::worker_state(&c.state.writer, study_id, c.who.0.id, now).await?)
    })
    .await
}

/// Stores the answer to the worker's current item. `client_id` identifies the submission: a
/// resend with the same id is acknowledged again and stored once. `signals`, what the page
/// recorded while the item was shown, is optional: an answer without it is stored all the same
/// (and the report names answers that came without it). The arrival's time is the server's.
#[server(endpoint = "submit_answer", input = Json, output = crate::api::TextJson)]
pub async fn submit_answer(
    study_id: StudyId,
    position: i64,
    client_id: String,
    answer: Answer,
    signals: Option<ItemSignals>,
) -> Result<SubmitAck, AppError> {
    serve(|c: Ctx<Worker>| async move {
        let s = &c.state;
        let now = s.now_ms();
        let sent = study::Sent {
            position,
            client_id: &client_id,
            answer,
            signals,
        };
        Ok(study::submit(&s.pool, &s.writer, study_id, c.who.0.id, sent, now).await?)
    })
    .await
}

/// After a training item's gold was revealed: move on; answers the worker's next step.
#[server(endpoint = "continue_study", output = crate::api::TextJson)]
pub async fn continue_study(study_id: StudyId, position: i64) -> Result<WorkerStep, AppError> {
    serve(|c: Ctx<Worker>| async move {
        let now = c.state.now_ms();
        Ok(study::acknowledge(&c.state.writer, study_id, c.who.0.id, position, now).await?)
    })
    .await
}

/// The worker accepts (or declines) the study's consent text; answers the next step. Declining
/// frees the place and keeps nothing but the refusal.
#[server(endpoint = "give_consent", output = crate::api::TextJson)]
pub async fn give_consent(study_id: StudyId, accept: bool) -> Result<WorkerStep, AppError> {
    serve(|c: Ctx<Worker>| async move {
        // Declining deletes the place: no other site's form may send it for the worker.
        c.same_site("a consent")?;
        let now = c.state.now_ms();
        Ok(study::consent(&c.state.writer, study_id, c.who.0.id, accept, now).await?)
    })
    .await
}

/// The worker's answers to the questionnaire of `stage`: the form's fields (name, value) as
/// the browser sends them, read and checked on the server and stored once; answers the next
/// step.
#[server(endpoint = "answer_questionnaire", input = Json, output = crate::api::TextJson)]
pub async fn answer_questionnaire(
    study_id: StudyId,
    stage: Stage,
    fields: Vec<(String, String)>,
) -> Result<WorkerStep, AppError> {
    serve(|c: Ctx<Worker>| async move {
        let now = c.state.now_ms();
        Ok(study::questionnaire(&c.state.writer, study_id, c.who.0.id, stage, fields, now).await?)
    })
    .await
}
