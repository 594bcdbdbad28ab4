//! The platforms' calls as the ledger keeps them: what each does, the state of its send, the
//! submissions a platform reports, and each call's idempotency key (written with the intent,
//! before the call is sent; MTurk's `UniqueRequestToken`, at most 64 characters). Pure.

use crate::named::named_enum;

named_enum! {
    /// What a platform call does.
    pub enum Action {
        /// The task's list of workers who took part (a Prolific participant group, an MTurk
        /// qualification type): every later publication of the task excludes it.
        Group = "group",
        /// The publication created: a Prolific draft study; on MTurk the HIT itself (MTurk has
        /// no drafts, so it is created only on confirmation).
        Create = "create",
        /// A Prolific draft published.
        Publish = "publish",
        /// More places asked for, to this total: a place the study reclaimed.
        Places = "places",
        /// A worker who started put on the task's list.
        Grant = "grant",
        /// Submissions and assignments read back.
        Sync = "sync",
        Approve = "approve",
        Reject = "reject",
        /// A worker's pay topped up to the hourly rate.
        Bonus = "bonus",
    }
}

impl Action {
    /// Whether the call moves money (a budget covers it, a preview shows it).
    pub fn spends(self) -> bool {
        match self {
            Action::Create | Action::Places | Action::Approve | Action::Bonus => true,
            Action::Group | Action::Publish | Action::Grant | Action::Sync | Action::Reject => {
                false
            }
        }
    }
}

named_enum! {
    /// Where a call stands. `Intent`: written, not sent; `Sent`: a send began and its answer
    /// may be lost (a retry reads what exists, or repeats the key, before it sends again);
    /// `Done`: the platform's answer is kept; `Refused`: the platform refused it for good.
    pub enum ActionState {
        Intent = "intent",
        Sent = "sent",
        Done = "done",
        Refused = "refused",
    }
}

named_enum! {
    /// A submission (Prolific) or assignment (MTurk) as the platform reports it.
    pub enum RemoteStatus {
        /// Working on it (Prolific's ACTIVE and RESERVED).
        Active = "active",
        /// Handed in, waiting for a decision (AWAITING REVIEW; MTurk's Submitted).
        Submitted = "submitted",
        Approved = "approved",
        Rejected = "rejected",
        /// Given back by the worker: the platform offers the place again.
        Returned = "returned",
        /// Not finished in the time allowed: the platform offers the place again.
        TimedOut = "timed_out",
    }
}

impl RemoteStatus {
    /// Whether the submission holds one of the places the platform was asked for (a returned
    /// or timed-out one gave it back).
    pub fn holds_place(self) -> bool {
        match self {
            RemoteStatus::Active
            | RemoteStatus::Submitted
            | RemoteStatus::Approved
            | RemoteStatus::Rejected => true,
            RemoteStatus::Returned | RemoteStatus::TimedOut => false,
        }
    }

    /// Whether the worker handed the work in on the platform.
    pub fn handed_in(self) -> bool {
        match self {
            RemoteStatus::Submitted | RemoteStatus::Approved | RemoteStatus::Rejected => true,
            RemoteStatus::Active | RemoteStatus::Returned | RemoteStatus::TimedOut => false,
        }
    }
}

/// The longest key MTurk takes.
pub const KEY_MAX: usize = 64;

/// A call's idempotency key: its action, the publication's nonce and what it acts on, cut
/// to [`KEY_MAX`] with a hash of the whole where longer (the same call always gets the same
/// key; two calls never share one).
pub fn key(action: Action, nonce: &str, target: &str) -> String {
    let whole = format!("{}-{nonce}-{target}", action.as_str());
    if whole.len() <= KEY_MAX
        && whole
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return whole;
    }
    // FNV-1a over the whole key: short, stable across builds, and enough to keep apart the
    // few calls of one publication that share a prefix.
    let hash = whole.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let prefix: String = whole
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(KEY_MAX - 17)
        .collect();
    format!("{prefix}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_distinct_and_fit_mturk() {
        let a = key(Action::Bonus, "n1", "3ASSIGNMENTXYZ");
        assert_eq!(a, "bonus-n1-3ASSIGNMENTXYZ");
        assert_eq!(a, key(Action::Bonus, "n1", "3ASSIGNMENTXYZ"));
        assert_ne!(a, key(Action::Approve, "n1", "3ASSIGNMENTXYZ"));
        let long = "X".repeat(80);
        let (k1, k2) = (
            key(Action::Grant, "n1", &format!("{long}1")),
            key(Action::Grant, "n1", &format!("{long}2")),
        );
        assert!(k1.len() <= KEY_MAX && k2.len() <= KEY_MAX);
        assert_ne!(k1, k2);
        let odd = key(Action::Group, "n", "SST 2/é");
        assert!(odd.len() <= KEY_MAX && odd.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }

    #[test]
    fn returned_and_timed_out_submissions_give_their_place_back() {
        let holding: Vec<_> = RemoteStatus::ALL
            .iter()
            .filter(|s| s.holds_place())
            .collect();
        assert_eq!(holding.len(), 4);
        assert!(!RemoteStatus::Returned.holds_place() && !RemoteStatus::TimedOut.handed_in());
        assert!(Action::Bonus.spends() && !Action::Reject.spends());
    }
}
