//! The CLUES lab server as a library: the router and its handlers (study links, exports,
//! predictions upload), CLUES and CrossFit import, the demo study, database copies, the load
//! tools and the command line. `main.rs` only calls `cli::main`; the model track is the
//! `learners` crate (the `models` feature, on by default).
pub mod cli;
pub mod clues;
pub mod crossfit;
pub mod dbcopy;
pub mod demo;
pub mod download;
pub mod gate;
pub mod hooks;
pub mod join;
pub mod listen;
pub mod load;
pub mod memory;
pub mod router;
#[cfg(feature = "models")]
pub mod upload;
