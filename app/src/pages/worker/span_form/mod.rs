//! The span answer form (`form`): the text to select in (`selection`), the answers so far, and
//! the actions (`actions`), with their DOM calls (`dom`); and the table of span answers
//! (`answers`), which a revealed gold uses too. The form is compiled only with the `span-form`
//! feature: the server's build, the staff bundle and the span tasks' worker bundle (label and
//! free-text studies never load it).

#[cfg(feature = "span-form")]
mod actions;
mod answers;
#[cfg(feature = "span-form")]
mod dom;
#[cfg(feature = "span-form")]
mod form;
#[cfg(feature = "span-form")]
mod selection;

pub(crate) use answers::SpanTable;

use super::sender::Sender;
use leptos::prelude::*;

/// The span form, where the build has it (`span-form`).
#[cfg(feature = "span-form")]
pub(crate) fn span_form(text: String, sender: Sender) -> impl IntoView {
    view! { <form::SpanForm text sender /> }
}

/// The worker's bundle of label and free-text studies has no span form: the server serves a
/// span task's page with the bundle that has one (`ssr::assets::WorkerBundle`), so this shows
/// only if a page got the wrong bundle.
#[cfg(not(feature = "span-form"))]
pub(crate) fn span_form(_text: String, _sender: Sender) -> impl IntoView {
    super::form_not_loaded()
}
