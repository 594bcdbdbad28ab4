//! `simulate`: the benchmark that validates the report's statistics. Studies of two scenarios
//! drawn from a crossed logistic crowd (`domain::stats::simulate`) over a grid of designs and
//! truths, each analysed as the report analyses it; prints each test's rejection rate (type I
//! error where there is no effect, power where there is) and each interval's coverage, and
//! checks the planner by simulating the model it plans with.

use domain::stats::groups::Components;
use domain::stats::power::{two_sample_power, Pilot};
use domain::stats::simulate::logistic::{run_logistic, LogisticTally};
use domain::stats::simulate::{planned_power, run, Config, Rate, Tally, ALPHA};
use store::error::{Error, Result};

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Simulated studies per design (each rate's standard error is about
    /// √(p(1 − p) / studies): 0.7 points at 5% with 1,000).
    #[arg(long, default_value_t = 1000)]
    pub studies: usize,
    /// The seed of the draws (the same seed prints the same table).
    #[arg(long, default_value_t = 20261126)]
    pub seed: u64,
    /// Threads (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// A small grid (3 and 10 annotators, 100 items, SD 9 points) for a quick look.
    #[arg(long)]
    pub quick: bool,
    /// The logistic mixed model's tests and intervals instead (glmer's Wald z, the same against
    /// t with the between-within df, and the restricted fit's t), on the same studies of the
    /// same grid.
    #[arg(long)]
    pub logistic: bool,
    /// Instead of the tables: write `--studies` unpacked bundles of simulated studies into this
    /// folder, for the benchmark of the bundle's `analysis.R` (`server/bench/analysis-r.sh`).
    #[arg(long, hide = true)]
    pub bundles: Option<std::path::PathBuf>,
    /// Instead of the tables: time the permutation test's interval (its inversion) on the
    /// largest designs it enumerates exactly, and on one it draws relabellings for.
    #[arg(long, hide = true)]
    pub inversion_cost: bool,
    /// The scenario test's path the bundles' crowd aims at.
    #[arg(long, hide = true, value_enum, default_value = "mixed")]
    pub path: super::simulate_bundles::BundlePath,
}

fn pct(r: Rate) -> String {
    format!("{:.1}", 100.0 * r.rate())
}

/// The designs: annotators, items and annotator SD crossed, with item SD 1 logit; then, unless
/// quick, designs where one variance component is zero (annotator SD 0, or item SD 0), for the
/// type I error of each of the scenario test's paths.
fn grid(quick: bool) -> Vec<Config> {
    let mut out = Vec::new();
    let (annotators, items, sds): (&[usize], &[usize], &[f64]) = if quick {
        (&[3, 10], &[100], &[0.09])
    } else {
        (&[3, 10], &[50, 300], &[0.04, 0.09, 0.16])
    };
    let config = |annotators, items, sd, effect, sd_item| Config {
        annotators,
        items,
        sd,
        mean: 0.75,
        effect,
        sd_item,
    };
    for &effect in &[0.0, 0.10] {
        for &n in annotators {
            for &m in items {
                for &sd in sds {
                    out.push(config(n, m, sd, effect, 1.0));
                }
            }
        }
    }
    if !quick {
        for n in [3, 5, 10] {
            out.push(config(n, 100, 0.0, 0.0, 1.0));
            out.push(config(n, 100, 0.09, 0.0, 0.0));
        }
    }
    out
}

/// A path's rejection rate and how many studies took it.
fn path(r: Rate) -> String {
    if r.of == 0 {
        "– (0)".into()
    } else {
        format!("{} ({})", pct(r), r.of)
    }
}

fn row(c: &Config, t: &Tally) -> String {
    format!(
        "| {} | {} | {:.0} | {:.1} | {:.0} | {} | {} / {} / {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        c.annotators,
        c.items,
        100.0 * c.sd,
        c.sd_item,
        100.0 * c.effect,
        pct(t.scenario_test),
        path(t.path_mixed),
        path(t.path_item_zero),
        path(t.path_relabel),
        pct(t.welch),
        pct(t.permutation),
        pct(t.item_sign_flip),
        pct(t.difference_interval),
        pct(t.cell_logit_t),
        pct(t.cell_t),
        pct(t.cell_item_bootstrap),
        pct(t.cell_two_level_bootstrap),
        pct(t.singular),
    )
}

fn logistic_row(c: &Config, t: &LogisticTally) -> String {
    format!(
        "| {} | {} | {:.0} | {:.1} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} |",
        c.annotators,
        c.items,
        100.0 * c.sd,
        c.sd_item,
        100.0 * c.effect,
        pct(t.z),
        pct(t.t),
        pct(t.z_interval),
        pct(t.t_interval),
        pct(t.reml_t),
        pct(t.reml_t_interval),
        pct(t.singular),
        t.failed.hits,
    )
}

/// The logistic model's table over the grid: the same studies as the main table's.
fn logistic_table(a: &SimulateArgs, threads: usize) {
    println!("The logistic mixed model (glmer's Laplace fit) of the same studies: rejections of δ = 0 by glmer's Wald z against the normal and against t with the between-within df (annotators − 2), each one's 95% interval's coverage of the crowd's logit shift δ, the same t and interval from the restricted (REML-Laplace) fit, singular fits, and fits that failed (outcomes that separate the scenarios).\n");
    println!("| annotators | items | SD | item SD | effect | z (glmer) | t (between-within) | z interval | t interval | REML t | REML t interval | singular fits | failed |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (i, c) in grid(a.quick).iter().enumerate() {
        let t = run_logistic(c, a.studies, a.seed ^ (i as u64) << 32, threads);
        println!("{}", logistic_row(c, &t));
    }
}

/// The planner against its own model: pilots of 4 scenarios of 3 annotators, sized for 10
/// points, then that many annotators simulated.
fn planner_rows(studies: usize, seed: u64) -> Vec<String> {
    let pilots = [
        (0.04, 0.15, 0.40, 100usize),
        (0.06, 0.20, 0.35, 200),
        (0.10, 0.25, 0.30, 300),
    ];
    pilots
        .iter()
        .enumerate()
        .map(|(i, &(sa, si, sr, m))| {
            let sd = Components {
                sd_annotator: sa,
                sd_item: si,
                sd_residual: sr,
                singular: false,
            };
            let pilot = Pilot {
                unit_var: sa * sa,
                resid_var: sr * sr,
                items: m as f64,
                unit_df: 8.0,
                resid_df: (12 * m + 1 - 12 - m) as f64,
            };
            let Some(plan) = pilot.plan(0.10, m as f64, 0.8, ALPHA) else {
                return format!("| {sa} | {sr} | {m} | no plan | | |");
            };
            let n = plan.needed.unwrap_or(0) as usize;
            let planned = two_sample_power(0.10 / plan.sd, n as f64, n as f64, ALPHA);
            let got = planned_power(sd, n, m, 0.10, studies, seed ^ i as u64);
            format!(
                "| {:.0} / {:.0} / {:.0} | {m} | {n} ({}–{}) | {:.1} | {} |",
                100.0 * sa,
                100.0 * si,
                100.0 * sr,
                plan.needed_range.and_then(|r| r.0).unwrap_or(0),
                plan.needed_range.and_then(|r| r.1).unwrap_or(0),
                100.0 * planned,
                pct(got)
            )
        })
        .collect()
}

/// Prints the time of the permutation test and of its inversion (the shifts it does not reject
/// at 0.05) on the largest designs below `relabel::EXACT_LIMIT` (a pair, a trend over four
/// scenarios) and on one past it (random relabellings), each on one core.
fn inversion_cost(seed: u64) {
    use domain::stats::{contrast_relabel_test, relabel::multinomial, relabel_interval::invert};
    let mut rng = domain::rng::SplitMix64(seed);
    println!("| design | relabellings | exact | test (s) | inversion (s) | interval |");
    println!("|---|---|---|---|---|---|");
    for sizes in [
        &[12usize, 12][..],
        &[4, 4, 4, 2],
        &[3, 3, 3, 3],
        &[13, 13],
        &[8, 8, 8, 8],
    ] {
        let groups: Vec<Vec<f64>> = sizes
            .iter()
            .enumerate()
            .map(|(g, &n)| {
                (0..n)
                    .map(|_| 0.6 + 0.03 * g as f64 + 0.05 * rng.normal())
                    .collect()
            })
            .collect();
        let views: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
        let w: &[f64] = if sizes.len() == 2 {
            &[-1.0, 1.0]
        } else {
            &[-1.5, -0.5, 0.5, 1.5]
        };
        let started = std::time::Instant::now();
        let Some(t) = contrast_relabel_test(&views, w, seed) else {
            continue;
        };
        let tested = started.elapsed().as_secs_f64();
        let started = std::time::Instant::now();
        let interval = invert(&views, w, 0.05, seed, &t);
        println!(
            "| {sizes:?} | {} | {} | {tested:.3} | {:.3} | {} |",
            multinomial(sizes),
            t.exact,
            started.elapsed().as_secs_f64(),
            interval.map_or("none".into(), |i| format!("{:.4} to {:.4}", i.low, i.high))
        );
    }
}

pub(super) fn simulate(a: &SimulateArgs) -> Result<()> {
    if a.studies == 0 {
        return Err(Error::Invalid("--studies must be at least 1".into()));
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if a.inversion_cost {
        inversion_cost(a.seed);
        return Ok(());
    }
    if let Some(dir) = &a.bundles {
        return super::simulate_bundles::write_bundles(dir, a.path, a.studies, a.seed, threads);
    }
    let started = std::time::Instant::now();
    println!(
        "{} simulated studies per design, seed {}, {threads} threads; rates in percent at alpha = {ALPHA}",
        a.studies, a.seed
    );
    if a.logistic {
        logistic_table(a, threads);
        println!("\nin {:.0} s", started.elapsed().as_secs_f64());
        return Ok(());
    }
    println!("Crossed logistic crowd: mean S1 75 in the first scenario; SD = the spread of annotators' expected S1 (points), item SD = the items' difficulty spread (logits), effect = the second scenario's difference (points). The scenario test's paths: the mixed model / the mixed model with its item variance at zero / the annotator permutation test (annotator variance at zero or no fit), each as its rate (studies that took it).\n");
    println!("| annotators | items | SD | item SD | effect | scenario test | its paths | Welch | permutation | item sign-flip (old) | difference CI | cell: logit t | cell: plain t | cell: item bootstrap | cell: two-level bootstrap (old) | singular fits |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (i, c) in grid(a.quick).iter().enumerate() {
        let t = run(c, a.studies, a.seed ^ (i as u64) << 32, threads);
        println!("{}", row(c, &t));
    }
    println!("\nThe planner against its own model (normal mixed model, 2 scenarios, 10 points):\n");
    println!("| SD annotator / item / residual (points) | items | planned annotators per scenario (range) | planned power | simulated power |");
    println!("|---|---|---|---|---|");
    for line in planner_rows(a.studies, a.seed) {
        println!("{line}");
    }
    println!("\nin {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}
