//! The model track: span-extraction models run with ONNX Runtime on the same test sets as the
//! crowd, the built-in MiniLM baseline with a few-shot span head, and imported predictions.

pub mod baseline;
pub mod bench;
pub mod command;
pub mod decode;
pub mod eval;
pub mod features;
pub mod frame;
pub mod head;
pub mod onnx;
pub mod runtime;
pub mod store;
pub mod targets;
pub mod tokenizer;
pub mod tune;
pub mod upload;
