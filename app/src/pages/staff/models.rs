//! The models page: every machine evaluation (registered models, the baseline, imported
//! predictions) with live progress while one runs; scores sit beside humans on the dashboard.

use super::alerts;
use crate::api::machine::{model_grids, model_runs};
use crate::wire::machine::{GridRow, RunRow};
use domain::run::RunStatus;
use leptos::prelude::*;
use leptos_router::components::A;

fn run_row(r: RunRow) -> impl IntoView {
    let progress = (r.status == RunStatus::Running).then(|| {
        view! {
            <progress max=r.total.max(1).to_string() value=r.done.to_string()></progress>
            " "
            {format!("{} of {} inputs", r.done, r.total)}
        }
    });
    let who = r.worker.map(|w| {
        view! {
            " "
            <span class="worker">{format!("on {w}")}</span>
        }
    });
    let left = r.left_seconds.map(|s| {
        view! {
            " "
            <span class="left">{format!("about {} left", duration(s))}</span>
        }
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
                {r.status.as_str()} " " {progress} {left} {who}
                {r.error.map(|e| view! { <span class="error">{e}</span> })}
            </td>
            <td class="num">{score(r.s1)}</td>
            <td class="num">{score(r.s1_any_of)}</td>
            <td>{r.provider}</td>
            <td class="num">{r.seconds.map(|s| format!("{s:.1} s"))}</td>
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
    // Live progress: while a run is in progress, ask again every second (in the browser only).
    Effect::new(move |_| {
        let running = runs
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|rs| rs.iter().any(|r| r.status == RunStatus::Running));
        if running {
            set_timeout(
                move || {
                    runs.refetch();
                    grids.refetch();
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
                <thead>
                    <tr>
                        <th>"System"</th>
                        <th>"Kind"</th>
                        <th>"Task"</th>
                        <th>"k"</th>
                        <th>"Split"</th>
                        <th>"Status"</th>
                        <th>"S1 (official)"</th>
                        <th>"S1 (any-of)"</th>
                        <th>"Ran on"</th>
                        <th>"Time"</th>
                    </tr>
                </thead>
                <tbody>{rs.into_iter().map(run_row).collect_view()}</tbody>
            </table>
        }
        .into_any(),
    }
}

/// The shared grids' jobs by status and the workers holding them (nothing without a grid).
fn grids_table(gs: Vec<GridRow>) -> AnyView {
    match gs {
        gs if gs.is_empty() => ().into_any(),
        gs => {
            view! {
                <h2>"Shared grids"</h2>
                <p class="hint">
                    "Workers on any machine pointed at this database share a grid ("
                    <code>"clues-lab baseline [--finetune] --all"</code>" or "
                    <code>"clues-lab eval --plan FILE"</code>
                    " on each): each claims the next job under a lease it renews; a job whose worker stopped is taken over."
                </p>
                <table class="grid grids">
                    <thead>
                        <tr>
                            <th>"System"</th>
                            <th>"Queued"</th>
                            <th>"Running"</th>
                            <th>"Done"</th>
                            <th>"Failed"</th>
                            <th>"Workers now"</th>
                        </tr>
                    </thead>
                    <tbody>{gs.into_iter().map(grid_row).collect_view()}</tbody>
                </table>
            }
                .into_any()
        }
    }
}
