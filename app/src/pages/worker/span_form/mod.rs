//! The span answer form: the text to select in (`selection`), the answers so far
//! (`answers`), and the actions (`actions`). Answers are highlighted in the text and kept as
//! the item's draft until submitted; zero, one or many.

mod actions;
mod answers;
mod selection;

pub(crate) use answers::SpanTable;

use super::draft;
use super::sender::Sender;
use actions::SpanActions;
use answers::{count, AnswersTable};
use domain::answer::SpanAnswer;
use domain::spans::slice_cp;
use leptos::prelude::*;
use selection::TextSelection;

#[component]
pub(crate) fn SpanForm(text: String, sender: Sender) -> impl IntoView {
    let original = StoredValue::new(text);
    let answers = RwSignal::new(Vec::<SpanAnswer>::new());
    let note = RwSignal::new(None::<String>);
    let live = sender.live;
    // A draft is taken back only if every answer is still the text at its offsets.
    draft::keep(
        sender.draft(),
        move || Some(answers.get()).filter(|a| !a.is_empty()),
        move |saved: Vec<SpanAnswer>| {
            let fits = original.with_value(|t| {
                saved
                    .iter()
                    .all(|s| slice_cp(t, s.offset, s.length) == Some(s.text.as_str()))
            });
            if fits {
                answers.set(saved);
            }
        },
    );
    // A selected span becomes an answer unless it already is one.
    let add = Callback::new(move |span: Option<SpanAnswer>| {
        let Some(s) = span else {
            note.set(Some("Select some of the text first.".into()));
            return;
        };
        if answers.with_untracked(|l| {
            l.iter()
                .any(|o| o.offset == s.offset && o.length == s.length)
        }) {
            note.set(Some(format!("{:?} is already an answer.", s.text)));
            return;
        }
        note.set(None);
        answers.update(|list| {
            list.push(s.clone());
            list.sort_by_key(|x| (x.offset, x.length));
        });
        live.set(format!(
            "Added {:?}: {}.",
            s.text,
            count(answers.with_untracked(Vec::len))
        ));
    });
    let busy = Signal::derive(move || sender.busy());
    view! {
        <TextSelection text=original answers note busy on_add=add />
        {move || {
            note.get()
                .map(|n| {
                    view! {
                        <p class="note" role="status">
                            {n}
                        </p>
                    }
                })
        }}
        <AnswersTable answers live />
        <SpanActions answers sender />
        {sender.status_view()}
    }
}
