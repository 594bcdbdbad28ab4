//! The command line of the `clues-lab` binary: serve, import, user management and scoring.
//! Errors are printed once, as `error: ...`, with a non-zero exit status.

use crate::error::{Result, ServerError};
use crate::{clues, db, demo, router, score};
use app::domain::people::Role;
use app::pages::OUTPUT_NAME;
use app::ssr::{auth, catalog, state::AppState, study};
use clap::{Parser, Subcommand, ValueEnum};
use leptos::config::LeptosOptions;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "clues-lab",
    version,
    about = "Few-shot studies of humans and machines on the same NLU test sets (CLUES)."
)]
pub struct Cli {
    /// SQLite database URL; the file is created on first use.
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
    /// Configure crowd studies (the same rules as the admin pages).
    #[command(subcommand)]
    Study(StudyCommand),
    /// The researcher report of human scores (the dashboard's tables), or the study bundle.
    Report(ReportArgs),
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
}

#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Create a study of an imported task and print its id and worker link.
    Create(StudyCreateArgs),
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
    #[arg(long, value_delimiter = ',', default_value = "0,10,20,30")]
    pub scenarios: Vec<u32>,
    /// Annotators per scenario.
    #[arg(long, default_value_t = 3)]
    pub annotators: u32,
    /// The training split humans train on (1-based).
    #[arg(long, default_value_t = 1)]
    pub split: u32,
    /// Pay in cents per hour.
    #[arg(long, default_value_t = 1200)]
    pub rate_cents: u32,
    /// Flag workers this far below the mean training S1 of the others in their scenario.
    #[arg(long, default_value_t = 0.2)]
    pub margin: f64,
    /// Release a place after this many seconds without activity.
    #[arg(long)]
    pub timeout: Option<u32>,
    /// Completion code shown at the end (generated when not given).
    #[arg(long, default_value = "")]
    pub code: String,
    /// Open the study to workers at once.
    #[arg(long)]
    pub open: bool,
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
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Import the official CLUES JSONL data: a folder of task folders (SST-2, MNLI, CoNLL2003,
    /// WikiANN_EN, SQuAD-v2, ReCoRD) or one task folder. All or nothing; prints a quality report.
    Clues {
        /// The data folder.
        dir: PathBuf,
    },
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
pub struct ScoreArgs {
    /// An official CLUES test file to score against (no database needed).
    #[arg(long, conflicts_with = "task", required_unless_present = "task")]
    pub gold: Option<PathBuf>,
    /// An imported task to score against, e.g. SST-2.
    #[arg(long)]
    pub task: Option<String>,
    /// JSONL, one `{"id": ..., "answer": [strings]}` per test item, official encoding.
    pub predictions: PathBuf,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

pub async fn run(cli: Cli) -> Result<()> {
    // No command: serve with its defaults and environment (LEPTOS_SITE_ROOT, LEPTOS_SITE_ADDR).
    let command = match cli.command {
        Some(command) => command,
        None => Cli::parse_from(["clues-lab", "serve"])
            .command
            .expect("serve parses"),
    };
    match command {
        Command::Serve(args) => serve(&cli.database, args).await,
        Command::Import(ImportCommand::Clues { dir }) => {
            let pool = db::connect(&cli.database).await?;
            let imported = clues::import_dir(&pool, &dir).await?;
            print!("{}", imported.report());
            Ok(())
        }
        Command::User(UserCommand::Add {
            name,
            role,
            no_password,
        }) => {
            let role = Role::from(role);
            let password = if no_password {
                None
            } else {
                Some(read_password()?)
            };
            let pool = db::connect(&cli.database).await?;
            auth::create_user(&pool, &name, role, password).await?;
            println!("added {} {name}", role.as_str());
            Ok(())
        }
        Command::Study(StudyCommand::Create(a)) => {
            let pool = db::connect_existing(&cli.database).await?;
            let config = app::domain::study::StudyConfig {
                scenarios: a.scenarios,
                annotators: a.annotators,
                training_split: a.split,
                hourly_rate_cents: a.rate_cents,
                filter_margin: a.margin,
                item_timeout_secs: a.timeout,
                open: a.open,
                completion_code: a.code,
            };
            let id = study::create(&pool, None, &a.task, &a.name, config).await?;
            println!("created study {id}: workers join at /join/{id}");
            Ok(())
        }
        Command::Report(a) => {
            let pool = db::connect_existing(&cli.database).await?;
            let scope = app::ssr::report::parse_scope(Some(&a.studies))?;
            let loaded = app::ssr::report::load(&pool, &scope).await?;
            let bytes: Vec<u8> = match a.format {
                ReportFormat::Markdown => {
                    app::domain::report::layout::markdown(&loaded.report()).into()
                }
                ReportFormat::Csv => {
                    app::domain::report::layout::scores_csv(&loaded.report()).into()
                }
                ReportFormat::Json => app::ssr::export::scores_json(&loaded.report())?.into(),
                ReportFormat::Bundle => {
                    if a.out.is_none() {
                        return Err(ServerError::Usage(
                            "--format bundle needs --out <file>".into(),
                        ));
                    }
                    let (bytes, hash) = app::ssr::export::bundle(&pool, &loaded).await?;
                    eprintln!("content hash (SHA-256 of SHA256SUMS): {hash}");
                    bytes
                }
            };
            match &a.out {
                Some(path) => std::fs::write(path, bytes)
                    .map_err(|e| ServerError::io(format!("cannot write {}", path.display()), e))?,
                None => {
                    use std::io::Write;
                    std::io::stdout()
                        .write_all(&bytes)
                        .map_err(|e| ServerError::io("cannot write the report", e))?
                }
            }
            Ok(())
        }
        Command::Study(StudyCommand::List) => {
            let pool = db::connect_existing(&cli.database).await?;
            for s in study::list(&pool).await? {
                println!(
                    "{}\t{}\t{}\t{}\t/join/{}\t{} workers, {} finished",
                    s.id,
                    s.name,
                    s.task,
                    if s.config.open { "open" } else { "closed" },
                    s.id,
                    s.workers,
                    s.finished
                );
            }
            Ok(())
        }
        Command::Score(args) => {
            let report = match (&args.gold, &args.task) {
                (Some(gold), _) => {
                    let (golds, family) = score::read_gold_file(gold)?;
                    let preds = score::read_predictions(&args.predictions)?;
                    score::score(
                        &golds,
                        family,
                        &preds,
                        &args.predictions.display().to_string(),
                    )?
                    .render(&gold.display().to_string())
                }
                (None, Some(task)) => {
                    let pool = db::connect_existing(&cli.database).await?;
                    let (task_id, spec, _) = catalog::load_spec(&pool, task).await?;
                    let golds: Vec<score::GoldItem> = catalog::test_examples(&pool, task_id)
                        .await?
                        .into_iter()
                        .map(|e| score::GoldItem {
                            id: e.id,
                            gold: e.gold,
                        })
                        .collect();
                    let preds = score::read_predictions(&args.predictions)?;
                    score::score(
                        &golds,
                        spec.family,
                        &preds,
                        &args.predictions.display().to_string(),
                    )?
                    .render(&format!("task {task}"))
                }
                (None, None) => {
                    return Err(ServerError::Usage(
                        "score needs --gold <file> or --task <name>".into(),
                    ))
                }
            };
            print!("{report}");
            Ok(())
        }
    }
}

fn read_password() -> Result<String> {
    if let Ok(p) = std::env::var("CLUES_PASSWORD") {
        return Ok(p);
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| ServerError::io("cannot read the password from stdin", e))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

async fn serve(database: &str, args: ServeArgs) -> Result<()> {
    let addr = match args.addr {
        Some(addr) => addr,
        None => match std::env::var("LEPTOS_SITE_ADDR") {
            Ok(a) => a
                .parse()
                .map_err(|e| ServerError::Usage(format!("LEPTOS_SITE_ADDR {a:?}: {e}")))?,
            Err(_) => SocketAddr::from(([127, 0, 0, 1], 3000)),
        },
    };
    let pool = db::connect(database).await?;
    if !args.no_demo {
        if let Some(imported) = demo::ensure_demo(&pool).await? {
            eprint!("loaded the demo study:\n{}", imported.report());
        }
    }
    let pkg = std::path::Path::new(&args.site_root)
        .join("pkg")
        .join(format!("{OUTPUT_NAME}.js"));
    if !pkg.exists() {
        tracing::warn!(
            "{} is missing: pages will render but not hydrate (build with .ci/build)",
            pkg.display()
        );
    }
    let leptos_options = LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_root(args.site_root.as_str())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build();
    let state = AppState {
        pool,
        leptos_options,
        secure_cookies: args.secure_cookies,
    };
    let app = router::app(state);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| ServerError::io(format!("cannot listen on {addr}"), e))?;
    println!("listening on http://{addr}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| ServerError::io("server stopped", e))
}
