//! Server functions (public HTTP endpoints) and the data they send to the browser.
//! Each one checks the session and role itself; none ever sends a test item's gold answer.
//! Each takes the application state from the request's context before its first await.
pub mod auth;
pub mod crossfit;
pub mod machine;
pub mod report;
pub mod study;
pub mod tasks;
