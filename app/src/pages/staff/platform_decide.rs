//! The platform page's forms once a study is published: a sync now, the decisions and the
//! top-ups, each a preview and then a confirmation of its fingerprint; the budget.

use super::outcome;
use super::platform_forms::{previewed, study_field, PanelActions};
use crate::wire::platform::{DecisionsView, PayView};
use domain::ids::StudyId;
use domain::report::draw::text::money;
use leptos::prelude::*;

/// A sync now, the decisions' preview and confirmation.
pub fn decisions_form(study: StudyId, a: PanelActions) -> impl IntoView {
    view! {
        <section class="decisions">
            <h2>"Approve and reject"</h2>
            <ActionForm action=a
                .sync>
                {study_field(study)} <button type="submit">"Read the submissions now"</button>
            </ActionForm>
            <ActionForm action=a
                .preview_decisions>
                {study_field(study)}
                <label>
                    "Rule " <select name="rule">
                        <option value="">"approve everyone who finished"</option>
                        <option value="failed-attention">
                            "reject those who failed more attention checks than the study allows"
                        </option>
                    </select>
                </label>
                <label>
                    "Message a rejected worker reads (100 to 1,024 characters; empty: the rule's own) "
                    <textarea name="message" rows="3" cols="70"></textarea>
                </label> <button type="submit">"Preview the decisions"</button>
            </ActionForm>
            {previewed(a.preview_decisions, move |v| decisions_preview(study, v, a))}
            {move || a.decide.value().get().map(|r| outcome(r, |n| format!("{n} decisions sent.")))}
        </section>
    }
}

fn decisions_preview(study: StudyId, v: DecisionsView, a: PanelActions) -> impl IntoView {
    let n = v.proposals.len();
    let rows = v
        .proposals
        .iter()
        .map(|p| {
            view! {
                <tr class=format!("proposal {}", p.decision.as_str())>
                    <td>{p.remote_id.clone()}</td>
                    <td>{p.worker.clone()}</td>
                    <td>{p.decision.as_str()}</td>
                    <td>{p.message.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let rule = v.rule.map(|r| r.as_str().to_string()).unwrap_or_default();
    let message = v
        .proposals
        .iter()
        .find_map(|p| p.message.clone())
        .unwrap_or_default();
    view! {
        <table class="grid proposals">
            <tbody>{rows}</tbody>
        </table>
        {(n > 0)
            .then(|| {
                view! {
                    <ActionForm action=a
                        .decide>
                        {study_field(study)} <input type="hidden" name="rule" value=rule.clone() />
                        <input type="hidden" name="message" value=message.clone() />
                        <input type="hidden" name="fingerprint" value=v.fingerprint.clone() />
                        <button type="submit" class="spend">
                            {format!("Send these {n} decisions")}
                        </button>
                    </ActionForm>
                }
            })}
        {(n == 0).then(|| view! { <p>"No handed-in submission waits for a decision."</p> })}
    }
}

/// The top-ups' preview, its confirmation, and the budget.
pub fn pay_form(study: StudyId, a: PanelActions) -> impl IntoView {
    view! {
        <section class="top-ups">
            <h2>"Pay to the hour"</h2>
            <ActionForm action=a
                .preview_pay>
                {study_field(study)} <button type="submit">"Preview the top-ups"</button>
            </ActionForm>
            {previewed(a.preview_pay, move |v| pay_preview(study, v, a))}
            {move || a.pay.value().get().map(|r| outcome(r, |n| format!("{n} bonuses sent.")))}
            <ActionForm action=a
                .budget>
                {study_field(study)}
                <label>"Budget, fees included " <input name="budget" size="10" /></label>
                <button type="submit">"Set the budget"</button>
            </ActionForm>
            {move || a.budget.value().get().map(|r| outcome(r, |()| "Budget set.".to_string()))}
        </section>
    }
}

fn pay_preview(study: StudyId, v: PayView, a: PanelActions) -> impl IntoView {
    let n = v.top_ups.len();
    let rows = v
        .top_ups
        .iter()
        .map(|t| {
            view! {
                <tr class="top-up">
                    <td>{t.worker.clone()}</td>
                    <td class="num">{super::duration(t.seconds as f64)}</td>
                    <td class="num">{money(t.owed_cents)}</td>
                    <td class="num">{money(t.reward_cents)}</td>
                    <td class="num">{money(t.bonus_cents)}</td>
                    <td class="num">{money(t.cost_cents)}</td>
                </tr>
            }
        })
        .collect_view();
    let over = v.committed_cents + v.total_cents > v.budget_cents;
    view! {
        <table class="grid top-ups">
            <thead>
                <tr>
                    <th>"Worker"</th>
                    <th>"Time"</th>
                    <th>"Owed"</th>
                    <th>"Reward"</th>
                    <th>"Bonus"</th>
                    <th>"With fees"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
        <p>
            {format!(
                "{n} bonuses, {} with fees; {} committed so far of a budget of {}.",
                money(v.total_cents),
                money(v.committed_cents),
                money(v.budget_cents),
            )}
        </p>
        {over.then(|| view! { <p class="error">"Over the budget: raise it below first."</p> })}
        {(n > 0 && !over)
            .then(|| {
                view! {
                    <ActionForm action=a
                        .pay>
                        {study_field(study)}
                        <input type="hidden" name="fingerprint" value=v.fingerprint.clone() />
                        <button type="submit" class="spend">
                            {format!("Pay these {n} bonuses")}
                        </button>
                    </ActionForm>
                }
            })}
    }
}
