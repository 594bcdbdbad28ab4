//! The command line of the `clues-lab` binary: serve, import, user management and scoring.
//! Errors are printed once, as `error: ...`, with a non-zero exit status.

mod args;
mod crossfit;
mod pages;
mod plan;
mod sample;
mod serve;

use crate::clues;
use app::error::{AppError, Result};
use app::ssr::db::cli as db;
use app::ssr::{auth, catalog, study};
pub use args::*;
use clap::Parser;
use crossfit::{crossfit_command, report_stored};
use domain::crossfit::sampler::{SampleKind, K_CLASSIFICATION, K_TEXT_TO_TEXT};
use domain::people::Role;
use learners::score;
pub use plan::PlanArgs;
use sample::sample_clues;
use serve::serve;
use std::process::ExitCode;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The server gives large blocks back; fine-tuning keeps them (see memory.rs).
    match &cli.command {
        None | Some(Command::Serve(_)) => crate::memory::return_large_blocks(),
        Some(Command::Baseline(a)) if a.finetune => crate::memory::keep_large_blocks(),
        _ => {}
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
        Command::Import(ImportCommand::Task { dir }) => {
            let pool = db::connect(&cli.database).await?;
            let imported = clues::import_own(&pool, &dir).await?;
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
                Some(text) => domain::shots::parse_files(text)
                    .map_err(|e| AppError::Invalid(format!("--shot-group: {e}")))?,
                None => Vec::new(),
            };
            let pages = pages::read(&a)?;
            let config = domain::study::StudyConfig {
                scenarios: a.scenarios,
                annotators: a.annotators,
                training_split: shot_group.first().map_or(a.split, |f| f.1),
                shot_group,
                allow_unnested: a.allow_unnested,
                shuffle_training: a.shuffle_training,
                screening: domain::shots::parse_one(a.screening.as_deref().unwrap_or(""))
                    .map_err(|e| AppError::Invalid(format!("--screening: {e}")))?,
                hourly_rate_cents: a.rate_cents,
                filter_margin: a.margin,
                item_timeout_secs: (!a.no_timeout).then_some(a.timeout),
                open: a.open,
                completion_code: a.code,
                completion_url: a.completion_url,
                pages,
            };
            let id = study::create(&pool, None, &a.task, &a.name, config).await?;
            let made = study::summary_of(&pool, id).await?;
            println!("created study {id}: workers join at /join/{id}");
            println!("training sets: {}", made.shot_group);
            Ok(())
        }
        Command::Plan(a) => plan::plan(&cli.database, &a).await,
        Command::Report(a) => {
            let pool = db::connect_existing(&cli.database).await?;
            let scope = app::ssr::report::parse_scope(Some(&a.studies))?;
            if matches!(a.format, ReportFormat::Bundle) && a.out.is_none() {
                return Err(AppError::Invalid(
                    "--format bundle needs --out <file>".into(),
                ));
            }
            let (loaded, r) = app::ssr::report::load(&pool, &scope)
                .await?
                .into_report()
                .await?;
            let bytes: Vec<u8> = match a.format {
                ReportFormat::Markdown => domain::report::draw::layout::markdown(&r).into(),
                ReportFormat::Csv => domain::report::draw::scores_csv::scores_csv(&r).into(),
                ReportFormat::Json => app::ssr::export::scores_json(&r)?.into(),
                ReportFormat::Bundle => {
                    let bundle = app::ssr::bundle::build(&pool, &loaded, &r).await?;
                    let hash = bundle.hash.clone();
                    let path = a.out.as_ref().expect("checked above");
                    let io = |e| AppError::io(format!("cannot write {}", path.display()), e);
                    let file = std::fs::File::create(path).map_err(io)?;
                    bundle
                        .write_tar(std::io::BufWriter::new(file))
                        .and_then(|mut w| {
                            use std::io::Write;
                            w.flush()
                        })
                        .map_err(io)?;
                    eprintln!("content hash (SHA-256 of SHA256SUMS): {hash}");
                    return Ok(());
                }
            };
            match &a.out {
                Some(path) => std::fs::write(path, bytes)
                    .map_err(|e| AppError::io(format!("cannot write {}", path.display()), e))?,
                None => {
                    use std::io::Write;
                    std::io::stdout()
                        .write_all(&bytes)
                        .map_err(|e| AppError::io("cannot write the report", e))?
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
        Command::Eval(a) => learners::command::eval(&cli.database, a).await,
        Command::Baseline(a) => learners::command::baseline(&cli.database, a).await,
        Command::Bench(a) => learners::bench::bench(&cli.database, a).await,
        Command::Quantize(a) => learners::command::quantize(a),
        Command::Load(l) => load(&cli.database, l).await,
        Command::Db(c) => db_command(&cli.database, c).await,
        Command::Import(ImportCommand::Predictions(a)) => {
            learners::command::import_predictions(&cli.database, a).await
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
                    return Err(AppError::Invalid(
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
        .map_err(|e| AppError::io("cannot read the password from stdin", e))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
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
                return Err(AppError::Invalid(
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
                return Err(AppError::Refused(format!(
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
                load::fill::fill(&pool, domain::ids::StudyId(study), rows, &tag).await?;
            println!("study {study}: {workers} synthetic workers, {added} annotation rows added");
            return Ok(());
        }
        LoadCommand::Crowd(t) => blocking(Box::new(move || load::crowd_load(&t))),
        LoadCommand::LoginFlood { target, logins } => {
            blocking(Box::new(move || load::login_flood(&target, logins)))
        }
        LoadCommand::ExportSoak {
            target,
            user,
            password,
            soak,
        } => blocking(Box::new(move || {
            match load::client::Client::new(&target.url).login(&user, &password) {
                Ok(cookie) => load::export_soak(&target, &cookie, soak),
                Err(e) => eprintln!("error: {e}"),
            }
        })),
    }
    .await
    .map_err(|e| AppError::Invalid(format!("the load run failed: {e}")))
}
