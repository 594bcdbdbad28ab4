//! A study's crowd-platform panel as the page shows it: the accounts (configured, working,
//! live or sandbox), the publication and its draft, the publication in step, and the ledger.

use crate::ids::StudyId;
use crate::platform::draft::Draft;
use crate::platform::fees::Cost;
use crate::platform::ledger::{Action, ActionState};
use crate::platform::plan::{Call, Proposal, Rule, TopUp};
use crate::platform::sync::Line;
use crate::platform::Platform;
use crate::run::JobStatus;
use serde::{Deserialize, Serialize};

/// An account the operator gave the server, and whether its cheap call works.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountView {
    pub platform: Platform,
    /// MTurk's sandbox: no money moves.
    pub sandbox: bool,
    pub works: bool,
    /// The platform's answer (the account and its balance), or why it does not work.
    pub said: String,
}

/// A study's publication as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublicationView {
    pub draft: Draft,
    pub published: bool,
    pub remote_id: Option<String>,
    /// Where the platform shows it (Prolific's study page, MTurk's preview).
    pub remote_link: Option<String>,
    pub places: u32,
    pub budget_cents: i64,
    /// What the calls written and not refused may spend, with fees.
    pub committed_cents: i64,
    pub synced_at: Option<i64>,
}

/// One platform call as the ledger lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerView {
    pub id: i64,
    pub action: Action,
    pub target: String,
    pub state: ActionState,
    pub job: JobStatus,
    pub amount_cents: i64,
    pub tries: i64,
    pub created_at: i64,
    pub answered_at: Option<i64>,
    pub answer: Option<String>,
    pub error: Option<String>,
}

/// The panel: what a researcher sees, and what an admin acts on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlatformPanel {
    pub study: StudyId,
    pub study_name: String,
    pub accounts: Vec<AccountView>,
    pub publication: Option<PublicationView>,
    /// The publication's places and submissions matched (empty before the first sync).
    pub lines: Vec<Line>,
    pub planned: u32,
    pub to_release: usize,
    pub more_places: u32,
    pub ledger: Vec<LedgerView>,
    /// Whether the signed-in person may spend (admins).
    pub can_act: bool,
}

/// What publishing would send, as the confirmation shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishView {
    pub draft: Draft,
    pub problems: Vec<String>,
    pub rewards: Cost,
    pub fee_words: String,
    /// Prolific's own calculator's total for the rewards, where the account answered.
    pub platform_quote_cents: Option<i64>,
    pub calls: Vec<Call>,
    pub fingerprint: String,
}

/// The decisions a confirmation would store: approvals, and rejections by the stated rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionsView {
    pub rule: Option<Rule>,
    pub proposals: Vec<Proposal>,
    pub fingerprint: String,
}

/// The top-ups a confirmation would send, and the budget they fall within.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PayView {
    pub top_ups: Vec<TopUp>,
    /// The top-ups with the platform's fees.
    pub total_cents: i64,
    pub committed_cents: i64,
    pub budget_cents: i64,
    pub fingerprint: String,
}

/// A researcher's edits of a draft, as its form sends them (amounts in major units, `12.50`;
/// a device's box sends "on" when ticked).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DraftEdits {
    pub title: String,
    pub description: String,
    pub minutes: u32,
    pub reward: String,
    pub budget: String,
    #[serde(default)]
    pub desktop: Option<String>,
    #[serde(default)]
    pub tablet: Option<String>,
    #[serde(default)]
    pub mobile: Option<String>,
}
