//! The machines page's list of the workers pointed at this database and alive now: the kinds
//! each takes (what its machine can run), where its models run, how long it has run and been
//! silent, and the job it holds.

use super::duration;
use crate::wire::machine::WorkerRow;
use leptos::prelude::*;

fn worker_row(w: WorkerRow) -> impl IntoView {
    let holds = w.holds.unwrap_or_else(|| "waiting for a job".into());
    let key = w.name.clone();
    view! {
        <tr class="worker" data-worker=key>
            <td>{w.name}</td>
            <td>{w.kinds.join(", ")}</td>
            <td>{w.device}</td>
            <td class="num">{duration(w.up_seconds)}</td>
            <td class="num">{format!("{} ago", duration(w.seen_seconds_ago))}</td>
            <td>{holds}</td>
        </tr>
    }
}

/// The live workers, or a line saying there is none, under what a worker does.
pub fn workers_table(ws: Vec<WorkerRow>) -> AnyView {
    let body = if ws.is_empty() {
        view! {
            <p class="empty workers">
                "No worker is running now: queued jobs wait until one starts on a machine pointed at this database."
            </p>
        }
        .into_any()
    } else {
        view! {
            <table class="grid workers">
                <thead>
                    <tr>
                        <th>"Worker"</th>
                        <th>"Takes"</th>
                        <th>"Models run on"</th>
                        <th>"Up"</th>
                        <th>"Last seen"</th>
                        <th>"Now"</th>
                    </tr>
                </thead>
                <tbody>{ws.into_iter().map(worker_row).collect_view()}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <h2>"Workers"</h2>
        <p class="hint">
            "Each worker checks its machine as it starts and takes only the kinds of job it can run there; queued work runs on whichever worker claims it first. A GPU worker ("
            <code>"--device cuda"</code>
            ", or auto on a GPU machine) fine-tunes with candle and evaluates with ONNX Runtime on the GPU; the scores are the same S1 on the same test sets."
        </p>
        {body}
    }
    .into_any()
}
