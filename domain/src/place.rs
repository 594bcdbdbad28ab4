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
    /// A study's screening items come first (where it has them; no gold is shown), then the
    /// training items (their gold is revealed once submitted), then the test set.
    pub enum Phase {
        Screening = "screening",
        Training = "training",
        Test = "test",
    }
}

impl Phase {
    /// What the worker's page calls an item of this phase.
    pub fn item_label(self) -> &'static str {
        match self {
            Phase::Screening => "Screening item",
            Phase::Training => "Training example",
            Phase::Test => "Test item",
        }
    }
}
