//! Study configuration for admins (researchers read it): the list of studies with their
//! worker links, a form to create one, and a study's page with its progress and edit form.

use super::page_fields::{PageFields, Problems};
use super::{alerts, site_origin};
use crate::api::auth::whoami;
use crate::api::study::{list_studies, study_admin, CreateStudy, UpdateStudy};
use crate::api::tasks::list_tasks;
use crate::wire::study::{StudyOverview, WorkerRow};
use crate::wire::tasks::TaskSummary;
use domain::analysis_plan::{self, AnalysisChoices};
use domain::crowd::worker_links;
use domain::people::Role;
use domain::settings;
use domain::shots::{self, ShotFile};
use domain::study::StudyConfig;
use leptos::prelude::*;
use leptos_router::components::A;

/// The problems the form's fields have, all of them, as one alert.
fn problem_alert(problems: RwSignal<Vec<String>>) -> impl IntoView {
    move || {
        let list = problems.get();
        (!list.is_empty()).then(|| {
            view! {
                <div class="error" role="alert">
                    <p>{if list.len() == 1 { "Fix this field:" } else { "Fix these fields:" }}</p>
                    <ul class="problems">
                        {list.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
                    </ul>
                </div>
            }
        })
    }
}

/// Checks a form's fields again as they are edited once a send found problems, so that a
/// fixed field's problem goes (the form's `input` and `change` events).
fn recheck(fields: ConfigFields, problems: RwSignal<Vec<String>>) -> impl Fn() + Copy {
    move || {
        if !problems.get_untracked().is_empty() {
            problems.set(fields.read().err().unwrap_or_default());
        }
    }
}

/// The editable fields of a configuration, as text while being typed.
#[derive(Clone, Copy)]
struct ConfigFields {
    scenarios: RwSignal<String>,
    annotators: RwSignal<String>,
    /// The training files, `10_1,20_5,30_5` (a value of `shots::group_options`).
    group: RwSignal<String>,
    allow_unnested: RwSignal<bool>,
    shuffle_training: RwSignal<bool>,
    screening: RwSignal<String>,
    rate: RwSignal<String>,
    margin: RwSignal<String>,
    timeout: RwSignal<String>,
    open: RwSignal<bool>,
    code: RwSignal<String>,
    completion_url: RwSignal<String>,
    /// The analysis plan's level and primary comparison (`30 vs 0`; empty: the default).
    alpha: RwSignal<String>,
    primary: RwSignal<String>,
    pages: PageFields,
}

/// The value of a configuration's shot group among `task_files`: its chain, or (made before
/// shot groups) the files of its training split.
fn group_value(c: &StudyConfig, task_files: &[ShotFile]) -> String {
    if c.shot_group.is_empty() {
        let same: Vec<ShotFile> = task_files
            .iter()
            .copied()
            .filter(|f| f.1 == c.training_split)
            .collect();
        shots::files_value(&same)
    } else {
        shots::files_value(&c.shot_group)
    }
}

impl ConfigFields {
    fn new(c: &StudyConfig, task_files: &[ShotFile]) -> Self {
        let list: Vec<String> = c.scenarios.iter().map(u32::to_string).collect();
        ConfigFields {
            scenarios: RwSignal::new(list.join(", ")),
            annotators: RwSignal::new(c.annotators.to_string()),
            group: RwSignal::new(group_value(c, task_files)),
            allow_unnested: RwSignal::new(c.allow_unnested),
            shuffle_training: RwSignal::new(c.shuffle_training),
            screening: RwSignal::new(c.screening.map(shots::file_name).unwrap_or_default()),
            rate: RwSignal::new(format!("{:.2}", f64::from(c.hourly_rate_cents) / 100.0)),
            margin: RwSignal::new(c.filter_margin.to_string()),
            timeout: RwSignal::new(
                c.item_timeout_secs
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            ),
            open: RwSignal::new(c.open),
            code: RwSignal::new(c.completion_code.clone()),
            completion_url: RwSignal::new(c.completion_url.clone()),
            alpha: RwSignal::new(c.analysis.alpha.to_string()),
            primary: RwSignal::new(analysis_plan::primary_text(c.analysis.primary)),
            pages: PageFields::new(&c.pages),
        }
    }

    /// The configuration, or every field that does not parse or is out of its range, each
    /// message naming its field (the server checks every field again, with the same messages).
    fn read(&self) -> Result<StudyConfig, Vec<String>> {
        let mut p = Problems::default();
        let scenarios = p.take(
            self.scenarios
                .get_untracked()
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| settings::SHOTS.parse_whole(s))
                .collect::<Result<Vec<_>, _>>(),
        );
        let annotators = p.take(settings::ANNOTATORS.parse_whole(&self.annotators.get_untracked()));
        let shot_group = p.take(
            shots::parse_files(&self.group.get_untracked())
                .map_err(|e| format!("Training sets: {e}")),
        );
        let screening = p.take(
            shots::parse_one(&self.screening.get_untracked())
                .map_err(|e| format!("Screening items: {e}")),
        );
        let rate = p.take(settings::HOURLY_RATE.parse(&self.rate.get_untracked()));
        let margin = p.take(settings::FILTER_MARGIN.parse(&self.margin.get_untracked()));
        let timeout = self.timeout.get_untracked();
        let timeout = p.take(if timeout.trim().is_empty() {
            Ok(None)
        } else {
            settings::TIME_OUT.parse_whole(&timeout).map(Some)
        });
        let pages = self.pages.read().map_err(|e| p.0.extend(e)).ok();
        let alpha = p.take(settings::ALPHA.parse(&self.alpha.get_untracked()));
        let primary = p.take(analysis_plan::parse_primary(&self.primary.get_untracked()));
        let (
            Some(scenarios),
            Some(annotators),
            Some(shot_group),
            Some(screening),
            Some(rate),
            Some(filter_margin),
            Some(item_timeout_secs),
            Some(pages),
            Some(alpha),
            Some(primary),
        ) = (
            scenarios, annotators, shot_group, screening, rate, margin, timeout, pages, alpha,
            primary,
        )
        else {
            return Err(p.0);
        };
        Ok(StudyConfig {
            scenarios,
            annotators,
            training_split: shot_group.first().map_or(1, |f| f.1),
            shot_group,
            allow_unnested: self.allow_unnested.get_untracked(),
            shuffle_training: self.shuffle_training.get_untracked(),
            screening,
            hourly_rate_cents: (rate * 100.0).round() as u32,
            filter_margin,
            item_timeout_secs,
            open: self.open.get_untracked(),
            completion_code: self.code.get_untracked().trim().to_string(),
            completion_url: self.completion_url.get_untracked().trim().to_string(),
            pages,
            analysis: AnalysisChoices { alpha, primary },
        })
    }

    /// The form's fields; `options` are the task's shot groups (`shots::group_options`).
    /// The form's fields; `frozen` (workers have started) shows the scenarios and training
    /// sets read-only, as the server would refuse to change them.
    fn view(self, options: Signal<Vec<(String, String)>>, frozen: bool) -> impl IntoView {
        let group = self.group;
        view! {
            <label>
                "Scenarios (shots, 0 = zero-shot)"
                <input name="scenarios" bind:value=self.scenarios readonly=frozen />
            </label>
            <label>
                "Annotators per scenario"
                <input name="annotators" inputmode="numeric" bind:value=self.annotators />
            </label>
            <label>
                "Training sets (shot group)"
                <select
                    name="shot_group"
                    disabled=frozen
                    prop:value=move || group.get()
                    on:change=move |ev| group.set(event_target_value(&ev))
                >
                    {move || {
                        let opts = options.get();
                        let current = group.get();
                        let listed = current.is_empty() || opts.iter().any(|o| o.0 == current);
                        let extra = (!listed)
                            .then(|| (current.clone(), current.replace(',', ", ")));
                        opts.into_iter()
                            .chain(extra)
                            .map(|(value, label)| {
                                view! {
                                    <option selected=value == current value=value>
                                        {label}
                                    </option>
                                }
                            })
                            .collect_view()
                    }}
                </select>
            </label>
            <label class="check">
                <input
                    name="allow_unnested"
                    type="checkbox"
                    disabled=frozen
                    bind:checked=self.allow_unnested
                />
                " Allow training sets that are not nested"
            </label>
            <label class="check">
                <input
                    name="shuffle_training"
                    type="checkbox"
                    disabled=frozen
                    bind:checked=self.shuffle_training
                />
                " Each worker sees the training examples in an order of their own (seeded and recorded)"
            </label>
            <label>
                "Screening items: a training file every worker answers first, without feedback (e.g. 10_5; empty: none)"
                <input name="screening" bind:value=self.screening readonly=frozen />
            </label>
            {frozen
                .then(|| {
                    view! {
                        <p class="hint frozen-note">
                            "Workers have started: the scenarios and training sets are fixed, and so is their order (changing them would alter what workers saw). The number of annotators can only grow."
                        </p>
                    }
                })}
            <label>"Hourly rate (USD)" <input name="rate" bind:value=self.rate /></label>
            <label>
                "Training filter margin (S1 below the others' mean)"
                <input name="margin" bind:value=self.margin />
            </label>
            <label>
                "Release an idle place after (seconds; empty: never)"
                <input name="timeout" bind:value=self.timeout />
            </label>
            <label>
                "Completion code (empty: generated)" <input name="code" bind:value=self.code />
            </label>
            <label>
                "Prolific completion URL ({code} = the code; empty: Prolific's)"
                <input name="completion_url" bind:value=self.completion_url />
            </label>
            <label>
                "Analysis plan: level of its tests (alpha)"
                <input name="alpha" bind:value=self.alpha readonly=frozen />
            </label>
            <label>
                "Analysis plan: primary comparison (e.g. 30 vs 0; empty: the largest k against zero-shot)"
                <input name="primary" bind:value=self.primary readonly=frozen />
            </label>
            <p class="hint">
                "The plan (each scenario against the next, the largest k against zero-shot, the trend over k; Holm within them) is frozen with its SHA-256 when the first worker arrives."
            </p>
            <label class="check">
                <input name="open" type="checkbox" bind:checked=self.open />
                " Open to workers"
            </label>
            {self.pages.view(frozen)}
        }
    }
}

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
                                                                {worker_links(s.id)
                                                                    .into_iter()
                                                                    .map(|(platform, link)| {
                                                                        let link = format!("{}{link}", site_origin());
                                                                        view! { <div>{platform} ": " <code>{link}</code></div> }
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
    let recheck = recheck(fields, problem);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match fields.read() {
            Ok(config) => {
                problem.set(Vec::new());
                create.dispatch(CreateStudy {
                    task: task.get_untracked(),
                    name: name.get_untracked(),
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
    let recheck = recheck(fields, problem);
    let id = s.id;
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match fields.read() {
            Ok(config) => {
                problem.set(Vec::new());
                update.dispatch(UpdateStudy {
                    id,
                    name: name.get_untracked(),
                    config,
                });
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
                {format!("{}{}", site_origin(), worker_links(id)[0].1)}
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
