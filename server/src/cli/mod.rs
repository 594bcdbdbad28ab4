//! The command line of the `clues-lab` binary: serve, import, user management and scoring.
//! Errors are printed once, as `error: ...`, with a non-zero exit status.

mod args;
mod args_data;
mod args_ops;
mod args_platform;
mod crossfit;
mod pages;
mod people;
mod plan;
mod platform;
mod report;
mod sample;
mod score;
mod serve;
mod simulate;
mod simulate_bundles;
mod studies;

use crate::clues;
use store::db::cli as db;
use store::error::{Error, Result};

pub use args::*;
use clap::Parser;
use crossfit::{crossfit_command, report_stored};
use domain::crossfit::sampler::{SampleKind, K_CLASSIFICATION, K_TEXT_TO_TEXT};
pub use plan::PlanArgs;
use sample::sample_clues;
use serve::serve;
pub use simulate::SimulateArgs;
use std::process::ExitCode;

pub fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|e| {
        if let Some(word) = model_command(&e) {
            eprintln!(
                "error: `{word}` is part of the model track: {}",
                domain::wire::queue::WITHOUT_MODELS
            );
            std::process::exit(2);
        }
        e.exit()
    });
    // The server gives large blocks back; training keeps them (see memory.rs) and runs
    // candle's own ops in the calling thread (`learners::tune::one_candle_thread`). Before any
    // thread starts.
    match &cli.command {
        None | Some(Command::Serve(_)) => crate::memory::return_large_blocks(),
        Some(c) if trains(c) => {
            crate::memory::keep_large_blocks();
            #[cfg(feature = "models")]
            learners::tune::one_candle_thread();
        }
        Some(_) => {}
    }
    if !matches!(&cli.command, None | Some(Command::Serve(_))) {
        end_quietly_on_a_closed_pipe();
    }
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
        // Before the runtime is dropped, which would wait for a training thread to finish.
        Err(Error::Stopped { said, status }) => {
            eprintln!("{said}");
            std::process::exit(status)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Whether `c` trains models (fine-tuning, prompt-based fine-tuning, CrossFit's learners, the
/// training benchmark), or is a worker that may.
fn trains(c: &Command) -> bool {
    match c {
        #[cfg(feature = "models")]
        Command::Baseline(a) => a.finetune,
        #[cfg(feature = "models")]
        Command::Worker(_) | Command::Prompt(_) => true,
        #[cfg(feature = "models")]
        Command::Bench(a) => a.training.train,
        #[cfg(feature = "models")]
        Command::Crossfit(CrossfitCommand::Learn(_) | CrossfitCommand::Upstream(_)) => true,
        #[cfg(feature = "models")]
        Command::Eval(_) | Command::Icl(_) | Command::Quantize(_) => false,
        Command::Crossfit(
            CrossfitCommand::Tasks
            | CrossfitCommand::Set { .. }
            | CrossfitCommand::Run { .. }
            | CrossfitCommand::Baseline { .. }
            | CrossfitCommand::PartitionImport { .. }
            | CrossfitCommand::PartitionExport { .. }
            | CrossfitCommand::StudyTask { .. }
            | CrossfitCommand::Table { .. }
            | CrossfitCommand::Arg { .. },
        )
        | Command::Serve(_)
        | Command::Import(_)
        | Command::User(_)
        | Command::Score(_)
        | Command::Sample(_)
        | Command::Study(_)
        | Command::Report(_)
        | Command::References(_)
        | Command::Plan(_)
        | Command::Simulate(_)
        | Command::Load(_)
        | Command::Db(_)
        | Command::Platform(_) => false,
    }
}

/// The model track's command a build without it was asked for (clap alone would say only
/// that the subcommand is unknown). A build with the model track knows these commands, so it
/// never gets here with one of them.
fn model_command(e: &clap::Error) -> Option<String> {
    const MODEL_COMMANDS: [&str; 10] = [
        "eval",
        "icl",
        "baseline",
        "worker",
        "prompt",
        "bench",
        "quantize",
        "predictions",
        "learn",
        "upstream",
    ];
    match e.get(clap::error::ContextKind::InvalidSubcommand)? {
        clap::error::ContextValue::String(w) if MODEL_COMMANDS.contains(&w.as_str()) => {
            Some(w.clone())
        }
        _ => None,
    }
}

pub async fn run(cli: Cli) -> Result<()> {
    // No command: serve with its defaults and environment (LEPTOS_SITE_ROOT, LEPTOS_SITE_ADDR).
    let command = match cli
        .command
        .or_else(|| Cli::parse_from(["clues-lab", "serve"]).command)
    {
        Some(command) => command,
        None => return Err(Error::internal("`clues-lab serve` has no command")),
    };
    match command {
        Command::Serve(args) => serve(&cli.database, args).await,
        Command::Import(c) => import_command(&cli.database, c).await,
        Command::Crossfit(c) => {
            let pool = db::connect_existing(&cli.database).await?;
            crossfit_command(&pool, c).await
        }
        Command::User(UserCommand::Add {
            name,
            role,
            no_password,
        }) => people::add_user(&cli.database, &name, role, no_password).await,
        Command::Study(StudyCommand::Create(a)) => studies::create(&cli.database, *a).await,
        Command::Plan(a) => plan::plan(&cli.database, &a).await,
        Command::Simulate(a) => simulate::simulate(&a),
        Command::Report(a) => report::report(&cli.database, &a).await,
        Command::References(a) => report::references(&cli.database, &a).await,
        Command::Study(StudyCommand::List) => studies::list(&cli.database).await,
        Command::Sample(a) => sample_clues(&a),
        #[cfg(feature = "models")]
        Command::Eval(a) => learners::command::eval(&cli.database, a).await,
        #[cfg(feature = "models")]
        Command::Baseline(a) => learners::command::baseline(&cli.database, a).await,
        #[cfg(feature = "models")]
        Command::Icl(a) => learners::icl::icl(&cli.database, a).await,
        #[cfg(feature = "models")]
        Command::Worker(a) => match learners::worker::work(&cli.database, a).await? {
            learners::worker::Ended::Stopped { status } => std::process::exit(status),
            learners::worker::Ended::Idle { .. } => Ok(()),
        },
        #[cfg(feature = "models")]
        Command::Prompt(a) => learners::jobs::prompt_tune(&cli.database, a).await,
        #[cfg(feature = "models")]
        Command::Bench(a) => learners::bench::bench(&cli.database, a).await,
        #[cfg(feature = "models")]
        Command::Quantize(a) => learners::command::quantize(a),
        Command::Load(l) => load(&cli.database, l).await,
        Command::Db(c) => db_command(&cli.database, c).await,
        Command::Platform(c) => platform::platform(&cli.database, c).await,
        Command::Score(args) => score::score(&cli.database, &args).await,
    }
}

/// `import clues | task | crossfit | crossfit-source | predictions`.
async fn import_command(database: &str, command: ImportCommand) -> Result<()> {
    match command {
        ImportCommand::Clues { dir } => {
            let pool = db::connect(database).await?;
            print!("{}", clues::import_dir(&pool, &dir).await?.report());
            Ok(())
        }
        ImportCommand::Task { dir } => {
            let pool = db::connect(database).await?;
            print!("{}", clues::import_own(&pool, &dir).await?.report());
            Ok(())
        }
        ImportCommand::Crossfit { dir } => {
            let pool = db::connect(database).await?;
            let tasks = crate::crossfit::load_dir(&dir, "crossfit")?;
            report_stored(&pool, tasks).await
        }
        ImportCommand::CrossfitSource(a) => {
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
            let pool = db::connect(database).await?;
            report_stored(&pool, vec![task]).await
        }
        #[cfg(feature = "models")]
        ImportCommand::Predictions(a) => learners::command::import_predictions(database, a).await,
    }
}

async fn db_command(database: &str, command: DbCommand) -> Result<()> {
    match command {
        DbCommand::Backup { out } => {
            let pool = db::connect_existing(database).await?;
            crate::dbcopy::backup(&pool, database, &out).await?;
            println!("backed up {database} to {}", out.display());
        }
        DbCommand::Copy { from, to } => {
            let from = from.unwrap_or_else(|| database.to_string());
            if from == to {
                return Err(Error::Invalid(
                    "--from and --to name the same database".into(),
                ));
            }
            let source = db::connect_existing(&from).await?;
            let target = db::connect(&to).await?;
            let report = crate::dbcopy::copy(&source, &target).await?;
            println!(
                "{:<22} {:>9} {:>9}  content (SHA-256 of the rows)",
                "table", "rows", "copied"
            );
            for t in &report {
                let verdict = if t.agrees() { "same" } else { "DIFFERS" };
                println!(
                    "{:<22} {:>9} {:>9}  {verdict} {}",
                    t.table,
                    t.rows,
                    t.copied_rows,
                    &t.hash[..16]
                );
            }
            let bad: Vec<_> = report
                .iter()
                .filter(|t| !t.agrees())
                .map(|t| t.table)
                .collect();
            if !bad.is_empty() {
                return Err(Error::Refused(format!(
                    "the copy differs from the source in {}",
                    bad.join(", ")
                )));
            }
            println!("copied {from} to {to}: every table has the same rows and content");
        }
        DbCommand::Query { sql, params } => {
            let params: Vec<serde_json::Value> = params
                .iter()
                .map(|p| serde_json::from_str(p).unwrap_or_else(|_| p.clone().into()))
                .collect();
            let pool = db::connect_existing(database).await?;
            println!("{}", crate::dbcopy::query(&pool, &sql, &params).await?);
        }
    }
    Ok(())
}

async fn load(database: &str, command: LoadCommand) -> Result<()> {
    use crate::load;
    // The runs block on threads of their own; keep them off the async workers.
    let blocking = |f: Box<dyn FnOnce() + Send>| tokio::task::spawn_blocking(f);
    match command {
        LoadCommand::Fill { study, rows, tag } => {
            let pool = db::connect_existing(database).await?;
            let (workers, added) =
                store::study::fill(&pool, domain::ids::StudyId(study), rows, &tag).await?;
            println!("study {study}: {workers} synthetic workers, {added} annotation rows added");
            return Ok(());
        }
        LoadCommand::Crowd(t) => blocking(Box::new(move || load::crowd_load(&t))),
        LoadCommand::LoginFlood { target, logins } => {
            blocking(Box::new(move || load::login_flood(&target, logins)))
        }
        LoadCommand::Authenticity {
            study,
            sessions,
            strategies,
            user,
            password,
        } => {
            let pool = db::connect_existing(database).await?;
            let opts = load::authenticity::Options {
                study: domain::ids::StudyId(study),
                strategies: load::authenticity::strategies_named(&strategies, sessions)
                    .map_err(Error::Invalid)?,
                user,
                password,
            };
            let rates = load::authenticity::run(pool, opts)
                .await
                .map_err(Error::Invalid)?;
            load::authenticity::print(&rates);
            return Ok(());
        }
        LoadCommand::ExportSoak {
            target,
            researcher,
            soak,
        } => blocking(Box::new(move || {
            signed_in(&target, &researcher, |t, cookie| {
                load::export_soak(t, cookie, soak)
            })
        })),
        LoadCommand::CrowdFirst { target, researcher } => blocking(Box::new(move || {
            signed_in(&target, &researcher, load::crowd_first)
        })),
        LoadCommand::OtherStudy {
            target,
            researcher,
            watched,
        } => blocking(Box::new(move || {
            signed_in(&target, &researcher, |t, cookie| {
                load::other_study(t, cookie, watched)
            })
        })),
    }
    .await
    .map_err(|e| Error::Invalid(format!("the load run failed: {e}")))
}

/// Runs a load run as the researcher, signed in first (a refused sign-in is printed).
fn signed_in(
    t: &crate::load::Target,
    who: &args::Researcher,
    run: impl FnOnce(&crate::load::Target, &str),
) {
    match crate::load::client::Client::new(&t.url).login(&who.user, &who.password) {
        Ok(cookie) => run(t, &cookie),
        Err(e) => eprintln!("error: {e}"),
    }
}

/// A command's output piped into a reader that stops early (`clues-lab study list | head -1`)
/// ends the command quietly, as it ends `ls` or `cat`: the default action of SIGPIPE, which
/// Rust programs otherwise ignore (then `println!` panics on the closed pipe). Not for the
/// server, which must outlive any one client (its sockets are written with MSG_NOSIGNAL anyway).
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: resets one signal's action to its default; called once at start, before threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which unknown subcommands a build without the model track names as the model track's.
    #[test]
    fn model_commands_are_named() {
        let asked = |line: &[&str]| {
            let e = clap::Command::new("clues-lab")
                .subcommand(clap::Command::new("serve"))
                .subcommand(clap::Command::new("import").subcommand(clap::Command::new("clues")))
                .try_get_matches_from(line)
                .expect_err("an unknown subcommand");
            model_command(&e)
        };
        assert_eq!(asked(&["clues-lab", "worker"]).as_deref(), Some("worker"));
        assert_eq!(
            asked(&["clues-lab", "import", "predictions"]).as_deref(),
            Some("predictions")
        );
        assert_eq!(asked(&["clues-lab", "servr"]), None);
    }
}
