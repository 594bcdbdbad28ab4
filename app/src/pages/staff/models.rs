//! The models page: every machine evaluation (registered models, the baseline, imported
//! predictions) with live progress while one runs; scores sit beside humans on the dashboard.

use super::alerts;
use crate::api::machine::{crossfit_learning, model_grids, model_runs};
use crate::wire::crossfit::{JobRow, LearningQueue};
use crate::wire::machine::{GridRow, RunRow};
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
fn job_row(j: JobRow) -> impl IntoView {
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
            <td class="num">{j.seed}</td>
            <td>
                {status} " " {progress} {j.error.map(|e| view! { <span class="error">{e}</span> })}
            </td>
            <td class="num">{j.attempts}</td>
        </tr>
    }
}

/// Seconds as a person reads them: "40 s", "12 min", "3.5 h".
fn duration(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
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

/// Sends the chosen file to `POST /import/predictions`; returns the server's answer.
#[cfg(feature = "hydrate")]
async fn send_upload(query: String, file: web_sys::File) -> String {
    use wasm_bindgen::JsCast;
    // A multipart form with the file in its `file` field, as a plain form would post it.
    let Ok(form) = web_sys::FormData::new() else {
        return "no form data in this browser".into();
    };
    if form
        .append_with_blob_and_filename("file", &file, &file.name())
        .is_err()
    {
        return "The file could not be read; choose it again.".into();
    }
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&form.into());
    let Some(window) = web_sys::window() else {
        return "no browser window".into();
    };
    let sent = wasm_bindgen_futures::JsFuture::from(
        window.fetch_with_str_and_init(&format!("/import/predictions?{query}"), &init),
    )
    .await;
    let Ok(resp) = sent.map(|r| r.unchecked_into::<web_sys::Response>()) else {
        return "The upload did not reach the server; try again.".into();
    };
    let text = match resp.text() {
        Ok(p) => wasm_bindgen_futures::JsFuture::from(p)
            .await
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    };
    if resp.ok() {
        format!("Stored: {text}")
    } else {
        format!("Not stored: {text}")
    }
}

/// Upload of another system's predictions (e.g. in-context outputs of a large language model).
#[component]
fn UploadForm(runs: Resource<Result<Vec<RunRow>, crate::error::AppError>>) -> impl IntoView {
    let (message, set_message) = signal(String::new());
    let task = NodeRef::<leptos::html::Input>::new();
    let system = NodeRef::<leptos::html::Input>::new();
    let k = NodeRef::<leptos::html::Input>::new();
    let split = NodeRef::<leptos::html::Input>::new();
    let file = NodeRef::<leptos::html::Input>::new();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            let value =
                |r: NodeRef<leptos::html::Input>| r.get().map(|i| i.value()).unwrap_or_default();
            let Some(chosen) = file.get().and_then(|i| i.files()).and_then(|f| f.get(0)) else {
                set_message.set("Choose a predictions file first.".into());
                return;
            };
            let enc = |s: String| domain::crowd::url_encode(&s);
            let query = format!(
                "task={}&system={}&k={}&split={}",
                enc(value(task)),
                enc(value(system)),
                enc(value(k)),
                enc(value(split)),
            );
            set_message.set("Uploading…".into());
            leptos::task::spawn_local(async move {
                set_message.set(send_upload(query, chosen).await);
                runs.refetch();
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (task, system, k, split, file, runs, set_message);
    };
    view! {
        <form class="upload" on:submit=submit>
            <h2>"Upload predictions"</h2>
            <p class="hint">
                "Official CLUES lines " <code>"{\"id\", \"answer\": [...]}"</code> ", lines "
                <code>"{\"<id>\": [spans]}"</code>
                " or one JSON object of id → spans; every test item once."
            </p>
            <label>"Task " <input name="task" required node_ref=task /></label>
            <label>"System " <input name="system" required node_ref=system /></label>
            <label>"k " <input name="k" type="number" min="0" value="0" node_ref=k /></label>
            <label>
                "Split " <input name="split" type="number" min="0" value="0" node_ref=split />
            </label>
            <label>"Predictions file " <input name="file" type="file" node_ref=file /></label>
            <button type="submit">"Upload"</button>
            <p class="upload-result">{message}</p>
        </form>
    }
}

#[component]
pub fn ModelsPage() -> impl IntoView {
    let runs = Resource::new(|| (), |_| model_runs());
    let grids = Resource::new(|| (), |_| model_grids());
    let learning = Resource::new(|| (), |_| crossfit_learning());
    // Live progress: while a run or a CrossFit job is in progress, ask again every second (in
    // the browser only).
    Effect::new(move |_| {
        let running = runs
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|rs| rs.iter().any(|r| r.status == RunStatus::Running));
        let learning_now = learning
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|q| q.open.iter().any(|j| j.status == JobStatus::Claimed));
        if running || learning_now {
            set_timeout(
                move || {
                    runs.refetch();
                    grids.refetch();
                    learning.refetch();
                },
                std::time::Duration::from_secs(1),
            );
        }
    });
    view! {
        <h1>"Models"</h1>
        <p class="hint">
            "Machine systems on the same test sets as the crowd, scored with the same S1 code: ONNX models ("
            <code>"clues-lab eval --model DIR --task T"</code>"), the built-in MiniLM baseline ("
            <code>"clues-lab baseline --all"</code>") and imported predictions ("
            <code>"clues-lab import predictions"</code>"). Humans and machines side by side: "
            <A href="/dashboard">"the dashboard"</A>"."
        </p>
        <Transition fallback=|| view! { <p>"Loading the runs…"</p> }>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { runs.await.map(runs_table) })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { grids.await.map(grids_table) })}
            </ErrorBoundary>
        </Transition>
        <Transition fallback=|| ()>
            <ErrorBoundary fallback=alerts>
                {move || Suspend::new(async move { learning.await.map(learning_tables) })}
            </ErrorBoundary>
        </Transition>
        <UploadForm runs=runs />
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
        <code>"clues-lab baseline [--finetune] --all"</code>
        " or "
        <code>"clues-lab eval --plan FILE"</code>
        " on each): each claims the next job under a lease it renews; a job whose worker stopped is taken over."
    };
    queue_table("Shared grids", hint, "grid grids", "System", gs).into_any()
}

/// CrossFit's fine-tuning shared by workers: each method's jobs by status, and each job not
/// done with its progress (nothing before the first `crossfit learn`).
fn learning_tables(q: LearningQueue) -> AnyView {
    if q.methods.is_empty() {
        return ().into_any();
    }
    let open = (!q.open.is_empty()).then(|| {
        view! {
            <table class="grid crossfit-jobs">
                {head(&["Method", "Task", "Seed", "Status", "Attempts"])}
                <tbody>{q.open.into_iter().map(job_row).collect_view()}</tbody>
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
