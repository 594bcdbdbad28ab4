//! The platform's pure rules, with no IO: spans and offsets, the S1 metric, the unified task
//! model, shots, study rules, CrossFit's sampler and metrics, and the report (computed in
//! `report`, drawn as tables, Markdown, CSV and SVG in `report::draw`).
//! Its own crate so that the browser, the server and the model track share one copy, and so
//! that it is compiled optimised in the tests' debug builds (`profile.dev.package.domain`).

pub mod analysis_plan;
pub mod answer;
pub mod authenticity;
#[cfg(feature = "server")]
mod columns;
pub mod crossfit;
pub mod crowd;
pub mod export_file;
pub mod feedback;
pub mod icl;
pub mod ids;
pub mod named;
pub mod people;
pub mod place;
pub mod platform;
pub mod prompt;
pub mod report;
pub mod rng;
pub mod run;
pub mod s1;
pub mod selection;
pub mod settings;
pub mod shots;
pub mod spans;
pub mod stats;
pub mod study;
pub mod study_pages;
pub mod task;
pub mod wire;
