//! Pure domain logic shared by the server and the browser: spans and offsets, the S1 metric,
//! and the unified task model. Nothing here does IO.
pub mod answer;
pub mod crossfit;
pub mod crowd;
pub mod feedback;
pub mod ids;
pub mod named;
pub mod people;
pub mod place;
pub mod report;
pub mod run;
pub mod s1;
pub mod selection;
pub mod settings;
pub mod shots;
pub mod spans;
pub mod study;
pub mod study_pages;
pub mod task;
/// The seeded generator and the report's statistics live in the `domain` crate (optimised in
/// every build); they are used through these paths.
pub use ::domain::{rng, stats};
