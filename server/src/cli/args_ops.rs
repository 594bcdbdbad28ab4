//! The command line's database and load-run commands (`db`, `load`): backups and copies, and
//! the load a running server is measured under.

use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// A consistent copy of a SQLite database in a new file, taken while servers use it
    /// (`VACUUM INTO`); for PostgreSQL it says how to use pg_dump.
    Backup {
        /// The backup file (must not exist).
        #[arg(long)]
        out: PathBuf,
    },
    /// Copies every table into a new, empty database, then compares each table's row count
    /// and content hash with the source's; fails unless all agree.
    Copy {
        /// The database to copy (default: --database).
        #[arg(long)]
        from: Option<String>,
        /// The database to fill (created and migrated if need be; must hold no rows).
        #[arg(long)]
        to: String,
    },
    /// Runs one SQL statement (`$1`, `$2`, … for the parameters) and prints its rows as a JSON
    /// array of arrays: maintenance and scripted checks on either backend.
    Query {
        /// The statement.
        sql: String,
        /// Parameters as JSON values (numbers, strings in quotes, null); bare words are strings.
        params: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum LoadCommand {
    /// Crowd workers joining and answering as fast as the server allows.
    Crowd(crate::load::Target),
    /// Crowd load without and with a flood of concurrent wrong-password logins, each from its
    /// own address (serve with --trust-proxy).
    LoginFlood {
        #[command(flatten)]
        target: crate::load::Target,
        /// Concurrent sign-ins.
        #[arg(long, default_value_t = 150)]
        logins: usize,
    },
    /// Sessions of every honest and assisted strategy over the API, against this binary's own
    /// server on a loopback socket with a simulated clock, on the database; prints the share
    /// of each strategy the pay sheet rates low (see docs/src/authenticity.md).
    Authenticity {
        /// An open zero-shot study of a label task with room for every session.
        #[arg(long)]
        study: i64,
        /// Sessions of each strategy (the honest typical ones first: the other humans).
        #[arg(long, default_value_t = 100)]
        sessions: usize,
        /// Only these strategies, in this order (names as the table prints them,
        /// comma-separated); `name=N` runs N sessions of it instead of `--sessions`, so that one
        /// study holds a crowd: `machine-copying=12,honest-typical=28` is 30% copiers who
        /// finish first.
        #[arg(long, value_delimiter = ',')]
        strategies: Vec<String>,
        /// A researcher account, to read the pay sheet (its password from CLUES_PASSWORD).
        #[arg(long, default_value = "demo")]
        user: String,
        #[arg(long, env = "CLUES_PASSWORD", hide_env_values = true)]
        password: String,
    },
    /// Each export once, crowd load during two dashboards and a bundle, then an export soak.
    ExportSoak {
        #[command(flatten)]
        target: crate::load::Target,
        #[command(flatten)]
        researcher: Researcher,
        /// Seconds of back-to-back exports.
        #[arg(long, default_value_t = 60)]
        soak: u64,
    },
    /// The crowd alone, then beside every export at once (each format twice, the majority
    /// predictions, two dashboards): the slowest answer and p99 of each, with their ratio.
    CrowdFirst {
        #[command(flatten)]
        target: crate::load::Target,
        #[command(flatten)]
        researcher: Researcher,
    },
    /// Another study's pay sheet and dashboard (WATCHED's) asked for every second on a quiet
    /// server, then while the crowd answers --study: each one's times and their ratio.
    OtherStudy {
        #[command(flatten)]
        target: crate::load::Target,
        #[command(flatten)]
        researcher: Researcher,
        #[arg(long)]
        watched: i64,
    },
    /// Adds finished synthetic workers to a study until it has about ROWS more annotation rows
    /// (on the database; for load runs, not for real studies).
    Fill {
        #[arg(long)]
        study: i64,
        #[arg(long, default_value_t = 300_000)]
        rows: u64,
        /// Names the workers fill-<tag>-<study>-<run>-<n> (<run>: when it ran, in ns).
        #[arg(long, default_value = "load")]
        tag: String,
    },
}

/// The researcher account a load run downloads as.
#[derive(Debug, Clone, clap::Args)]
pub struct Researcher {
    /// A researcher account (its password from CLUES_PASSWORD).
    #[arg(long, default_value = "demo")]
    pub user: String,
    #[arg(long, env = "CLUES_PASSWORD", hide_env_values = true)]
    pub password: String,
}
