//! Whether a worker's answers are their own: the signals a page records per item (and the
//! recorder that turns the page's events into them), the server's clock they must fit, the
//! rules that read them with the data's own signals into a level per worker, and the
//! simulation of honest and assisted sessions that measures the rules per strategy.

pub mod clock;
pub mod record;
pub mod rules;
pub mod signals;
pub mod simulate;

pub use record::Recorder;
pub use rules::{Evidence, Level};
pub use signals::{copied_from_item, ItemSignals};
