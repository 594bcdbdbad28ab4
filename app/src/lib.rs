//! The CLUES lab application: Leptos pages and server functions, compiled for the server
//! (`ssr`) and to WebAssembly for hydration (`hydrate`); the pure rules are the `domain` crate.
pub mod api;
pub mod error;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod ssr;

pub use domain::wire;
pub use pages::App;
#[cfg(feature = "ssr")]
pub use ssr::shell::shell;

/// Browser entry point: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
