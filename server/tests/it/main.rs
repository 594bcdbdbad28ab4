//! The integration tests that share one build: each module is what was a test binary of its
//! own (one link instead of one per file, and one binary on disk). Tests that time the
//! server or load the machine stay binaries of their own beside it (under_load, slow_clients,
//! arrivals, write_locks, instances, slurm, checkpoint), so no other test runs beside them.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod analysis_plan;
mod annotation_pages;
mod authenticity;
mod crossfit;
mod crossfit_jobs;
mod crossfit_learn;
mod crossfit_upstream;
mod dbcopy;
mod door;
mod eval_plan;
mod families;
mod finetune;
mod fuzz;
mod grid;
mod hostile;
mod http;
mod icl;
mod icl_concurrency;
mod import_clues;
mod model;
mod platforms;
mod platforms_faults;
mod prompt;
mod queue_page;
mod report;
mod report_builds;
mod run_twice;
mod score_cli;
mod shot_groups;
mod study;
mod study_pages;
mod upstream_queue;
mod worker;
mod worker_stopped;
