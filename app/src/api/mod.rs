//! Server functions (public HTTP endpoints) and the data they send to the browser.
//! Each one checks the session and role itself; none ever sends a test item's gold answer.
pub mod auth;
pub mod study;
pub mod tasks;
