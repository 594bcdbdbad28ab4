//! The CrossFit setup (Ye et al.): numpy-exact few-shot sampling of text-to-text tasks, its
//! file layout, metrics, task partitions and average relative gain. Pure and IO-free.
pub mod baseline;
pub mod metrics;
pub mod mt19937;
pub mod nested;
pub mod partition;
pub mod sampler;
pub mod tsv;
