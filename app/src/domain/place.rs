//! A worker's place in one scenario of a study, as `assignments.status` records it: taken and
//! in progress, finished (the test set done), or abandoned (released after the time-out); and
//! the phase of each item of it, as `assignment_items.phase` records it.

use super::named::named_enum;

named_enum! {
    pub enum PlaceStatus {
        Active = "active",
        Finished = "finished",
        Abandoned = "abandoned",
    }
}

named_enum! {
    /// Training items come first (their gold is revealed once submitted), then the test set.
    pub enum Phase {
        Training = "training",
        Test = "test",
    }
}
