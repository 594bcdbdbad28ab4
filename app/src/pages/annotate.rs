//! The two annotation interfaces: labels with Help and a confidence scale; span selection by
//! mouse (button, right-click menu) or keyboard alone, listed as Answer / Offset / Length.

use super::browser::{read_selection, set_selection};
use super::study::Sender;
use crate::domain::answer::{Answer, SpanAnswer, CONFIDENCE_LEVELS};
use crate::domain::selection::{display_text, next_word_end, next_word_start, prev_word_start};
use crate::domain::spans::slice_cp;
use crate::domain::task::Label;
use leptos::prelude::*;

fn confidence_name(c: u8) -> &'static str {
    CONFIDENCE_LEVELS
        .iter()
        .find(|(v, _)| *v == c)
        .map_or("", |(_, n)| n)
}

/// A submitted answer as the worker sees it again (offsets in code points, as stored).
pub(crate) fn answer_view(a: &Answer) -> AnyView {
    match a {
        Answer::Label { label, confidence } => view! {
            <p class="your-answer">{label.clone()} <span class="conf">{format!(" (confidence: {})", confidence_name(*confidence))}</span></p>
        }
        .into_any(),
        Answer::Spans { spans } => view! { <SpanTable spans=spans.clone() on_delete=None/> }.into_any(),
        Answer::NoAnswer => view! { <p class="your-answer">"No answer"</p> }.into_any(),
        Answer::Skip { .. } => view! { <p class="your-answer">"Skipped"</p> }.into_any(),
        Answer::Text { text } => view! { <p class="your-answer text-answer">{text.trim().to_string()}</p> }.into_any(),
    }
}

/// Text-to-text tasks: a free-text answer box, Submit and Skip.
#[component]
pub(crate) fn TextForm(sender: Sender) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let submit = move |_| {
        let t = text.get_untracked();
        if !t.trim().is_empty() {
            sender.send(Answer::Text { text: t });
        }
    };
    let skip = move |_| sender.send(Answer::Skip { confidence: None });
    view! {
        <label class="free-text">"Your answer"
            <textarea name="answer" rows="3" maxlength=crate::domain::answer::MAX_TEXT.to_string() bind:value=text></textarea>
        </label>
        <div class="buttons">
            <button class="submit" on:click=submit
                disabled=move || text.get().trim().is_empty() || sender.pending.get()>"Submit"</button>
            <button class="skip" on:click=skip disabled=move || sender.pending.get()>"Skip"</button>
        </div>
        {sender.status_view()}
    }
}

#[component]
fn SpanTable(spans: Vec<SpanAnswer>, on_delete: Option<Callback<usize>>) -> impl IntoView {
    view! {
        <table class="grid answers">
            <thead><tr><th>"Answer"</th><th>"Offset"</th><th>"Length"</th>{on_delete.map(|_| view! { <th>"Delete"</th> })}</tr></thead>
            <tbody>
                {spans.into_iter().enumerate().map(|(i, s)| view! {
                    <tr>
                        <td class="answer-text">{s.text}</td>
                        <td class="num answer-offset">{s.offset}</td>
                        <td class="num answer-length">{s.length}</td>
                        {on_delete.map(|cb| view! {
                            <td><button class="delete" on:click=move |_| cb.run(i)>"Delete"</button></td>
                        })}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
pub(crate) fn LabelForm(labels: Vec<Label>, sender: Sender) -> impl IntoView {
    let choice = RwSignal::new(None::<String>);
    let confidence = RwSignal::new(None::<u8>);
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
            {labels.into_iter().map(|l| {
                let name = l.name.clone();
                let this = l.name.clone();
                view! {
                    <div class="option">
                        <label>
                            // `checked` follows the form's state: the page reuses these inputs for
                            // the next item, whose form starts empty.
                            <input type="radio" name="label" value=l.name.clone()
                                prop:checked=move || choice.with(|c| c.as_deref() == Some(this.as_str()))
                                on:change=move |_| choice.set(Some(name.clone()))/>
                            " " {l.name.clone()}
                        </label>
                        <details class="help">
                            <summary>"Help"</summary>
                            <p class="definition">{l.definition}</p>
                            <p class="example">"Example: " {l.example}</p>
                        </details>
                    </div>
                }
            }).collect_view()}
        </fieldset>
        <fieldset class="confidence">
            <legend>"\"I am confident in my answer\""</legend>
            {CONFIDENCE_LEVELS.iter().map(|&(v, name)| view! {
                <label>
                    <input type="radio" name="confidence" value=v
                        prop:checked=move || confidence.get() == Some(v)
                        on:change=move |_| confidence.set(Some(v))/>
                    " " {name}
                </label>
            }).collect_view()}
        </fieldset>
        <div class="buttons">
            <button class="submit" on:click=submit
                disabled=move || choice.get().is_none() || confidence.get().is_none() || sender.pending.get()>
                "Submit"
            </button>
            <button class="skip" on:click=skip disabled=move || sender.pending.get()>"Skip"</button>
        </div>
        {sender.status_view()}
    }
}

/// Trims whitespace from both ends of [start, end) in code points of `text`.
fn trimmed(text: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut s, mut e) = (start.min(chars.len()), end.min(chars.len()));
    while s < e && chars[s].is_whitespace() {
        s += 1;
    }
    while e > s && chars[e - 1].is_whitespace() {
        e -= 1;
    }
    (s < e).then_some((s, e))
}

#[component]
pub(crate) fn SpanForm(text: String, sender: Sender) -> impl IntoView {
    let original = StoredValue::new(text.clone());
    let answers = RwSignal::new(Vec::<SpanAnswer>::new());
    // (anchor, focus) in code points of the stored text.
    let selection = RwSignal::new(None::<(usize, usize)>);
    let menu = RwSignal::new(None::<(i32, i32)>);
    let note = RwSignal::new(None::<String>);
    let context_ref = NodeRef::<leptos::html::Div>::new();

    let capture = move || {
        if let Some(el) = context_ref.get_untracked() {
            original.with_value(|t| selection.set(read_selection(&el, t)));
        }
    };
    let add = move || {
        menu.set(None);
        let Some((a, f)) = selection.get_untracked() else {
            note.set(Some("Select some of the text first.".into()));
            return;
        };
        let span = original.with_value(|t| {
            trimmed(t, a.min(f), a.max(f)).and_then(|(s, e)| {
                slice_cp(t, s, e - s).map(|x| SpanAnswer {
                    text: x.to_string(),
                    offset: s,
                    length: e - s,
                })
            })
        });
        match span {
            None => note.set(Some("Select some of the text first.".into())),
            Some(s)
                if answers.with_untracked(|list| {
                    list.iter()
                        .any(|o| o.offset == s.offset && o.length == s.length)
                }) =>
            {
                note.set(Some(format!("{:?} is already an answer.", s.text)))
            }
            Some(s) => {
                note.set(None);
                answers.update(|list| {
                    list.push(s);
                    list.sort_by_key(|x| (x.offset, x.length));
                });
            }
        }
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let Some(el) = context_ref.get_untracked() else {
            return;
        };
        let key = ev.key();
        if key == "Escape" {
            menu.set(None);
            return;
        }
        if key == "Enter" || key.eq_ignore_ascii_case("a") {
            ev.prevent_default();
            capture();
            add();
            return;
        }
        let len = original.with_value(|t| t.chars().count());
        let (anchor, focus) = original
            .with_value(|t| read_selection(&el, t))
            .or(selection.get_untracked())
            .unwrap_or((0, 0));
        let moved = original.with_value(|t| match key.as_str() {
            "ArrowRight" if ev.shift_key() => Some((anchor, next_word_end(t, focus))),
            "ArrowLeft" if ev.shift_key() => Some((anchor, prev_word_start(t, focus))),
            "ArrowRight" => {
                let c = next_word_start(t, anchor.max(focus));
                Some((c, c))
            }
            "ArrowLeft" => {
                let c = prev_word_start(t, anchor.min(focus));
                Some((c, c))
            }
            "Home" => Some((0, 0)),
            "End" => Some((len, len)),
            _ => None,
        });
        if let Some((a, f)) = moved {
            ev.prevent_default();
            original.with_value(|t| set_selection(&el, t, a, f));
            selection.set(Some((a, f)));
        }
    };
    let on_menu = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        capture();
        menu.set(Some((ev.client_x(), ev.client_y())));
    };
    let delete = Callback::new(move |i: usize| {
        answers.update(|list| {
            if i < list.len() {
                list.remove(i);
            }
        })
    });
    let selected_text = move || {
        selection.get().and_then(|(a, f)| {
            original.with_value(|t| {
                trimmed(t, a.min(f), a.max(f))
                    .and_then(|(s, e)| slice_cp(t, s, e - s).map(str::to_string))
            })
        })
    };
    let busy = move || sender.pending.get();
    view! {
        <div class="context span-context" tabindex="0" role="textbox" aria-readonly="true" aria-multiline="true"
            aria-label="The text: select your answer here"
            node_ref=context_ref
            on:mouseup=move |_| capture()
            on:keydown=on_key
            on:contextmenu=on_menu>
            {display_text(&text)}
        </div>
        {move || menu.get().map(|(x, y)| view! {
            <div class="context-menu" role="menu" style=format!("left: {x}px; top: {y}px")>
                <button role="menuitem" class="menu-answer"
                    on:mousedown=|ev| ev.prevent_default()
                    on:click=move |_| add()>"Answer"</button>
            </div>
        })}
        <p class="selected">"Selected: "
            {move || match selected_text() {
                Some(t) => view! { <q class="selected-text">{t}</q> }.into_any(),
                None => view! { <span class="hint">"nothing"</span> }.into_any(),
            }}
        </p>
        <div class="buttons">
            <button class="add-answer" on:mousedown=|ev| ev.prevent_default() on:click=move |_| add()>
                "Add as answer (A)"
            </button>
        </div>
        {move || note.get().map(|n| view! { <p class="note" role="status">{n}</p> })}
        {move || view! { <SpanTable spans=answers.get() on_delete=Some(delete)/> }}
        <div class="buttons">
            <button class="submit" disabled=move || answers.with(|a| a.is_empty()) || busy()
                on:click=move |_| sender.send(Answer::Spans { spans: answers.get_untracked() })>
                "Submit answers"
            </button>
            <button class="no-answer" disabled=move || answers.with(|a| !a.is_empty()) || busy()
                on:click=move |_| sender.send(Answer::NoAnswer)>
                "No answer in this text"
            </button>
            <button class="skip" disabled=busy on:click=move |_| sender.send(Answer::Skip { confidence: None })>
                "Skip"
            </button>
        </div>
        {sender.status_view()}
    }
}

#[cfg(test)]
mod tests {
    use super::trimmed;

    #[test]
    fn selections_lose_surrounding_whitespace_only() {
        let t = "a  José\r\n b";
        assert_eq!(trimmed(t, 1, 9), Some((3, 7)));
        assert_eq!(trimmed(t, 1, 3), None);
        assert_eq!(trimmed(t, 0, 99), Some((0, 11)));
    }
}
