//! The platform page's forms, each spending step a preview and then a confirmation of what it
//! showed (its fingerprint): deriving and editing the draft, publishing, a sync, decisions,
//! top-ups and the budget. On a live account the confirmation also asks for a tick.

use super::outcome;
use crate::api::platform::{
    ConfirmPlatformDecisions, ConfirmPlatformPay, ConfirmPublication, DerivePlatformDraft,
    PreviewPlatformDecisions, PreviewPlatformPay, PreviewPublication, RetryPlatformCall,
    SavePlatformDraft, SetPlatformBudget, SyncPublication,
};
use crate::wire::platform::{AccountView, PublicationView, PublishView};
use domain::ids::StudyId;
use domain::platform::draft::Device;
use domain::report::draw::text::money;
use leptos::prelude::*;

/// The page's actions; the panel is read again after each that changes it.
#[derive(Clone, Copy)]
pub struct PanelActions {
    pub derive: ServerAction<DerivePlatformDraft>,
    pub save: ServerAction<SavePlatformDraft>,
    pub preview_publish: ServerAction<PreviewPublication>,
    pub publish: ServerAction<ConfirmPublication>,
    pub sync: ServerAction<SyncPublication>,
    pub budget: ServerAction<SetPlatformBudget>,
    pub preview_decisions: ServerAction<PreviewPlatformDecisions>,
    pub decide: ServerAction<ConfirmPlatformDecisions>,
    pub preview_pay: ServerAction<PreviewPlatformPay>,
    pub pay: ServerAction<ConfirmPlatformPay>,
    pub retry: ServerAction<RetryPlatformCall>,
}

impl PanelActions {
    pub fn new() -> PanelActions {
        let a = PanelActions {
            derive: ServerAction::new(),
            save: ServerAction::new(),
            preview_publish: ServerAction::new(),
            publish: ServerAction::new(),
            sync: ServerAction::new(),
            budget: ServerAction::new(),
            preview_decisions: ServerAction::new(),
            decide: ServerAction::new(),
            preview_pay: ServerAction::new(),
            pay: ServerAction::new(),
            retry: ServerAction::new(),
        };
        // A preview is of the plan as it stood: once something changed, it is asked again.
        Effect::new(move |_| {
            let _ = (a.save.version().get(), a.publish.version().get());
            a.preview_publish.value().set(None);
        });
        Effect::new(move |_| {
            let _ = a.decide.version().get();
            a.preview_decisions.value().set(None);
        });
        Effect::new(move |_| {
            let _ = (a.pay.version().get(), a.budget.version().get());
            a.preview_pay.value().set(None);
        });
        a
    }

    /// Changes with every finished action that changes the panel.
    pub fn version(&self) -> usize {
        [
            self.derive.version(),
            self.save.version(),
            self.publish.version(),
            self.sync.version(),
            self.budget.version(),
            self.decide.version(),
            self.pay.version(),
            self.retry.version(),
        ]
        .iter()
        .map(|v| v.get())
        .sum()
    }
}

/// A preview's answer as `show` shows it, or its error; nothing before it is asked.
pub(super) fn previewed<S, V>(
    action: ServerAction<S>,
    show: impl Fn(S::Output) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    S: leptos::server_fn::ServerFn<Error = crate::error::AppError> + Clone + Send + Sync + 'static,
    S::Output: Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    move || {
        action.value().get().map(|r| match r {
            Ok(v) => show(v).into_any(),
            Err(e) => crate::pages::error_line(e).into_any(),
        })
    }
}

pub(super) fn study_field(study: StudyId) -> impl IntoView {
    view! { <input type="hidden" name="study" value=study.0 /> }
}

/// A live account's confirmation asks for a tick as well.
fn live_tick(live: bool) -> impl IntoView {
    live.then(|| {
        view! {
            <label class="live-tick">
                <input type="checkbox" required />
                " This spends real money on the live site: I checked the preview above."
            </label>
        }
    })
}

/// No publication yet: a platform to publish on, and a draft derived from the study.
pub fn draft_form(
    study: StudyId,
    accounts: &[AccountView],
    origin: String,
    a: PanelActions,
) -> impl IntoView {
    let options = domain::platform::Platform::ALL
        .iter()
        .map(|p| view! { <option value=p.as_str()>{p.name()}</option> })
        .collect_view();
    // The sandbox is ticked where the MTurk account given is the sandbox's.
    let sandbox = accounts.iter().any(|v| v.sandbox);
    view! {
        <section class="draft-new">
            <h2>"Publish this study"</h2>
            <ActionForm action=a
                .derive>
                {study_field(study)} <label>"On " <select name="platform">{options}</select></label>
                <label>
                    <input type="checkbox" name="sandbox" checked=sandbox />
                    " MTurk's sandbox (no money moves)"
                </label>
                <label>
                    " with the study link at " <input name="origin" value=origin size="40" />
                </label> <button type="submit">"Derive a draft"</button>
            </ActionForm>
            {move || a.derive.value().get().map(|r| outcome(r, |()| "Draft derived.".to_string()))}
        </section>
    }
}

/// The draft's fields, saved as edited; then the publishing preview and its confirmation.
pub fn publish_form(study: StudyId, p: &PublicationView, a: PanelActions) -> impl IntoView {
    let d = p.draft.clone();
    let devices = d.devices.clone();
    let ticked = move |dev: Device| devices.contains(&dev);
    let live = !d.sandbox;
    view! {
        <section class="draft-edit">
            <h2>"The draft"</h2>
            <ActionForm action=a
                .save>
                {study_field(study)}
                <label>
                    "Title " <input name="edits[title]" value=d.title.clone() size="60" />
                </label>
                <label>
                    "Description " <textarea name="edits[description]" rows="4" cols="70">
                        {d.description.clone()}
                    </textarea>
                </label>
                <label>
                    "Minutes " <input name="edits[minutes]" type="number" min="1" value=d.minutes />
                </label>
                <label>"Reward " <input name="edits[reward]" value=money(d.reward_cents) /></label>
                <label>
                    "Budget, fees included "
                    <input name="edits[budget]" value=money(d.budget_cents) />
                </label> <fieldset>
                    <legend>"Devices"</legend>
                    {Device::ALL
                        .iter()
                        .map(|&dev| {
                            view! {
                                <label>
                                    <input
                                        type="checkbox"
                                        name=format!("edits[{}]", dev.as_str())
                                        checked=ticked(dev)
                                    />
                                    {format!(" {}", dev.as_str())}
                                </label>
                            }
                        })
                        .collect_view()}
                </fieldset>
                <p class="hint">{format!("The time comes from {}.", d.estimate.describe())}</p>
                <button type="submit">"Save the draft"</button>
            </ActionForm>
            {move || a.save.value().get().map(|r| outcome(r, |()| "Draft saved.".to_string()))}
            <ActionForm action=a
                .preview_publish>
                {study_field(study)} <button type="submit">"Preview publishing"</button>
            </ActionForm>
            {previewed(a.preview_publish, move |v| publish_preview(study, v, live, a))}
            {move || {
                a.publish
                    .value()
                    .get()
                    .map(|r| outcome(r, |n| format!("Published: {n} calls written to the ledger.")))
            }}
        </section>
    }
}

fn publish_preview(study: StudyId, v: PublishView, live: bool, a: PanelActions) -> impl IntoView {
    let d = v.draft.clone();
    let name = d.platform.name();
    let calls = v
        .calls
        .iter()
        .map(|c| c.action().as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let quote = v
        .platform_quote_cents
        .map(|q| format!(" Prolific's own calculator says {}.", money(q)));
    let problems = v
        .problems
        .iter()
        .map(|p| view! { <li class="error">{p.clone()}</li> })
        .collect_view();
    let fine = v.problems.is_empty();
    view! {
        <div class="preview publish-preview">
            <p>
                {format!(
                    "{} places at {} each: {} to the workers and {} in fees, {} in all ({}).",
                    d.places,
                    money(d.reward_cents),
                    money(v.rewards.paid_cents),
                    money(v.rewards.fees_cents),
                    money(v.rewards.total_cents()),
                    v.fee_words,
                )} {quote}
            </p>
            <p>{format!("Study link: {}. Calls: {calls}.", d.link)}</p>
            <ul>{problems}</ul>
            {fine
                .then(|| {
                    view! {
                        <ActionForm action=a
                            .publish>
                            {study_field(study)}
                            <input type="hidden" name="fingerprint" value=v.fingerprint.clone() />
                            {live_tick(live)} <button type="submit" class="spend">
                                {format!("Publish on {name}")}
                            </button>
                        </ActionForm>
                    }
                })}
        </div>
    }
}
