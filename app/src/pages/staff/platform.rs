//! A study's crowd-platform page: the accounts (live and sandbox visibly apart), the draft and
//! its publication, the places in step with the platform, decisions, top-ups and the ledger of
//! every call. Researchers see it; admins act on it, each spending step previewed first
//! (`platform_forms`).

use super::platform_decide::{decisions_form, pay_form};
use super::platform_forms::{draft_form, publish_form, PanelActions};
use super::{alerts, site_origin};
use crate::api::platform::platform_panel_of;
use crate::wire::platform::{AccountView, LedgerView, PlatformPanel, PublicationView};
use domain::platform::ledger::ActionState;
use domain::platform::sync::{Line, Note};
use domain::report::draw::text::money;
use domain::run::JobStatus;
use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn PlatformPage() -> impl IntoView {
    let id = super::id_param();
    let a = PanelActions::new();
    let panel = Resource::new(move || (id(), a.version()), |(id, _)| platform_panel_of(id));
    // While calls are under way, the page follows them.
    Effect::new(move |_| {
        let open = panel.get().and_then(|r| r.ok()).is_some_and(|p| {
            p.ledger
                .iter()
                .any(|c| matches!(c.job, JobStatus::Queued | JobStatus::Claimed))
        });
        if open {
            set_timeout(move || panel.refetch(), std::time::Duration::from_secs(2));
        }
    });
    view! {
        <Transition fallback=|| view! { <p>"Loading the study's platform…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { panel.await.map(|p| view! { <Panel p a /> }) })}
            </ErrorBoundary>
        </Transition>
    }
}

/// An account's line: what it is, live or sandbox, whether it works.
fn account_line(v: AccountView) -> impl IntoView {
    let (site, class) = if v.sandbox {
        ("sandbox: no money moves", "account sandbox")
    } else {
        ("LIVE: real money", "account live")
    };
    let works = if v.works { "works" } else { "does not work" };
    view! {
        <li class=class data-platform=v.platform.as_str()>
            <strong>{v.platform.name()}</strong>
            " "
            <span class="site">{site}</span>
            " — "
            {works}
            ": "
            {v.said}
        </li>
    }
}

#[component]
fn Panel(p: PlatformPanel, a: PanelActions) -> impl IntoView {
    let accounts = if p.accounts.is_empty() {
        view! {
            <p class="note">
                "No crowd platform account is configured on this server. The operator gives them to "
                <code>"serve"</code>
                " (PROLIFIC_TOKEN; MTURK_ACCESS_KEY_ID and MTURK_SECRET_ACCESS_KEY, MTURK_SANDBOX=1 for the sandbox), never through a page."
            </p>
        }
        .into_any()
    } else {
        view! {
            <ul class="accounts">
                {p.accounts.clone().into_iter().map(account_line).collect_view()}
            </ul>
        }
        .into_any()
    };
    let study = p.study;
    let body = match (p.publication.clone(), p.can_act) {
        (None, true) => draft_form(study, &p.accounts, site_origin(), a).into_any(),
        (None, false) => view! { <p>"Not published on a crowd platform."</p> }.into_any(),
        (Some(pubn), _) => publication(&p, pubn, a).into_any(),
    };
    view! {
        <h1>{format!("{} on a crowd platform", p.study_name)}</h1>
        <p>
            <A href=format!("/studies/{study}")>"The study's page"</A>
            " · "
            <a href=format!("/export/ledger.csv?studies={study}")>"ledger.csv"</a>
        </p>
        <section class="platform-accounts">
            <h2>"Accounts"</h2>
            {accounts}
        </section>
        {body}
        {ledger_table(study, p.ledger.clone(), p.can_act, a)}
    }
}

/// The publication: its draft (editable until published), and once published, its places in
/// step, decisions and top-ups.
fn publication(p: &PlatformPanel, pubn: PublicationView, a: PanelActions) -> impl IntoView {
    let d = &pubn.draft;
    let site = if d.sandbox { "sandbox" } else { "live" };
    let head = format!(
        "{} ({site}): {} places of {} planned, reward {} for about {} minutes at {} an hour; budget {} ({} committed)",
        d.platform.name(),
        pubn.places.max(d.places),
        p.planned,
        money(d.reward_cents),
        d.minutes,
        money(i64::from(d.hourly_rate_cents)),
        money(pubn.budget_cents),
        money(pubn.committed_cents),
    );
    let link = pubn.remote_link.clone().map(|l| {
        view! {
            " "
            <a href=l rel="noreferrer" target="_blank">
                "on the platform's site"
            </a>
        }
    });
    let study = p.study;
    let acting = p.can_act.then(|| {
        if pubn.published {
            view! {
                {decisions_form(study, a)}
                {pay_form(study, a)}
            }
            .into_any()
        } else {
            publish_form(study, &pubn, a).into_any()
        }
    });
    view! {
        <section class=format!("publication {site}")>
            <h2>{if pubn.published { "Published" } else { "Draft" }}</h2>
            <p class="publication-head">{head} {link}</p>
            {pubn.published.then(|| in_step(p))}
        </section>
        {acting}
    }
}

/// The places in step with the platform: each submission with its place, and what does not
/// match.
fn in_step(p: &PlatformPanel) -> impl IntoView {
    let line = |l: Line| {
        let note = match l.note {
            Note::Matched => "",
            Note::NoPlace => "a submission with no place in the study",
            Note::NoSubmission => "a place with no submission on the platform",
            Note::Earlier => "an earlier submission of this worker",
        };
        view! {
            <tr class=format!("line {:?}", l.note).to_lowercase()>
                <td>{l.remote.as_ref().map(|r| r.remote_id.clone())}</td>
                <td>
                    {l
                        .remote
                        .as_ref()
                        .map(|r| r.worker.clone())
                        .or(l.place.as_ref().map(|p| p.worker.clone()))}
                </td>
                <td>{l.remote.as_ref().map(|r| r.status.as_str())}</td>
                <td>{l.place.as_ref().map(|p| p.status.as_str())}</td>
                <td>{note}</td>
            </tr>
        }
    };
    view! {
        <p class="in-step">
            {format!(
                "{} to release (given back on the platform), {} more places to ask for",
                p.to_release,
                p.more_places,
            )}
        </p>
        <table class="grid platform-lines">
            <thead>
                <tr>
                    <th>"Submission"</th>
                    <th>"Worker"</th>
                    <th>"On the platform"</th>
                    <th>"In the study"</th>
                    <th>"Note"</th>
                </tr>
            </thead>
            <tbody>{p.lines.clone().into_iter().map(line).collect_view()}</tbody>
        </table>
    }
}

/// Every call to the platform: what, its state, what it may spend, the answer; a refused call
/// may be sent again by an admin.
fn ledger_table(
    study: domain::ids::StudyId,
    rows: Vec<LedgerView>,
    can_act: bool,
    a: PanelActions,
) -> impl IntoView {
    let row = move |c: LedgerView| {
        let retry = (can_act && c.state == ActionState::Refused).then(|| {
            view! {
                <ActionForm action=a.retry>
                    <input type="hidden" name="study" value=study.0 />
                    <input type="hidden" name="call" value=c.id />
                    <button type="submit">"Send again"</button>
                </ActionForm>
            }
        });
        view! {
            <tr class=format!("call {}", c.state.as_str()) data-call=c.id>
                <td class="num">{c.id}</td>
                <td>{c.action.as_str()}</td>
                <td>{c.target}</td>
                <td>{c.state.as_str()} " (" {c.job.as_str()} ")"</td>
                <td class="num">{money(c.amount_cents)}</td>
                <td class="num">{c.tries}</td>
                <td class="answer">{c.error.or(c.answer)}</td>
                <td>{retry}</td>
            </tr>
        }
    };
    view! {
        <section class="ledger">
            <h2>"Ledger"</h2>
            <p class="hint">
                "Every call is written here with its idempotency key before it is sent, and marked with the platform's answer after: a call whose answer was lost is settled by reading the platform first, never sent twice."
            </p>
            <table class="grid ledger-calls">
                <thead>
                    <tr>
                        <th>"#"</th>
                        <th>"Call"</th>
                        <th>"On"</th>
                        <th>"State"</th>
                        <th>"May spend"</th>
                        <th>"Tries"</th>
                        <th>"Answer"</th>
                        <th>
                            <span class="sr-only">"Actions"</span>
                        </th>
                    </tr>
                </thead>
                <tbody>{rows.into_iter().map(row).collect_view()}</tbody>
            </table>
        </section>
    }
}
