//! The model track's records: a run's status (`machine_runs.status`), the kind of system
//! that produced it (`machine_systems.kind`) and a shared grid job's status (`grid_jobs.status`).

use super::named::named_enum;

named_enum! {
    /// A run is running until it is done or failed; a done run is replaced when the same
    /// system is evaluated again on the same task, k and split.
    pub enum RunStatus {
        Running = "running",
        Done = "done",
        Failed = "failed",
        Replaced = "replaced",
    }
}

named_enum! {
    /// A job of a shared grid waits in the queue until a worker claims it (for as long as its
    /// lease is renewed); it ends done, with its run stored, or failed, until queued again.
    pub enum JobStatus {
        Queued = "queued",
        Claimed = "claimed",
        Done = "done",
        Failed = "failed",
    }
}

named_enum! {
    /// Where a system's answers come from.
    pub enum SystemKind {
        /// An ONNX span-extraction model run by ONNX Runtime.
        Onnx = "onnx",
        /// A baseline trained here (frozen encoder with a head, or fine-tuned).
        Baseline = "baseline",
        /// Predictions imported from a file.
        Imported = "imported",
    }
}
