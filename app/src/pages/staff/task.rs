//! A task's page: description, labels with their Help, question types, shot groups, the
//! import's quality report, and a previewer of test items (no gold answers).

use super::alerts;
use crate::api::tasks::{task_detail, PreviewItem};
use crate::pages::context_view;
use crate::wire::tasks::{ItemPreview, QualityRow, ShotGroup, TaskInfo, QUALITY_ROWS};
use domain::task::TaskSpec;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[component]
pub fn TaskPage() -> impl IntoView {
    let params = use_params_map();
    let name = move || params.read().get("name").unwrap_or_default();
    let detail = Resource::new(name, task_detail);
    view! {
        <Suspense fallback=|| view! { <p>"Loading task…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    detail.await.map(|d| view! { <TaskView detail=d /> })
                })}
            </ErrorBoundary>
        </Suspense>
    }
}

#[component]
fn TaskView(detail: TaskInfo) -> impl IntoView {
    let TaskInfo {
        spec,
        source,
        test_items,
        shot_groups,
        quality_counts,
        quality_rows,
    } = detail;
    view! {
        <h1 class="task-name">{spec.name.clone()}</h1>
        <p class="meta">
            {spec.family.label()} " · source: " {source} " · " {test_items} " test items"
        </p>
        <section class="description">
            <h2>"Task description"</h2>
            <p>{spec.description.clone()}</p>
        </section>
        {labels_view(&spec)}
        <section class="questions">
            <h2>"Question types"</h2>
            <ul>
                {spec
                    .question_types
                    .iter()
                    .map(|q| {
                        view! {
                            <li>
                                <code>{q.key.clone()}</code>
                                ": "
                                {q.question.clone()}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </section>
        {shots_view(shot_groups)}
        <ItemPreviewer name=spec.name.clone() />
        {quality_view(quality_counts, quality_rows)}
    }
}

/// A label task's labels, each with its Help.
fn labels_view(spec: &TaskSpec) -> impl IntoView {
    (!spec.labels.is_empty()).then(|| {
        view! {
            <section class="labels">
                <h2>"Labels"</h2>
                <ul>
                    {spec
                        .labels
                        .iter()
                        .map(|l| {
                            view! {
                                <li>
                                    <strong>{l.name.clone()}</strong>
                                    <details class="help">
                                        <summary>"Help"</summary>
                                        <p>{l.definition.clone()}</p>
                                        <p class="example">"Example: " {l.example.clone()}</p>
                                    </details>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </section>
        }
    })
}

/// The task's training files by k and split.
fn shots_view(shot_groups: Vec<ShotGroup>) -> impl IntoView {
    view! {
        <section class="shots">
            <h2>"Shot groups"</h2>
            <table class="grid">
                <thead>
                    <tr>
                        <th>"k"</th>
                        <th>"Split"</th>
                        <th>"Rows"</th>
                        <th>"File"</th>
                    </tr>
                </thead>
                <tbody>
                    {shot_groups
                        .into_iter()
                        .map(|g| {
                            view! {
                                <tr>
                                    <td class="num">{g.k}</td>
                                    <td class="num">{g.split}</td>
                                    <td class="num">{g.rows}</td>
                                    <td>
                                        <code>{g.file_name}</code>
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// What the import noted about the task's data: counts by kind and the first notes.
fn quality_view(
    quality_counts: Vec<(String, i64)>,
    quality_rows: Vec<QualityRow>,
) -> impl IntoView {
    let total_issues: i64 = quality_counts.iter().map(|(_, n)| n).sum();
    let shown = quality_rows.len();
    view! {
        <section class="quality">
            <h2>"Data-quality report"</h2>
            {if total_issues == 0 {
                view! { <p>"The import found nothing to report."</p> }.into_any()
            } else {
                view! {
                    <ul class="counts">
                        {quality_counts
                            .into_iter()
                            .map(|(kind, n)| {
                                view! {
                                    <li>
                                        <code>{kind}</code>
                                        ": "
                                        {n}
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                    <p>
                        {format!(
                            "Showing {shown} of {total_issues} notes (at most {QUALITY_ROWS}); the full report is printed by the importer.",
                        )}
                    </p>
                    <table class="grid">
                        <thead>
                            <tr>
                                <th>"File"</th>
                                <th>"Line"</th>
                                <th>"Kind"</th>
                                <th>"Detail"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {quality_rows
                                .into_iter()
                                .map(|q| {
                                    view! {
                                        <tr>
                                            <td>
                                                {q.file_name.unwrap_or_else(|| "(across files)".into())}
                                            </td>
                                            <td class="num">
                                                {q.line_no.map(|n| n.to_string()).unwrap_or_default()}
                                            </td>
                                            <td>
                                                <code>{q.kind}</code>
                                            </td>
                                            <td>{q.detail}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                }
                    .into_any()
            }}
        </section>
    }
}

/// Steps through the test set as a worker would see it: the text and the question only.
#[component]
fn ItemPreviewer(name: String) -> impl IntoView {
    let name = StoredValue::new(name);
    let preview = ServerAction::<PreviewItem>::new();
    let go = move |step: i64| {
        let position = match preview.value().get_untracked() {
            Some(Ok(p)) => p.position + step,
            _ => 0,
        };
        preview.dispatch(PreviewItem {
            name: name.get_value(),
            position,
        });
    };
    view! {
        <section class="preview">
            <h2>"Test items as a worker sees them"</h2>
            <div class="buttons">
                <button class="preview-prev" on:click=move |_| go(-1)>
                    "Previous"
                </button>
                <button class="preview-next" on:click=move |_| go(1)>
                    "Show next test item"
                </button>
            </div>
            <ErrorBoundary fallback=alerts>
                {move || match preview.value().get() {
                    None => {
                        Ok(
                            view! {
                                <p class="hint">
                                    "Press the button to load a test item from the server."
                                </p>
                            }
                                .into_any(),
                        )
                    }
                    Some(item) => item.map(item_view),
                }}
            </ErrorBoundary>
        </section>
    }
}

fn item_view(item: ItemPreview) -> AnyView {
    view! {
        <article class="item">
            <p class="position">
                {format!("Item {} of {} (id {})", item.position + 1, item.total, item.id)}
            </p>
            <p class="question">{item.question}</p>
            {context_view(&item.context)}
        </article>
    }
    .into_any()
}
