//! The few DOM calls the annotation UI needs: reading and setting the selection inside the
//! context element in code points of the stored text, and random ids for submissions.

use crate::domain::selection::{cp_to_dom, dom_to_cp};
use web_sys::wasm_bindgen::JsCast;

/// UTF-16 offset of (`node`, `offset`) from the start of `root`'s text, if inside `root`.
fn offset_in(root: &web_sys::Node, node: &web_sys::Node, offset: u32) -> Option<u32> {
    if !root.contains(Some(node)) {
        return None;
    }
    let range = web_sys::window()?.document()?.create_range().ok()?;
    range.select_node_contents(root).ok()?;
    range.set_end(node, offset).ok()?;
    Some(String::from(range.to_string()).encode_utf16().count() as u32)
}

/// The selection inside `root` as (anchor, focus) code points of `original` (the stored
/// context; `root` shows its display form). A selection that leaves `root` is clamped to it.
pub fn read_selection(root: &web_sys::Element, original: &str) -> Option<(usize, usize)> {
    let sel = web_sys::window()?.get_selection().ok()??;
    if sel.range_count() == 0 {
        return None;
    }
    let root_node: &web_sys::Node = root.unchecked_ref();
    let range = sel.get_range_at(0).ok()?;
    let total = root
        .text_content()
        .unwrap_or_default()
        .encode_utf16()
        .count() as u32;
    let start = offset_in(
        root_node,
        &range.start_container().ok()?,
        range.start_offset().ok()?,
    )
    .or_else(|| (range.compare_point(root_node, 0).ok()? < 0).then_some(0))?;
    let end = offset_in(
        root_node,
        &range.end_container().ok()?,
        range.end_offset().ok()?,
    )
    .or_else(|| (range.compare_point(root_node, 0).ok()? > 0).then_some(total))?;
    let (s, e) = (
        dom_to_cp(original, start as usize, false),
        dom_to_cp(original, end as usize, true),
    );
    // Keep the direction for keyboard extension.
    let backwards = sel
        .anchor_node()
        .zip(sel.focus_node())
        .and_then(|(a, f)| {
            let a = offset_in(root_node, &a, sel.anchor_offset())?;
            let f = offset_in(root_node, &f, sel.focus_offset())?;
            Some(f < a)
        })
        .unwrap_or(false);
    Some(if backwards { (e, s) } else { (s, e) })
}

/// Shows the selection (anchor, focus), in code points of `original`, inside `root`, whose
/// only child is the text node of the displayed context.
pub fn set_selection(root: &web_sys::Element, original: &str, anchor: usize, focus: usize) {
    let Some(text) = root.first_child() else {
        return;
    };
    let Some(sel) = web_sys::window().and_then(|w| w.get_selection().ok().flatten()) else {
        return;
    };
    let a = cp_to_dom(original, anchor) as u32;
    let f = cp_to_dom(original, focus) as u32;
    let _ = sel.set_base_and_extent(&text, a, &text, f);
}

/// A random id for a submission (crypto.getRandomValues works on plain HTTP too).
pub fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if let Some(c) = web_sys::window().and_then(|w| w.crypto().ok()) {
        let _ = c.get_random_values_with_u8_array(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
