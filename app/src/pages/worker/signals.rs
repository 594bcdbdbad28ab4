//! What the page records while an item is shown, sent with its answer: the page's events
//! (visibility, the window's focus, copies and whether they hold item text, pastes, inputs) fed
//! to the domain's `Recorder`. Counts and durations only; it never blocks copying, pasting or
//! leaving the page.

use domain::authenticity::{copied_from_item, ItemSignals, Recorder};
use leptos::prelude::*;
use web_sys::wasm_bindgen::closure::Closure;
use web_sys::wasm_bindgen::JsCast;

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The record of the item on the page (the domain's `Recorder`, fed by the page's events);
/// a copy of the handle is all a form needs. `None` until the listeners are on.
#[derive(Clone, Copy)]
pub(crate) struct Signals(StoredValue<Option<Recorder>>);

impl Signals {
    /// Starts recording for an item whose texts (context parts, question) are `texts`; the
    /// listeners go with the calling reactive owner (the item's view).
    pub fn new(texts: Vec<String>) -> Self {
        let me = Signals(StoredValue::new(None));
        Effect::new(move |_| me.listen(texts.clone()));
        me
    }

    /// What to send with the answer (in the browser; `None` while the server renders).
    pub fn snapshot(self) -> Option<ItemSignals> {
        self.0.with_value(|r| r.as_ref().map(|r| r.snapshot(now())))
    }

    fn update(self, f: impl FnOnce(&mut Recorder)) {
        self.0.update_value(|r| {
            if let Some(r) = r {
                f(r)
            }
        });
    }

    fn listen(self, texts: Vec<String>) {
        let Some(window) = web_sys::window() else {
            return;
        };
        let Some(doc) = window.document() else {
            return;
        };
        self.0.set_value(Some(Recorder::new(now(), doc.hidden())));
        let d = doc.clone();
        let visibility = move |_: web_sys::Event| {
            let hidden = d.hidden();
            self.update(|r| r.visibility(now(), hidden));
        };
        // The window's own focus only: an input's blur and focus reach the window too (in the
        // capture phase), and moving between inputs is not leaving the page.
        let of_window = |e: &web_sys::Event| {
            e.target()
                .is_some_and(|t| t.is_instance_of::<web_sys::Window>())
        };
        let blur = move |e: web_sys::Event| {
            if of_window(&e) {
                self.update(|r| r.focus(now(), false));
            }
        };
        let focus = move |e: web_sys::Event| {
            if of_window(&e) {
                self.update(|r| r.focus(now(), true));
            }
        };
        let copy = move |_: web_sys::Event| {
            let copied = web_sys::window()
                .and_then(|w| w.get_selection().ok().flatten())
                .and_then(|s| s.to_string().as_string())
                .unwrap_or_default();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let from_item = copied_from_item(&copied, &refs);
            let chars = copied.chars().count() as u32;
            self.update(|r| r.copy(now(), chars, from_item));
        };
        let paste = move |e: web_sys::Event| {
            // Only the length of what is pasted is read.
            let chars = e
                .dyn_ref::<web_sys::ClipboardEvent>()
                .and_then(|c| c.clipboard_data())
                .and_then(|d| d.get_data("text").ok())
                .map_or(0, |t| t.chars().count() as u32);
            self.update(|r| r.paste(chars));
        };
        let input = move |_: web_sys::Event| self.update(|r| r.input(now()));
        let doc_t: web_sys::EventTarget = doc.into();
        let win_t: web_sys::EventTarget = window.into();
        let mut hooks: Vec<(
            web_sys::EventTarget,
            &'static str,
            web_sys::wasm_bindgen::JsValue,
        )> = Vec::new();
        let mut on =
            |t: &web_sys::EventTarget, name: &'static str, f: Box<dyn Fn(web_sys::Event)>| {
                let cb = Closure::<dyn Fn(web_sys::Event)>::wrap(f).into_js_value();
                // Capture: a form that stops an event still lets the page count it.
                let _ = t.add_event_listener_with_callback_and_bool(name, cb.unchecked_ref(), true);
                hooks.push((t.clone(), name, cb));
            };
        on(&doc_t, "visibilitychange", Box::new(visibility));
        on(&win_t, "blur", Box::new(blur));
        on(&win_t, "focus", Box::new(focus));
        on(&doc_t, "copy", Box::new(copy));
        on(&doc_t, "paste", Box::new(paste));
        for name in ["keydown", "pointerdown", "touchstart"] {
            on(&doc_t, name, Box::new(input));
        }
        let hooks = send_wrapper::SendWrapper::new(hooks);
        on_cleanup(move || {
            for (t, name, cb) in hooks.iter() {
                let _ =
                    t.remove_event_listener_with_callback_and_bool(name, cb.unchecked_ref(), true);
            }
        });
    }
}
