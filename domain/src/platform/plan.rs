//! The calls a publication needs, planned from what is stored: approve everyone who finished,
//! reject only by a rule the researcher states (with the words the worker reads), and top
//! each approved worker's pay up to the hourly rate for the time the server measured. Each
//! call is planned once (its key is its own), previewed, and kept within the budget. Pure.

use super::fees::{FeeRates, Payment};
use super::ledger::{Action, RemoteStatus};
use super::sync::{Line, Note};
use super::Platform;
use crate::named::named_enum;
use crate::report::draw::text::money;
use serde::{Deserialize, Serialize};

named_enum! {
    /// A decision on a handed-in submission.
    pub enum Decision {
        Approve = "approve",
        Reject = "reject",
    }
}

named_enum! {
    /// The stated rules a rejection may follow: the report's exclusions that the platforms'
    /// own policies allow a rejection for. An authenticity level is never one: it is
    /// information for the researcher, never a penalty.
    pub enum Rule {
        /// More failed attention checks than the study allows (Prolific: FAILED_CHECK, under
        /// its attention-check policy).
        FailedAttention = "failed-attention",
    }
}

impl Rule {
    /// Whether a place breaks the rule.
    pub fn broken_by(self, line: &Line) -> bool {
        match self {
            Rule::FailedAttention => line.place.as_ref().is_some_and(|p| p.failed_attention),
        }
    }

    /// What the worker reads by default (at least the 100 characters Prolific asks for).
    pub fn message(self, line: &Line) -> String {
        match self {
            Rule::FailedAttention => {
                let (answered, passed) = line.place.as_ref().map_or((0, 0), |p| p.attention);
                format!(
                    "Your submission failed {} of the {answered} attention checks in this study, more than the study's instructions allowed, so it is rejected as they said it would be. Thank you for your time.",
                    answered - passed
                )
            }
        }
    }
}

/// The shortest and longest message a rejection carries (Prolific asks for 100 characters at
/// least; MTurk takes 1,024 at most).
pub const MESSAGE_CHARS: (usize, usize) = (100, 1024);

/// A decision proposed for a submission, as the preview shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    pub remote_id: String,
    pub worker: String,
    pub decision: Decision,
    pub rule: Option<Rule>,
    pub message: Option<String>,
}

/// The decisions for the handed-in submissions of finished places not decided yet
/// (`decided`): approve, or reject where the researcher chose `rule` and the place breaks it.
/// A submission with no finished place is left to the researcher (shown, never decided here).
pub fn propose(lines: &[Line], rule: Option<Rule>, decided: &[String]) -> Vec<Proposal> {
    lines
        .iter()
        .filter(|l| l.note == Note::Matched)
        .filter_map(|l| {
            let (r, p) = (l.remote.as_ref()?, l.place.as_ref()?);
            let waiting = r.status == RemoteStatus::Submitted;
            let finished = p.status == crate::place::PlaceStatus::Finished;
            (waiting && finished && !decided.contains(&r.remote_id)).then(|| {
                match rule.filter(|rule| rule.broken_by(l)) {
                    Some(rule) => Proposal {
                        remote_id: r.remote_id.clone(),
                        worker: r.worker.clone(),
                        decision: Decision::Reject,
                        rule: Some(rule),
                        message: Some(rule.message(l)),
                    },
                    None => Proposal {
                        remote_id: r.remote_id.clone(),
                        worker: r.worker.clone(),
                        decision: Decision::Approve,
                        rule: None,
                        message: None,
                    },
                }
            })
        })
        .collect()
}

/// Checks a rejection's message.
pub fn check_message(message: &str) -> Result<(), String> {
    let n = message.trim().chars().count();
    let (min, max) = MESSAGE_CHARS;
    if n < min || n > max {
        return Err(format!(
            "a rejection's message must be {min} to {max} characters (Prolific asks for {min} at least); this one has {n}"
        ));
    }
    Ok(())
}

/// A top-up bonus as the preview shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopUp {
    pub remote_id: String,
    pub worker: String,
    pub seconds: u64,
    /// What the time comes to at the hourly rate, the reward already paid, and the bonus.
    pub owed_cents: i64,
    pub reward_cents: i64,
    pub bonus_cents: i64,
    /// The bonus with the platform's fees.
    pub cost_cents: i64,
    pub reason: String,
}

/// The bonuses that top approved workers up to the hourly rate: for each approved submission
/// (`approved`) of a finished place whose time at the rate comes to more than the reward, one
/// bonus of the difference, once (`paid`: the submissions with a bonus planned already).
pub fn top_ups(
    lines: &[Line],
    approved: &[String],
    paid: &[String],
    (platform, reward_cents, rates): (Platform, i64, FeeRates),
) -> Vec<TopUp> {
    lines
        .iter()
        .filter(|l| l.note == Note::Matched)
        .filter_map(|l| {
            let (r, p) = (l.remote.as_ref()?, l.place.as_ref()?);
            let due = approved.contains(&r.remote_id)
                && !paid.contains(&r.remote_id)
                && p.status == crate::place::PlaceStatus::Finished;
            let bonus = p.pay_cents - reward_cents;
            (due && bonus > 0).then(|| TopUp {
                remote_id: r.remote_id.clone(),
                worker: r.worker.clone(),
                seconds: p.seconds.max(0.0).round() as u64,
                owed_cents: p.pay_cents,
                reward_cents,
                bonus_cents: bonus,
                cost_cents: platform.cost(Payment::Bonus, bonus, rates).total_cents(),
                reason: format!(
                    "Your time on the study was {} minutes; this tops your pay up to the study's hourly rate ({} in all, {} of it paid as the reward).",
                    (p.seconds / 60.0).ceil(),
                    money(p.pay_cents),
                    money(reward_cents)
                ),
            })
        })
        .collect()
}

/// Whether `more` fits in the budget beside what is committed (the calls not refused).
pub fn within_budget(budget: i64, committed: i64, more: i64, what: &str) -> Result<(), String> {
    if committed + more > budget {
        return Err(format!(
            "{what} would bring the publication's spending to {} with fees, over its budget of {} ({} committed so far): raise the budget first",
            money(committed + more),
            money(budget),
            money(committed)
        ));
    }
    Ok(())
}

/// The calls a plan writes, as the ledger keeps their requests (never a credential).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Call {
    /// The task's list of workers (`task`: its name, for the list's name).
    Group {
        task: String,
    },
    /// The publication created from its confirmed draft.
    Create,
    Publish,
    /// Asks the platform for `more` places, to `total` in all.
    Places {
        total: u32,
        more: u32,
    },
    /// Puts `worker` on the task's list.
    Grant {
        worker: String,
    },
    Sync,
    Approve {
        remote_id: String,
        worker: String,
    },
    Reject {
        remote_id: String,
        worker: String,
        rule: Rule,
        message: String,
    },
    Bonus {
        remote_id: String,
        worker: String,
        cents: i64,
        reason: String,
    },
}

impl Call {
    pub fn action(&self) -> Action {
        match self {
            Call::Group { .. } => Action::Group,
            Call::Create => Action::Create,
            Call::Publish => Action::Publish,
            Call::Places { .. } => Action::Places,
            Call::Grant { .. } => Action::Grant,
            Call::Sync => Action::Sync,
            Call::Approve { .. } => Action::Approve,
            Call::Reject { .. } => Action::Reject,
            Call::Bonus { .. } => Action::Bonus,
        }
    }

    /// What the call acts on, as its key and the ledger name it.
    pub fn target(&self, study: &str) -> String {
        match self {
            Call::Group { task } => task.clone(),
            Call::Create | Call::Publish | Call::Sync => study.to_string(),
            Call::Places { total, .. } => format!("{study}-{total}"),
            Call::Grant { worker } => worker.clone(),
            Call::Approve { remote_id, .. }
            | Call::Reject { remote_id, .. }
            | Call::Bonus { remote_id, .. } => remote_id.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::AssignmentId;
    use crate::place::PlaceStatus;
    use crate::platform::sync::{PlaceFacts, RemoteFacts};

    fn line(worker: &str, status: RemoteStatus, seconds: f64, failed: bool) -> Line {
        Line {
            remote: Some(RemoteFacts {
                remote_id: format!("s-{worker}"),
                worker: worker.into(),
                status,
                code: None,
            }),
            place: Some(PlaceFacts {
                assignment: AssignmentId(1),
                worker: worker.into(),
                presented: None,
                status: PlaceStatus::Finished,
                seconds,
                pay_cents: crate::report::pay_cents((seconds * 1000.0) as i64, 1200),
                failed_attention: failed,
                attention: (4, if failed { 1 } else { 4 }),
            }),
            note: Note::Matched,
        }
    }

    #[test]
    fn everyone_who_finished_is_approved_unless_a_stated_rule_rejects_them() {
        use RemoteStatus::*;
        let lines = [
            line("a", Submitted, 600.0, false),
            line("b", Submitted, 600.0, true),
            line("c", Active, 600.0, false),
            line("d", Submitted, 600.0, false),
        ];
        let all = propose(&lines, None, &["s-d".into()]);
        assert_eq!(
            all.iter().map(|p| p.decision).collect::<Vec<_>>(),
            [Decision::Approve; 2]
        );
        let ruled = propose(&lines, Some(Rule::FailedAttention), &[]);
        assert_eq!(ruled[1].decision, Decision::Reject);
        let message = ruled[1].message.clone().unwrap();
        assert!(
            message.contains("failed 3 of the 4 attention checks"),
            "{message}"
        );
        assert!(check_message(&message).is_ok());
        assert!(check_message("too short").is_err());
        assert_eq!(ruled.len(), 3);
    }

    #[test]
    fn approved_workers_are_topped_up_to_the_rate_once() {
        use RemoteStatus::*;
        let lines = [
            line("a", Submitted, 1800.0, false),
            line("b", Submitted, 600.0, false),
            line("c", Submitted, 1800.0, false),
        ];
        let terms = (Platform::Mturk, 300, FeeRates::default());
        let approved = ["s-a".to_string(), "s-b".to_string()];
        let ups = top_ups(&lines, &approved, &[], terms);
        // a: 30 min at 12/h = 6.00, 3.00 paid as the reward; b took less than the reward pays.
        assert_eq!(ups.len(), 1);
        assert_eq!((ups[0].bonus_cents, ups[0].cost_cents), (300, 360));
        assert!(top_ups(&lines, &approved, &["s-a".into()], terms).is_empty());
        assert!(within_budget(1000, 700, 300, "this").is_ok());
        assert!(within_budget(1000, 701, 300, "this")
            .unwrap_err()
            .contains("over its budget"));
    }
}
