//! The researcher dashboard: studies and each scenario's progress, the score tables (with and
//! without the training filter), learning curves and every export. Staff only.

use super::alerts;
use crate::api::report::dashboard;
use crate::wire::report::{Chart, DashboardData, Download, StudyProgress};
use crate::wire::study::ScenarioProgress;
use domain::ids::joined;
use domain::report::draw::layout::RULES;
use domain::report::draw::table::Table;
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_query_map;

/// A scenario progress table (shared with the study page).
pub(crate) fn progress_table(progress: Vec<ScenarioProgress>) -> impl IntoView {
    view! {
        <table class="grid progress-table">
            <thead>
                <tr>
                    <th>"Shots"</th>
                    <th>"Places"</th>
                    <th>"Active"</th>
                    <th>"Finished"</th>
                    <th>"Abandoned"</th>
                    <th>"Items done"</th>
                </tr>
            </thead>
            <tbody>
                {progress
                    .into_iter()
                    .map(|p| {
                        view! {
                            <tr>
                                <td class="num">{p.k}</td>
                                <td class="num">
                                    {format!("{} of {}", p.active + p.finished, p.slots)}
                                </td>
                                <td class="num">{p.active}</td>
                                <td class="num">{p.finished}</td>
                                <td class="num">{p.abandoned}</td>
                                <td class="num">
                                    {format!("{} of {}", p.items_done, p.items_total)}
                                </td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

/// A report table as HTML, header groups spanning their columns.
fn table_view(t: Table) -> impl IntoView {
    let groups = (!t.groups.is_empty()).then(|| {
        view! {
            <tr class="groups">
                // A group without a label is a spacer: a cell, not an empty header.
                {t
                    .groups
                    .iter()
                    .map(|(label, span)| {
                        if label.is_empty() {
                            view! { <td colspan=span.to_string()></td> }.into_any()
                        } else {
                            view! { <th colspan=span.to_string()>{label.clone()}</th> }.into_any()
                        }
                    })
                    .collect_view()}
            </tr>
        }
    });
    let body = t.rows_html();
    let empty = t.rows.is_empty().then(|| {
        view! { <p class="hint empty">"Nothing to show yet: no finished annotators fit this table."</p> }
    });
    view! {
        <figure class="report-table" id=t.id.clone()>
            <figcaption>
                <strong>{t.title}</strong>
                " "
                <span class="hint">{t.note}</span>
            </figcaption>
            <table class="grid">
                <thead>
                    {groups}
                    <tr>{t.header.into_iter().map(|h| view! { <th>{h}</th> }).collect_view()}</tr>
                </thead>
                // One string, not a view per cell: hydration then leaves the rows as sent.
                <tbody inner_html=body></tbody>
            </table>
            {empty}
        </figure>
    }
}

fn downloads(list: Vec<Download>, class: &'static str) -> impl IntoView {
    view! {
        <ul class=class>
            {list
                .into_iter()
                .map(|d| {
                    view! {
                        <li>
                            <a href=d.href download="">
                                {d.label}
                            </a>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

#[component]
pub fn DashboardPage() -> impl IntoView {
    let query = use_query_map();
    let data = Resource::new(
        move || {
            let q = query.read();
            (
                q.get("studies").unwrap_or_default(),
                q.get("synthetic").is_some_and(|v| v == "1" || v == "true"),
            )
        },
        |(studies, synthetic)| dashboard(studies, synthetic),
    );
    view! {
        <h1>"Researcher dashboard"</h1>
        <Transition fallback=|| view! { <p>"Loading the report…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { data.await.map(dashboard_view) })}
            </ErrorBoundary>
        </Transition>
    }
}

fn dashboard_view(d: DashboardData) -> impl IntoView {
    let scope = if d.all_studies {
        "all studies".to_string()
    } else {
        format!("studies {}", joined(&d.scope, ", "))
    };
    let (filtered, all): (Vec<Table>, Vec<Table>) = d
        .tables
        .into_iter()
        .partition(|t| t.id.contains("-filtered"));
    let flagged = if d.flagged.is_empty() {
        "no worker is flagged".to_string()
    } else {
        format!("flagged: {}", d.flagged.join(", "))
    };
    view! {
        <p class="scope">
            "Scope: " <strong>{scope}</strong>
            {(!d.all_studies)
                .then(|| {
                    view! {
                        " · "
                        <A href="/dashboard">"all studies"</A>
                    }
                })}
        </p>
        <section class="dash-studies">
            <h2>"Studies"</h2>
            {d.studies.into_iter().map(study_view).collect_view()}
        </section>
        <section class="dash-exports">
            <h2>"Exports"</h2>
            {downloads(d.exports, "exports")}
            <details class="predictions">
                <summary>"Predictions in the official CLUES format"</summary>
                {downloads(d.predictions, "prediction-files")}
            </details>
        </section>
        <section class="dash-charts">
            <h2>"Learning curves"</h2>
            {d.charts.into_iter().map(chart_view).collect_view()}
        </section>
        <section class="dash-rules">
            <h2>"How the numbers are computed"</h2>
            <ul class="rules">
                {RULES.iter().map(|r| view! { <li>{*r}</li> }).collect_view()}
                {d
                    .notes
                    .into_iter()
                    .map(|n| {
                        view! {
                            <li class="note">
                                <strong>"Note: "</strong>
                                {n}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </section>
        <section class="dash-tables">
            <h2>"Scores"</h2>
            {all.into_iter().map(table_view).collect_view()}
            <details class="filtered">
                <summary>
                    {format!("Every table with the training filter applied ({flagged})")}
                </summary>
                {filtered.into_iter().map(table_view).collect_view()}
            </details>
        </section>
    }
}

/// A study of the scope with its progress per scenario.
fn study_view(s: StudyProgress) -> impl IntoView {
    let id = s.summary.id;
    view! {
        <article class="dash-study">
            <h3>
                <A href=format!("/studies/{id}")>{s.summary.name.clone()}</A>
            </h3>
            <p class="meta">
                {format!(
                    "Task {} · training sets {} · {} · {} workers, {} finished · ",
                    s.summary.task,
                    s.summary.shot_group,
                    if s.summary.config.open { "open" } else { "closed" },
                    s.summary.workers,
                    s.summary.finished,
                )} <A href=format!("/dashboard?studies={id}")>"report of this study alone"</A>
            </p>
            {progress_table(s.progress)}
        </article>
    }
}

/// A task's learning curves (all annotators, and with the training filter) and its
/// reliability diagram where machines gave probabilities.
fn chart_view(c: Chart) -> impl IntoView {
    view! {
        <figure class="chart" data-task=c.task.clone()>
            <div class="svg" inner_html=c.svg></div>
            <figcaption>
                <a href=c.href download="">
                    {format!("Download the {} chart (SVG)", c.task)}
                </a>
            </figcaption>
        </figure>
        <details class="chart-filtered">
            <summary>{format!("{}: with the training filter applied", c.task)}</summary>
            <div class="svg" inner_html=c.svg_filtered></div>
        </details>
        {c
            .calibration
            .map(|svg| {
                view! {
                    <figure class="chart calibration" data-task=c.task.clone()>
                        <div class="svg" inner_html=svg></div>
                        <figcaption>
                            {format!(
                                "{}: model probability and crowd confidence against accuracy",
                                c.task,
                            )}
                        </figcaption>
                    </figure>
                }
            })}
    }
}
