//! Selecting an answer in the text: by mouse, touch handles (read on `selectionchange`) or the
//! keyboard (words, characters, sentences, a find box), with the answers so far marked in the
//! text, what is selected said, and the Add button (or A or Enter, pressed alone). The
//! browser's own shortcuts (Ctrl+A, Ctrl+C) and context menu (Copy) are left to the browser.

use super::dom::{on_selection_change, read_selection, set_selection};
use domain::answer::SpanAnswer;
use domain::selection::{
    find_next_by, marked_segments, next_sentence_start, next_word_end, next_word_start,
    prev_sentence_start, prev_word_start,
};
use domain::spans::slice_cp;
use leptos::either::Either;
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

/// One character right or left of a code point: in the browser by its own segmenter (see
/// `dom::step_char`), in the native tests by domain's.
#[cfg(target_arch = "wasm32")]
fn next_char(t: &str, cp: usize) -> usize {
    super::dom::step_char(t, cp, true)
}
#[cfg(target_arch = "wasm32")]
fn prev_char(t: &str, cp: usize) -> usize {
    super::dom::step_char(t, cp, false)
}
#[cfg(not(target_arch = "wasm32"))]
use domain::selection::{next_char, prev_char};

/// Trims whitespace from both ends of [start, end) in code points of `text`.
pub(super) fn trimmed(text: &str, start: usize, end: usize) -> Option<(usize, usize)> {
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

/// A character's lower case, as the find box compares letters: ASCII here, others by the
/// browser (`String.prototype.toLowerCase`, Unicode's full mapping as Rust's `char::to_lowercase`
/// has it), whose case tables the bundle then need not carry.
fn lower_case(c: char) -> String {
    if c.is_ascii() {
        c.to_ascii_lowercase().to_string()
    } else {
        web_sys::js_sys::JsString::from(c).to_lower_case().into()
    }
}

/// What a key pressed in the text does: add the selection (A or Enter alone), move or extend
/// the selection (see `moved`), or nothing (the browser's own: any key with Ctrl or Meta, such
/// as Ctrl+A to select all, and A or Enter with a modifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KeyAction {
    Add,
    Move,
    Browser,
}

/// The modifiers held with a key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Mods {
    pub ctrl: bool,
    pub meta: bool,
    pub alt: bool,
    pub shift: bool,
}

pub(super) fn key_action(key: &str, m: Mods) -> KeyAction {
    if m.ctrl || m.meta {
        return KeyAction::Browser;
    }
    let add_key = key == "Enter" || key.eq_ignore_ascii_case("a");
    match (add_key, m.alt || m.shift) {
        (true, false) => KeyAction::Add,
        (true, true) => KeyAction::Browser,
        (false, _) => KeyAction::Move,
    }
}

/// The selection (anchor, focus) after `key`, or `None` for a key that does not move it.
/// Arrows move by word, with Alt by character; Page Up/Down by sentence; Home/End to the
/// ends; Shift extends the selection from its anchor.
pub(super) fn moved(
    t: &str,
    key: &str,
    shift: bool,
    alt: bool,
    (anchor, focus): (usize, usize),
) -> Option<(usize, usize)> {
    let len = t.chars().count();
    let (lo, hi) = (anchor.min(focus), anchor.max(focus));
    let to = match (key, shift, alt) {
        ("ArrowRight", true, true) => return Some((anchor, next_char(t, focus))),
        ("ArrowLeft", true, true) => return Some((anchor, prev_char(t, focus))),
        ("ArrowRight", true, false) => return Some((anchor, next_word_end(t, focus))),
        ("ArrowLeft", true, false) => return Some((anchor, prev_word_start(t, focus))),
        ("PageDown", true, _) => return Some((anchor, next_sentence_start(t, focus))),
        ("PageUp", true, _) => return Some((anchor, prev_sentence_start(t, focus))),
        ("Home", true, _) => return Some((anchor, 0)),
        ("End", true, _) => return Some((anchor, len)),
        ("ArrowRight", false, true) => next_char(t, focus),
        ("ArrowLeft", false, true) => prev_char(t, focus),
        ("ArrowRight", false, false) => next_word_start(t, hi),
        ("ArrowLeft", false, false) => prev_word_start(t, lo),
        ("PageDown", false, _) => next_sentence_start(t, hi),
        ("PageUp", false, _) => prev_sentence_start(t, lo),
        ("Home", false, _) => 0,
        ("End", false, _) => len,
        _ => return None,
    };
    Some((to, to))
}

/// The trimmed text between `a` and `f` (either order), with its offset and length.
fn span_of(t: &str, a: usize, f: usize) -> Option<SpanAnswer> {
    let (s, e) = trimmed(t, a.min(f), a.max(f))?;
    slice_cp(t, s, e - s).map(|x| SpanAnswer {
        text: x.to_string(),
        offset: s,
        length: e - s,
    })
}

/// The selection's state and what moves it: one copyable handle for every event handler.
#[derive(Clone, Copy)]
struct Selector {
    text: StoredValue<String>,
    // (anchor, focus) in code points of the stored text.
    selection: RwSignal<Option<(usize, usize)>>,
    find: RwSignal<String>,
    note: RwSignal<Option<String>>,
    context_ref: NodeRef<leptos::html::Div>,
    on_add: Callback<Option<SpanAnswer>>,
}

impl Selector {
    /// The document's selection inside the text, if any.
    fn read(self) -> Option<(usize, usize)> {
        let el = self.context_ref.get_untracked()?;
        self.text.with_value(|t| read_selection(&el, t))
    }

    fn capture(self) {
        self.selection.set(self.read());
    }

    fn show(self, a: usize, f: usize) {
        if let Some(el) = self.context_ref.get_untracked() {
            self.text.with_value(|t| set_selection(&el, t, a, f));
        }
        self.selection.set(Some((a, f)));
    }

    fn add(self) {
        let span = self
            .selection
            .get_untracked()
            .and_then(|(a, f)| self.text.with_value(|t| span_of(t, a, f)));
        self.on_add.run(span);
    }

    /// A key in the text: Enter or A alone adds the selection, the browser keeps its own
    /// shortcuts, the others move or extend the selection (see `key_action`, `moved`).
    fn key(self, ev: KeyboardEvent) {
        let key = ev.key();
        let mods = Mods {
            ctrl: ev.ctrl_key(),
            meta: ev.meta_key(),
            alt: ev.alt_key(),
            shift: ev.shift_key(),
        };
        match key_action(&key, mods) {
            KeyAction::Browser => return,
            KeyAction::Add => {
                ev.prevent_default();
                self.capture();
                self.add();
                return;
            }
            KeyAction::Move => {}
        }
        let current = self
            .read()
            .or(self.selection.get_untracked())
            .unwrap_or((0, 0));
        let next = self
            .text
            .with_value(|t| moved(t, &key, ev.shift_key(), ev.alt_key(), current));
        if let Some((a, f)) = next {
            ev.prevent_default();
            self.show(a, f);
        }
    }

    /// Enter in the find box: the next match after the selection is selected.
    fn find_next(self, ev: KeyboardEvent) {
        if ev.key() != "Enter" {
            return;
        }
        ev.prevent_default();
        let from = self
            .selection
            .get_untracked()
            .map_or(0, |(a, f)| a.min(f) + 1);
        let found = self
            .text
            .with_value(|t| find_next_by(t, &self.find.get_untracked(), from, lower_case));
        match found {
            Some((s, l)) => {
                self.show(s, s + l);
                self.note.set(Some(
                    "Found. Tab to \"Add as answer\", or Enter for the next match.".into(),
                ));
            }
            None => self.note.set(Some("Not found in the text.".into())),
        }
    }

    fn selected_text(self) -> Option<String> {
        let (a, f) = self.selection.get()?;
        self.text.with_value(|t| span_of(t, a, f)).map(|s| s.text)
    }
}

/// The text with the answers so far marked.
fn marked_text(text: StoredValue<String>, answers: RwSignal<Vec<SpanAnswer>>) -> impl IntoView {
    move || {
        answers
            .with(|a| {
                text.with_value(|t| marked_segments(t, a.iter().map(|s| (s.offset, s.length))))
            })
            .into_iter()
            .map(|(piece, marked)| match marked {
                true => Either::Left(view! { <mark class="answer-mark">{piece}</mark> }),
                false => Either::Right(piece),
            })
            .collect_view()
    }
}

/// The text to select in; `on_add` gets the selected span (`None`: nothing is selected).
#[component]
pub(super) fn TextSelection(
    text: StoredValue<String>,
    answers: RwSignal<Vec<SpanAnswer>>,
    note: RwSignal<Option<String>>,
    busy: Signal<bool>,
    on_add: Callback<Option<SpanAnswer>>,
) -> impl IntoView {
    let sel = Selector {
        text,
        selection: RwSignal::new(None),
        find: RwSignal::new(String::new()),
        note,
        context_ref: NodeRef::new(),
        on_add,
    };
    // Touch handles (and every other way of selecting) change the document's selection; a
    // selection outside the text (a tap on a button) leaves the last one in place.
    Effect::new(move |_| {
        on_selection_change(move || {
            if let Some(s) = sel.read() {
                sel.selection.set(Some(s));
            }
        })
    });
    view! {
        <div
            class="context span-context"
            tabindex="0"
            role="textbox"
            aria-readonly="true"
            aria-multiline="true"
            aria-label="The text: select your answer here"
            node_ref=sel.context_ref
            on:mouseup=move |_| sel.capture()
            on:keydown=move |ev| sel.key(ev)
        >
            {marked_text(text, answers)}
        </div>
        <label class="find">
            "Find in the text"
            <input
                type="search"
                class="find-input"
                bind:value=sel.find
                on:keydown=move |ev| sel.find_next(ev)
                placeholder="type words, press Enter"
                disabled=busy
            />
        </label>
        <p class="selected" aria-live="polite">
            "Selected: "
            {move || match sel.selected_text() {
                Some(t) => Either::Left(view! { <q class="selected-text">{t}</q> }),
                None => Either::Right(view! { <span class="hint">"nothing"</span> }),
            }}
        </p>
        <div class="buttons add-row">
            <button
                class="add-answer"
                disabled=busy
                on:mousedown=|ev| ev.prevent_default()
                on:click=move |_| sel.add()
            >
                "Add as answer (A)"
            </button>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::{key_action, moved, trimmed, KeyAction, Mods};

    #[test]
    fn selections_lose_surrounding_whitespace_only() {
        let t = "a  José\r\n b";
        assert_eq!(trimmed(t, 1, 9), Some((3, 7)));
        assert_eq!(trimmed(t, 1, 3), None);
        assert_eq!(trimmed(t, 0, 99), Some((0, 11)));
    }

    #[test]
    fn only_a_or_enter_alone_adds_an_answer() {
        let alone = Mods::default();
        let ctrl = Mods {
            ctrl: true,
            ..alone
        };
        let meta = Mods {
            meta: true,
            ..alone
        };
        assert_eq!(key_action("a", alone), KeyAction::Add);
        assert_eq!(key_action("A", alone), KeyAction::Add);
        assert_eq!(key_action("Enter", alone), KeyAction::Add);
        // Select all, copy, and the same on a Mac: the browser's.
        for m in [ctrl, meta] {
            for key in ["a", "A", "c", "Enter", "ArrowRight"] {
                assert_eq!(key_action(key, m), KeyAction::Browser, "{key} {m:?}");
            }
        }
        let shifted = Mods {
            shift: true,
            ..alone
        };
        assert_eq!(key_action("A", shifted), KeyAction::Browser);
        assert_eq!(key_action("ArrowRight", shifted), KeyAction::Move);
    }

    #[test]
    fn keys_move_and_extend_the_selection() {
        let t = "Anna's cat. It ran.";
        // Alt+Shift+→ takes one character at a time: "Anna" without "'s".
        let mut sel = (0, 0);
        for _ in 0..4 {
            sel = moved(t, "ArrowRight", true, true, sel).unwrap();
        }
        assert_eq!(sel, (0, 4));
        assert_eq!(moved(t, "ArrowRight", true, false, (0, 0)), Some((0, 6)));
        assert_eq!(moved(t, "PageDown", false, false, (0, 0)), Some((12, 12)));
        assert_eq!(moved(t, "PageDown", true, false, (12, 12)), Some((12, 19)));
        assert_eq!(moved(t, "ArrowLeft", false, true, (5, 5)), Some((4, 4)));
        assert_eq!(moved(t, "End", true, false, (3, 3)), Some((3, 19)));
        assert_eq!(moved(t, "x", false, false, (3, 3)), None);
    }
}
