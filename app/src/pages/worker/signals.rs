//! What the page records while an item is shown, sent with its answer: stretches hidden or
//! out of focus, copies (and whether they hold item text), pastes, the first input, active
//! time. Counts and durations only; it never blocks copying, pasting or leaving the page.

use domain::authenticity::{copied_from_item, ItemSignals};
use leptos::prelude::*;
use web_sys::wasm_bindgen::closure::Closure;
use web_sys::wasm_bindgen::JsCast;

/// The page's record of one item since its showing (times of `performance.now()`, in ms).
#[derive(Clone, Debug, Default)]
struct Record {
    shown: f64,
    hidden: bool,
    blurred: bool,
    away_since: Option<f64>,
    away_ms: f64,
    first_input: Option<f64>,
    s: ItemSignals,
}

impl Record {
    fn away(&self) -> bool {
        self.hidden || self.blurred
    }

    /// Applies a change of visibility or focus at `now`: a stretch away starts or ends.
    fn set(&mut self, now: f64, hidden: Option<bool>, blurred: Option<bool>) {
        let was = self.away();
        self.hidden = hidden.unwrap_or(self.hidden);
        self.blurred = blurred.unwrap_or(self.blurred);
        match (was, self.away()) {
            (false, true) => {
                self.s.away_count += 1;
                self.away_since = Some(now);
            }
            (true, false) => {
                if let Some(since) = self.away_since.take() {
                    self.away_ms += (now - since).max(0.0);
                }
            }
            _ => {}
        }
    }

    /// The signals as of `now`, each duration within the wall time.
    fn snapshot(&self, now: f64) -> ItemSignals {
        let wall = (now - self.shown).max(0.0);
        let open = self.away_since.map_or(0.0, |since| (now - since).max(0.0));
        let away = (self.away_ms + open).min(wall);
        ItemSignals {
            away_ms: away.round() as u64,
            wall_ms: wall.round() as u64,
            active_ms: (wall - away).max(0.0).round() as u64,
            first_input_ms: self
                .first_input
                .map(|t| ((t - self.shown).max(0.0).min(wall)).round() as u64),
            ..self.s
        }
    }
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The record of the item on the page; a copy of the handle is all a form needs.
#[derive(Clone, Copy)]
pub(crate) struct Signals(StoredValue<Record>);

impl Signals {
    /// Starts recording for an item whose texts (context parts, question) are `texts`; the
    /// listeners go with the calling reactive owner (the item's view).
    pub fn new(texts: Vec<String>) -> Self {
        let me = Signals(StoredValue::new(Record::default()));
        Effect::new(move |_| me.listen(texts.clone()));
        me
    }

    /// What to send with the answer (in the browser; `None` while the server renders).
    pub fn snapshot(self) -> Option<ItemSignals> {
        let r = self.0.get_value();
        (r.shown > 0.0).then(|| r.snapshot(now()))
    }

    fn update(self, f: impl FnOnce(&mut Record)) {
        self.0.update_value(f);
    }

    fn listen(self, texts: Vec<String>) {
        let Some(window) = web_sys::window() else {
            return;
        };
        let Some(doc) = window.document() else {
            return;
        };
        let start = now().max(f64::MIN_POSITIVE);
        self.update(|r| {
            *r = Record {
                shown: start,
                ..Record::default()
            };
            r.set(start, Some(doc.hidden()), None);
        });
        let d = doc.clone();
        let visibility = move |_: web_sys::Event| {
            let hidden = d.hidden();
            self.update(|r| r.set(now(), Some(hidden), None));
        };
        // The window's own focus only: an input's blur and focus reach the window too (in the
        // capture phase), and moving between inputs is not leaving the page.
        let of_window = |e: &web_sys::Event| {
            e.target()
                .is_some_and(|t| t.is_instance_of::<web_sys::Window>())
        };
        let blur = move |e: web_sys::Event| {
            if of_window(&e) {
                self.update(|r| r.set(now(), None, Some(true)));
            }
        };
        let focus = move |e: web_sys::Event| {
            if of_window(&e) {
                self.update(|r| r.set(now(), None, Some(false)));
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
            self.update(|r| {
                r.s.copy_count += 1;
                r.s.copy_chars = r.s.copy_chars.saturating_add(chars);
                r.s.copy_from_item += u32::from(from_item);
            });
        };
        let paste = move |e: web_sys::Event| {
            // Only the length of what is pasted is read.
            let chars = e
                .dyn_ref::<web_sys::ClipboardEvent>()
                .and_then(|c| c.clipboard_data())
                .and_then(|d| d.get_data("text").ok())
                .map_or(0, |t| t.chars().count() as u32);
            self.update(|r| {
                r.s.paste_count += 1;
                r.s.paste_chars = r.s.paste_chars.saturating_add(chars);
            });
        };
        let input = move |_: web_sys::Event| {
            self.update(|r| {
                if r.first_input.is_none() {
                    r.first_input = Some(now());
                }
            });
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_away_are_counted_once_and_bounded_by_the_wall_time() {
        let mut r = Record {
            shown: 1_000.0,
            ..Record::default()
        };
        // Switching tabs fires blur, then visibilitychange: one stretch.
        r.set(2_000.0, None, Some(true));
        r.set(2_010.0, Some(true), None);
        r.set(20_000.0, Some(false), None);
        r.set(20_005.0, None, Some(false));
        let s = r.snapshot(25_000.0);
        assert_eq!(
            (s.away_count, s.away_ms, s.wall_ms, s.active_ms),
            (1, 18_005, 24_000, 5_995)
        );
        assert_eq!(s.check(), Ok(()));
        // Submitted while away (a click from another window): the open stretch counts.
        r.set(26_000.0, None, Some(true));
        let s = r.snapshot(27_000.0);
        assert_eq!((s.away_count, s.away_ms), (2, 19_005));
        assert_eq!(s.check(), Ok(()));
    }
}
