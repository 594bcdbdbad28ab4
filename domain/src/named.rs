//! Enums whose values are stored in TEXT columns and sent to the browser by name: one list of
//! variants and names gives `ALL`, `as_str`, `parse` and the serde names, so they never drift.

/// `named_enum! { /// doc  pub enum E { /// doc  A = "a", B = "b" } }` defines `E` with
/// `E::ALL`, `E::as_str`, `E::parse` (exact names only) and serde (de)serialisation as the name.
macro_rules! named_enum {
    ($(#[$m:meta])* pub enum $t:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $t {
            $($(#[$vm])* #[serde(rename = $s)] $v),+
        }

        impl $t {
            /// Every value, in declaration order.
            pub const ALL: &'static [$t] = &[$($t::$v),+];

            /// The name it is stored and sent as.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($t::$v => $s),+
                }
            }

            /// The value of exactly this name.
            pub fn parse(s: &str) -> Option<$t> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    use crate::export_file::ExportFile;
    use crate::people::Role;
    use crate::place::{Phase, PlaceStatus};
    use crate::platform::draft::Device;
    use crate::platform::ledger::{Action, ActionState, RemoteStatus};
    use crate::platform::plan::{Decision, Rule};
    use crate::platform::Platform;
    use crate::run::{JobStatus, RunStatus, SystemKind};
    use crate::task::{Family, NoAnswer};
    use crate::wire::queue::{LearnerKind, Queue};

    /// Each value reads back from its name, serde writes the same name, and nothing else parses.
    fn round_trip<T>(all: &[T], as_str: fn(T) -> &'static str, parse: fn(&str) -> Option<T>)
    where
        T: Copy + PartialEq + std::fmt::Debug + serde::Serialize,
    {
        for &v in all {
            assert_eq!(parse(as_str(v)), Some(v));
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", as_str(v))
            );
            assert_eq!(parse(&as_str(v).to_uppercase()), None);
        }
        assert_eq!(parse(""), None);
    }

    #[test]
    fn every_named_enum_reads_back_from_its_name_and_nothing_else_does() {
        round_trip(Role::ALL, Role::as_str, Role::parse);
        round_trip(PlaceStatus::ALL, PlaceStatus::as_str, PlaceStatus::parse);
        round_trip(Phase::ALL, Phase::as_str, Phase::parse);
        round_trip(Family::ALL, Family::as_str, Family::parse);
        round_trip(NoAnswer::ALL, NoAnswer::as_str, NoAnswer::parse);
        round_trip(RunStatus::ALL, RunStatus::as_str, RunStatus::parse);
        round_trip(SystemKind::ALL, SystemKind::as_str, SystemKind::parse);
        round_trip(JobStatus::ALL, JobStatus::as_str, JobStatus::parse);
        round_trip(Platform::ALL, Platform::as_str, Platform::parse);
        round_trip(ExportFile::ALL, ExportFile::as_str, ExportFile::parse);
        round_trip(Queue::ALL, Queue::as_str, Queue::parse);
        round_trip(LearnerKind::ALL, LearnerKind::as_str, LearnerKind::parse);
        round_trip(Action::ALL, Action::as_str, Action::parse);
        round_trip(ActionState::ALL, ActionState::as_str, ActionState::parse);
        round_trip(RemoteStatus::ALL, RemoteStatus::as_str, RemoteStatus::parse);
        round_trip(Decision::ALL, Decision::as_str, Decision::parse);
        round_trip(Rule::ALL, Rule::as_str, Rule::parse);
        round_trip(Device::ALL, Device::as_str, Device::parse);
    }

    #[test]
    fn stored_names_are_the_ones_the_schema_checks() {
        // The CHECK constraints of the migrations name these; a renamed variant must fail here.
        assert_eq!(Role::Researcher.as_str(), "researcher");
        assert_eq!(PlaceStatus::Abandoned.as_str(), "abandoned");
        assert_eq!(Phase::Training.as_str(), "training");
        assert_eq!(Family::SequenceLabelling.as_str(), "sequence_labelling");
        assert_eq!(NoAnswer::EmptyString.as_str(), "empty_string");
        assert_eq!(RunStatus::Replaced.as_str(), "replaced");
        assert_eq!(SystemKind::Imported.as_str(), "imported");
        assert_eq!(JobStatus::Claimed.as_str(), "claimed");
        // `jobs.kind`, which the queues' key tables' jobs carry.
        assert_eq!(Queue::Upstream.as_str(), "upstream");
        assert_eq!(Queue::Platform.as_str(), "platform");
        // The platform tables' CHECKs (migration 22).
        assert_eq!(ActionState::Refused.as_str(), "refused");
        assert_eq!(RemoteStatus::TimedOut.as_str(), "timed_out");
        assert_eq!(Decision::Reject.as_str(), "reject");
        // Stored in crowd_ids, consent_refusals and every session's crowd record.
        assert_eq!(Platform::Prolific.as_str(), "prolific");
        assert_eq!(Platform::Mturk.as_str(), "mturk");
    }
}
