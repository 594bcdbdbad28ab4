//! The machines page's queue: each job not done with Cancel or Retry (the form that queues a
//! learner is `queue_form`); workers run the jobs.

use crate::api::machine::{CancelJob, QueueLearner, RetryJob};
use crate::wire::queue::{GridJobRow, Queue};
use domain::run::JobStatus;
use leptos::prelude::*;

/// The actions a job row's buttons and the form dispatch; the page refreshes on each.
#[derive(Clone, Copy)]
pub struct JobActions {
    pub queue: ServerAction<QueueLearner>,
    pub cancel: ServerAction<CancelJob>,
    pub retry: ServerAction<RetryJob>,
}

impl JobActions {
    pub fn new() -> JobActions {
        JobActions {
            queue: ServerAction::new(),
            cancel: ServerAction::new(),
            retry: ServerAction::new(),
        }
    }

    /// Changes with every finished action (the page's resources refetch on it).
    pub fn version(&self) -> usize {
        self.queue.version().get() + self.cancel.version().get() + self.retry.version().get()
    }

    /// The last cancel or retry's error, if it ended in one.
    fn refusal(&self) -> impl IntoView + use<> {
        let (cancel, retry) = (self.cancel, self.retry);
        move || {
            [cancel.value().get(), retry.value().get()]
                .into_iter()
                .flatten()
                .filter_map(Result::err)
                .map(crate::pages::error_line)
                .collect_view()
        }
    }
}

/// The job's queue and id, as the Cancel and Retry forms send them, and the form's button.
fn job_fields(queue: Queue, id: i64, label: &'static str) -> impl IntoView {
    view! {
        <input type="hidden" name="queue" value=queue.as_str() />
        <input type="hidden" name="id" value=id />
        <button type="submit" class=label.to_lowercase()>
            {label}
        </button>
    }
}

/// Cancel (a queued or running job) or Retry (a failed one), as the job's status allows: each
/// a form of the action's own fields (`ActionForm`), which posts even before the page is
/// interactive.
pub fn job_buttons(a: JobActions, queue: Queue, id: i64, status: JobStatus) -> impl IntoView {
    match status {
        JobStatus::Queued | JobStatus::Claimed => Some(
            view! { <ActionForm action=a.cancel>{job_fields(queue, id, "Cancel")}</ActionForm> }
                .into_any(),
        ),
        JobStatus::Failed => Some(
            view! { <ActionForm action=a.retry>{job_fields(queue, id, "Retry")}</ActionForm> }
                .into_any(),
        ),
        JobStatus::Done => None,
    }
}

/// Every CLUES grid job not done, with its buttons (nothing when there is none).
pub fn grid_jobs_table(rows: Vec<GridJobRow>, a: JobActions) -> AnyView {
    if rows.is_empty() {
        return a.refusal().into_any();
    }
    let row = move |j: GridJobRow| {
        let status = match j.status {
            JobStatus::Claimed => "running",
            s => s.as_str(),
        };
        let group = if j.k == 0 && j.split == 0 {
            "every group".to_string()
        } else {
            format!("k={} split={}", j.k, j.split)
        };
        let who = j.worker.map(|w| format!(" on {w}"));
        view! {
            <tr class=format!("grid-job {status}") data-grid-job=j.id.to_string()>
                <td>{j.system}</td>
                <td>{j.task}</td>
                <td>{group}</td>
                <td>{status} {who} {j.error.map(|e| view! { <span class="error">{e}</span> })}</td>
                <td class="num">{j.attempts}</td>
                <td>{job_buttons(a, Queue::Grid, j.id, j.status)}</td>
            </tr>
        }
    };
    view! {
        <table class="grid grid-jobs-open">
            <thead>
                <tr>
                    <th>"System"</th>
                    <th>"Task"</th>
                    <th>"Shot group"</th>
                    <th>"Status"</th>
                    <th>"Attempts"</th>
                    <th>
                        <span class="sr-only">"Actions"</span>
                    </th>
                </tr>
            </thead>
            <tbody>{rows.into_iter().map(row).collect_view()}</tbody>
        </table>
        {a.refusal()}
    }
    .into_any()
}
