//! The machines page: every machine evaluation (registered models, the baseline, imported
//! predictions) with live progress while one runs; scores sit beside humans on the dashboard.

use super::live_workers::workers_table;
use super::queue::{grid_jobs_table, job_buttons, JobActions};
use super::queue_form::queue_form;
use super::upload::UploadForm;
use super::{alerts, duration};
use crate::api::machine::{
    crossfit_learning, grid_job_list, learner_choices, live_workers, machine_grids, machine_runs,
};
use crate::error::AppError;
use crate::wire::crossfit::{JobRow, LearningQueue};
use crate::wire::machine::{GridRow, RunRow, WorkerRow};
use crate::wire::queue::GridJobRow;
use crate::wire::queue::WITHOUT_MODELS;
use domain::run::{JobStatus, RunStatus};
use leptos::prelude::*;
use leptos_router::components::A;

/// Where a running job stands: a bar of `done` of `total` with what they count, the time left
/// and the worker running it.
fn under_way(
    done: i64,
    total: i64,
    what: String,
    left: Option<f64>,
    worker: Option<String>,
) -> impl IntoView {
    let who = worker.map(|w| {
        view! {
            " "
            <span class="worker">{format!("on {w}")}</span>
        }
    });
    let left = left.map(|s| {
        view! {
            " "
            <span class="left">{format!("about {} left", duration(s))}</span>
        }
    });
    view! {
        <progress max=total.max(1).to_string() value=done.to_string()></progress>
        " "
        {what}
        {left}
        {who}
    }
}

fn run_row(r: RunRow) -> impl IntoView {
    let running = r.status == RunStatus::Running;
    let progress = running.then(|| {
        let what = format!("{} of {} inputs", r.done, r.total);
        under_way(r.done, r.total, what, r.left_seconds, r.worker)
    });
    let score = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{:.1}", 100.0 * v));
    view! {
        <tr class=format!("run {}", r.status.as_str()) data-run=r.id.to_string()>
            <td>{r.system}</td>
            <td>{r.kind.as_str()}</td>
            <td>{r.task}</td>
            <td class="num">{r.k}</td>
            <td class="num">{r.split}</td>
            <td>
                {r.status.as_str()} " " {progress}
                {r.error.map(|e| view! { <span class="error">{e}</span> })}
            </td>
            <td class="num">{score(r.s1)}</td>
            <td class="num">{score(r.s1_any_of)}</td>
            <td>{r.provider}</td>
            <td class="num">{r.seconds.map(|s| format!("{s:.1} s"))}</td>
        </tr>
    }
}

/// A CrossFit fine-tuning job not done yet: running with its progress, failed with why, or
/// queued.
fn job_row(j: JobRow, a: JobActions) -> impl IntoView {
    let status = match j.status {
        JobStatus::Claimed => "running",
        s => s.as_str(),
    };
    let progress = (j.status == JobStatus::Claimed).then(|| {
        let what = j.progress.unwrap_or_else(|| "starting".into());
        under_way(j.done, j.total, what, j.left_seconds, j.worker)
    });
    view! {
        <tr class=format!("job {status}") data-job=j.id.to_string()>
            <td>{j.method}</td>
            <td>{j.task}</td>
            <td class="num">{j.seed.map_or_else(|| "—".to_string(), |s| s.to_string())}</td>
            <td>
                {status} " " {progress} {j.error.map(|e| view! { <span class="error">{e}</span> })}
            </td>
            <td class="num">{j.attempts}</td>
            <td>{job_buttons(a, j.queue, j.id, j.status)}</td>
        </tr>
    }
}

/// A shared grid's line: its jobs by status and who holds them now.
fn grid_row(g: GridRow) -> impl IntoView {
    let workers = if g.workers.is_empty() {
        "none now".to_string()
    } else {
        g.workers.join(", ")
    };
    view! {
        <tr class="grid-jobs">
            <td>{g.system}</td>
            <td class="num">{g.queued}</td>
            <td class="num">{g.claimed}</td>
            <td class="num">{g.done}</td>
            <td class="num">{g.failed}</td>
            <td>{workers}</td>
        </tr>
    }
}

/// Live progress: while a run or a job is under way or queued, asks every list of the page
/// again every second (in the browser only).
fn follow(
    runs: Resource<Result<Vec<RunRow>, AppError>>,
    grids: Resource<Result<Vec<GridRow>, AppError>>,
    open: Resource<Result<Vec<GridJobRow>, AppError>>,
    learning: Resource<Result<LearningQueue, AppError>>,
    workers: Resource<Result<Vec<WorkerRow>, AppError>>,
) {
    Effect::new(move |_| {
        let running = runs
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|rs| rs.iter().any(|r| r.status == RunStatus::Running));
        let waiting = open.get().and_then(|r| r.ok()).is_some_and(|js| {
            js.iter()
                .any(|j| matches!(j.status, JobStatus::Queued | JobStatus::Claimed))
        });
        let learning_now = learning.get().and_then(|r| r.ok()).is_some_and(|q| {
            q.open
                .iter()
                .any(|j| matches!(j.status, JobStatus::Queued | JobStatus::Claimed))
        });
        if running || waiting || learning_now {
            set_timeout(
                move || {
                    runs.refetch();
                    grids.refetch();
                    open.refetch();
                    learning.refetch();
                    workers.refetch();
                },
                std::time::Duration::from_secs(1),
            );
        }
    });
}

#[component]
pub fn MachinesPage() -> impl IntoView {
    let actions = JobActions::new();
    let runs = Resource::new(move || actions.version(), |_| machine_runs());
    let grids = Resource::new(move || actions.version(), |_| machine_grids());
    let open = Resource::new(move || actions.version(), |_| grid_job_list());
    let learning = Resource::new(move || actions.version(), |_| crossfit_learning());
    let workers = Resource::new(move || actions.version(), |_| live_workers());
    let choices = Resource::new(|| (), |_| learner_choices());
    follow(runs, grids, open, learning, workers);
    view! {
        <h1>"Machines"</h1>
        <p class="hint">
            "Machine systems on the same test sets as the crowd, scored with the same S1 code: the frozen MiniLM baseline, fine-tuned encoders, ONNX models, prompt-based fine-tuning, in-context learning through a language-model server, CrossFit's learners and imported predictions. Queue any of them but imports below (or from the command line with "
            <code>"--queue-only"</code> ") and run " <code>"clues-lab worker"</code>
            " on any machine; finished runs appear here and on "
            <A href="/dashboard">"the dashboard"</A> ", beside the humans."
        </p>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    choices
                        .await
                        .map(|c| {
                            if c.queueing {
                                queue_form(c, actions).into_any()
                            } else {
                                view! { <p class="note">"Queueing learners: " {WITHOUT_MODELS}</p> }
                                    .into_any()
                            }
                        })
                })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { workers.await.map(workers_table) })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| view! { <p>"Loading the runs…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { runs.await.map(runs_table) })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    let summary = grids.await.map(grids_table)?;
                    let jobs = open.await.map(|o| grid_jobs_table(o, actions))?;
                    Ok::<
                        _,
                        crate::error::AppError,
                    >(
                        view! {
                            {summary}
                            {jobs}
                        },
                    )
                })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    learning.await.map(|l| learning_tables(l, actions))
                })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move {
                    choices.await.map(|c| view! { <UploadForm runs=runs tasks=c.tasks /> })
                })}
            </ErrorBoundary>
        </Transition>
    }
}

/// Every machine evaluation with its status and scores.
fn runs_table(rs: Vec<RunRow>) -> AnyView {
    match rs {
        rs if rs.is_empty() => {
            view! { <p class="empty">"No machine evaluations yet."</p> }.into_any()
        }
        rs => view! {
            <table class="grid runs">
                {head(
                    &[
                        "System",
                        "Kind",
                        "Task",
                        "k",
                        "Split",
                        "Status",
                        "S1 (official)",
                        "S1 (any-of)",
                        "Ran on",
                        "Time",
                    ],
                )} <tbody>{rs.into_iter().map(run_row).collect_view()}</tbody>
            </table>
        }
        .into_any(),
    }
}

/// A table's head: a header cell per column.
fn head(columns: &[&'static str]) -> impl IntoView {
    let cells = columns
        .iter()
        .map(|c| view! { <th>{*c}</th> })
        .collect_view();
    view! {
        <thead>
            <tr>{cells}</tr>
        </thead>
    }
}

/// A queue that workers share: its title, what it is (`hint`), and its jobs by status and the
/// workers holding them, a line per `owner` (a system, a method).
fn queue_table(
    title: &'static str,
    hint: impl IntoView,
    class: &'static str,
    owner: &'static str,
    rows: Vec<GridRow>,
) -> impl IntoView {
    view! {
        <h2>{title}</h2>
        <p class="hint">{hint}</p>
        <table class=class>
            {head(&[owner, "Queued", "Running", "Done", "Failed", "Workers now"])}
            <tbody>{rows.into_iter().map(grid_row).collect_view()}</tbody>
        </table>
    }
}

/// The shared grids' jobs by status and the workers holding them (nothing without a grid).
fn grids_table(gs: Vec<GridRow>) -> AnyView {
    if gs.is_empty() {
        return ().into_any();
    }
    let hint = view! {
        "Workers on any machine pointed at this database share a grid ("
        <code>"clues-lab worker"</code>
        ", or "
        <code>"clues-lab baseline [--finetune] --all"</code>
        " or "
        <code>"clues-lab eval --plan FILE"</code>
        " on each): each claims the next job under a lease it renews; a job whose worker stopped is taken over."
    };
    queue_table("Shared grids", hint, "grid grids", "System", gs).into_any()
}

/// CrossFit's fine-tuning shared by workers: each method's jobs by status, and each job not
/// done with its progress (nothing before the first `crossfit learn`).
fn learning_tables(q: LearningQueue, a: JobActions) -> AnyView {
    if q.methods.is_empty() {
        return ().into_any();
    }
    let open = (!q.open.is_empty()).then(|| {
        view! {
            <table class="grid crossfit-jobs">
                {head(&["Method", "Task", "Seed", "Status", "Attempts", ""])}
                <tbody>{q.open.into_iter().map(|j| job_row(j, a)).collect_view()}</tbody>
            </table>
        }
    });
    let hint = view! {
        "Each seed of a task is a job of "
        <code>"clues-lab crossfit learn --model DIR --task T"</code>
        " (and of the test tasks after upstream learning); the same command on several machines pointed at this database shares them. Runs land on "
        <A href="/crossfit">"the CrossFit page"</A>
        "."
    };
    let summary = queue_table(
        "CrossFit learning",
        hint,
        "grid learning",
        "Method",
        q.methods,
    );
    view! {
        {summary}
        {open}
    }
    .into_any()
}
