//! Server functions (public HTTP endpoints) and the data they send to the browser.
//! Each is one call of `ssr::request::serve` under the guard of the roles it allows (`Staff`,
//! `Admin`, `Worker`, `Visitor`); none ever sends a test item's gold answer.
pub mod auth;
pub mod crossfit;
pub mod machine;
pub mod report;
pub mod study;
pub mod tasks;
