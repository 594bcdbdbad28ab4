//! The command line's crowd-platform commands (`platform`): publish a study on Prolific or
//! MTurk, keep it in step, approve, pay; each previewed with `--dry-run`, and the calls it
//! writes run to their end before it returns. Also the accounts' status and the stand-ins.

use clap::{Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlatformArg {
    Prolific,
    Mturk,
}

impl PlatformArg {
    pub fn platform(self) -> domain::platform::Platform {
        match self {
            PlatformArg::Prolific => domain::platform::Platform::Prolific,
            PlatformArg::Mturk => domain::platform::Platform::Mturk,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuleArg {
    /// More failed attention checks than the study allows.
    FailedAttention,
}

/// What every platform command reads its accounts from.
#[derive(Debug, clap::Args)]
pub struct Accounts {
    /// A file of `NAME=value` lines (PROLIFIC_TOKEN, MTURK_ACCESS_KEY_ID, ...); the
    /// environment's settings go first. Never stored in the database.
    #[arg(long, env = "CLUES_PLATFORM_CREDENTIALS")]
    pub credentials: Option<PathBuf>,
}

/// What every step of a published study is run with: the study, the accounts, and
/// `--dry-run` to stop at the preview.
#[derive(Debug, clap::Args)]
pub struct Step {
    #[arg(long)]
    pub study: i64,
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub accounts: Accounts,
}

#[derive(Debug, Subcommand)]
pub enum PlatformCommand {
    /// Which accounts are configured, live or sandbox, and whether each works (one cheap call).
    Status {
        #[command(flatten)]
        accounts: Accounts,
    },
    /// Publish a study: its draft (derived from the study, or the one saved on its page), the
    /// cost with the platform's fees, then (without --dry-run) the platform's study or HIT.
    Publish {
        #[arg(long)]
        study: i64,
        /// The platform, for a study with no saved draft.
        #[arg(long, value_enum)]
        on: Option<PlatformArg>,
        /// MTurk's sandbox (no money moves).
        #[arg(long)]
        sandbox: bool,
        /// The site's public address, which the study link starts with
        /// (https://lab.example.org), for a study with no saved draft.
        #[arg(long)]
        origin: Option<String>,
        /// The most the publication may spend with fees, in the account's currency (12.50).
        #[arg(long)]
        budget: Option<String>,
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        accounts: Accounts,
    },
    /// Read the submissions back and keep the study in step (release returned places, ask for
    /// places the study reclaimed, put every worker who started on the task's list).
    Sync {
        #[command(flatten)]
        step: Step,
    },
    /// Approve everyone who finished (or reject by a stated rule, with its message).
    Approve {
        #[command(flatten)]
        step: Step,
        /// Reject the submissions that break this rule of the report's exclusions.
        #[arg(long, value_enum)]
        reject_by: Option<RuleArg>,
        /// The message a rejected worker reads (100 to 1,024 characters; default: the rule's).
        #[arg(long)]
        message: Option<String>,
    },
    /// Top every approved worker's pay up to the hourly rate for the time the server measured.
    Pay {
        #[command(flatten)]
        step: Step,
    },
    /// The study's ledger: every platform call, its state and the platform's answer.
    Ledger {
        #[arg(long)]
        study: i64,
    },
    /// Loopback stand-ins of Prolific's and MTurk's APIs, for a rehearsal before any money
    /// moves (point PROLIFIC_API_URL and MTURK_ENDPOINT_URL at them); until Ctrl-C.
    StandIn {
        #[arg(long, default_value = "127.0.0.1:0")]
        prolific_addr: SocketAddr,
        #[arg(long, default_value = "127.0.0.1:0")]
        mturk_addr: SocketAddr,
        /// The token the Prolific stand-in takes.
        #[arg(long, default_value = "stand-in-token")]
        prolific_token: String,
        #[arg(long, default_value = "AKIDSTANDIN")]
        mturk_access_key: String,
        #[arg(long, default_value = "stand-in-secret")]
        mturk_secret_key: String,
    },
}
