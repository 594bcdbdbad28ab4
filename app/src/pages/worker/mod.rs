//! The crowd worker's study page and what it is made of: the annotation forms (labels, spans,
//! free text), the sender that saves each answer once, drafts, the study's own pages
//! (consent, questionnaires) and the hand-back to the crowd platform. The worker's bundle
//! hydrates this tree alone.

pub(super) mod annotate;
mod answer_forms;
mod browser;
mod draft;
mod hand_back;
mod sender;
mod signals;
mod span_form;
pub(super) mod study;
mod study_pages;

/// Shown in place of an answer form the page's bundle leaves out (`answer_forms`,
/// `span_form`): only if a page got the wrong bundle.
#[cfg(not(all(feature = "answer-forms", feature = "span-form")))]
fn form_not_loaded() -> impl leptos::IntoView {
    use leptos::prelude::*;
    view! {
        <p class="error" role="alert">
            "The answer form of this item did not load. Please reload the page."
        </p>
    }
}
