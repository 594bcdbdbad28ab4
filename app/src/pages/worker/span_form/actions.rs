//! The span form's actions: Submit the answers, No answer in this text, Skip.

use super::super::sender::Sender;
use domain::answer::{Answer, SpanAnswer};
use leptos::prelude::*;

#[component]
pub(super) fn SpanActions(answers: RwSignal<Vec<SpanAnswer>>, sender: Sender) -> impl IntoView {
    let busy = move || sender.busy();
    view! {
        <div class="buttons span-actions">
            <button
                class="submit"
                disabled=move || answers.with(|a| a.is_empty()) || busy()
                on:click=move |_| {
                    sender
                        .send(Answer::Spans {
                            spans: answers.get_untracked(),
                        })
                }
            >
                "Submit answers"
            </button>
            <button
                class="no-answer"
                disabled=move || answers.with(|a| !a.is_empty()) || busy()
                on:click=move |_| sender.send(Answer::NoAnswer)
            >
                "No answer in this text"
            </button>
            <button
                class="skip"
                disabled=busy
                on:click=move |_| sender.send(Answer::Skip { confidence: None })
            >
                "Skip"
            </button>
        </div>
    }
}
