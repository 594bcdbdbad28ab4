//! Server functions of a study's crowd-platform panel: researchers see it; only admins spend
//! (derive and save a draft, publish, sync, decide, pay, raise the budget, send a refused call
//! again), and every spending step is a preview first and a confirmation of that preview's
//! fingerprint after.

use crate::error::AppError;
use crate::wire::platform::{DecisionsView, DraftEdits, PayView, PlatformPanel, PublishView};
use domain::ids::StudyId;
use domain::platform::Platform;
use leptos::prelude::*;
#[cfg(feature = "ssr")]
use {
    crate::ssr::request::{serve, Admin, Ctx, Staff},
    domain::people::Role,
    domain::platform::plan::Rule,
    platforms::flow,
};

/// The panel: accounts, the publication, the places in step and the ledger.
#[server(endpoint = "platform_panel_of", output = crate::api::TextJson)]
pub async fn platform_panel_of(study: StudyId) -> Result<PlatformPanel, AppError> {
    serve(|c: Ctx<Staff>| async move {
        let can_act = c.who.0.role == Role::Admin;
        Ok(crate::ssr::platform_panel::panel(&c.state, study, can_act).await?)
    })
    .await
}

/// A draft derived from the study for `platform` (`sandbox`: MTurk's), kept as the study's
/// draft; `origin` is the site's address the study link starts with.
#[server(endpoint = "derive_platform_draft", output = crate::api::TextJson)]
pub async fn derive_platform_draft(
    study: StudyId,
    platform: Platform,
    sandbox: Option<String>,
    origin: String,
) -> Result<(), AppError> {
    serve(|c: Ctx<Admin>| async move {
        let origin = crate::ssr::platform_panel::checked_origin(&origin)?;
        let site = (platform, sandbox.is_some());
        let draft = flow::derive(c.pool(), study, site, &origin).await?;
        let (by, now) = (Some(c.who.0.id), c.state.now_ms());
        Ok(store::platform::save_draft(c.pool(), study, &draft, by, now).await?)
    })
    .await
}

/// Keeps the researcher's edits of the draft (what the platform shows, the time, the reward,
/// the devices, the budget); refused where the draft would break a rule (a reward below the
/// hourly rate, ...).
#[server(endpoint = "save_platform_draft", output = crate::api::TextJson)]
pub async fn save_platform_draft(study: StudyId, edits: DraftEdits) -> Result<(), AppError> {
    serve(|c: Ctx<Admin>| async move { crate::ssr::platform_panel::save(&c, study, edits).await })
        .await
}

/// What publishing would send and cost.
#[server(endpoint = "preview_publication", output = crate::api::TextJson)]
pub async fn preview_publication(study: StudyId) -> Result<PublishView, AppError> {
    serve(|c: Ctx<Admin>| async move {
        Ok(crate::ssr::platform_panel::publish_preview(&c.state, study).await?)
    })
    .await
}

/// Publishes as previewed.
#[server(endpoint = "confirm_publication", output = crate::api::TextJson)]
pub async fn confirm_publication(study: StudyId, fingerprint: String) -> Result<usize, AppError> {
    serve(|c: Ctx<Admin>| async move {
        let fees = c.state.platforms.accounts.fees;
        let by = (Some(c.who.0.id), &c.state.clock);
        Ok(flow::publish(c.pool(), study, (fees, &fingerprint), by)
            .await?
            .len())
    })
    .await
}

/// Reads the submissions back now (a sync also runs every minute by itself).
#[server(endpoint = "sync_publication", output = crate::api::TextJson)]
pub async fn sync_publication(study: StudyId) -> Result<(), AppError> {
    serve(|c: Ctx<Admin>| async move {
        let p = store::platform::published(c.pool(), study).await?;
        Ok(store::platform::ledger::request_sync(c.pool(), &p, &c.state.clock).await?)
    })
    .await
}

/// The publication's budget, fees included (an amount such as 120.00).
#[server(endpoint = "set_platform_budget", output = crate::api::TextJson)]
pub async fn set_platform_budget(study: StudyId, budget: String) -> Result<(), AppError> {
    serve(|c: Ctx<Admin>| async move {
        let cents = crate::ssr::platform_panel::cents("the budget", &budget)?;
        Ok(store::platform::set_budget(c.pool(), study, cents).await?)
    })
    .await
}

/// The decisions proposed now: approvals, and rejections by `rule` with `message`.
#[server(endpoint = "preview_platform_decisions", output = crate::api::TextJson)]
pub async fn preview_platform_decisions(
    study: StudyId,
    rule: Option<String>,
    message: Option<String>,
) -> Result<DecisionsView, AppError> {
    serve(|c: Ctx<Admin>| async move {
        let rule = rule_of(rule.as_deref())?;
        let message = message.filter(|m| !m.trim().is_empty());
        Ok(flow::preview_decisions(c.pool(), study, rule, message.as_deref()).await?)
    })
    .await
}

/// A rule as the form names it (empty: none, everyone who finished approved).
#[cfg(feature = "ssr")]
fn rule_of(name: Option<&str>) -> Result<Option<Rule>, AppError> {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        None => Ok(None),
        Some(n) => Rule::parse(n)
            .map(Some)
            .ok_or_else(|| AppError::Invalid(format!("{n:?} is not a stated rule of rejection"))),
    }
}

/// Stores the previewed decisions and sends them.
#[server(endpoint = "confirm_platform_decisions", output = crate::api::TextJson)]
pub async fn confirm_platform_decisions(
    study: StudyId,
    rule: Option<String>,
    message: Option<String>,
    fingerprint: String,
) -> Result<usize, AppError> {
    serve(|c: Ctx<Admin>| async move {
        let rule = rule_of(rule.as_deref())?;
        let message = message.filter(|m| !m.trim().is_empty());
        let confirmed = (rule, message.as_deref(), fingerprint.as_str());
        let by = (Some(c.who.0.id), &c.state.clock);
        Ok(flow::decide(c.pool(), study, confirmed, by).await?.len())
    })
    .await
}

/// The top-ups owed now.
#[server(endpoint = "preview_platform_pay", output = crate::api::TextJson)]
pub async fn preview_platform_pay(study: StudyId) -> Result<PayView, AppError> {
    serve(|c: Ctx<Admin>| async move {
        let fees = c.state.platforms.accounts.fees;
        Ok(flow::preview_pay(c.pool(), study, fees).await?)
    })
    .await
}

/// Sends the previewed top-ups.
#[server(endpoint = "confirm_platform_pay", output = crate::api::TextJson)]
pub async fn confirm_platform_pay(study: StudyId, fingerprint: String) -> Result<usize, AppError> {
    serve(|c: Ctx<Admin>| async move {
        let fees = c.state.platforms.accounts.fees;
        let by = (Some(c.who.0.id), &c.state.clock);
        Ok(flow::pay(c.pool(), study, (fees, &fingerprint), by)
            .await?
            .len())
    })
    .await
}

/// Sends a refused call again, once its cause is fixed on the platform.
#[server(endpoint = "retry_platform_call", output = crate::api::TextJson)]
pub async fn retry_platform_call(study: StudyId, call: i64) -> Result<(), AppError> {
    serve(|c: Ctx<Admin>| async move {
        Ok(store::platform::ledger::retry(c.pool(), study, call, &c.state.clock).await?)
    })
    .await
}
