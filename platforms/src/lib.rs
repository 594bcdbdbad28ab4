//! The crowd platforms' APIs, for running a study on them from the dashboard and the command
//! line: Prolific's REST API (`prolific`) and MTurk through the official SDK (`mturk`), each
//! call a leased job of the `platform` queue whose ledger row is written before it is sent
//! (`run`), the plans that write those calls after a preview (`flow`), the operator's accounts
//! (`accounts`), and loopback stand-ins of both APIs (`standin`) for tests and rehearsals.
//! Depends on `store` and `domain` only; the server wires it, the app shows it.

pub mod accounts;
pub mod flow;
pub mod mturk;
pub mod prolific;
pub mod run;
pub mod standin;

use domain::platform::Platform;

/// How a call to a platform went wrong, by what it means for sending it again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// It never reached the platform (no connection): sending it again is safe.
    #[error("{0}")]
    Unsent(String),
    /// The platform did nothing and asked to be called later (429, a throttling error).
    #[error("{0}")]
    Busy(String),
    /// Its answer was lost (a time-out, a dropped connection): it may or may not have been
    /// carried out; what exists is read before anything is sent again.
    #[error("{0}")]
    Unknown(String),
    /// The platform answered that it failed (a 5xx): most likely nothing was done, but what
    /// exists is read before anything is sent again.
    #[error("{0}")]
    Failed(String),
    /// The platform refused it for good (a 4xx with its words): nothing was done.
    #[error("{0}")]
    Refused(String),
    /// The platform says it was done already (MTurk's request token seen before).
    #[error("{0}")]
    AlreadyDone(String),
}

/// The client of one platform account.
#[derive(Clone, Debug)]
pub enum Site {
    Prolific(prolific::Client),
    Mturk(mturk::Client),
}

impl Site {
    /// The clients of every account given.
    pub fn all(accounts: &accounts::Accounts) -> Vec<Site> {
        let mut out = Vec::new();
        if let Some(a) = &accounts.prolific {
            out.push(Site::Prolific(prolific::Client::new(a.clone())));
        }
        if let Some(a) = &accounts.mturk {
            out.push(Site::Mturk(mturk::Client::new(a)));
        }
        out
    }

    pub fn platform(&self) -> Platform {
        match self {
            Site::Prolific(_) => Platform::Prolific,
            Site::Mturk(_) => Platform::Mturk,
        }
    }

    /// Whether it is MTurk's sandbox.
    pub fn sandbox(&self) -> bool {
        match self {
            Site::Prolific(_) => false,
            Site::Mturk(c) => c.sandbox,
        }
    }

    /// One cheap authenticated call: what the account says of itself (its balance where the
    /// platform tells it), or why it does not work.
    pub async fn check(&self) -> Result<String, Fault> {
        match self {
            Site::Prolific(c) => c.check().await,
            Site::Mturk(c) => c.check().await,
        }
    }
}
