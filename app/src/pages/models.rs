//! The models page: every machine evaluation (registered models, the baseline, imported
//! predictions) with live progress while one runs; scores sit beside humans on the dashboard.

use super::error_view;
use crate::api::machine::{model_runs, RunRow};
use leptos::prelude::*;
use leptos_router::components::A;

fn run_row(r: RunRow) -> impl IntoView {
    let progress = (r.status == "running").then(|| {
        view! {
            <progress max=r.total.max(1).to_string() value=r.done.to_string()></progress>
            " " {format!("{} of {} inputs", r.done, r.total)}
        }
    });
    let score = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{:.1}", 100.0 * v));
    view! {
        <tr class=format!("run {}", r.status) data-run=r.id.to_string()>
            <td>{r.system}</td>
            <td>{r.kind}</td>
            <td>{r.task}</td>
            <td class="num">{r.k}</td>
            <td class="num">{r.split}</td>
            <td>{r.status.clone()} " " {progress} {r.error.map(|e| view! { <span class="error">{e}</span> })}</td>
            <td class="num">{score(r.s1)}</td>
            <td class="num">{score(r.s1_any_of)}</td>
            <td>{r.provider}</td>
            <td class="num">{r.seconds.map(|s| format!("{s:.1} s"))}</td>
        </tr>
    }
}

#[component]
pub fn ModelsPage() -> impl IntoView {
    let runs = Resource::new(|| (), |_| model_runs());
    // Live progress: while a run is in progress, ask again every second (in the browser only).
    Effect::new(move |_| {
        let running = runs
            .get()
            .and_then(|r| r.ok())
            .is_some_and(|rs| rs.iter().any(|r| r.status == "running"));
        if running {
            set_timeout(move || runs.refetch(), std::time::Duration::from_secs(1));
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
            {move || Suspend::new(async move {
                match runs.await {
                    Ok(rs) if rs.is_empty() => view! { <p class="empty">"No machine evaluations yet."</p> }.into_any(),
                    Ok(rs) => view! {
                        <table class="grid runs">
                            <thead><tr>
                                <th>"System"</th><th>"Kind"</th><th>"Task"</th><th>"k"</th><th>"Split"</th>
                                <th>"Status"</th><th>"S1 (official)"</th><th>"S1 (any-of)"</th><th>"Ran on"</th><th>"Time"</th>
                            </tr></thead>
                            <tbody>{rs.into_iter().map(run_row).collect_view()}</tbody>
                        </table>
                    }.into_any(),
                    Err(e) => error_view(e).into_any(),
                }
            })}
        </Transition>
    }
}
