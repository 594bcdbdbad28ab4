//! The report's tables of inference: every cell with its 95% intervals, the comparisons
//! between scenarios and with systems, the planner, and the training step by position and
//! time (Tables 8 and 9 extended); and the paragraph that explains them.

use super::table::Table;
use super::text::{pct, spread_text};
use super::versus::who_table;
use crate::report::inference::{Comparison, Uncertainty, ALPHA, POWER};
use crate::report::{Report, Which};
use crate::stats::interval::{LEVEL, RESAMPLES};
use crate::stats::paired;

/// How the intervals, tests and planner are computed (a paragraph a paper can cite).
pub const STATISTICS: &str = "Intervals and tests: every human cell (over its annotators) and machine cell (over its splits) has two 95% intervals of its mean: the exact t-interval (mean ± t(0.975, n − 1) · s / √n, n ≥ 2) and a percentile bootstrap that draws, 2,000 times, the test items with replacement and the annotators (or splits) with replacement, taking the mean over drawn units of their mean over drawn items; its draws are seeded by the cell's name, so the report is the same on every build. Each scenario is compared with the next smaller one, and humans with each system at the same k, on the test items both answered: the difference is the mean over items of the two sides' mean item S1; its interval is the same bootstrap (items drawn once for both sides, units per side); p is a two-sided paired sign-flip permutation test of the item differences (all 2^n sign patterns when n ≤ 13 items, else 9,999 random ones with the +1 correction, as scipy.stats.permutation_test), also given Holm-adjusted over every comparison of the table; d_z is the mean item difference over its standard deviation. The permutation test holds the annotators fixed: it says whether their difference would hold on more items. Whether other annotators would show it is the interval's and the design's question: the power of a two-sided two-sample t-test across units (α = 0.05, pooled standard deviation of the units' S1, the exact noncentral t, as statsmodels' TTestIndPower) to find the difference seen, and the units per side that give 80%. Where a study has screening items (every worker answers them first, without feedback), each group's screening S1 is given beside Table 5 and each scenario difference also adjusted for it: the group coefficient of the least-squares fit test S1 ~ 1 + scenario + screening S1 across the two groups' annotators (ANCOVA, the slope pooled within groups). The planner sizes a study from these annotators as pilot data: the standard deviation of annotator S1 within a scenario, pooled over a task's scenarios, and the annotators per scenario needed to find a difference of 5 or 10 S1 points with 80% power.";

fn interval_text(i: Option<crate::stats::Interval>) -> Option<String> {
    i.map(|i| format!("{}–{}", pct(i.low), pct(i.high)))
}

/// `mean (t low–high; bootstrap low–high)` in percent.
fn cell_text(mean: f64, u: Option<&Uncertainty>) -> Option<String> {
    let u = u?;
    let parts: Vec<String> = [
        interval_text(u.t).map(|t| format!("t {t}")),
        interval_text(u.bootstrap).map(|b| format!("bootstrap {b}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(format!("{} ({})", pct(mean), parts.join("; ")))
}

/// Table 5 (and, for all annotators, the systems' rows) with each cell's 95% intervals.
pub fn interval_table(r: &Report, which: Which) -> Table {
    who_table(
        r,
        which,
        format!("intervals-{}", which.id()),
        format!(
            "95% intervals of test S1 (official scoring), {}",
            which.describe()
        ),
        &format!(
            "Mean in percent with its {}% t-interval over annotators (humans) or splits (systems) and its bootstrap interval over those and the test items ({RESAMPLES} resamples); see how the numbers are computed.",
            LEVEL * 100.0
        ),
        |c| cell_text(c.official.mean, c.official_ci.as_ref()),
        |m| cell_text(m.official.mean, m.official_ci.as_ref()),
    )
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

fn signed_points(x: f64) -> String {
    format!("{}{}", if x > 0.0 { "+" } else { "" }, pct(x))
}

fn comparison_row(c: &Comparison) -> Vec<String> {
    let design = c.design;
    vec![
        c.task.clone(),
        format!("{} vs {}", c.b.describe(), c.a.describe()),
        c.items.to_string(),
        signed_points(c.difference),
        interval_text(c.interval).unwrap_or_default(),
        format!(
            "{}{}",
            p_text(c.test.p),
            if c.test.exact { " (exact)" } else { "" }
        ),
        p_text(c.p_holm),
        c.effect_dz.map(|d| format!("{d:.2}")).unwrap_or_default(),
        design
            .map(|d| format!("{:.2}", d.power))
            .unwrap_or_default(),
        design
            .map(|d| d.needed.map_or("over a million".into(), |n| n.to_string()))
            .unwrap_or_default(),
        if c.underpowered() {
            format!(
                "too few {} ({} vs {}) to expect to find a difference this size",
                if c.b.who == crate::report::inference::HUMANS {
                    "annotators"
                } else {
                    "units"
                },
                c.b.units,
                c.a.units
            )
        } else {
            String::new()
        },
        c.adjusted
            .map(|a| format!("{} (slope {:.2})", signed_points(a.difference), a.slope))
            .unwrap_or_default(),
    ]
}

/// The comparisons of one set of tables; `None` when there are none.
pub fn comparison_table(r: &Report, which: Which) -> Option<Table> {
    let t = which.of(r);
    (!t.comparisons.is_empty()).then(|| {
        Table::plain(
            &format!("comparisons-{}", which.id()),
            &format!("Differences between scenarios and with systems, {}", which.describe()),
            &format!(
                "Difference of test S1 in points (official scoring), its 95% bootstrap interval, the paired permutation test's p ({} random sign patterns unless exact) and Holm's adjustment, the effect size d_z, the design's power at α = {ALPHA} with the units per side for {}% power, and, where every annotator answered screening items, the difference adjusted for the groups' screening S1; see how the numbers are computed.",
                paired::RESAMPLES,
                POWER * 100.0
            ),
            &[
                "Task",
                "Comparison",
                "Items",
                "Difference",
                "95% interval",
                "p",
                "p (Holm)",
                "d_z",
                "Power",
                "Units per side for 80%",
                "Note",
                "Adjusted for screening",
            ],
            t.comparisons.iter().map(comparison_row).collect(),
        )
    })
}

/// The planner from these annotators as pilot data; `None` when no task has a spread.
pub fn plan_table(r: &Report, which: Which) -> Option<Table> {
    let t = which.of(r);
    (!t.plan.is_empty()).then(|| {
        let mut header = vec![
            "Task".to_string(),
            "Pilot annotators".to_string(),
            "SD of annotator S1".to_string(),
        ];
        if let Some(p) = t.plan.first() {
            header.extend(
                p.needed
                    .iter()
                    .map(|(d, _)| format!("Annotators per scenario for {} points", pct(*d))),
            );
        }
        let rows = t
            .plan
            .iter()
            .map(|p| {
                let mut row = vec![p.task.clone(), p.pilot_annotators.to_string(), pct(p.pooled_sd)];
                row.extend(
                    p.needed
                        .iter()
                        .map(|(_, n)| n.map_or("over a million".into(), |n| n.to_string())),
                );
                row
            })
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        Table::plain(
            &format!("planner-{}", which.id()),
            &format!("Planner: annotators a study needs, {}", which.describe()),
            &format!("From these annotators as pilot data: the standard deviation of annotator S1 within a scenario (points), pooled over the task's scenarios, and the annotators each scenario needs for a two-sided two-sample t-test at α = {ALPHA} to find each difference with {}% power. `clues-lab plan` sizes other differences.", POWER * 100.0),
            &header,
            rows,
        )
    })
}

/// Tables 8 and 9 extended: each k-shot group's training step by position and time; `None`
/// when no group has one.
pub fn order_table(r: &Report, which: Which) -> Option<Table> {
    let t = which.of(r);
    (!t.order.is_empty()).then(|| {
        Table::plain(
            &format!("training-order-{}", which.id()),
            &format!("Training step by position and time, {}", which.describe()),
            "Per k-shot group: S1 (official) on the first half of the training examples as each worker saw them and on the second half, mean ± standard deviation over annotators; seconds from showing a training example to its answer; and Pearson's r across annotators of those seconds and test S1 (three annotators or more). Only a study that shows each worker the examples in an order of their own makes the halves' difference a measure of learning during the training step; in the file's order the halves hold different examples for everyone.",
            &[
                "Task",
                "Shots",
                "Training order",
                "S1 first half",
                "S1 second half",
                "Seconds per example",
                "r(seconds, test S1)",
            ],
            t.order
                .iter()
                .map(|c| {
                    vec![
                        c.task.clone(),
                        c.k.to_string(),
                        c.order.as_str().to_string(),
                        spread_text(&c.first_half),
                        spread_text(&c.second_half),
                        format!(
                            "{:.1} ± {:.1}",
                            c.seconds_per_example.mean, c.seconds_per_example.std_pop
                        ),
                        c.time_vs_test.map(|r| format!("{r:.2}")).unwrap_or_default(),
                    ]
                })
                .collect(),
        )
    })
}
