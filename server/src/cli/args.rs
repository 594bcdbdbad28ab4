//! The command line's commands and arguments (clap): what `clues-lab --help` lists.

use clap::{Parser, Subcommand, ValueEnum};
use domain::people::Role;
use domain::settings;
use std::net::SocketAddr;
use std::path::PathBuf;

pub use super::args_data::{CrossfitCommand, CrossfitSourceArgs, ImportCommand, KindArg};
pub use super::args_ops::{DbCommand, LoadCommand, Researcher};
pub use super::args_platform::PlatformCommand;

#[derive(Debug, Parser)]
#[command(
    name = "clues-lab",
    version,
    about = "Few-shot studies of humans and machines on the same NLU test sets (CLUES)."
)]
pub struct Cli {
    /// Database URL: sqlite://FILE (created on first use) or postgres://USER@HOST/DB (the
    /// database is created if the role may; the schema is brought up to date either way).
    #[arg(
        long,
        global = true,
        env = "CLUES_DATABASE_URL",
        default_value = "sqlite://clues-lab.db"
    )]
    pub database: String,
    /// Without a command, `serve` runs (as `cargo leptos watch` expects).
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the web server (loads the built-in demo study on first start).
    Serve(ServeArgs),
    /// Import task data.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Manage accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Score a predictions file with S1 (the official scoring is the last number printed).
    Score(ScoreArgs),
    /// CLUES-style sampling from a pool of CLUES JSONL lines: a fixed test set first, then for
    /// each of five seeds nested k-shot training files (10 within 20 within 30).
    Sample(SampleArgs),
    /// Configure crowd studies (the same rules as the admin pages).
    #[command(subcommand)]
    Study(StudyCommand),
    /// The researcher report of human scores (the dashboard's tables), or the study bundle.
    Report(ReportArgs),
    /// The trivial answers of each task (always no answer, the shots' majority label, the most
    /// often listed entity, a gazetteer of the shots' entities) scored on its test set.
    References(ReferencesArgs),
    /// Annotators per scenario a study needs to find a difference in S1 with a given power,
    /// from a standard deviation or from pilot studies' variance components in the database.
    Plan(super::PlanArgs),
    /// The report's tests and intervals on simulated studies (a crossed logistic crowd):
    /// each test's type I error and power, each interval's coverage. A benchmark, not a test.
    Simulate(super::SimulateArgs),
    /// CrossFit tasks: metrics, runs, baselines, partitions and average relative gain.
    #[command(subcommand)]
    Crossfit(CrossfitCommand),
    /// Evaluate a span-extraction ONNX model on a task's test set (stored, scored with S1).
    #[cfg(feature = "models")]
    Eval(learners::command::EvalArgs),
    /// In-context learning: a language-model server (OpenAI completions API) answers each test
    /// item from a prompt of the task description and the k shots; stored and scored.
    #[cfg(feature = "models")]
    Icl(learners::icl::IclArgs),
    /// The built-in MiniLM baseline: a span head trained on each shot group, scored on the test
    /// set; with --finetune the whole encoder (MiniLM or --weights: BERT, RoBERTa, DeBERTa).
    #[cfg(feature = "models")]
    Baseline(learners::command::BaselineArgs),
    /// Run queued jobs of every kind (the frozen baseline, fine-tuning, ONNX evaluations,
    /// CrossFit's fine-tuning) from the recipes they were queued with, beside workers on other
    /// machines; on SIGTERM the job held is handed back to the queue.
    #[cfg(feature = "models")]
    Worker(learners::worker::WorkerArgs),
    /// Prompt-based fine-tuning (the paper's PT, as LM-BFF): an encoder's masked-LM head learns
    /// a label task's shots through a template and a verbaliser; stored and scored.
    #[cfg(feature = "models")]
    Prompt(learners::jobs::PromptArgs),
    /// Examples per second of the model track beside a Python peer on the same model and test set.
    #[cfg(feature = "models")]
    Bench(learners::bench::BenchArgs),
    /// Write an int8 copy of a fine-tuned span model folder that has its float checkpoint
    /// (model.safetensors, config.json; `baseline --finetune --export` writes them).
    #[cfg(feature = "models")]
    Quantize(learners::command::QuantizeArgs),
    /// Load runs against a running server (submits/s, p50/p99, its memory), and synthetic rows.
    #[command(subcommand)]
    Load(LoadCommand),
    /// Back up the database, or copy it into another one (SQLite to PostgreSQL and back).
    #[command(subcommand)]
    Db(DbCommand),
    /// Run a study on Prolific or MTurk: publish, keep in step, approve, pay (each previewed
    /// with --dry-run), the accounts' status, and stand-ins of both APIs for a rehearsal.
    #[command(subcommand)]
    Platform(PlatformCommand),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReportFormat {
    Markdown,
    Csv,
    Json,
    /// The study bundle (tar); needs --out.
    Bundle,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Study ids, comma-separated; every study when left out.
    #[arg(long, default_value = "")]
    pub studies: String,
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ReportFormat,
    /// Write to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Include the synthetic workers `load fill` made (the report then says so).
    #[arg(long)]
    pub synthetic: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReferencesArgs {
    /// A task (repeat for several); every imported task when left out.
    #[arg(long)]
    pub task: Vec<String>,
    /// Any-of scoring instead of the official one.
    #[arg(long)]
    pub any_of: bool,
}

#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Create a study of an imported task and print its id and worker link.
    Create(Box<StudyCreateArgs>),
    /// List the studies with their links and how many workers took part.
    List,
}

#[derive(Debug, clap::Args)]
pub struct StudyCreateArgs {
    /// The task, e.g. SST-2 or demo-SST-2.
    #[arg(long)]
    pub task: String,
    #[arg(long)]
    pub name: String,
    /// Shots per scenario, 0 = zero-shot.
    #[arg(long, value_delimiter = ',', default_value = "0,10,20,30", value_parser = shots)]
    pub scenarios: Vec<u32>,
    /// Annotators per scenario.
    #[arg(long, default_value_t = 3, value_parser = annotators, allow_hyphen_values = true)]
    pub annotators: u32,
    /// The nesting chain of training files that begins with this split of the smallest k
    /// (e.g. split 1 of SQuAD v2: 10_1 ⊂ 20_5 ⊂ 30_5; `import clues` lists the chains).
    #[arg(long, default_value_t = 1, conflicts_with = "shot_group")]
    pub split: u32,
    /// The training file of each k, e.g. `10_1,20_5,30_5` (instead of `--split`).
    #[arg(long)]
    pub shot_group: Option<String>,
    /// Accept training sets that are not nested (reports then say so).
    #[arg(long)]
    pub allow_unnested: bool,
    /// Show each worker the training examples in an order of their own (seeded by their
    /// place, recorded in the annotations' positions) instead of the file's order.
    #[arg(long)]
    pub shuffle_training: bool,
    /// A training file of the task whose items every worker answers first, without feedback
    /// (e.g. `10_5`): the same yardstick for every scenario's group; it may share no item with
    /// the study's training sets.
    #[arg(long)]
    pub screening: Option<String>,
    /// Pay in cents per hour.
    #[arg(long, default_value_t = 1200, value_parser = rate_cents, allow_hyphen_values = true)]
    pub rate_cents: u32,
    /// Flag workers this far below the mean training S1 of the others in their scenario.
    #[arg(long, default_value_t = 0.2, value_parser = margin, allow_hyphen_values = true)]
    pub margin: f64,
    /// Release a place after this many seconds without activity.
    #[arg(long, default_value_t = domain::study::DEFAULT_PLACE_TIMEOUT_SECS, value_parser = time_out, allow_hyphen_values = true)]
    pub timeout: u32,
    /// Never release a place, however long it is idle.
    #[arg(long, conflicts_with = "timeout")]
    pub no_timeout: bool,
    /// Completion code shown at the end (generated when not given).
    #[arg(long, default_value = "")]
    pub code: String,
    /// Where Prolific workers return at the end, `{code}` standing for the code (default:
    /// Prolific's completion URL).
    #[arg(long, default_value = "")]
    pub completion_url: String,
    /// Open the study to workers at once.
    #[arg(long)]
    pub open: bool,
    /// A folder with the study's own pages, each file optional: `consent.md` (the consent
    /// text), `questionnaire.json` (questions before and after), `attention.json` (attention
    /// checks), `debriefing.md` (shown at the end). See docs/src/study-pages.md for their format.
    #[arg(long)]
    pub pages: Option<std::path::PathBuf>,
    /// The researcher's contact shown under the consent text (needed with `consent.md`).
    #[arg(long, default_value = "")]
    pub contact: String,
    /// Prolific's no-consent code, for workers who decline.
    #[arg(long, default_value = "")]
    pub no_consent_code: String,
    /// Where a Prolific worker who declines goes (`{code}`: the no-consent code).
    #[arg(long, default_value = "")]
    pub no_consent_url: String,
    /// Flag workers who failed more attention checks than this (default: report only).
    #[arg(long)]
    pub attention_max_failures: Option<u32>,
    /// The level of the analysis plan's tests (frozen when the first worker arrives).
    #[arg(long, default_value_t = domain::analysis_plan::DEFAULT_ALPHA, value_parser = alpha)]
    pub alpha: f64,
    /// The analysis plan's primary comparison, e.g. `30 vs 0` (default: the largest k
    /// against zero-shot, or against the smallest k without a zero-shot scenario).
    #[arg(long, value_parser = primary)]
    pub primary: Option<(u32, u32)>,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on [default: $LEPTOS_SITE_ADDR, else 127.0.0.1:3000].
    #[arg(long, env = "CLUES_ADDR")]
    pub addr: Option<SocketAddr>,
    /// Folder holding `pkg/` with the browser bundle (built by .ci/build or cargo leptos).
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,
    /// Do not load the demo study.
    #[arg(long)]
    pub no_demo: bool,
    /// Mark session cookies `Secure` (serve over HTTPS).
    #[arg(long, env = "CLUES_SECURE_COOKIES")]
    pub secure_cookies: bool,
    /// Behind a reverse proxy: take the client address from `X-Forwarded-For` (its last entry)
    /// and mark cookies `Secure` when `X-Forwarded-Proto` is https.
    #[arg(long, env = "CLUES_TRUST_PROXY")]
    pub trust_proxy: bool,
    /// New crowd workers one address may bring at once (then one per 10 s); raise it for a
    /// lab whose workers share one address.
    #[arg(long, env = "CLUES_NEW_WORKERS_PER_ADDRESS", default_value_t = 30)]
    pub new_workers_per_address: u32,
    /// Sign-in attempts one address may make at once (then one per 3 s).
    #[arg(long, env = "CLUES_LOGINS_PER_ADDRESS", default_value_t = 20)]
    pub logins_per_address: u32,
    /// Origins besides MTurk's worker and sandbox sites that may show the worker's pages (the
    /// study link, the study and end page) in a frame, comma-separated
    /// (`https://platform.example`); every other page refuses frames.
    #[arg(long, env = "CLUES_FRAME_ANCESTORS", value_delimiter = ',', value_parser = frame_ancestor)]
    pub frame_ancestors: Vec<String>,
    /// Seconds a client has to send a request's headers; an idle keep-alive connection is
    /// closed after as long (a half-sent request does not hold a connection).
    #[arg(long, env = "CLUES_HEADER_TIMEOUT", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Open connections one client address may hold, at most a quarter of the connection
    /// budget; more are closed at once (0: no cap).
    /// Not applied with --trust-proxy, where every connection comes from the proxy: cap
    /// there (nginx `limit_conn`).
    #[arg(long, env = "CLUES_CONNECTIONS_PER_ADDRESS", default_value_t = 256)]
    pub connections_per_address: usize,
    /// Open connections in all; a further one takes the place of the one that has waited
    /// longest (a half-sent request or an idle keep-alive), or where every one is busy is
    /// answered 503 and closed. 0 (the default): the
    /// descriptor limit (raised at start to the hard limit) less a reserve for the database and
    /// files, a quarter of it and at least 128, and at most 16,384.
    #[arg(long, env = "CLUES_MAX_CONNECTIONS", default_value_t = 0)]
    pub max_connections: usize,
    /// The crowd platforms' accounts: a file of `NAME=value` lines (PROLIFIC_TOKEN,
    /// MTURK_ACCESS_KEY_ID, ...), read at start; the environment's settings go first. Never
    /// stored in the database, shown on a page, logged or exported.
    #[arg(long, env = "CLUES_PLATFORM_CREDENTIALS")]
    pub platform_credentials: Option<PathBuf>,
}

// A study's numbers are read with the admin form's rules (`domain::settings`): the same
// messages, naming the field and its range.
fn shots(s: &str) -> Result<u32, String> {
    settings::SHOTS.parse_whole(s)
}

fn annotators(s: &str) -> Result<u32, String> {
    settings::ANNOTATORS.parse_whole(s)
}

fn rate_cents(s: &str) -> Result<u32, String> {
    let cents = s
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|c| c.fract() == 0.0)
        .ok_or_else(|| format!("{s:?} is not a whole number of cents"))?;
    settings::HOURLY_RATE.check(cents / 100.0)?;
    Ok(cents as u32)
}

fn margin(s: &str) -> Result<f64, String> {
    settings::FILTER_MARGIN.parse(s)
}

fn alpha(s: &str) -> Result<f64, String> {
    settings::ALPHA.parse(s)
}

fn primary(s: &str) -> Result<(u32, u32), String> {
    domain::analysis_plan::parse_primary(s)?
        .ok_or_else(|| "name two scenarios, such as \"30 vs 0\"".to_string())
}

fn time_out(s: &str) -> Result<u32, String> {
    settings::TIME_OUT.parse_whole(s)
}

fn frame_ancestor(s: &str) -> Result<String, String> {
    let origin = s.trim().trim_end_matches('/');
    domain::crowd::validate_frame_ancestor(origin).map(|()| origin.to_string())
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    Admin,
    Researcher,
    Worker,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::Admin => Role::Admin,
            RoleArg::Researcher => Role::Researcher,
            RoleArg::Worker => Role::Worker,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user. The password is read from CLUES_PASSWORD, else from the first line of stdin.
    Add {
        name: String,
        #[arg(long, value_enum)]
        role: RoleArg,
        /// Create a worker without a password (workers enter through study links).
        #[arg(long)]
        no_password: bool,
    },
}

#[derive(Debug, clap::Args)]
pub struct SampleArgs {
    /// JSONL, one item per line in the CLUES format.
    #[arg(long)]
    pub pool: PathBuf,
    /// File prefix, e.g. `sst` gives sst_test.jsonl and sst_train_<k>_<split>.jsonl.
    #[arg(long)]
    pub prefix: String,
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, value_delimiter = ',', default_value = "10,20,30")]
    pub ks: Vec<usize>,
    #[arg(long)]
    pub test_size: usize,
    /// k per distinct question (NER's one question per entity type) instead of k in all.
    #[arg(long)]
    pub per_question: bool,
}

#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    /// An official CLUES test file to score against (no database needed).
    #[arg(long, conflicts_with = "task", required_unless_present = "task")]
    pub gold: Option<PathBuf>,
    /// An imported task to score against, e.g. SST-2.
    #[arg(long)]
    pub task: Option<String>,
    /// JSONL, one `{"id": ..., "answer": [strings]}` per test item, official encoding.
    pub predictions: PathBuf,
    /// Print one JSON object (`s1_official`, `s1_any_of`, `items`, `family`, `target`).
    #[arg(long)]
    pub json: bool,
}
