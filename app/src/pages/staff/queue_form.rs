//! The machines page's form that queues any learner on imported tasks or, for CrossFit's
//! upstream learning, a partition; the server checks it as the command line checks it. The
//! learners, their labels and their fields come from `LearnerKind`, and each kind's request is
//! built by one exhaustive `match`.

use super::outcome;
use super::page_fields::check_field;
use super::queue::JobActions;
use crate::api::machine::QueueLearner;
use crate::wire::queue::{LearnerKind, QueueChoices, QueueRequest, QueuedLearner, UpstreamChoice};
use leptos::prelude::*;

/// CrossFit's upstream methods: the command line's value and the form's label.
const UPSTREAM_METHODS: [(&str, &str); 4] = [
    ("mtl", "Multi-task learning"),
    ("maml", "MAML"),
    ("fomaml", "First-order MAML"),
    ("reptile", "Reptile"),
];

/// The form's text fields, as typed; each belongs to the kinds that show it.
#[derive(Clone, Copy)]
struct Fields {
    /// A folder, or the in-context server's URL (`LearnerKind::folder`).
    folder: RwSignal<String>,
    /// The system or method name.
    name: RwSignal<String>,
    /// In-context learning: the model the server is asked for, and the calls in flight.
    model: RwSignal<String>,
    concurrency: RwSignal<String>,
    /// Prompt-based fine-tuning: its template, verbaliser and updates.
    template: RwSignal<String>,
    verbaliser: RwSignal<String>,
    updates: RwSignal<String>,
    /// CrossFit: updates per setting of the grid (direct and upstream fine-tuning).
    steps: RwSignal<String>,
    /// Upstream learning: the partition, method, folder written and updates.
    partition: RwSignal<String>,
    upstream_method: RwSignal<String>,
    out: RwSignal<String>,
    upstream_steps: RwSignal<String>,
}

/// A number field's value, `None` when empty or not a number (the default applies).
fn number(field: RwSignal<String>) -> Option<u32> {
    field.get_untracked().trim().parse().ok()
}

/// The shot group of the k and split fields: both empty for every group of each task, both
/// whole numbers for one group. One without the other, or a field that is not a whole number,
/// is refused in words (as the command line's `--k` requires `--split`), never dropped.
fn shot_group(k: RwSignal<String>, split: RwSignal<String>) -> Result<Option<(u32, u32)>, String> {
    let (k_text, split_text) = (k.get_untracked(), split.get_untracked());
    match (k_text.trim(), split_text.trim()) {
        ("", "") => Ok(None),
        ("", _) | (_, "") => Err(
            "Give k and split together for one shot group, or leave both empty for every group of each task."
                .into(),
        ),
        _ => match (number(k), number(split)) {
            (Some(k), Some(split)) => Ok(Some((k, split))),
            (None, _) | (_, None) => Err("k and split are whole numbers (0 or more).".into()),
        },
    }
}

/// The learner of `kind` as the form's fields describe it.
fn learner_of(kind: LearnerKind, f: Fields) -> QueuedLearner {
    let folder = f.folder.get_untracked();
    let name = Some(f.name.get_untracked().trim().to_string()).filter(|n| !n.is_empty());
    match kind {
        LearnerKind::FrozenBaseline => QueuedLearner::FrozenBaseline,
        LearnerKind::FineTuning => QueuedLearner::FineTuning {
            weights: folder,
            system: name,
        },
        LearnerKind::Onnx => QueuedLearner::Onnx {
            model: folder,
            system: name,
        },
        LearnerKind::Prompt => QueuedLearner::Prompt {
            weights: folder,
            system: name,
            template: Some(f.template.get_untracked()),
            verbaliser: Some(f.verbaliser.get_untracked()),
            steps: number(f.updates),
        },
        LearnerKind::InContext => QueuedLearner::InContext {
            endpoint: folder,
            model: f.model.get_untracked(),
            system: name,
            concurrency: number(f.concurrency),
        },
        LearnerKind::Crossfit => QueuedLearner::Crossfit {
            model: folder,
            method: name,
            steps: number(f.steps),
        },
        LearnerKind::CrossfitUpstream => QueuedLearner::CrossfitUpstream(UpstreamChoice {
            model: folder,
            partition: f.partition.get_untracked(),
            method: f.upstream_method.get_untracked(),
            out: f.out.get_untracked(),
            name,
            upstream_steps: number(f.upstream_steps),
            steps: number(f.steps),
        }),
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

/// A labelled number field bound to `value`.
fn number_field(
    label: &'static str,
    name: &'static str,
    value: RwSignal<String>,
    placeholder: &'static str,
) -> impl IntoView {
    view! {
        <label>
            {label} " "
            <input name=name type="number" min="1" bind:value=value placeholder=placeholder />
        </label>
    }
}

/// The task boxes: CrossFit's tasks or CLUES's, as the kind learns; `chosen` follows them.
fn task_boxes(
    kind: RwSignal<LearnerKind>,
    choices: &QueueChoices,
    chosen: RwSignal<Vec<String>>,
) -> impl IntoView + Clone {
    let (clues, crossfit) = (choices.tasks.clone(), choices.crossfit_tasks.clone());
    move || {
        let names = if kind.get().crossfit() {
            crossfit.clone()
        } else {
            clues.clone()
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
    }
}

/// The learner's select, built from `LearnerKind`; choosing one clears the tasks chosen.
fn learner_select(kind: RwSignal<LearnerKind>, chosen: RwSignal<Vec<String>>) -> impl IntoView {
    view! {
        <label>
            "Learner "
            <select
                name="learner"
                on:change=move |ev| {
                    if let Some(k) = LearnerKind::parse(&event_target_value(&ev)) {
                        kind.set(k);
                        chosen.set(Vec::new());
                    }
                }
            >
                {LearnerKind::ALL
                    .iter()
                    .map(|k| view! { <option value=k.as_str()>{k.label()}</option> })
                    .collect_view()}
            </select>
        </label>
    }
}

/// The learner's folder (or the in-context server's address), named as its kind says.
fn folder_field(kind: RwSignal<LearnerKind>, folder: RwSignal<String>) -> impl IntoView {
    move || {
        let k = kind.get();
        k.folder().map(|label| {
            let placeholder = if k == LearnerKind::InContext {
                "http://…/v1"
            } else {
                "/models/…"
            };
            view! {
                <label>
                    {label} " " <input name="folder" bind:value=folder placeholder=placeholder />
                </label>
            }
        })
    }
}

/// One shot group (k and split; every group when left out) and whether to run finished ones
/// again: the CLUES learners' fields.
fn group_fields(
    k: RwSignal<String>,
    split: RwSignal<String>,
    replace: RwSignal<bool>,
) -> impl IntoView {
    view! {
        <label>
            "k " <input name="k" type="number" min="0" bind:value=k placeholder="every group" />
        </label>
        <label>
            "Split "
            <input name="split" type="number" min="0" bind:value=split placeholder="with k" />
        </label>
        {check_field("Run finished groups again", "replace", replace, false)}
    }
}

/// The fields of upstream learning: the partition, the method, the folder it writes, updates.
fn upstream_fields(partitions: &[String], f: Fields) -> impl IntoView {
    view! {
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
        {number_field("Upstream updates", "upstream-steps", f.upstream_steps, "1000")}
    }
}

/// The fields of prompt-based fine-tuning: template, verbaliser and updates.
fn prompt_fields(f: Fields) -> impl IntoView {
    view! {
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
        {number_field("Updates", "updates", f.updates, "1000")}
    }
}

/// What the form says under its button: why it did not send what was typed, or what the
/// server did with the last request.
fn said(refused: RwSignal<Option<String>>, a: JobActions) -> impl IntoView {
    match refused.get() {
        Some(why) => leptos::either::Either::Left(crate::pages::error_line(
            crate::error::AppError::Invalid(why),
        )),
        None => {
            leptos::either::Either::Right(a.queue.value().get().map(|r| outcome(r, |q| q.said)))
        }
    }
}

/// The form that queues a learner on tasks.
pub fn queue_form(choices: QueueChoices, a: JobActions) -> impl IntoView {
    let kind = RwSignal::new(LearnerKind::FrozenBaseline);
    let chosen = RwSignal::new(Vec::<String>::new());
    let text = || RwSignal::new(String::new());
    let f = Fields {
        folder: text(),
        name: text(),
        model: text(),
        concurrency: text(),
        template: text(),
        verbaliser: text(),
        updates: text(),
        steps: text(),
        partition: RwSignal::new(choices.partitions.first().cloned().unwrap_or_default()),
        upstream_method: RwSignal::new(UPSTREAM_METHODS[0].0.to_string()),
        out: text(),
        upstream_steps: text(),
    };
    let (k, split) = (text(), text());
    let replace = RwSignal::new(false);
    let is = move |k: LearnerKind| kind.get() == k;
    // A group the form cannot send as it was typed, said on the page instead of queuing.
    let refused = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let kind = kind.get_untracked();
        let group = if kind.crossfit() {
            Ok(None)
        } else {
            shot_group(k, split)
        };
        let group = match group {
            Ok(g) => g,
            Err(why) => return refused.set(Some(why)),
        };
        refused.set(None);
        a.queue.dispatch(QueueLearner {
            request: QueueRequest {
                // Upstream learning names a partition, which names its tasks.
                tasks: if kind == LearnerKind::CrossfitUpstream {
                    Vec::new()
                } else {
                    chosen.get_untracked()
                },
                group,
                learner: learner_of(kind, f),
                replace: replace.get_untracked(),
            },
        });
    };
    let boxes = task_boxes(kind, &choices, chosen);
    let partitions = choices.partitions;
    view! {
        <form class="queue" on:submit=submit>
            <h2>"Queue a learner"</h2>
            <p class="hint">
                "Checked as the command line checks it, then queued: every "
                <code>"clues-lab worker"</code>
                " pointed at this database runs the jobs (see the Workers chapter of the docs). Folders are absolute paths, as the workers' machines see them. Upstream learning is one job; its worker then queues the seeds of the partition's test tasks."
            </p>
            {learner_select(kind, chosen)}
            <Show when=move || !is(LearnerKind::CrossfitUpstream)>
                <fieldset class="tasks">
                    <legend>
                        {move || if kind.get().crossfit() { "CrossFit tasks" } else { "Tasks" }}
                    </legend>
                    {boxes.clone()}
                </fieldset>
            </Show>
            {folder_field(kind, f.folder)}
            <Show when=move || is(LearnerKind::InContext)>
                <label>"Model name " <input name="model" bind:value=f.model /></label>
                {number_field("Calls in flight", "concurrency", f.concurrency, "1")}
            </Show>
            <Show when=move || !is(LearnerKind::FrozenBaseline)>
                <label>
                    {move || if kind.get().crossfit() { "Method name " } else { "System name " }}
                    <input name="name" bind:value=f.name placeholder="the default" />
                </label>
            </Show>
            <Show when=move || is(
                LearnerKind::CrossfitUpstream,
            )>{upstream_fields(&partitions, f)}</Show>
            <Show when=move || is(LearnerKind::Prompt)>{prompt_fields(f)}</Show>
            <Show when=move || {
                kind.get().crossfit()
            }>{number_field("Updates per setting", "steps", f.steps, "1000")}</Show>
            <Show when=move || !kind.get().crossfit()>{group_fields(k, split, replace)}</Show>
            <button type="submit">"Queue"</button>
            {move || said(refused, a)}
        </form>
    }
}
