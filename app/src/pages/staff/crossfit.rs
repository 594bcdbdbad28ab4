//! The CrossFit pages for researchers: the task -> metric table (editable), scores of every
//! method per task (mean ± std over seeds), partitions (create, import, export) and ARG.
//! An action's outcome is matched here, not thrown to an `<ErrorBoundary>`: these sections are
//! built inside the page's Suspend, where a boundary did not show the outcome once it came.

use super::page_fields::name_select;
use super::{alerts, outcome};
use crate::api::crossfit::{
    crossfit_arg, crossfit_overview, MakeCrossfitStudyTask, SaveCrossfitPartition, SetCrossfitTask,
};
use crate::wire::crossfit::{ArgReport, CrossfitData, RunScore, TaskRow};
use domain::crossfit::metrics::METRICS;
use domain::crossfit::partition::Partition;
use domain::report::draw::text::pct;
use domain::s1::spread;
use leptos::prelude::*;

#[component]
pub fn CrossfitPage() -> impl IntoView {
    let set_task = ServerAction::<SetCrossfitTask>::new();
    let save_partition = ServerAction::<SaveCrossfitPartition>::new();
    let data = Resource::new(
        move || (set_task.version().get(), save_partition.version().get()),
        |_| crossfit_overview(),
    );
    view! {
        <h1>"CrossFit tasks"</h1>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    data.await.map(|d| overview(d, set_task, save_partition))
                })}
            </ErrorBoundary>
        </Transition>
    }
}

fn overview(
    d: CrossfitData,
    set_task: ServerAction<SetCrossfitTask>,
    save_partition: ServerAction<SaveCrossfitPartition>,
) -> impl IntoView {
    let methods = d.methods.clone();
    let partitions: Vec<String> = d.partitions.iter().map(|(n, _)| n.clone()).collect();
    let task_names: Vec<String> = d.tasks.iter().map(|t| t.name.clone()).collect();
    view! {
        <section class="xf-tasks">
            <h2>"Tasks and their metrics"</h2>
            <p class="hint">
                "The metric scores every run of the task; changing it rescores them."
            </p>
            <table class="grid">
                <thead>
                    <tr>
                        <th>"Task"</th>
                        <th>"Ontology"</th>
                        <th>"Metric"</th>
                        <th>"Seeds"</th>
                        <th>"k"</th>
                        <th>"Test lines"</th>
                        <th>
                            <span class="sr-only">"Save"</span>
                        </th>
                    </tr>
                </thead>
                <tbody>{d.tasks.into_iter().map(|t| task_row(t, set_task)).collect_view()}</tbody>
            </table>
            {move || set_task.value().get().map(|r| outcome(r, |()| "Saved.".to_string()))}
        </section>
        <section class="xf-runs">
            <h2>"Scores"</h2>
            {runs_table(d.runs)}
        </section>
        <section class="xf-partitions">
            <h2>"Partitions"</h2>
            {d.partitions.into_iter().map(|(name, p)| partition_view(name, p)).collect_view()}
            {partition_form(save_partition)}
        </section>
        <section class="xf-arg">
            <h2>"Average relative gain"</h2>
            {arg_form(partitions, methods)}
        </section>
        {study_task_form(task_names)}
    }
}

/// Admins: copy one seed of a task into a task for human studies (free-text answers).
fn study_task_form(tasks: Vec<String>) -> impl IntoView {
    let make = ServerAction::<MakeCrossfitStudyTask>::new();
    let task = RwSignal::new(tasks.first().cloned().unwrap_or_default());
    let seed = RwSignal::new("100".to_string());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if let Ok(seed) = seed.get_untracked().trim().parse() {
            make.dispatch(MakeCrossfitStudyTask {
                task: task.get_untracked(),
                seed,
            });
        }
    };
    view! {
        <section class="xf-human">
            <h2>"Human studies (admins)"</h2>
            <p class="hint">
                "Copies the training and test files of one seed into a task for crowd studies: workers write free-text answers, scored with the task's metric. Then create a study of it on the Studies page."
            </p>
            <form class="study-task" on:submit=submit>
                {name_select("Task", "xf-task", tasks, task)}
                <label>"Seed" <input name="seed" bind:value=seed /></label>
                <button type="submit">"Make the study task"</button>
            </form>
            {move || {
                make.value().get().map(|r| outcome(r, |name| format!("Created the task {name}.")))
            }}
        </section>
    }
}

fn task_row(t: TaskRow, set_task: ServerAction<SetCrossfitTask>) -> impl IntoView {
    let ontology = RwSignal::new(t.ontology.clone());
    let metric = RwSignal::new(t.metric.name().to_string());
    let name = t.name.clone();
    let save = move |_| {
        set_task.dispatch(SetCrossfitTask {
            task: name.clone(),
            ontology: ontology.get_untracked(),
            metric: metric.get_untracked(),
        });
    };
    let current = t.metric.name();
    view! {
        <tr data-task=t.name.clone()>
            <td>{t.name.clone()}</td>
            <td>
                <input
                    name="ontology"
                    aria-label=format!("Ontology of {}", t.name)
                    bind:value=ontology
                />
            </td>
            <td>
                <select
                    name="metric"
                    aria-label=format!("Metric of {}", t.name)
                    on:change=move |ev| metric.set(event_target_value(&ev))
                >
                    {METRICS
                        .iter()
                        .map(|m| {
                            view! {
                                <option value=m.name() selected=m.name() == current>
                                    {m.name()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </td>
            <td>{format!("{:?}", t.seeds)}</td>
            <td>{format!("{:?}", t.ks)}</td>
            <td class="num">{t.test_items}</td>
            <td>
                <button on:click=save>"Save"</button>
            </td>
        </tr>
    }
}

/// Mean ± std over seeds of each method on each task.
fn runs_table(runs: Vec<RunScore>) -> impl IntoView {
    let mut keys: Vec<(String, String)> = runs
        .iter()
        .map(|r| (r.method.clone(), r.task.clone()))
        .collect();
    keys.dedup();
    view! {
        <table class="grid xf-scores">
            <thead>
                <tr>
                    <th>"Method"</th>
                    <th>"Task"</th>
                    <th>"Metric"</th>
                    <th>"Seeds"</th>
                    <th>"Score (mean ± population std, %)"</th>
                    <th>"Notes"</th>
                </tr>
            </thead>
            <tbody>
                {keys
                    .into_iter()
                    .map(|(method, task)| {
                        let of: Vec<&RunScore> = runs
                            .iter()
                            .filter(|r| r.method == method && r.task == task)
                            .collect();
                        let values: Vec<f64> = of.iter().filter_map(|r| r.score.value).collect();
                        let undefined = of.len() - values.len();
                        let non_numeric: usize = of.iter().map(|r| r.score.non_numeric).sum();
                        let mut notes = Vec::new();
                        if undefined > 0 {
                            notes.push(format!("undefined on {undefined} seed(s)"));
                        }
                        if non_numeric > 0 {
                            notes.push(format!("{non_numeric} non-numeric prediction(s) left out"));
                        }
                        view! {
                            <tr>
                                <td>{method}</td>
                                <td>{task}</td>
                                <td>{of[0].score.metric.name()}</td>
                                <td class="num">{of.len()}</td>
                                <td class="num">
                                    {spread(&values)
                                        .map_or(
                                            "–".to_string(),
                                            |s| format!("{} ± {}", pct(s.mean), pct(s.std_pop)),
                                        )}
                                </td>
                                <td>{notes.join("; ")}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

fn partition_view(name: String, p: Partition) -> impl IntoView {
    let href = format!("/export/partition.json?name={name}");
    view! {
        <article class="partition" data-name=name.clone()>
            <h3>{name.clone()}</h3>
            <p>"Train: " {p.train.join(", ")}</p>
            <p>"Dev: " {p.dev.join(", ")}</p>
            <p>"Test: " {p.test.join(", ")}</p>
            <a href=href download="">
                "Download the JSON"
            </a>
        </article>
    }
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Create a partition from three task lists, or import CrossFit's JSON as it is.
fn partition_form(save: ServerAction<SaveCrossfitPartition>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let (train, dev, test) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    let json = RwSignal::new(String::new());
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let p = Partition {
            train: list(&train.get_untracked()),
            dev: list(&dev.get_untracked()),
            test: list(&test.get_untracked()),
        };
        save.dispatch(SaveCrossfitPartition {
            name: name.get_untracked(),
            json: p.to_json(),
        });
    };
    let import = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        save.dispatch(SaveCrossfitPartition {
            name: name.get_untracked(),
            json: json.get_untracked(),
        });
    };
    view! {
        <div class="partition-forms">
            <label>
                "Name of the new partition" <input name="partition-name" bind:value=name />
            </label>
            <form class="create-partition" on:submit=create>
                <label>
                    "Train tasks (comma-separated)" <input name="train" bind:value=train />
                </label>
                <label>"Dev tasks" <input name="dev" bind:value=dev /></label>
                <label>"Test tasks" <input name="test" bind:value=test /></label>
                <button type="submit">"Create partition"</button>
            </form>
            <form class="import-partition" on:submit=import>
                <label>
                    "Or paste CrossFit's JSON" <textarea name="json" bind:value=json></textarea>
                </label>
                <button type="submit">"Import partition"</button>
            </form>
            {move || save.value().get().map(|r| outcome(r, |()| "Partition stored.".to_string()))}
        </div>
    }
}

fn arg_form(partitions: Vec<String>, methods: Vec<String>) -> impl IntoView {
    let partition = RwSignal::new(partitions.first().cloned().unwrap_or_default());
    let method = RwSignal::new(
        methods
            .iter()
            .find(|m| *m == "nearest-input")
            .or(methods.first())
            .cloned()
            .unwrap_or_default(),
    );
    let baseline = RwSignal::new(
        methods
            .iter()
            .find(|m| *m == "majority-output")
            .or(methods.last())
            .cloned()
            .unwrap_or_default(),
    );
    let report = Resource::new(
        move || (partition.get(), method.get(), baseline.get()),
        |(p, m, b)| async move {
            if p.is_empty() || m.is_empty() {
                None
            } else {
                Some(crossfit_arg(p, m, b).await)
            }
        },
    );
    let select =
        |label: &'static str, name: &'static str, options: Vec<String>, value: RwSignal<String>| {
            let current = value.get_untracked();
            view! {
                <label>
                    {label}
                    <select name=name on:change=move |ev| value.set(event_target_value(&ev))>
                        {options
                            .into_iter()
                            .map(|o| {
                                let selected = o == current;
                                view! {
                                    <option value=o.clone() selected=selected>
                                        {o.clone()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </label>
            }
        };
    view! {
        <div class="arg-choice">
            {select("Partition", "partition", partitions, partition)}
            {select("Method", "method", methods.clone(), method)}
            {select("Baseline", "baseline", methods, baseline)}
        </div>
        <Transition fallback=|| view! { <p>"Computing…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    match report.await {
                        None => {
                            Ok(
                                view! {
                                    <p class="hint">
                                        "Store a partition and runs to compare methods."
                                    </p>
                                }
                                    .into_any(),
                            )
                        }
                        Some(r) => r.map(|r| arg_view(r).into_any()),
                    }
                })}
            </ErrorBoundary>
        </Transition>
    }
}

fn arg_view(r: ArgReport) -> impl IntoView {
    let overall = r.spread.map_or("undefined".to_string(), |s| {
        format!(
            "{:+.2}% ± {:.2}% (population std) over {} seeds",
            100.0 * s.mean,
            100.0 * s.std_pop,
            s.n
        )
    });
    view! {
        <p class="arg-overall">
            {format!("ARG of {} over {} on {}: ", r.method, r.baseline, r.partition)}
            <strong>{overall}</strong>
        </p>
        <table class="grid arg-table">
            <thead>
                <tr>
                    <th>"Seed"</th>
                    <th>"Task"</th>
                    <th>"Score"</th>
                    <th>"Baseline"</th>
                    <th>"Relative gain"</th>
                </tr>
            </thead>
            <tbody>
                {r
                    .seeds
                    .into_iter()
                    .map(|(seed, arg)| {
                        let missing = (!arg.missing.is_empty())
                            .then(|| {
                                view! {
                                    <tr>
                                        <td class="num">{seed}</td>
                                        <td colspan="4">
                                            {format!("no runs for {}", arg.missing.join(", "))}
                                        </td>
                                    </tr>
                                }
                            });
                        let total = arg
                            .arg
                            .map_or("undefined".to_string(), |a| format!("{:+.2}%", 100.0 * a));
                        view! {
                            {arg
                                .gains
                                .into_iter()
                                .map(|g| {
                                    view! {
                                        <tr>
                                            <td class="num">{seed}</td>
                                            <td>{g.task}</td>
                                            <td class="num">{pct(g.score)}</td>
                                            <td class="num">{pct(g.baseline)}</td>
                                            <td class="num">
                                                {g
                                                    .gain
                                                    .map_or(
                                                        "undefined (baseline 0)".to_string(),
                                                        |x| format!("{:+.2}%", 100.0 * x),
                                                    )}
                                            </td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                            {missing}
                            <tr class="arg-seed">
                                <td class="num">{seed}</td>
                                <td colspan="3">"ARG"</td>
                                <td class="num">{total}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}
