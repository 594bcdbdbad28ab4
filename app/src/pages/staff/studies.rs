//! Study configuration for admins (researchers read it): the list of studies with their
//! worker links and a form to create one (a study's own page is `study_page`).

use super::config_fields::{problem_alert, read_study, ConfigFields, StudyForm};
use super::{alerts, site_origin};
use crate::api::auth::whoami;
use crate::api::study::{list_studies, CreateStudy};
use crate::api::tasks::list_tasks;
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
        let first = options.get_untracked().first().map(|o| o.0.clone());
        fields.group.set(first.unwrap_or_default());
    };
    let form = StudyForm::new(move || read_study(name, Some(task), fields));
    let submit = form.on_submit(move |name, config| {
        create.dispatch(CreateStudy {
            task: task.get_untracked(),
            name,
            config,
        });
    });
    view! {
        <section class="create-study">
            <h2>"New study"</h2>
            <form
                class="config"
                on:submit=submit
                on:input=move |_| form.recheck()
                on:change=move |_| form.recheck()
            >
                <label>
                    "Task"
                    <select name="task" on:change=move |ev| choose_task(event_target_value(&ev))>
                        <option value="">"Choose a task"</option>
                        {task_options(tasks)}
                    </select>
                </label>
                <label>"Name" <input name="name" bind:value=name /></label>
                {fields.view(options, false)}
                <button type="submit" disabled=move || create.pending().get()>
                    "Create study"
                </button>
            </form>
            {problem_alert(form.problems)}
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

/// The task select's options, once the task list has come.
fn task_options(
    tasks: Resource<Result<Vec<TaskSummary>, crate::error::AppError>>,
) -> impl IntoView {
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                tasks
                    .await
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| view! { <option value=t.name.clone()>{t.name.clone()}</option> })
                    .collect_view()
            })}
        </Suspense>
    }
}
