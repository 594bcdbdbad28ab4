//! What a worker is told when a step of theirs is refused: no place, a released place, an
//! item that is not their current one, a locked answer. One wording for every entry point.

use crate::error::Error;

/// The refusal of work by a worker who has no place in the study.
pub(super) fn no_place() -> Error {
    Error::NotFound(
        "You have no place in this study; open it through your study link first.".into(),
    )
}

/// The refusal of work on a place the time-out released.
pub(super) fn released() -> Error {
    Error::Refused(
        "Your place in this study was released after the time-out; your earlier answers are kept."
            .into(),
    )
}

/// The refusal of an answer to an item that is not the worker's current one.
pub(super) fn not_current() -> Error {
    Error::Refused(
        "This is not your current item; reload the page to continue where you are.".into(),
    )
}

pub(super) fn locked() -> Error {
    Error::Refused("This answer was already submitted and is locked; it cannot be changed.".into())
}
