//! The CLUES lab server as a library: database, CLUES import, scoring, the demo study, the
//! router and the command line. `main.rs` only calls `cli::main`.
pub mod cli;
pub mod clues;
pub mod crossfit;
pub mod db;
pub mod dbcopy;
pub mod demo;
pub mod export;
pub mod join;
pub mod load;
pub mod memory;
pub mod model;
pub mod router;
pub mod score;
