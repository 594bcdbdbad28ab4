//! The machines page's form that queues any learner on imported tasks or, for CrossFit's
//! upstream learning, a partition; the server checks it as the command line checks it.

use super::outcome;
use super::page_fields::check_field;
use super::queue::JobActions;
use crate::api::machine::QueueLearner;
use crate::wire::queue::{QueueChoices, QueueRequest, QueuedLearner, UpstreamChoice};
use leptos::prelude::*;

/// The learners the form offers: value, label, and what its folder is.
const LEARNERS: [(&str, &str, &str); 7] = [
    (
        "frozen-baseline",
        "Frozen MiniLM baseline (a span head per shot group)",
        "",
    ),
    (
        "fine-tuning",
        "Fine-tuning of an encoder checkpoint (BERT, RoBERTa, DeBERTa)",
        "Checkpoint folder",
    ),
    ("onnx", "An ONNX span model, evaluated", "Model folder"),
    (
        "prompt",
        "Prompt-based fine-tuning (an encoder with its masked-LM head)",
        "Checkpoint folder",
    ),
    (
        "in-context",
        "In-context learning through a language-model server",
        "Server URL",
    ),
    (
        "crossfit",
        "CrossFit direct fine-tuning (BART, T5; every seed)",
        "Model folder",
    ),
    (
        "crossfit-upstream",
        "CrossFit upstream learning (a partition; then every seed of its test tasks)",
        "Model folder",
    ),
];

/// CrossFit's upstream methods: the command line's value and the form's label.
const UPSTREAM_METHODS: [(&str, &str); 4] = [
    ("mtl", "Multi-task learning"),
    ("maml", "MAML"),
    ("fomaml", "First-order MAML"),
    ("reptile", "Reptile"),
];

/// The form's text fields, as typed.
#[derive(Clone, Copy)]
struct Fields {
    /// A folder, or the in-context server's URL.
    folder: RwSignal<String>,
    /// The system or method name.
    name: RwSignal<String>,
    /// The model name the in-context server is asked for.
    model: RwSignal<String>,
    /// CrossFit's updates per setting, prompt updates, or the in-context calls in flight.
    number: RwSignal<String>,
    /// A prompt's template and verbaliser (the task's defaults when empty).
    template: RwSignal<String>,
    verbaliser: RwSignal<String>,
    /// Upstream learning: the partition, method, folder written and updates.
    partition: RwSignal<String>,
    upstream_method: RwSignal<String>,
    out: RwSignal<String>,
    upstream_steps: RwSignal<String>,
}

/// The learner a form's fields describe.
fn learner_of(kind: &str, f: Fields) -> QueuedLearner {
    let folder = f.folder.get_untracked();
    let name = Some(f.name.get_untracked().trim().to_string()).filter(|n| !n.is_empty());
    let number = f.number.get_untracked().trim().parse().ok();
    match kind {
        "fine-tuning" => QueuedLearner::FineTuning {
            weights: folder,
            system: name,
        },
        "onnx" => QueuedLearner::Onnx {
            model: folder,
            system: name,
        },
        "prompt" => QueuedLearner::Prompt {
            weights: folder,
            system: name,
            template: Some(f.template.get_untracked()),
            verbaliser: Some(f.verbaliser.get_untracked()),
            steps: number,
        },
        "in-context" => QueuedLearner::InContext {
            endpoint: folder,
            model: f.model.get_untracked(),
            system: name,
            concurrency: number,
        },
        "crossfit" => QueuedLearner::Crossfit {
            model: folder,
            method: name,
            steps: number,
        },
        "crossfit-upstream" => QueuedLearner::CrossfitUpstream(UpstreamChoice {
            model: folder,
            partition: f.partition.get_untracked(),
            method: f.upstream_method.get_untracked(),
            out: f.out.get_untracked(),
            name,
            upstream_steps: f.upstream_steps.get_untracked().trim().parse().ok(),
            steps: number,
        }),
        _ => QueuedLearner::FrozenBaseline,
    }
}

/// A labelled choice among `options` (value, label) that sets `to`.
fn choice(
    label: &'static str,
    name: &'static str,
    options: Vec<(String, String)>,
    to: RwSignal<String>,
) -> impl IntoView {
    view! {
        <label>
            {label} <select name=name on:change=move |ev| to.set(event_target_value(&ev))>
                {options
                    .into_iter()
                    .map(|(v, l)| view! { <option value=v>{l}</option> })
                    .collect_view()}
            </select>
        </label>
    }
}

/// The form that queues a learner on tasks.
pub fn queue_form(choices: QueueChoices, a: JobActions) -> impl IntoView {
    let kind = RwSignal::new(LEARNERS[0].0.to_string());
    let chosen = RwSignal::new(Vec::<String>::new());
    let f = Fields {
        folder: RwSignal::new(String::new()),
        name: RwSignal::new(String::new()),
        model: RwSignal::new(String::new()),
        number: RwSignal::new(String::new()),
        template: RwSignal::new(String::new()),
        verbaliser: RwSignal::new(String::new()),
        partition: RwSignal::new(choices.partitions.first().cloned().unwrap_or_default()),
        upstream_method: RwSignal::new(UPSTREAM_METHODS[0].0.to_string()),
        out: RwSignal::new(String::new()),
        upstream_steps: RwSignal::new(String::new()),
    };
    let (k, split) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let replace = RwSignal::new(false);
    let upstream = move || kind.get() == "crossfit-upstream";
    let crossfit = move || kind.get() == "crossfit" || upstream();
    let in_context = move || kind.get() == "in-context";
    let prompt = move || kind.get() == "prompt";
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let group = match (
            k.get_untracked().trim().parse(),
            split.get_untracked().trim().parse(),
        ) {
            (Ok(k), Ok(s)) => Some((k, s)),
            _ => None,
        };
        let learner = learner_of(&kind.get_untracked(), f);
        a.queue.dispatch(QueueLearner {
            request: QueueRequest {
                tasks: if upstream() {
                    Vec::new()
                } else {
                    chosen.get_untracked()
                },
                group: group.filter(|_| !crossfit()),
                learner,
                replace: replace.get_untracked(),
            },
        });
    };
    let (clues_tasks, crossfit_tasks) = (choices.tasks, choices.crossfit_tasks);
    let partitions = choices.partitions;
    let task_boxes = move || {
        let names = if crossfit() {
            crossfit_tasks.clone()
        } else {
            clues_tasks.clone()
        };
        names
            .into_iter()
            .map(|t| {
                let (on, this) = (t.clone(), t.clone());
                let toggle = move |ev: leptos::ev::Event| {
                    let checked = event_target_checked(&ev);
                    chosen.update(|c| {
                        c.retain(|x| *x != on);
                        if checked {
                            c.push(on.clone());
                        }
                    });
                };
                view! {
                    <label class="check">
                        <input
                            type="checkbox"
                            name="task"
                            value=t.clone()
                            prop:checked=move || chosen.get().contains(&this)
                            on:change=toggle
                        />
                        {t}
                    </label>
                }
            })
            .collect_view()
    };
    let folder_label = move || {
        LEARNERS
            .iter()
            .find(|l| l.0 == kind.get())
            .map_or("", |l| l.2)
    };
    view! {
        <form class="queue" on:submit=submit>
            <h2>"Queue a learner"</h2>
            <p class="hint">
                "Checked as the command line checks it, then queued: every "
                <code>"clues-lab worker"</code>
                " pointed at this database runs the jobs (see the Workers chapter of the docs). Folders are absolute paths, as the workers' machines see them. Upstream learning is one job; its worker then queues the seeds of the partition's test tasks."
            </p>
            <label>
                "Learner "
                <select
                    name="learner"
                    on:change=move |ev| {
                        kind.set(event_target_value(&ev));
                        chosen.set(Vec::new());
                    }
                >
                    {LEARNERS
                        .iter()
                        .map(|(v, l, _)| view! { <option value=*v>{*l}</option> })
                        .collect_view()}
                </select>
            </label>
            <Show when=move || !upstream()>
                <fieldset class="tasks">
                    <legend>{move || if crossfit() { "CrossFit tasks" } else { "Tasks" }}</legend>
                    {task_boxes.clone()}
                </fieldset>
            </Show>
            <Show when=move || !folder_label().is_empty()>
                <label>
                    {folder_label} " "
                    <input
                        name="folder"
                        bind:value=f.folder
                        placeholder=move || {
                            if in_context() { "http://…/v1" } else { "/models/…" }
                        }
                    />
                </label>
            </Show>
            <Show when=in_context>
                <label>"Model name " <input name="model" bind:value=f.model /></label>
            </Show>
            <Show when=move || kind.get() != "frozen-baseline">
                <label>
                    {move || if crossfit() { "Method name " } else { "System name " }}
                    <input name="name" bind:value=f.name placeholder="the default" />
                </label>
            </Show>
            <Show when=upstream>
                {choice(
                    "Partition ",
                    "partition",
                    partitions.iter().map(|p| (p.clone(), p.clone())).collect(),
                    f.partition,
                )}
                {choice(
                    "Upstream method ",
                    "upstream-method",
                    UPSTREAM_METHODS.iter().map(|(v, l)| (v.to_string(), l.to_string())).collect(),
                    f.upstream_method,
                )}
                <label>
                    "Upstream folder (written) "
                    <input name="out" bind:value=f.out placeholder="/models/…" />
                </label>
                <label>
                    "Upstream updates "
                    <input
                        name="upstream-steps"
                        type="number"
                        min="1"
                        bind:value=f.upstream_steps
                        placeholder="1000"
                    />
                </label>
            </Show>
            <Show when=prompt>
                <label>
                    "Template "
                    <input name="template" bind:value=f.template placeholder="the task's default" />
                </label>
                <label>
                    "Verbaliser "
                    <input
                        name="verbaliser"
                        bind:value=f.verbaliser
                        placeholder="positive=great,negative=terrible"
                    />
                </label>
            </Show>
            <Show when=move || crossfit() || in_context() || prompt()>
                <label>
                    {move || match kind.get().as_str() {
                        "crossfit" | "crossfit-upstream" => "Updates per setting ",
                        "prompt" => "Updates ",
                        _ => "Calls in flight ",
                    }}
                    <input
                        name="number"
                        type="number"
                        min="1"
                        bind:value=f.number
                        placeholder=move || if in_context() { "1" } else { "1000" }
                    />
                </label>
            </Show>
            <Show when=move || !crossfit()>
                <label>
                    "k "
                    <input name="k" type="number" min="0" bind:value=k placeholder="every group" />
                </label>
                <label>
                    "Split " <input name="split" type="number" min="0" bind:value=split />
                </label>
                {check_field("Run finished groups again", "replace", replace, false)}
            </Show>
            <button type="submit">"Queue"</button>
            {move || a.queue.value().get().map(|r| outcome(r, |q| q.said))}
        </form>
    }
}
