//! Study configuration for admins (researchers read it): the list of studies with their
//! worker links, a form to create one, and a study's page with its progress and edit form.

use super::config_fields::{problem_alert, read_study, recheck, ConfigFields};
use super::{alerts, site_origin};
use crate::api::auth::whoami;
use crate::api::study::{list_studies, study_admin, CreateStudy, UpdateStudy};
use crate::api::tasks::list_tasks;
use crate::wire::study::{StudyOverview, WorkerRow};
use crate::wire::tasks::TaskSummary;
use domain::people::Role;
use domain::platform::Platform;
use domain::shots;
use domain::study::StudyConfig;
use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn StudiesPage() -> impl IntoView {
    let create = ServerAction::<CreateStudy>::new();
    let studies = Resource::new(move || create.version().get(), |_| list_studies());
    let me = Resource::new(|| (), |_| whoami());
    view! {
        <h1>"Studies"</h1>
        <Suspense fallback=|| view! { <p>"Loading studies…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    studies
                        .await
                        .map(|list| match list {
                            list if list.is_empty() => view! { <p>"No studies yet."</p> }.into_any(),
                            list => {
                                view! {
                                    <table class="grid studies">
                                        <thead>
                                            <tr>
                                                <th>"Study"</th>
                                                <th>"Task"</th>
                                                <th>"Scenarios"</th>
                                                <th>"Training sets"</th>
                                                <th>"Open"</th>
                                                <th>"Workers"</th>
                                                <th>"Finished"</th>
                                                <th>"Worker link"</th>
                                            </tr>
                                        </thead>
                                        <tbody>
                                            {list
                                                .into_iter()
                                                .map(|s| {
                                                    view! {
                                                        <tr>
                                                            <td>
                                                                <A href=format!("/studies/{}", s.id)>{s.name.clone()}</A>
                                                            </td>
                                                            <td>{s.task.clone()}</td>
                                                            <td>
                                                                {s
                                                                    .config
                                                                    .scenarios
                                                                    .iter()
                                                                    .map(u32::to_string)
                                                                    .collect::<Vec<_>>()
                                                                    .join(", ")}
                                                            </td>
                                                            <td class="shot-group">{s.shot_group.clone()}</td>
                                                            <td>{if s.config.open { "open" } else { "closed" }}</td>
                                                            <td class="num">{s.workers}</td>
                                                            <td class="num">{s.finished}</td>
                                                            <td class="worker-links">
                                                                {Platform::ALL
                                                                    .iter()
                                                                    .map(|p| {
                                                                        let link = format!(
                                                                            "{}{}",
                                                                            site_origin(),
                                                                            p.worker_link(s.id),
                                                                        );
                                                                        view! { <div>{p.name()} ": " <code>{link}</code></div> }
                                                                    })
                                                                    .collect_view()}
                                                            </td>
                                                        </tr>
                                                    }
                                                })
                                                .collect_view()}
                                        </tbody>
                                    </table>
                                }
                                    .into_any()
                            }
                        })
                })}
            </ErrorBoundary>
        </Suspense>
        // Only an admin may create a study: nobody else is offered the form.
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let admin = matches!(me.await, Ok(Some(u)) if u.role == Role::Admin);
                admin.then(|| view! { <CreateForm create /> })
            })}
        </Suspense>
    }
}

#[component]
fn CreateForm(create: ServerAction<CreateStudy>) -> impl IntoView {
    let tasks = Resource::new(|| (), |_| list_tasks());
    let task = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let fields = ConfigFields::new(&StudyConfig::default(), &[]);
    // The chosen task's shot groups; choosing a task picks its first one. The task list is
    // copied out of the resource by an effect (the browser's), so no render reads it outside
    // a <Suspense/>.
    let listed = RwSignal::new(Vec::<TaskSummary>::new());
    Effect::new(move |_| {
        if let Some(Ok(list)) = tasks.get() {
            listed.set(list);
        }
    });
    let options = Signal::derive(move || {
        let chosen = task.get();
        listed.with(|list| {
            list.iter()
                .find(|t| t.name == chosen)
                .map(|t| shots::group_options(&t.shot_files, &t.chains))
                .unwrap_or_default()
        })
    });
    let choose_task = move |name: String| {
        task.set(name);
        fields.group.set(
            options
                .get_untracked()
                .first()
                .map(|o| o.0.clone())
                .unwrap_or_default(),
        );
    };
    let problem = RwSignal::new(Vec::<String>::new());
    let read = move || read_study(name, Some(task), fields);
    let recheck = recheck(move || read().err().unwrap_or_default(), problem);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match read() {
            Ok((name, config)) => {
                problem.set(Vec::new());
                create.dispatch(CreateStudy {
                    task: task.get_untracked(),
                    name,
                    config,
                });
            }
            Err(e) => problem.set(e),
        }
    };
    view! {
        <section class="create-study">
            <h2>"New study"</h2>
            <form
                class="config"
                on:submit=submit
                on:input=move |_| recheck()
                on:change=move |_| recheck()
            >
                <label>
                    "Task"
                    <select name="task" on:change=move |ev| choose_task(event_target_value(&ev))>
                        <option value="">"Choose a task"</option>
                        <Suspense fallback=|| ()>
                            {move || Suspend::new(async move {
                                tasks
                                    .await
                                    .unwrap_or_default()
                                    .into_iter()
                                    .map(|t| {
                                        view! {
                                            <option value=t.name.clone()>{t.name.clone()}</option>
                                        }
                                    })
                                    .collect_view()
                            })}
                        </Suspense>
                    </select>
                </label>
                <label>"Name" <input name="name" bind:value=name /></label>
                {fields.view(options, false)}
                <button type="submit" disabled=move || create.pending().get()>
                    "Create study"
                </button>
            </form>
            {problem_alert(problem)}
            <ErrorBoundary fallback=alerts>
                {move || {
                    create
                        .value()
                        .get()
                        .map(|r| {
                            r.map(|id| {
                                view! {
                                    <p class="saved" role="status">
                                        "Created. "
                                        <A href=format!("/studies/{id}")>"Open the study"</A>
                                    </p>
                                }
                            })
                        })
                }}
            </ErrorBoundary>
        </section>
    }
}

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
    let s = o.summary;
    let fields = ConfigFields::new(&s.config, &o.shot_groups);
    let options = Signal::stored(shots::group_options(&o.shot_groups, &o.chains));
    let name = RwSignal::new(s.name.clone());
    let problem = RwSignal::new(Vec::<String>::new());
    let read = move || read_study(name, None, fields);
    let recheck = recheck(move || read().err().unwrap_or_default(), problem);
    let id = s.id;
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match read() {
            Ok((name, config)) => {
                problem.set(Vec::new());
                update.dispatch(UpdateStudy { id, name, config });
            }
            Err(e) => problem.set(e),
        }
    };
    let chains: Vec<String> = o.chains.iter().map(|c| shots::chain_text(c)).collect();
    let chains = if chains.is_empty() {
        "none: no training file lies within a larger one".to_string()
    } else {
        chains.join("; ")
    };
    // Only an admin may change a study: a researcher is not offered a form they cannot send.
    let edit = if o.can_edit {
        view! {
            <section class="edit-study">
                <h2>"Configuration"</h2>
                <p class="hint">
                    {format!("Nesting chains of the task's training files: {chains}")}
                </p>
                <form
                    class="config"
                    on:submit=submit
                    on:input=move |_| recheck()
                    on:change=move |_| recheck()
                >
                    <label>"Name" <input name="name" bind:value=name /></label>
                    {fields.view(options, s.started)}
                    <button type="submit" disabled=move || update.pending().get()>
                        "Save"
                    </button>
                </form>
                {problem_alert(problem)}
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
        .into_any()
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
            " — for Prolific "
            <code class="prolific-link">
                {format!("{}{}", site_origin(), Platform::Prolific.worker_link(id))}
            </code>
            " (Prolific fills in the placeholders); for MTurk the bare link as an ExternalQuestion (MTurk adds workerId, assignmentId, hitId and turkSubmitTo)."
        </p>
        <section class="progress">
            <h2>"Progress"</h2>
            {super::dashboard::progress_table(o.progress)}
            {workers_table(o.workers)}
        </section>
        {edit}
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
