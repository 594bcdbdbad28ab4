//! The DOM calls of the span form: reading and setting the selection inside the context
//! element in code points of the stored text, and following selection changes (touch handles).

use domain::selection::{cp_to_dom, dom_to_cp};
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

/// The text node and offset in it at UTF-16 offset `at` of `root`'s text (its text nodes in
/// document order: the context is text with highlighted answers in `<mark>`s).
fn locate(root: &web_sys::Node, mut at: u32) -> Option<(web_sys::Node, u32)> {
    let mut stack = vec![root.first_child()?];
    let mut last = None;
    while let Some(node) = stack.pop() {
        if let Some(next) = node.next_sibling() {
            stack.push(next);
        }
        if node.node_type() == web_sys::Node::TEXT_NODE {
            let len = node
                .text_content()
                .unwrap_or_default()
                .encode_utf16()
                .count() as u32;
            if at <= len {
                return Some((node, at));
            }
            at -= len;
            last = Some((node, len));
        } else if let Some(child) = node.first_child() {
            stack.push(child);
        }
    }
    last
}

/// Shows the selection (anchor, focus), in code points of `original`, inside `root`, which
/// displays `original`.
pub fn set_selection(root: &web_sys::Element, original: &str, anchor: usize, focus: usize) {
    let Some(sel) = web_sys::window().and_then(|w| w.get_selection().ok().flatten()) else {
        return;
    };
    let root: &web_sys::Node = root.unchecked_ref();
    let a = locate(root, cp_to_dom(original, anchor) as u32);
    let f = locate(root, cp_to_dom(original, focus) as u32);
    if let (Some((an, ao)), Some((fnode, fo))) = (a, f) {
        let _ = sel.set_base_and_extent(&an, ao, &fnode, fo);
    }
}

/// Calls `f` on every `selectionchange` of the document (touch handles, keyboard, mouse)
/// until the calling reactive owner is cleaned up. Call it in an effect (browser only).
pub fn on_selection_change(f: impl Fn() + 'static) {
    use web_sys::wasm_bindgen::closure::Closure;
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let cb = Closure::<dyn Fn()>::new(f).into_js_value();
    let _ = doc.add_event_listener_with_callback("selectionchange", cb.unchecked_ref());
    let handle = send_wrapper::SendWrapper::new((doc, cb));
    leptos::prelude::on_cleanup(move || {
        let (doc, cb) = &*handle;
        let _ = doc.remove_event_listener_with_callback("selectionchange", cb.unchecked_ref());
    });
}

/// The grapheme-cluster boundary after (`forward`) or before code point `cp` of `text`: one
/// user-perceived character, as `domain::selection::{next_char, prev_char}` step, but by the
/// browser's `Intl.Segmenter` (UAX #29 too), so that the span bundle need not carry the
/// Unicode tables (the server and the native tests use domain's). A browser without it steps
/// one code point; a span that then cuts a character is refused when it is sent.
#[cfg(target_arch = "wasm32")]
pub fn step_char(text: &str, cp: usize, forward: bool) -> usize {
    use domain::spans::{cp_to_utf16, utf16_to_cp};
    use web_sys::js_sys::{global, Array, Intl, Object, Reflect};
    let len = text.chars().count();
    let cp = cp.min(len);
    let at_end = if forward { cp == len } else { cp == 0 };
    let segmenter_here = Reflect::get(&global(), &"Intl".into())
        .and_then(|intl| Reflect::has(&intl, &"Segmenter".into()))
        .unwrap_or(false);
    if at_end || !segmenter_here {
        return if forward {
            (cp + 1).min(len)
        } else {
            cp.saturating_sub(1)
        };
    }
    let segments = Intl::Segmenter::new(&Array::new(), &Object::new()).segment(text);
    let unit = cp_to_utf16(text, cp).unwrap_or(0) as u32;
    let probe = if forward { unit } else { unit - 1 };
    let Some(segment) = segments.containing(probe) else {
        return if forward { len } else { 0 };
    };
    let boundary = if forward {
        segment.index() + segment.segment().length()
    } else {
        segment.index()
    };
    utf16_to_cp(text, boundary as usize).unwrap_or(if forward { len } else { 0 })
}
