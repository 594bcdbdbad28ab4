//! The browser's entry point: `hydrate()`, which wasm-bindgen exports and the bundle's script
//! calls once the server-rendered page has loaded. Built with `.ci/build` (or cargo-leptos).

/// Hydrates the server-rendered page: the app's reactive system takes over its HTML.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
