//! The data layer: the pool and its dialects, transactions and their locks, the answer writer,
//! leases, the table families and their loaders, and the server side's error. No web framework.
pub mod annotations;
pub mod auth;
pub mod bundle;
pub mod catalog;
pub mod checkpoint;
pub mod clock;
pub mod crossfit;
pub mod db;
pub mod error;
pub mod export;
pub mod heavy;
pub mod lease;
pub mod machine;
pub mod pay;
pub mod platform;
pub mod queues;
pub mod report;
pub mod rows;
pub mod score;
pub mod stream;
pub mod study;
pub mod task_write;
pub mod tx;
pub mod writer;

pub use error::{Error, Result};
