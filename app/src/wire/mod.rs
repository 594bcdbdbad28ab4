//! The types the server sends to the browser, shared by the pages, the server functions and the
//! server-only code; they import nothing of `api` or `ssr`, so neither side imports the other.
pub mod auth;
pub mod crossfit;
pub mod machine;
pub mod queue;
pub mod report;
pub mod study;
pub mod tasks;
