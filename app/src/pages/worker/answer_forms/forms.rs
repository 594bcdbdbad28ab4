//! The label form (labels with Help and a confidence scale) and the free-text form, each with
//! Submit and Skip. Unsent choices are kept as the item's draft.

use super::super::draft;
use super::super::sender::Sender;
use domain::answer::{Answer, CONFIDENCE_LEVELS};
use domain::task::Label;
use leptos::prelude::*;

/// An item's Submit (enabled once `ready` and no answer is on its way) and Skip buttons, with
/// the sending status under them.
fn submit_row(
    sender: Sender,
    ready: impl Fn() -> bool + Send + Sync + 'static,
    submit: impl FnMut(leptos::ev::MouseEvent) + 'static,
    skip: impl FnMut(leptos::ev::MouseEvent) + 'static,
) -> impl IntoView {
    view! {
        <div class="buttons">
            <button class="submit" on:click=submit disabled=move || !ready() || sender.busy()>
                "Submit"
            </button>
            <button class="skip" on:click=skip disabled=move || sender.busy()>
                "Skip"
            </button>
        </div>
        {sender.status_view()}
    }
}

/// Text-to-text tasks: a free-text answer box, Submit and Skip.
#[component]
pub(crate) fn TextForm(sender: Sender) -> impl IntoView {
    let text = RwSignal::new(String::new());
    draft::keep(
        sender.draft(),
        move || Some(text.get()).filter(|t| !t.is_empty()),
        move |saved: String| text.set(saved),
    );
    let submit = move |_| {
        let t = text.get_untracked();
        if !t.trim().is_empty() {
            sender.send(Answer::Text { text: t });
        }
    };
    let skip = move |_| sender.send(Answer::Skip { confidence: None });
    view! {
        <label class="free-text">
            "Your answer"
            <textarea
                name="answer"
                rows="3"
                maxlength=domain::answer::MAX_TEXT.to_string()
                bind:value=text
                disabled=move || sender.busy()
            ></textarea>
        </label>
        {submit_row(sender, move || !text.get().trim().is_empty(), submit, skip)}
    }
}

#[component]
pub(crate) fn LabelForm(labels: Vec<Label>, sender: Sender) -> impl IntoView {
    let choice = RwSignal::new(None::<String>);
    let confidence = RwSignal::new(None::<u8>);
    let names: Vec<String> = labels.iter().map(|l| l.name.clone()).collect();
    draft::keep(
        sender.draft(),
        move || {
            let picked = (choice.get(), confidence.get());
            (picked != (None, None)).then_some(picked)
        },
        move |(label, level): (Option<String>, Option<u8>)| {
            if label.as_ref().is_none_or(|l| names.contains(l)) {
                choice.set(label);
            }
            if level.is_none_or(|c| CONFIDENCE_LEVELS.iter().any(|(v, _)| *v == c)) {
                confidence.set(level);
            }
        },
    );
    let submit = move |_| {
        if let (Some(label), Some(confidence)) =
            (choice.get_untracked(), confidence.get_untracked())
        {
            sender.send(Answer::Label { label, confidence });
        }
    };
    let skip = move |_| {
        sender.send(Answer::Skip {
            confidence: confidence.get_untracked(),
        })
    };
    view! {
        <fieldset class="options">
            <legend>"Your answer"</legend>
            {labels.into_iter().map(|l| label_option(l, choice, sender)).collect_view()}
        </fieldset>
        {confidence_scale(confidence, sender)}
        {submit_row(
            sender,
            move || choice.get().is_some() && confidence.get().is_some(),
            submit,
            skip,
        )}
    }
}

/// One label to choose, with its Help (a definition and an example).
fn label_option(l: Label, choice: RwSignal<Option<String>>, sender: Sender) -> impl IntoView {
    let name = l.name.clone();
    let this = l.name.clone();
    view! {
        <div class="option">
            <label>
                // `checked` follows the form's state: the page reuses these inputs for
                // the next item, whose form starts empty.
                <input
                    type="radio"
                    name="label"
                    value=l.name.clone()
                    disabled=move || sender.busy()
                    prop:checked=move || { choice.with(|c| c.as_deref() == Some(this.as_str())) }
                    on:change=move |_| choice.set(Some(name.clone()))
                />
                " "
                {l.name.clone()}
            </label>
            <details class="help">
                <summary aria-label=format!("Help: {}", l.name)>"Help"</summary>
                <p class="definition">{l.definition}</p>
                <p class="example">"Example: " {l.example}</p>
            </details>
        </div>
    }
}

/// The 5-point confidence scale.
fn confidence_scale(confidence: RwSignal<Option<u8>>, sender: Sender) -> impl IntoView {
    view! {
        <fieldset class="confidence">
            <legend>"\"I am confident in my answer\""</legend>
            {CONFIDENCE_LEVELS
                .iter()
                .map(|&(v, name)| {
                    view! {
                        <label>
                            <input
                                type="radio"
                                name="confidence"
                                value=v
                                disabled=move || sender.busy()
                                prop:checked=move || confidence.get() == Some(v)
                                on:change=move |_| confidence.set(Some(v))
                            />
                            " "
                            {name}
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}
