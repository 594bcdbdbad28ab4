//! A study's own page for staff: what it is (task, configuration, training sets, worker
//! links), its progress and workers, and the form that changes it (admins only).

use super::config_fields::{problem_alert, read_study, ConfigFields, StudyForm};
use super::{alerts, site_origin};
use crate::api::study::{study_admin, UpdateStudy};
use crate::wire::study::{StudyOverview, StudySummary, WorkerRow};
use domain::platform::Platform;
use domain::shots;
use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn StudyAdminPage() -> impl IntoView {
    let id = super::id_param();
    let update = ServerAction::<UpdateStudy>::new();
    let overview = Resource::new(
        move || (id(), update.version().get()),
        |(id, _)| study_admin(id),
    );
    view! {
        <Transition fallback=|| view! { <p>"Loading study…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    overview.await.map(|o| view! { <StudyView o update /> })
                })}
            </ErrorBoundary>
        </Transition>
    }
}

#[component]
fn StudyView(o: StudyOverview, update: ServerAction<UpdateStudy>) -> impl IntoView {
    let chains: Vec<String> = o.chains.iter().map(|c| shots::chain_text(c)).collect();
    let chains = if chains.is_empty() {
        "none: no training file lies within a larger one".to_string()
    } else {
        chains.join("; ")
    };
    // Only an admin may change a study: a researcher is not offered a form they cannot send.
    let edit = if o.can_edit {
        let (s, groups, offered) = (o.summary.clone(), o.shot_groups.clone(), o.chains.clone());
        view! { <EditStudy s groups offered chains update /> }.into_any()
    } else {
        view! {
            <section class="edit-study">
                <h2>"Configuration"</h2>
                <p class="hint">"Only an admin can change a study's configuration."</p>
            </section>
        }
        .into_any()
    };
    view! {
        {study_meta(o.summary)}
        <section class="progress">
            <h2>"Progress"</h2>
            {super::dashboard::progress_table(o.progress)}
            {workers_table(o.workers)}
        </section>
        {edit}
    }
}

/// What the study is: its name, task and configuration, training sets and worker links.
fn study_meta(s: StudySummary) -> impl IntoView {
    let id = s.id;
    view! {
        <h1 class="study-title">{s.name.clone()}</h1>
        <p class="meta">
            "Task " <A href=format!("/tasks/{}", s.task)>{s.task.clone()}</A>
            {format!(
                " · configuration #{} · {}",
                s.config_id,
                if s.started {
                    "started: what workers saw can no longer change"
                } else {
                    "not started: everything can change"
                },
            )}
        </p>
        <p class="shot-group">
            "Training sets: " <strong>{s.shot_group.clone()}</strong>
            {(!s.nested)
                .then(|| {
                    view! {
                        <span class="warn">
                            " — a larger training set does not contain the smaller ones (allowed by the admin); the reports say so."
                        </span>
                    }
                })}
        </p>
        <p>
            "Worker link: "
            <code class="worker-link">{format!("{}/join/{id}", site_origin())}</code>
            {Platform::ALL
                .iter()
                .map(|p| {
                    view! {
                        " — for "
                        {p.name()}
                        " "
                        <code class=format!(
                            "{}-link",
                            p.as_str(),
                        )>{format!("{}{}", site_origin(), p.worker_link(id))}</code>
                        " "
                        {p.link_words()}
                    }
                })
                .collect_view()}
        </p>
        <p>
            <A href=format!(
                "/studies/{id}/platform",
            )>"Run it on Prolific or MTurk from here: publish, keep in step, approve, pay"</A>
        </p>
    }
}

/// The admin's form that changes the study (what workers saw is frozen once they started).
#[component]
fn EditStudy(
    s: StudySummary,
    groups: Vec<shots::ShotFile>,
    offered: Vec<Vec<shots::ShotFile>>,
    chains: String,
    update: ServerAction<UpdateStudy>,
) -> impl IntoView {
    let fields = ConfigFields::new(&s.config, &groups);
    let options = Signal::stored(shots::group_options(&groups, &offered));
    let name = RwSignal::new(s.name.clone());
    let id = s.id;
    let form = StudyForm::new(move || read_study(name, None, fields));
    let submit = form.on_submit(move |name, config| {
        update.dispatch(UpdateStudy { id, name, config });
    });
    view! {
        <section class="edit-study">
            <h2>"Configuration"</h2>
            <p class="hint">{format!("Nesting chains of the task's training files: {chains}")}</p>
            <form
                class="config"
                on:submit=submit
                on:input=move |_| form.recheck()
                on:change=move |_| form.recheck()
            >
                <label>"Name" <input name="name" bind:value=name /></label>
                {fields.view(options, s.started)}
                <button type="submit" disabled=move || update.pending().get()>
                    "Save"
                </button>
            </form>
            {problem_alert(form.problems)}
            <ErrorBoundary fallback=alerts>
                {move || {
                    update
                        .value()
                        .get()
                        .map(|r| {
                            r.map(|()| {
                                view! {
                                    <p class="saved" role="status">
                                        "Saved."
                                    </p>
                                }
                            })
                        })
                }}
            </ErrorBoundary>
        </section>
    }
}

/// The study's workers: shots, status, items done, training S1 and time.
fn workers_table(workers: Vec<WorkerRow>) -> impl IntoView {
    view! {
        <table class="grid workers">
            <thead>
                <tr>
                    <th>"Worker"</th>
                    <th>"Shots"</th>
                    <th>"Status"</th>
                    <th>"Items"</th>
                    <th>"Training S1"</th>
                    <th>"Time on items"</th>
                </tr>
            </thead>
            <tbody>
                {workers
                    .into_iter()
                    .map(|w| {
                        view! {
                            <tr>
                                <td>{w.name}</td>
                                <td class="num">{w.k}</td>
                                <td>{w.status.as_str()}</td>
                                <td class="num">
                                    {format!("{} of {}", w.items_done, w.items_total)}
                                </td>
                                <td class="num">
                                    {w.training_s1.map(|s| format!("{s:.3}")).unwrap_or_default()}
                                </td>
                                <td class="num">{format!("{:.0} s", w.seconds)}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}
