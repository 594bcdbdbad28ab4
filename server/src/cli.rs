//! The command line of the `clues-lab` binary: serve, import, user management and scoring.
//! Errors are printed once, as `error: ...`, with a non-zero exit status.

use crate::error::{Result, ServerError};
use crate::{clues, db, demo, router, score};
use app::domain::crossfit::baseline::Baseline;
use app::domain::crossfit::partition::Partition;
use app::domain::crossfit::sampler::{SampleKind, K_CLASSIFICATION, K_TEXT_TO_TEXT};
use app::domain::people::Role;
use app::pages::OUTPUT_NAME;
use app::ssr::crossfit as xf;
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
    /// CLUES-style sampling from a pool of CLUES JSONL lines: a fixed test set first, then for
    /// each of five seeds nested k-shot training files (10 within 20 within 30).
    Sample(SampleArgs),
    /// Configure crowd studies (the same rules as the admin pages).
    #[command(subcommand)]
    Study(StudyCommand),
    /// The researcher report of human scores (the dashboard's tables), or the study bundle.
    Report(ReportArgs),
    /// CrossFit tasks: metrics, runs, baselines, partitions and average relative gain.
    #[command(subcommand)]
    Crossfit(CrossfitCommand),
    /// Evaluate a span-extraction ONNX model on a task's test set (stored, scored with S1).
    Eval(crate::model::command::EvalArgs),
    /// The built-in MiniLM baseline: a span head trained on each shot group, scored on the test set.
    Baseline(crate::model::command::BaselineArgs),
    /// Examples per second of the model track beside a Python peer on the same model and test set.
    Bench(crate::model::command::BenchArgs),
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
    /// Where Prolific workers return at the end, `{code}` standing for the code (default:
    /// Prolific's completion URL).
    #[arg(long, default_value = "")]
    pub completion_url: String,
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
    /// Import CrossFit text-to-text tasks: a folder (searched recursively) of
    /// `<task>_<k>_<seed>_{train,dev,test}.tsv` files, with an optional `tasks.json`
    /// (`{"<task>": {"ontology": "cls/...", "metric": "ACC"}}`). All or nothing.
    Crossfit { dir: PathBuf },
    /// Sample a CrossFit task from a source file of `input<TAB>output` lines for the five seeds
    /// (numpy-exact), with the given test file as the test set of every seed.
    CrossfitSource(CrossfitSourceArgs),
    /// Import another system's predictions for a task's test set (scored and reported like a model).
    Predictions(crate::model::command::ImportPredictionsArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// k per output label.
    Classification,
    /// The first k lines.
    TextToText,
}

#[derive(Debug, clap::Args)]
pub struct CrossfitSourceArgs {
    #[arg(long)]
    pub task: String,
    /// The training source: `input<TAB>output` per line.
    #[arg(long)]
    pub source: PathBuf,
    /// The test set, the same for every seed.
    #[arg(long)]
    pub test: PathBuf,
    #[arg(long, value_enum)]
    pub kind: KindArg,
    /// Shots: per label for classification (default 16), lines otherwise (default 32).
    #[arg(long)]
    pub k: Option<usize>,
    #[arg(long, default_value = "")]
    pub ontology: String,
    #[arg(long, default_value = "ACC")]
    pub metric: String,
}

#[derive(Debug, Subcommand)]
pub enum CrossfitCommand {
    /// The task -> metric table, with seeds, k and test sizes.
    Tasks,
    /// Change a task's ontology path or metric.
    Set {
        #[arg(long)]
        task: String,
        #[arg(long)]
        ontology: Option<String>,
        #[arg(long)]
        metric: Option<String>,
    },
    /// Store a run: a file with one prediction per line, in the order of the test file.
    Run {
        #[arg(long)]
        method: String,
        #[arg(long)]
        task: String,
        #[arg(long)]
        seed: u32,
        predictions: PathBuf,
    },
    /// Run a reference method (majority-output or nearest-input) on every seed of a task, or
    /// of every task.
    Baseline {
        #[arg(long)]
        method: String,
        #[arg(long)]
        task: Option<String>,
    },
    /// Import a partition (CrossFit's JSON: {"train": [...], "dev": [...], "test": [...]}).
    PartitionImport {
        #[arg(long)]
        name: String,
        file: PathBuf,
    },
    /// Print a stored partition as JSON.
    PartitionExport { name: String },
    /// Make a task for human studies from one seed of a CrossFit task (`xf-<task>-s<seed>`):
    /// workers answer in a free-text box, scored with the task's metric.
    StudyTask {
        #[arg(long)]
        task: String,
        #[arg(long, default_value_t = 100)]
        seed: u32,
    },
    /// Average relative gain of a method over a baseline on a partition's test tasks.
    Arg {
        #[arg(long)]
        partition: String,
        #[arg(long)]
        method: String,
        #[arg(long)]
        baseline: String,
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
        Command::Import(ImportCommand::Crossfit { dir }) => {
            let pool = db::connect(&cli.database).await?;
            let tasks = crate::crossfit::load_dir(&dir, "crossfit")?;
            report_stored(&pool, tasks).await
        }
        Command::Import(ImportCommand::CrossfitSource(a)) => {
            let (kind, k) = match a.kind {
                KindArg::Classification => {
                    (SampleKind::Classification, a.k.unwrap_or(K_CLASSIFICATION))
                }
                KindArg::TextToText => (SampleKind::TextToText, a.k.unwrap_or(K_TEXT_TO_TEXT)),
            };
            let meta = crate::crossfit::TaskMeta {
                ontology: a.ontology,
                metric: a.metric,
            };
            let task = crate::crossfit::load_source(
                &a.task, &a.source, &a.test, kind, k, meta, "sampled",
            )?;
            let pool = db::connect(&cli.database).await?;
            report_stored(&pool, vec![task]).await
        }
        Command::Crossfit(c) => {
            let pool = db::connect_existing(&cli.database).await?;
            crossfit_command(&pool, c).await
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
            let shot_group = match &a.shot_group {
                Some(text) => app::domain::shots::parse_files(text)
                    .map_err(|e| ServerError::Usage(format!("--shot-group: {e}")))?,
                None => Vec::new(),
            };
            let config = app::domain::study::StudyConfig {
                scenarios: a.scenarios,
                annotators: a.annotators,
                training_split: shot_group.first().map_or(a.split, |f| f.1),
                shot_group,
                allow_unnested: a.allow_unnested,
                hourly_rate_cents: a.rate_cents,
                filter_margin: a.margin,
                item_timeout_secs: a.timeout,
                open: a.open,
                completion_code: a.code,
                completion_url: a.completion_url,
            };
            let id = study::create(&pool, None, &a.task, &a.name, config).await?;
            let made = study::summary_of(&pool, id).await?;
            println!("created study {id}: workers join at /join/{id}");
            println!("training sets: {}", made.shot_group);
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
                    app::domain::report::scores_csv::scores_csv(&loaded.report()).into()
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
                    "{}\t{}\t{}\t{}\t{}\t/join/{}\t{} workers, {} finished",
                    s.id,
                    s.name,
                    s.task,
                    s.shot_group,
                    if s.config.open { "open" } else { "closed" },
                    s.id,
                    s.workers,
                    s.finished
                );
            }
            Ok(())
        }
        Command::Sample(a) => sample_clues(&a),
        Command::Eval(a) => crate::model::command::eval(&cli.database, a).await,
        Command::Baseline(a) => crate::model::command::baseline(&cli.database, a).await,
        Command::Bench(a) => crate::model::command::bench(&cli.database, a).await,
        Command::Import(ImportCommand::Predictions(a)) => {
            crate::model::command::import_predictions(&cli.database, a).await
        }
        Command::Score(args) => {
            let render = |r: score::ScoreReport, what: &str| {
                if args.json {
                    r.to_json(what)
                } else {
                    r.render(what)
                }
            };
            let report = match (&args.gold, &args.task) {
                (Some(gold), _) => {
                    let (golds, family) = score::read_gold_file(gold)?;
                    let preds = score::read_predictions(&args.predictions)?;
                    let report = score::score(
                        &golds,
                        family,
                        &preds,
                        &args.predictions.display().to_string(),
                    )?;
                    render(report, &gold.display().to_string())
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
                    let report = score::score(
                        &golds,
                        spec.family,
                        &preds,
                        &args.predictions.display().to_string(),
                    )?;
                    render(report, &format!("task {task}"))
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

async fn report_stored(
    pool: &sqlx::SqlitePool,
    tasks: Vec<app::ssr::crossfit::NewTask>,
) -> Result<()> {
    let outcomes = xf::store_tasks(pool, &tasks).await?;
    for (t, o) in tasks.iter().zip(outcomes) {
        let seeds: std::collections::BTreeSet<u32> = t.files.iter().map(|f| f.seed).collect();
        println!(
            "{}: {} ({} files, seeds {:?}, metric {}{})",
            t.name,
            match o {
                xf::Outcome::Imported => "imported",
                xf::Outcome::Unchanged => "unchanged",
            },
            t.files.len(),
            seeds,
            t.metric.name(),
            if t.ontology.is_empty() {
                ", no ontology path: set one with `crossfit set`"
            } else {
                ""
            }
        );
    }
    Ok(())
}

async fn crossfit_command(pool: &sqlx::SqlitePool, c: CrossfitCommand) -> Result<()> {
    match c {
        CrossfitCommand::Tasks => {
            for t in xf::list_tasks(pool).await? {
                println!(
                    "{}\t{}\t{}\tseeds {:?}\tk {:?}\t{} test lines",
                    t.name,
                    t.ontology,
                    t.metric.name(),
                    t.seeds,
                    t.ks,
                    t.test_items
                );
            }
        }
        CrossfitCommand::Set {
            task,
            ontology,
            metric,
        } => {
            let current = xf::list_tasks(pool)
                .await?
                .into_iter()
                .find(|t| t.name == task)
                .ok_or_else(|| ServerError::Usage(format!("no CrossFit task named {task:?}")))?;
            xf::set_task_meta(
                pool,
                &task,
                &ontology.unwrap_or(current.ontology),
                &metric.unwrap_or_else(|| current.metric.name().to_string()),
            )
            .await?;
            println!("updated {task}");
        }
        CrossfitCommand::Run {
            method,
            task,
            seed,
            predictions,
        } => {
            let text = std::fs::read_to_string(&predictions).map_err(|e| {
                ServerError::io(format!("cannot read {}", predictions.display()), e)
            })?;
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let score = xf::store_run(pool, &method, &task, seed, "predictions", &lines).await?;
            println!(
                "{method} on {task} (seed {seed}): {} = {}",
                score.metric.name(),
                fmt_value(score.value)
            );
        }
        CrossfitCommand::Baseline { method, task } => {
            let b = Baseline::parse(&method).ok_or_else(|| {
                ServerError::Usage(format!(
                    "{method:?}: the reference methods are majority-output and nearest-input"
                ))
            })?;
            let tasks = match task {
                Some(t) => vec![t],
                None => xf::list_tasks(pool)
                    .await?
                    .into_iter()
                    .map(|t| t.name)
                    .collect(),
            };
            for t in tasks {
                for (seed, score) in crate::crossfit::run_baseline(pool, b, &t).await? {
                    println!(
                        "{} on {t} (seed {seed}): {} = {}",
                        b.name(),
                        score.metric.name(),
                        fmt_value(score.value)
                    );
                }
            }
        }
        CrossfitCommand::PartitionImport { name, file } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| ServerError::io(format!("cannot read {}", file.display()), e))?;
            let p = Partition::from_json(&text)
                .map_err(|e| ServerError::data(file.display().to_string(), None, e))?;
            xf::save_partition(pool, &name, &p).await?;
            println!(
                "stored partition {name}: {} train, {} dev, {} test tasks",
                p.train.len(),
                p.dev.len(),
                p.test.len()
            );
        }
        CrossfitCommand::StudyTask { task, seed } => {
            let (name, k) = xf::make_study_task(pool, &task, seed).await?;
            println!("created the study task {name} (scenarios 0 and {k}): study create --task {name} --scenarios 0,{k} …");
        }
        CrossfitCommand::PartitionExport { name } => {
            print!("{}", xf::partition(pool, &name).await?.to_json())
        }
        CrossfitCommand::Arg {
            partition,
            method,
            baseline,
        } => {
            let r = xf::arg_report(pool, &partition, &method, &baseline).await?;
            for (seed, arg) in &r.seeds {
                for g in &arg.gains {
                    println!(
                        "seed {seed}\t{}\t{:.4} vs {:.4}\t{}",
                        g.task,
                        g.score,
                        g.baseline,
                        g.gain.map_or("undefined (baseline 0)".into(), |x| format!(
                            "{:+.2}%",
                            100.0 * x
                        ))
                    );
                }
                if !arg.missing.is_empty() {
                    println!("seed {seed}\tno runs for: {}", arg.missing.join(", "));
                }
                println!(
                    "seed {seed}\tARG {}",
                    arg.arg
                        .map_or("undefined".into(), |x| format!("{:+.2}%", 100.0 * x))
                );
            }
            match r.spread {
                Some(s) => println!(
                    "ARG over {} seeds: {:+.2}% ± {:.2}%",
                    s.n,
                    100.0 * s.mean,
                    100.0 * s.std_pop
                ),
                None => println!("ARG: undefined (no seed with both runs)"),
            }
        }
    }
    Ok(())
}

fn fmt_value(v: Option<f64>) -> String {
    v.map_or("undefined".into(), |x| format!("{x:.6}"))
}

/// `sample`: writes `<prefix>_test.jsonl` and `<prefix>_train_<k>_<split>.jsonl`, split i for
/// the i-th of the seeds 100, 13, 21, 42, 87; lines are copied byte for byte from the pool.
fn sample_clues(a: &SampleArgs) -> Result<()> {
    use app::domain::crossfit::nested::nested_sample;
    let label = a.pool.display().to_string();
    let text = std::fs::read_to_string(&a.pool)
        .map_err(|e| ServerError::io(format!("cannot read {label}"), e))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut groups = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l)
            .map_err(|e| ServerError::data(&label, Some(i + 1), format!("malformed JSON: {e}")))?;
        let question = v
            .get("question")
            .and_then(|q| q.as_str())
            .ok_or_else(|| ServerError::data(&label, Some(i + 1), "needs a `question` string"))?;
        groups.push(if a.per_question {
            question.to_string()
        } else {
            String::new()
        });
    }
    let seeds = app::domain::crossfit::sampler::CROSSFIT_SEEDS;
    let s = nested_sample(&groups, &a.ks, &seeds, a.test_size, 0)
        .map_err(|e| ServerError::data(&label, None, e))?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| ServerError::io(format!("cannot create {}", a.out.display()), e))?;
    let write = |name: String, idx: &[usize]| -> Result<()> {
        let body: String = idx.iter().map(|&i| format!("{}\n", lines[i])).collect();
        let path = a.out.join(&name);
        std::fs::write(&path, body)
            .map_err(|e| ServerError::io(format!("cannot write {}", path.display()), e))?;
        println!("{name}: {} lines", idx.len());
        Ok(())
    };
    write(format!("{}_test.jsonl", a.prefix), &s.test)?;
    for (split, (_, sets)) in s.seeds.iter().enumerate() {
        for (k, idx) in sets {
            write(format!("{}_train_{k}_{}.jsonl", a.prefix, split + 1), idx)?;
        }
    }
    Ok(())
}
