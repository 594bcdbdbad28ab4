//! The model track, the machine side of every comparison: span-extraction learners run with
//! ONNX Runtime on the same test sets as the crowd, the built-in MiniLM baseline with a
//! few-shot span head, fine-tuning of BERT, RoBERTa and DeBERTa (candle) exported to ONNX,
//! prompt-based fine-tuning, in-context learning through a language-model server, CrossFit's
//! text-to-text learners (BART, T5: direct fine-tuning, upstream learning), imported
//! predictions, and S1 scoring of prediction files. Its runs are stored through `store::machine`, the one home
//! of the `machine_*` tables.
//!
//! One name per concept: a *learner* is what learns from the shots; a *system* is a learner
//! under a name whose results are kept, with its kind (`SystemKind`: `onnx`, an ONNX model run
//! here; `baseline`, trained here; `imported`, predictions from a file); a *run* is one system
//! on one task, k and split; *machines* are every system, beside the humans in the report (and
//! on the machines page, `/machines`); a *model* is a folder or ONNX file on disk.

pub mod baseline;
pub mod bench;
pub mod command;
pub mod crossfit;
pub mod decode;
pub mod eval;
pub mod features;
pub mod frame;
pub mod hardware;
pub mod head;
pub mod icl;
pub mod jobs;
pub mod onnx;
pub mod queue;
pub mod runtime;
/// S1 scoring of prediction files (in `store`, so that a serving build without the model track scores too).
pub use store::score;
pub mod seq2seq;
pub mod targets;
pub mod tokenizer;
pub mod train_bench;
pub mod tune;
pub mod worker;
