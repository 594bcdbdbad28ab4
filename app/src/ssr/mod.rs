//! Server-only parts of the application: the shared state and authentication.
//! Compiled with the `ssr` feature only; the browser build never sees them.
pub mod annotations;
pub mod assets;
pub mod auth;
pub mod bundle;
pub mod catalog;
pub mod checkpoint;
pub mod crossfit;
pub mod dashboard;
pub mod db;
pub mod export;
pub mod lease;
pub mod limits;
pub mod machine;
pub mod report;
pub mod request;
pub mod shell;
pub mod state;
pub mod stream;
pub mod study;
pub mod task_store;
pub mod tx;
pub mod writer;
