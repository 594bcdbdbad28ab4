//! The CLUES lab application: Leptos pages and server functions, compiled for the server
//! (`ssr`) and for the browser (`hydrate`, linked by the `frontend` crate); the pure rules are `domain`.
pub mod api;
pub mod error;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod ssr;

pub use domain::wire;
pub use pages::{App, WorkerApp};
#[cfg(feature = "ssr")]
pub use ssr::shell::shell;
