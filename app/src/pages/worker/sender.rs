//! Sending one answer from the worker's page: the same answer keeps its client id (a retry
//! after a network failure is stored once); forms stay disabled, and say so, until hydrated;
//! the item's draft is kept until the server stored the answer; a refused answer (the item was
//! answered in another tab) takes the page to the worker's current item.

use super::browser::random_id;
use super::draft::{self, DraftKey};
use super::signals::Signals;
use crate::api::study::submit_answer;
use crate::error::AppError;
use crate::pages::error_line;
use crate::wire::study::SubmitAck;
use domain::answer::Answer;
use domain::ids::{AssignmentId, StudyId};
use leptos::either::EitherOf5;
use leptos::prelude::*;

/// Whether the page is interactive: the page's own flag, false while the server renders and
/// until hydration, then true for every later step (no flash of "Loading" between steps).
pub(crate) fn page_ready() -> Signal<bool> {
    match use_context::<crate::pages::Hydrated>() {
        Some(h) => Signal::from(h.0),
        None => {
            let ready = RwSignal::new(false);
            Effect::new(move |_| ready.set(true));
            Signal::from(ready)
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Sender {
    pub pending: RwSignal<bool>,
    pub failure: RwSignal<Option<AppError>>,
    /// False until the page is hydrated: before that, clicks would do nothing, so the form's
    /// inputs are disabled and the page says it is loading.
    pub ready: Signal<bool>,
    /// What the page's live region announces to screen readers.
    pub live: RwSignal<String>,
    last: StoredValue<Option<(Answer, String)>>,
    study_id: StudyId,
    place: AssignmentId,
    position: i64,
    done: Callback<SubmitAck>,
    /// Called with the server's reason when it refuses the answer (already answered, not the
    /// current item, place released): the page then shows where the worker really is.
    refused: Callback<String>,
    /// What the page recorded while the item was shown, sent with the answer.
    signals: Signals,
}

impl Sender {
    pub fn new(
        study_id: StudyId,
        place: AssignmentId,
        position: i64,
        live: RwSignal<String>,
        done: Callback<SubmitAck>,
        refused: Callback<String>,
        signals: Signals,
    ) -> Self {
        let ready = page_ready();
        Sender {
            pending: RwSignal::new(false),
            failure: RwSignal::new(None),
            ready,
            live,
            last: StoredValue::new(None),
            study_id,
            place,
            position,
            done,
            refused,
            signals,
        }
    }

    /// Where this item's unsent answer is kept.
    pub fn draft(self) -> DraftKey {
        DraftKey::new(self.study_id, self.place, self.position)
    }

    /// Whether the form's inputs are off: not hydrated yet, or an answer on its way.
    pub fn busy(self) -> bool {
        !self.ready.get() || self.pending.get()
    }

    pub fn send(self, answer: Answer) {
        if self.pending.get_untracked() {
            return;
        }
        let client_id = match self.last.get_value() {
            Some((a, id)) if a == answer => id,
            _ => random_id(),
        };
        self.last
            .set_value(Some((answer.clone(), client_id.clone())));
        self.pending.set(true);
        self.failure.set(None);
        let signals = self.signals.snapshot();
        leptos::task::spawn_local(async move {
            let r = submit_answer(self.study_id, self.position, client_id, answer, signals).await;
            self.pending.set(false);
            match r {
                Ok(ack) => {
                    draft::clear(&self.draft());
                    self.done.run(ack)
                }
                Err(AppError::Refused(reason)) => {
                    draft::clear(&self.draft());
                    self.refused.run(reason)
                }
                Err(e) => {
                    self.live.set(format!("Not saved: {e}"));
                    self.failure.set(Some(e))
                }
            }
        });
    }

    fn retry(self) {
        if let Some((answer, _)) = self.last.get_value() {
            self.send(answer);
        }
    }

    /// "Loading…" before hydration, "Saving…", or what went wrong with a Retry where the
    /// network failed.
    pub fn status_view(self) -> impl IntoView {
        move || {
            if !self.ready.get() {
                return EitherOf5::A(view! {
                    <p class="loading" role="status">
                        "Loading the answer form… it works in a moment."
                    </p>
                    <p class="no-script error" role="alert">
                        "This page needs JavaScript, which is turned off in this browser. Turn it on and reload the page to answer."
                    </p>
                });
            }
            if self.pending.get() {
                return EitherOf5::B(view! {
                    <p class="saving" role="status">
                        "Saving…"
                    </p>
                });
            }
            match self.failure.get() {
                None => EitherOf5::C(()),
                Some(AppError::Request(_)) => EitherOf5::D(view! {
                    <div class="retry" role="alert">
                        <p>
                            "Your answer is not saved yet: the server could not be reached. Nothing is lost; try again."
                        </p>
                        <button class="retry-button" on:click=move |_| self.retry()>
                            "Retry"
                        </button>
                    </div>
                }),
                Some(e) => EitherOf5::E(error_line(e)),
            }
        }
    }
}
