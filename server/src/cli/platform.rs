//! `clues-lab platform ...`: a study run on Prolific or MTurk from the command line, as the
//! study's page runs it: each step previewed (`--dry-run` stops there), then its calls written
//! to the ledger and run to their end here (a Ctrl-C hands the call in hand back).

use super::args_platform::{Accounts, PlatformCommand, RuleArg};
use domain::ids::StudyId;
use domain::platform::plan::Rule;
use domain::report::draw::text::money;
use platforms::accounts;
use platforms::flow;
use platforms::run::PlatformRunner;
use platforms::Site;
use std::time::Duration;
use store::db::cli as db;
use store::error::{Error, Result};
use store::lease::lanes::{self, Ended, KindLane, Lane, Pace};
use store::lease::stop::Stop;
use store::lease::Clock;

fn load(a: &Accounts) -> Result<accounts::Accounts> {
    accounts::Accounts::load(a.credentials.as_deref()).map_err(Error::Invalid)
}

/// Cents from an amount in major units (`12.50`).
fn cents(amount: &str) -> Result<i64> {
    domain::platform::fees::parse_amount("--budget", amount).map_err(Error::Invalid)
}

pub async fn platform(database: &str, command: PlatformCommand) -> Result<()> {
    match command {
        PlatformCommand::Status { accounts } => status(&load(&accounts)?).await,
        PlatformCommand::Publish {
            study,
            on,
            sandbox,
            origin,
            budget,
            dry_run,
            accounts,
        } => {
            let asked = Publish {
                study: StudyId(study),
                on: on.map(|p| (p.platform(), sandbox)),
                origin,
                budget,
                dry_run,
            };
            publish(database, &load(&accounts)?, asked).await
        }
        PlatformCommand::Sync { step } => {
            sync(
                database,
                &load(&step.accounts)?,
                StudyId(step.study),
                step.dry_run,
            )
            .await
        }
        PlatformCommand::Approve {
            step,
            reject_by,
            message,
        } => {
            let rule = reject_by.map(|r| match r {
                RuleArg::FailedAttention => Rule::FailedAttention,
            });
            let a = load(&step.accounts)?;
            approve(
                database,
                &a,
                StudyId(step.study),
                (rule, message),
                step.dry_run,
            )
            .await
        }
        PlatformCommand::Pay { step } => {
            pay(
                database,
                &load(&step.accounts)?,
                StudyId(step.study),
                step.dry_run,
            )
            .await
        }
        PlatformCommand::Ledger { study } => {
            let pool = db::connect_existing(database).await?;
            print!(
                "{}",
                store::platform::ledger::csv(&pool, StudyId(study)).await?
            );
            Ok(())
        }
        PlatformCommand::StandIn {
            prolific_addr,
            mturk_addr,
            prolific_token,
            mturk_access_key,
            mturk_secret_key,
        } => {
            let keys = platforms::standin::Keys {
                prolific_token,
                mturk_access_key,
                mturk_secret_key,
            };
            stand_in(&keys, (prolific_addr, mturk_addr)).await
        }
    }
}

/// What `platform publish` was asked.
struct Publish {
    study: StudyId,
    on: Option<(domain::platform::Platform, bool)>,
    origin: Option<String>,
    budget: Option<String>,
    dry_run: bool,
}

/// `platform publish`: the draft (derived where none is saved), its preview, its calls.
async fn publish(database: &str, a: &accounts::Accounts, asked: Publish) -> Result<()> {
    let Publish {
        study,
        on,
        origin,
        budget,
        dry_run,
    } = asked;
    let pool = db::connect_existing(database).await?;
    if store::platform::publication(&pool, study).await?.is_none() {
        let (Some(on), Some(origin)) = (on, origin) else {
            return Err(Error::Invalid(
                "study has no saved draft: give --on and --origin to derive one".into(),
            ));
        };
        let origin = domain::platform::draft::check_origin(&origin).map_err(Error::Invalid)?;
        let draft = flow::derive(&pool, study, on, &origin).await?;
        store::platform::save_draft(&pool, study, &draft, None, Clock::System.now_ms()).await?;
    }
    if let Some(b) = budget {
        store::platform::set_budget(&pool, study, cents(&b)?).await?;
    }
    let preview = flow::preview_publish(&pool, study, a.fees).await?;
    let d = &preview.draft;
    println!(
        "{} {}: {:?}\n  {} places, about {} minutes ({}), reward {} each, devices {:?}\n  link {}\n  rewards {} + fees {} = {} ({}); budget {}\n  calls: {}",
        d.platform.name(),
        if d.sandbox { "(sandbox)" } else { "(live)" },
        d.title,
        d.places,
        d.minutes,
        d.estimate.describe(),
        money(d.reward_cents),
        d.devices.iter().map(|x| x.as_str()).collect::<Vec<_>>(),
        d.link,
        money(preview.rewards.paid_cents),
        money(preview.rewards.fees_cents),
        money(preview.rewards.total_cents()),
        preview.fee_words,
        money(d.budget_cents),
        preview.calls.iter().map(|c| c.action().as_str()).collect::<Vec<_>>().join(", "),
    );
    for p in &preview.problems {
        println!("  problem: {p}");
    }
    if dry_run {
        println!("dry run: nothing was sent");
        return Ok(());
    }
    if !store::platform::published(&pool, study).await?.published {
        let by = (None, &Clock::System);
        flow::publish(&pool, study, (a.fees, &preview.fingerprint), by).await?;
    }
    run_calls(&pool, a, study).await
}

/// `platform sync`: the submissions read back, and the places in step.
async fn sync(database: &str, a: &accounts::Accounts, study: StudyId, dry_run: bool) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let p = store::platform::published(&pool, study).await?;
    if !dry_run {
        store::platform::ledger::request_sync(&pool, &p, &Clock::System).await?;
        run_calls(&pool, a, study).await?;
    }
    let p = store::platform::published(&pool, study).await?;
    let (step, _) = flow::in_step(&pool, &p).await?;
    for l in &step.reconciled.lines {
        println!(
            "{:<28} {:<12} {:<10} {:?}",
            l.remote.as_ref().map_or("-", |r| r.remote_id.as_str()),
            l.remote.as_ref().map_or("-", |r| r.status.as_str()),
            l.place
                .as_ref()
                .map_or("-".into(), |p| p.status.as_str().to_string()),
            l.note
        );
    }
    println!(
        "{} places planned, {} asked of {}; {} to release, {} more to ask for",
        step.planned,
        step.asked,
        p.platform().name(),
        step.reconciled.release.len(),
        step.reconciled.more_places
    );
    Ok(())
}

/// `platform approve`: the decisions previewed, stored and sent.
async fn approve(
    database: &str,
    a: &accounts::Accounts,
    study: StudyId,
    (rule, message): (Option<Rule>, Option<String>),
    dry_run: bool,
) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let preview = flow::preview_decisions(&pool, study, rule, message.as_deref()).await?;
    for p in &preview.proposals {
        let said = p
            .message
            .as_deref()
            .map_or(String::new(), |m| format!(": {m}"));
        println!("{} {} {}{said}", p.decision.as_str(), p.remote_id, p.worker);
    }
    println!("{} decisions", preview.proposals.len());
    if dry_run {
        return Ok(());
    }
    if !preview.proposals.is_empty() {
        let confirmed = (rule, message.as_deref(), preview.fingerprint.as_str());
        flow::decide(&pool, study, confirmed, (None, &Clock::System)).await?;
    }
    // Calls written before (a command stopped halfway) are finished too.
    run_calls(&pool, a, study).await
}

/// `platform pay`: the top-ups previewed and sent.
async fn pay(database: &str, a: &accounts::Accounts, study: StudyId, dry_run: bool) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let preview = flow::preview_pay(&pool, study, a.fees).await?;
    for t in &preview.top_ups {
        println!(
            "bonus {} to {} ({}): {} s owes {}, reward {}; {} with fees",
            money(t.bonus_cents),
            t.worker,
            t.remote_id,
            t.seconds,
            money(t.owed_cents),
            money(t.reward_cents),
            money(t.cost_cents)
        );
    }
    println!(
        "{} bonuses, {} with fees; committed so far {} of a budget of {}",
        preview.top_ups.len(),
        money(preview.total_cents),
        money(preview.committed_cents),
        money(preview.budget_cents)
    );
    if dry_run {
        return Ok(());
    }
    if !preview.top_ups.is_empty() {
        let terms = (a.fees, preview.fingerprint.as_str());
        flow::pay(&pool, study, terms, (None, &Clock::System)).await?;
    }
    run_calls(&pool, a, study).await
}

/// `platform stand-in`: both stand-ins until Ctrl-C.
async fn stand_in(
    keys: &platforms::standin::Keys,
    addrs: (std::net::SocketAddr, std::net::SocketAddr),
) -> Result<()> {
    let running = platforms::standin::start(keys, addrs)
        .await
        .map_err(|e| Error::io("cannot start the stand-ins", e))?;
    println!("prolific stand-in on http://{}", running.prolific);
    println!("mturk stand-in on http://{}", running.mturk);
    let _ = tokio::signal::ctrl_c().await;
    Ok(())
}

/// Each account's status: configured, live or sandbox, and its cheap call's answer.
async fn status(a: &accounts::Accounts) -> Result<()> {
    if a.sites().is_empty() {
        println!("no platform account is configured (PROLIFIC_TOKEN, MTURK_ACCESS_KEY_ID and MTURK_SECRET_ACCESS_KEY)");
    }
    for site in Site::all(a) {
        let mode = if site.sandbox() { "sandbox" } else { "live" };
        match site.check().await {
            Ok(said) => println!("{} ({mode}): works: {said}", site.platform().name()),
            Err(f) => println!("{} ({mode}): does not work: {f}", site.platform().name()),
        }
    }
    Ok(())
}

/// Runs the study's calls until none is left (a call put off after a passing fault is waited
/// for); a signal hands the call in hand back and ends the command.
async fn run_calls(pool: &sqlx::AnyPool, a: &accounts::Accounts, study: StudyId) -> Result<()> {
    let runner = PlatformRunner {
        sites: Site::all(a),
        only: Some(study),
        rates: a.fees,
    };
    if runner.sites.is_empty() {
        println!("the calls are written; no account is configured here to send them (a server with one sends them)");
        return Ok(());
    }
    let lease = Duration::from_secs(60);
    let lanes: Vec<Box<dyn Lane>> = vec![KindLane::new(pool, runner, lease, Clock::System)];
    let pace = Pace {
        poll: Duration::from_millis(500),
        exit_when_idle: true,
    };
    let me = store::lease::worker_name();
    match lanes::serve(lanes, &mut Stop::new()?, pace, &me).await? {
        Ended::Idle { .. } => {
            print!("{}", store::platform::ledger::csv(pool, study).await?);
            Ok(())
        }
        Ended::Stopped { status } => Err(Error::Stopped {
            said: "stopped; the study's calls go on where a server runs them, or with the same command".into(),
            status,
        }),
    }
}
