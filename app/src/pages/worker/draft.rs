//! Unsent work kept in the browser: each item's draft answer in `localStorage`, so it survives
//! a reload, Back and a crashed tab, and a leave-page warning while a draft is unsent.

use domain::ids::{AssignmentId, StudyId};
use leptos::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Where the draft of one item of a worker's place is kept: under the place, so a worker who
/// joins in a browser that another worker used never sees their unsent answers (a draft that
/// no longer fits its item is ignored when read back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DraftKey(String);

impl DraftKey {
    pub(crate) fn new(study: StudyId, place: AssignmentId, position: i64) -> Self {
        DraftKey(format!("{}{position}", place_prefix(study, place)))
    }
}

fn place_prefix(study: StudyId, place: AssignmentId) -> String {
    format!("clues-draft:{study}:{place}:")
}

/// Forgets every draft of a place (at its end page: nothing of it is left in the browser).
pub(crate) fn forget_place(study: StudyId, place: AssignmentId) {
    let Some(s) = storage() else { return };
    let prefix = place_prefix(study, place);
    let keys: Vec<String> = (0..s.length().unwrap_or(0))
        .filter_map(|i| s.key(i).ok().flatten())
        .filter(|k| k.starts_with(&prefix))
        .collect();
    for k in keys {
        let _ = s.remove_item(&k);
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn load<T: DeserializeOwned>(key: &DraftKey) -> Option<T> {
    let text = storage()?.get_item(&key.0).ok()??;
    serde_json::from_str(&text).ok()
}

fn store<T: Serialize>(key: &DraftKey, value: &T) {
    if let (Some(s), Ok(text)) = (storage(), serde_json::to_string(value)) {
        let _ = s.set_item(&key.0, &text);
    }
}

/// Forgets the draft (its answer was stored by the server, or can no longer be).
pub(crate) fn clear(key: &DraftKey) {
    if let Some(s) = storage() {
        let _ = s.remove_item(&key.0);
    }
}

fn is_kept(key: &DraftKey) -> bool {
    storage().is_some_and(|s| matches!(s.get_item(&key.0), Ok(Some(_))))
}

/// Keeps a form's unsent answer as the draft of `key` (browser only: effects do not run on the
/// server). First a stored draft is handed to `restore`, which applies it when it still fits
/// the item; from then on every change is stored, and `None` (nothing entered) removes it.
/// While a draft is kept, leaving the page asks the worker first.
pub(crate) fn keep<T>(
    key: DraftKey,
    current: impl Fn() -> Option<T> + Send + Sync + 'static,
    restore: impl Fn(T) + Send + Sync + 'static,
) where
    T: Serialize + DeserializeOwned + 'static,
{
    let stored = key.clone();
    Effect::new(move |started: Option<()>| {
        let now = current();
        if started.is_none() {
            if let Some(saved) = load::<T>(&stored) {
                restore(saved);
            }
            return;
        }
        match now {
            Some(value) => store(&stored, &value),
            None => clear(&stored),
        }
    });
    Effect::new(move |_| {
        let key = key.clone();
        let handle = window_event_listener_untyped("beforeunload", move |ev| {
            if is_kept(&key) {
                ev.prevent_default();
                ask_before_leaving(&ev);
            }
        });
        on_cleanup(move || handle.remove());
    });
}

/// `event.returnValue = ""`, which older browsers need before they ask.
fn ask_before_leaving(ev: &web_sys::Event) {
    use web_sys::wasm_bindgen::JsCast;
    if let Some(ev) = ev.dyn_ref::<web_sys::BeforeUnloadEvent>() {
        ev.set_return_value("");
    }
}
