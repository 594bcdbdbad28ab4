//! The few DOM calls every worker page needs: moving focus, and random ids for submissions
//! (the span form's selection calls are `span_form::dom`).

use web_sys::wasm_bindgen::JsCast;

/// Focuses the first element matching `selector` (headings carry `tabindex="-1"`).
pub fn focus_first(selector: &str) {
    let el = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(el) = el {
        let _ = el.focus();
    }
}

/// A random id for a submission (crypto.getRandomValues works on plain HTTP too).
pub fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if let Some(c) = web_sys::window().and_then(|w| w.crypto().ok()) {
        let _ = c.get_random_values_with_u8_array(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
