//! The table of span answers (Answer / Position / Remove): the worker's own, which they may
//! remove one by one (the span form's), or a revealed gold's, read only.

use domain::answer::SpanAnswer;
use leptos::prelude::*;

/// The spans as a table; with `on_delete`, each row has a Remove button.
#[component]
pub(crate) fn SpanTable(
    spans: Vec<SpanAnswer>,
    on_delete: Option<Callback<usize>>,
) -> impl IntoView {
    view! {
        <table class="grid answers" aria-label="Your answers">
            <thead>
                <tr>
                    <th>"Answer"</th>
                    <th title="Where the answer starts (characters from the start of the text) and how long it is">
                        "Position"
                    </th>
                    {on_delete.map(|_| view! { <th>"Remove"</th> })}
                </tr>
            </thead>
            <tbody>
                {spans
                    .into_iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let label = format!("Remove {:?}", s.text);
                        view! {
                            <tr>
                                <td class="answer-text">{s.text}</td>
                                <td class="answer-position">
                                    "from character "<span class="answer-offset">{s.offset}</span>
                                    ", " <span class="answer-length">{s.length}</span>" long"
                                </td>
                                {on_delete
                                    .map(|cb| {
                                        view! {
                                            <td>
                                                <button
                                                    class="delete"
                                                    aria-label=label
                                                    on:click=move |_| cb.run(i)
                                                >
                                                    "Remove"
                                                </button>
                                            </td>
                                        }
                                    })}
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}
