//! The span form itself: select in the text, add the selection as an answer, remove answers,
//! submit or skip; answers are highlighted in the text and kept as the item's draft.

use super::super::draft;
use super::super::sender::Sender;
use super::actions::SpanActions;
use super::answers::SpanTable;
use super::selection::TextSelection;
use domain::answer::SpanAnswer;
use domain::spans::slice_cp;
use leptos::prelude::*;

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
            // Kept in text order: inserted where it belongs.
            let at = list.partition_point(|x| (x.offset, x.length) < (s.offset, s.length));
            list.insert(at, s.clone());
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

/// How many answers, in words (for the live region).
fn count(n: usize) -> String {
    format!("{n} answer{}", if n == 1 { "" } else { "s" })
}

/// The worker's answers so far, each removable; a removal is said in the live region.
#[component]
fn AnswersTable(answers: RwSignal<Vec<SpanAnswer>>, live: RwSignal<String>) -> impl IntoView {
    let delete = Callback::new(move |i: usize| {
        let mut removed = None;
        answers.update(|list| {
            if i < list.len() {
                removed = Some(list.remove(i));
            }
        });
        if let Some(r) = removed {
            live.set(format!(
                "Removed {:?}: {}.",
                r.text,
                count(answers.with_untracked(Vec::len))
            ));
        }
    });
    move || view! { <SpanTable spans=answers.get() on_delete=Some(delete) /> }
}
