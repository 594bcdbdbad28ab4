//! The browser's entry point: `hydrate()`, which wasm-bindgen exports and the bundle's script
//! calls once the server-rendered page has loaded. Built with `.ci/build` (or cargo-leptos).

/// Hydrates the server-rendered page: the app's reactive system takes over its HTML. The
/// worker's bundles hydrate the study page alone (`WorkerApp`); the staff bundle, every page.
#[cfg(feature = "browser")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    #[cfg(feature = "worker")]
    leptos::mount::hydrate_body(app::WorkerApp);
    #[cfg(not(feature = "worker"))]
    leptos::mount::hydrate_body(app::App);
}
