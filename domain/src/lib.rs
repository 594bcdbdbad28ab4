//! Pure domain code with no IO that the report runs millions of times per build: the
//! platform's seeded generator and the statistics of the report (intervals, tests, power).
//! Its own crate so that it is compiled optimised in the tests' debug builds too (see the
//! workspace's `profile.dev.package.domain`); `app::domain` re-exports both modules.

pub mod rng;
pub mod stats;
