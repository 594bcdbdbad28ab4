//! The label and free-text answer forms (`forms`). They are compiled only with the
//! `answer-forms` feature: the server's build, the staff bundle and the worker's bundle of label
//! and free-text studies (span studies never load them).

#[cfg(feature = "answer-forms")]
mod forms;

use super::sender::Sender;
use domain::task::Label;
use leptos::prelude::*;

/// The label form, where the build has it (`answer-forms`).
#[cfg(feature = "answer-forms")]
pub(crate) fn label_form(labels: Vec<Label>, sender: Sender) -> impl IntoView {
    view! { <forms::LabelForm labels sender /> }
}

/// The free-text form, where the build has it (`answer-forms`).
#[cfg(feature = "answer-forms")]
pub(crate) fn text_form(sender: Sender) -> impl IntoView {
    view! { <forms::TextForm sender /> }
}

/// The span tasks' worker bundle has neither form: the server serves a label or free-text
/// task's page with the bundle that has them (`ssr::assets::WorkerBundle`).
#[cfg(not(feature = "answer-forms"))]
pub(crate) fn label_form(_labels: Vec<Label>, _sender: Sender) -> impl IntoView {
    super::form_not_loaded()
}

#[cfg(not(feature = "answer-forms"))]
pub(crate) fn text_form(_sender: Sender) -> impl IntoView {
    super::form_not_loaded()
}
