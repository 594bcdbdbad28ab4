//! The ids of the crowd protocol's rows as their own types, so that a study id cannot be passed
//! where a worker's is expected: both are integers the database assigns.

use serde::{Deserialize, Serialize};

/// `id_types! { /// doc  Name, ... }`: a `Copy` newtype over `i64` that serialises as the bare
/// number (the browser and the exports see plain ids) and prints as it.
macro_rules! id_types {
    ($($(#[$m:meta])* $t:ident),+ $(,)?) => {
        $(
            $(#[$m])*
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
            #[serde(transparent)]
            pub struct $t(pub i64);

            impl std::fmt::Display for $t {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    self.0.fmt(f)
                }
            }
        )+
    };
}

id_types! {
    /// `studies.id`.
    StudyId,
    /// `users.id`: an admin, a researcher or a worker.
    UserId,
    /// `assignments.id`: one worker's place in one scenario of a study.
    AssignmentId,
    /// `tasks.id`.
    TaskId,
    /// `study_configs.id`: a version of a study's configuration.
    ConfigId,
    /// `examples.id`: one item of a task's data file.
    ExampleId,
    /// `machine_runs.id`: one evaluation of a system on a task and shot group.
    RunId,
}

/// Ids written as one value with `sep` between them, e.g. `1,2,3` in a link's query.
pub fn joined<T: std::fmt::Display>(ids: &[T], sep: &str) -> String {
    ids.iter().map(T::to_string).collect::<Vec<_>>().join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_travel_and_print_as_bare_numbers() {
        assert_eq!(serde_json::to_string(&StudyId(7)).unwrap(), "7");
        assert_eq!(serde_json::from_str::<UserId>("42").unwrap(), UserId(42));
        assert_eq!(AssignmentId(3).to_string(), "3");
        assert!(serde_json::from_str::<TaskId>("\"3\"").is_err());
        assert_eq!(joined(&[StudyId(1), StudyId(3)], ","), "1,3");
        assert_eq!(joined::<StudyId>(&[], ","), "");
    }
}
