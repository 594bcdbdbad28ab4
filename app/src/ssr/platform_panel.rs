//! A study's crowd-platform panel on the server: its data (accounts, publication, places in
//! step, ledger), a researcher's edits of the draft read and checked, and the publishing
//! preview with the platform's own quote where it gives one.

use crate::error::AppError;
use crate::ssr::request::{Admin, Ctx};
use crate::ssr::state::AppState;
use domain::ids::StudyId;
use domain::platform::draft::Device;
use domain::platform::fees::parse_amount;
use domain::platform::ledger::ActionState;
use domain::wire::platform::{DraftEdits, LedgerView, PlatformPanel, PublicationView, PublishView};
use platforms::{flow, Site};

/// A site's origin as a researcher gives it (`https://lab.example.org`), checked.
pub fn checked_origin(origin: &str) -> Result<String, AppError> {
    domain::platform::draft::check_origin(origin).map_err(AppError::Invalid)
}

/// An amount in major units, or a refusal naming `what`.
pub fn cents(what: &str, amount: &str) -> Result<i64, AppError> {
    parse_amount(what, amount).map_err(AppError::Invalid)
}

/// The panel of `study`.
pub async fn panel(
    state: &AppState,
    study: StudyId,
    can_act: bool,
) -> store::Result<PlatformPanel> {
    let pool = &state.pool;
    let s = store::study::load(pool, study).await?;
    let accounts = state.platforms.status().await;
    let p = store::platform::publication(pool, study).await?;
    let rows = store::platform::ledger::rows(pool, study).await?;
    let committed = rows
        .iter()
        .filter(|r| r.state != ActionState::Refused)
        .map(|r| r.amount_cents)
        .sum();
    let (mut lines, mut to_release, mut more_places) = (Vec::new(), 0, 0);
    let mut planned = s.config.annotators * s.config.scenarios.len() as u32;
    if let Some(p) = p.as_ref().filter(|p| p.published) {
        let (step, all) = flow::in_step(pool, p).await?;
        (lines, to_release, more_places) = (
            all,
            step.reconciled.release.len(),
            step.reconciled.more_places,
        );
        planned = step.planned;
    }
    let publication = p.map(|p| PublicationView {
        remote_link: p.remote_id.as_deref().and_then(|id| {
            p.platform()
                .remote_link(p.draft.sandbox, id, p.remote_group.as_deref())
        }),
        published: p.published,
        remote_id: p.remote_id,
        places: p.places,
        budget_cents: p.budget_cents,
        committed_cents: committed,
        synced_at: p.synced_at,
        draft: p.draft,
    });
    let ledger = rows
        .into_iter()
        .map(|r| LedgerView {
            id: r.id,
            action: r.action,
            target: r.call.target.clone().unwrap_or_default(),
            state: r.state,
            job: r.job_status,
            amount_cents: r.amount_cents,
            tries: r.tries,
            created_at: r.created_at,
            answered_at: r.answered_at,
            answer: r.answer_json,
            error: r.error,
        })
        .collect();
    Ok(PlatformPanel {
        study,
        study_name: s.name,
        accounts,
        publication,
        lines,
        planned,
        to_release,
        more_places,
        ledger,
        can_act,
    })
}

/// Keeps the edits of the study's draft.
pub async fn save(c: &Ctx<Admin>, study: StudyId, e: DraftEdits) -> Result<(), AppError> {
    let pool = &c.state.pool;
    let Some(p) = store::platform::publication(pool, study).await? else {
        return Err(AppError::Invalid(
            "the study has no draft yet: derive one first".into(),
        ));
    };
    let mut d = p.draft;
    d.title = e.title.trim().to_string();
    d.description = e.description.trim().to_string();
    d.minutes = e.minutes;
    d.max_minutes = d
        .max_minutes
        .max(domain::platform::draft::max_minutes(e.minutes));
    d.reward_cents = cents("the reward", &e.reward)?;
    d.budget_cents = cents("the budget", &e.budget)?;
    d.devices = [
        (e.desktop, Device::Desktop),
        (e.tablet, Device::Tablet),
        (e.mobile, Device::Mobile),
    ]
    .into_iter()
    .filter_map(|(on, d)| on.map(|_| d))
    .collect();
    let (by, now) = (Some(c.who.0.id), c.state.now_ms());
    Ok(store::platform::save_draft(pool, study, &d, by, now).await?)
}

/// What publishing would send and cost, with Prolific's own calculator's total beside the
/// operator's rates where the account answers within a few seconds.
pub async fn publish_preview(state: &AppState, study: StudyId) -> store::Result<PublishView> {
    let fees = state.platforms.accounts.fees;
    let mut view = flow::preview_publish(&state.pool, study, fees).await?;
    let d = &view.draft;
    if let Some(Site::Prolific(client)) = state.platforms.site(d.platform, d.sandbox) {
        let quote = client.cost(d.reward_cents, d.places);
        if let Ok(Ok(total)) = tokio::time::timeout(std::time::Duration::from_secs(5), quote).await
        {
            view.platform_quote_cents = Some(total);
        }
    }
    Ok(view)
}
