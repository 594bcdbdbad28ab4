//! `plan`: how many annotators per scenario a study needs to find a difference in S1 with a
//! given power, from a standard deviation given or from each pilot study's variance components
//! (the scenario model's fit), with the range across the pilot SD's interval.

use domain::stats::{two_sample_power, units_needed, Planned};
use sqlx::AnyPool;
use store::db::cli as db;
use store::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The difference in S1 to find, as a fraction (0.05 is 5 points).
    #[arg(long)]
    pub difference: f64,
    /// The power the study should have (above --alpha).
    #[arg(long, default_value_t = 0.8)]
    pub power: f64,
    /// The level of the two-sided test.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// The standard deviation of an annotator's mean S1 over the study's items between
    /// annotators of one scenario (a fraction); without it, each pilot study's is taken from
    /// its fit of S1 ~ scenario + (1|annotator) + (1|item).
    #[arg(long)]
    pub sd: Option<f64>,
    /// The test items every annotator will answer (default: the pilot's); more items shrink
    /// the residual's part of the spread, never the annotators'.
    #[arg(long)]
    pub items: Option<usize>,
    /// The pilot studies' ids, comma-separated; every study when left out.
    #[arg(long, default_value = "")]
    pub studies: String,
}

fn check(a: &PlanArgs) -> Result<()> {
    let open = |x: f64| x > 0.0 && x < 1.0;
    let problem = if !(a.difference > 0.0 && a.difference <= 1.0) {
        Some("--difference must be above 0 and at most 1 (a difference in S1)".to_string())
    } else if !open(a.alpha) {
        Some("--alpha must lie between 0 and 1".to_string())
    } else if !open(a.power) || a.power <= a.alpha {
        Some(format!(
            "--power must lie above --alpha ({}) and below 1: a test has power alpha when there is no difference at all",
            a.alpha
        ))
    } else if a.sd.is_some_and(|s| !(s > 0.0 && s <= 1.0)) {
        Some("--sd must be above 0 and at most 1".to_string())
    } else if a.items == Some(0) {
        Some("--items must be at least 1".to_string())
    } else {
        None
    };
    problem.map_or(Ok(()), |p| Err(Error::Invalid(p)))
}

/// The level 1 − α in percent, as a reader writes it (98, 95, 99.5).
fn level_pct(alpha: f64) -> String {
    format!("{}", (1000.0 * (1.0 - alpha)).round() / 10.0)
}

fn count(n: Option<u32>) -> String {
    n.map_or("more than a million".to_string(), |n| n.to_string())
}

/// The answer's words: the annotators needed, their range, and the power with three.
fn answer(a: &PlanArgs, p: &Planned) -> String {
    let range = p
        .needed_range
        .map(|(lo, hi)| {
            format!(
                " ({}–{} across τ's {}% interval)",
                count(lo),
                count(hi),
                level_pct(a.alpha)
            )
        })
        .unwrap_or_default();
    format!(
        "{} annotators per scenario{range}; with 3, as the CLUES protocol has: power {:.2}",
        count(p.needed),
        two_sample_power(a.difference / p.sd, 3.0, 3.0, a.alpha)
    )
}

/// `plan`: prints the header and one line per pilot study (or one for `--sd`).
pub(super) async fn plan(database: &str, a: &PlanArgs) -> Result<()> {
    check(a)?;
    println!(
        "to find {:.1} S1 points with power {} at alpha {} (the scenario model's two-sided test of two scenarios, annotators as the unit):",
        100.0 * a.difference,
        a.power,
        a.alpha
    );
    if let Some(sd) = a.sd {
        let needed = units_needed(a.difference / sd, a.power, a.alpha).map(|n| n.ceil() as u32);
        let p = Planned {
            difference: a.difference,
            items: a.items.unwrap_or(0) as f64,
            sd,
            sd_interval: None,
            needed,
            needed_range: None,
        };
        println!("SD {:.1} points: {}", 100.0 * sd, answer(a, &p));
        return Ok(());
    }
    let pool: AnyPool = db::connect_existing(database).await?;
    let scope = store::report::parse_scope(Some(&a.studies))?;
    let (_, r) = store::report::load(&pool, &scope)
        .await?
        .into_report()
        .await?;
    for refused in &r.all.plan_refused {
        println!(
            "study {} ({}): pilot {} annotators in {} scenarios on {} items; {}",
            refused.study,
            refused.task,
            refused.pilot_annotators,
            refused.scenarios,
            refused.items,
            refused.why.describe()
        );
    }
    if r.all.plan.is_empty() {
        let why: Vec<String> = r
            .all
            .plan_refused
            .iter()
            .map(|p| format!("study {}: {}", p.study, p.why.describe()))
            .collect();
        return Err(Error::Invalid(if why.is_empty() {
            "no pilot data: no study has finished annotators in two scenarios of a task with a fitted model; give --sd".into()
        } else {
            format!("no study to plan from ({}); give --sd", why.join("; "))
        }));
    }
    for row in &r.all.plan {
        let c = row.components;
        let items = a.items.unwrap_or(row.items);
        let p = row
            .pilot()
            .plan(a.difference, items as f64, a.power, a.alpha)
            .ok_or_else(|| {
                Error::Invalid(format!("study {} gives no spread to plan from", row.study))
            })?;
        let tau = match p.sd_interval {
            Some(i) => format!(
                "{:.1} ({}%: {:.1}–{:.1})",
                100.0 * p.sd,
                level_pct(a.alpha),
                100.0 * i.low,
                100.0 * i.high
            ),
            None => format!("{:.1}", 100.0 * p.sd),
        };
        println!(
            "study {} ({}): pilot {} annotators in {} scenarios on {} items; SD annotator {:.1}{}, item {:.1}, residual {:.1} points; on {items} items τ = {tau}: {}",
            row.study,
            row.task,
            row.pilot_annotators,
            row.scenarios,
            row.items,
            100.0 * c.sd_annotator,
            if c.singular { " (singular fit)" } else { "" },
            100.0 * c.sd_item,
            100.0 * c.sd_residual,
            answer(a, &p)
        );
    }
    Ok(())
}
