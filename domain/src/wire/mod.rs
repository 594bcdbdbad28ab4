//! The types the server sends to the browser, shared by the pages, the server functions and the
//! data layer (`store`); plain data, so the browser's build and the server's share one copy.
pub mod auth;
pub mod crossfit;
pub mod machine;
pub mod platform;
pub mod queue;
pub mod report;
pub mod study;
pub mod tasks;
