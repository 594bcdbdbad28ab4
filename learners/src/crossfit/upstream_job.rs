//! CrossFit's upstream learning as a queued job (`store::crossfit::upstream`): checked and
//! queued with `crossfit upstream`'s arguments as its recipe (the machines page's door), and
//! run by a worker, which learns the folder, queues the test tasks' seeds and marks it done.

use super::method_name;
use super::upstream::{check, learned, queue_tests, UpstreamArgs, Watch};
use super::worker::Terms;
use clap::Parser;
use sqlx::AnyPool;
use store::crossfit::{self as xf, upstream as jobs};
use store::error::{Error, Result};

/// The arguments of `crossfit upstream`, as an upstream job's recipe holds them.
#[derive(Parser)]
struct UpstreamLine {
    #[command(flatten)]
    a: UpstreamArgs,
}

/// `crossfit upstream`'s arguments from a command line (without the command's name), as the
/// command line parses them; clap's refusal as one line.
fn parse_line(line: &[String]) -> Result<UpstreamArgs> {
    let argv = std::iter::once("upstream".to_string()).chain(line.iter().cloned());
    UpstreamLine::try_parse_from(argv)
        .map(|l| l.a)
        .map_err(crate::command::clap_error)
}

/// Checks the upstream learning that `line` (the arguments of `crossfit upstream`) asks for as
/// the command does, and queues it as one job whose recipe is `line`; a worker learns it, then
/// queues its test tasks' seeds. Answers the job's id and the method its runs are stored
/// under.
pub async fn queue_upstream(
    pool: &AnyPool,
    line: Vec<String>,
    clock: &store::lease::Clock,
) -> Result<(i64, String)> {
    let a = parse_line(&line)?;
    if !a.out.is_absolute() || !a.model.is_absolute() {
        return Err(Error::Invalid(
            "give the model and upstream folders as absolute paths, as every worker's machine sees them".into(),
        ));
    }
    if a.tune.keep.is_some() {
        return Err(Error::Invalid(
            "keeping checkpoints is the command line's (--keep): a queued job keeps none".into(),
        ));
    }
    check(pool, &a).await?;
    let name = method_name(&a.name, &a.out, "fine-tuning")?;
    let recipe = serde_json::to_string(&line).map_err(Error::internal)?;
    let out = a.out.display().to_string();
    let id = jobs::enqueue(pool, &a.partition, (&out, &name), &recipe, clock).await?;
    Ok((id, name))
}

/// Runs a held upstream job on `device`: learns the upstream folder (or uses the one a
/// worker finished before), queues the test tasks' seeds from it, and marks the job done. The
/// learning stops soon after `lost()` says that the job is no longer this worker's.
pub async fn run_held(pool: &AnyPool, held: &jobs::Held, (device, lost): Terms<'_>) -> Result<()> {
    let line: Vec<String> = serde_json::from_str(&held.recipe).map_err(|e| {
        Error::Invalid(format!(
            "{}: its recipe is not one this worker knows: {e}",
            held.name()
        ))
    })?;
    let mut a = parse_line(&line)?;
    a.tune.device = device;
    let (s, partition) = (a.settings()?, xf::partition(pool, &a.partition).await?);
    let watch = Watch {
        held: Some((pool, &held.lease)),
        lost,
    };
    let record = learned(pool, &a, &s, watch).await?;
    if lost() {
        return Err(Error::LeaseLost(format!(
            "this worker lost its lease on {}; nothing was queued",
            held.name()
        )));
    }
    queue_tests(pool, &a, &partition, &record, &held.method).await?;
    jobs::finish(pool, held).await
}
