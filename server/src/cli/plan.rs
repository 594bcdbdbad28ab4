//! `plan`: how many annotators per scenario a study needs to find a difference in S1 with a
//! given power, from a standard deviation given or from the database's annotators as pilot data.

use app::error::{AppError, Result};
use app::ssr::db::cli as db;
use domain::stats::{two_sample_power, units_needed};
use sqlx::AnyPool;

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The difference in S1 to find, as a fraction (0.05 is 5 points).
    #[arg(long)]
    pub difference: f64,
    /// The power the study should have.
    #[arg(long, default_value_t = 0.8)]
    pub power: f64,
    /// The level of the two-sided test.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// The standard deviation of annotator S1 within a scenario (a fraction); without it,
    /// each task's is taken from the finished annotators of `--studies` (the pilot data).
    #[arg(long)]
    pub sd: Option<f64>,
    /// The pilot studies' ids, comma-separated; every study when left out.
    #[arg(long, default_value = "")]
    pub studies: String,
}

fn check(a: &PlanArgs) -> Result<()> {
    let open = |x: f64| x > 0.0 && x < 1.0;
    let problem = if !(a.difference > 0.0 && a.difference <= 1.0) {
        Some("--difference must be above 0 and at most 1 (a difference in S1)")
    } else if !open(a.power) {
        Some("--power must lie between 0 and 1")
    } else if !open(a.alpha) {
        Some("--alpha must lie between 0 and 1")
    } else if a.sd.is_some_and(|s| !(s > 0.0 && s <= 1.0)) {
        Some("--sd must be above 0 and at most 1")
    } else {
        None
    };
    problem.map_or(Ok(()), |p| Err(AppError::Invalid(p.into())))
}

/// One line of the answer: the annotators needed at this spread, and the power with three.
fn line(a: &PlanArgs, sd: f64) -> String {
    let effect = a.difference / sd;
    let needed = units_needed(effect, a.power, a.alpha)
        .map_or("more than a million".to_string(), |n| {
            format!("{}", n.ceil() as u64)
        });
    format!(
        "{needed} annotators per scenario (with 3, as the CLUES protocol has: power {:.2})",
        two_sample_power(effect, 3.0, 3.0, a.alpha)
    )
}

/// `plan`: prints the header and one line per task (or one for `--sd`).
pub(super) async fn plan(database: &str, a: &PlanArgs) -> Result<()> {
    check(a)?;
    println!(
        "to find {:.1} S1 points with power {} at alpha {} (two-sided two-sample t-test across annotators):",
        100.0 * a.difference,
        a.power,
        a.alpha
    );
    if let Some(sd) = a.sd {
        println!("SD {:.1} points: {}", 100.0 * sd, line(a, sd));
        return Ok(());
    }
    let pool: AnyPool = db::connect_existing(database).await?;
    let scope = app::ssr::report::parse_scope(Some(&a.studies))?;
    let (_, r) = app::ssr::report::load(&pool, &scope)
        .await?
        .into_report()
        .await?;
    if r.all.plan.is_empty() {
        return Err(AppError::Invalid(
            "no pilot data: no task has two finished annotators in a scenario whose S1 differ; give --sd".into(),
        ));
    }
    for p in &r.all.plan {
        println!(
            "{}: pilot {} annotators, SD {:.1} points: {}",
            p.task,
            p.pilot_annotators,
            100.0 * p.pooled_sd,
            line(a, p.pooled_sd)
        );
    }
    Ok(())
}
