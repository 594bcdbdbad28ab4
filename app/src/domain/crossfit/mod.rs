//! The CrossFit setup (Ye et al.): numpy-exact few-shot sampling of text-to-text tasks.
//! Pure and IO-free; byte-identical to the reference, proven against numpy fixtures.
pub mod mt19937;
pub mod sampler;
