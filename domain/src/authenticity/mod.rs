//! Whether a worker's answers are their own: the signals a page records per item, the rules
//! that read them with the data's own signals into a level per worker, and the simulation of
//! honest and assisted sessions that measures the rules' false flags and detection.

pub mod rules;
pub mod signals;
pub mod simulate;

pub use rules::{Evidence, Level};
pub use signals::{copied_from_item, ItemSignals};
