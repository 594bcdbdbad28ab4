//! Server-only parts of the application: the shared state, requests and sign-in, assets and
//! the page shell; the data layer is the `store` crate. Compiled with the `ssr` feature only.
pub mod assets;
pub mod auth;
pub mod dashboard;
pub mod limits;
pub mod platform_panel;
pub mod platforms;
pub mod reports;
pub mod request;
pub mod shell;
pub mod state;
