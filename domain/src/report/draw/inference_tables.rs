//! The report's tables of inference: every cell with its 95% intervals named by what they
//! cover, each study's family of scenario comparisons and the comparisons with systems, and
//! the training step by position and time (Tables 8 and 9 extended); and the paragraph that
//! explains them.

use super::table::Table;
use super::text::{pct, spread_text};
use super::versus::who_table;
use crate::report::inference::{Comparison, Side, Uncertainty};
use crate::report::{Report, Which};
use crate::stats::interval::RESAMPLES;
use crate::stats::{Interval, RelabelTest};

/// How the intervals, tests and planner are computed (a paragraph a paper can cite).
pub const STATISTICS: &str = "Intervals and tests, annotators as the random unit. Every cell has two 95% intervals, each named by what it covers. Other annotators (or, for a system, other training splits) on these items: the t-interval over the units' scores on the logit scale, expit(logit(m) ± t(0.975, n − 1) · s / (√n · m (1 − m))), which stays within 0–100. These annotators on more items: a bootstrap over the test items with the units held (2,000 draws, percentiles expanded for the number of items as Hesterberg recommends). The two-level bootstrap the report used before is dropped: in simulation it covered as little as 73% of the time (3 annotators of spread 16 points on 300 items). Scenario comparisons are declared per study and task, before its data, as one family: each scenario against the next, the largest k against zero-shot, and the linear trend over k (the slope per 10 shots); Holm's adjustment applies within that family and never depends on which studies a report covers (a comparison without data yet counts with p = 1). Each is a contrast of one fit of the linear mixed model item S1 ~ scenario + (1|annotator) + (1|item) by REML, tested with Satterthwaite's degrees of freedom (as lme4 and lmerTest compute them; equal to R to 1e-6 on fixtures); where the fit puts only the item variance at zero the model is kept (the annotator term still carries the comparison, as in lmerTest) and the cell says so; where it puts the annotator variance at zero, or cannot be fitted, the exact permutation test of annotator labels decides (it holds its level by construction), the cell says which and why, and its interval is that test's own: the shifts of the difference it does not reject at the plan's α (found by shifting one side's annotators and relabelling again), so that interval and p never disagree; where the design's smallest reachable p is above α no shift is rejected and the cell says there is no interval. Welch's SE and df across the annotators' mean scores stand beside it as a description. A comparison whose data cannot be tested (every answer scored the same, or one annotator a scenario) keeps its row, with the difference and the reason, and counts with p = 1 in Holm's adjustment. Beside every pair of scenarios: that permutation test (all C(n1 + n2, n1) relabellings), with the smallest p the design can reach (0.10 for 3 against 3: such a design cannot be significant at 0.05); the difference adjusted for the groups' screening S1 (ANCOVA across annotators: test S1 ~ scenario + screening S1, with its SE, n − 3 degrees of freedom, interval and p); and, labelled as such and outside every family, the item-level view: the paired sign-flip test and item bootstrap that hold these annotators fixed and say only whether their difference would hold on more items. Where every item S1 of a study's family is 0 or 1 (a label task), the logistic mixed model logit P(right) ~ scenario + (1|annotator) + (1|item) is fitted beside it as glmer fits it (maximum likelihood, Laplace approximation; equal to lme4 to 1e-4 on fixtures), each contrast given in log-odds with glmer's Wald p and the same statistic against t with the between-within degrees of freedom, which do not hold their level with 3 annotators a scenario in simulation (17.6% and 7.1% of null studies); and the same model fitted by REML under the Laplace approximation (β integrated out beside the random effects, as glmmTMB's REML = TRUE; equal to R to 1e-6, built from lme4's parts), whose t holds its level at 3 annotators as at 10 (4.0% and 4.2%, coverage 95.8-96.0%; over the whole simulated grid never liberal, and conservative at 3 annotators: 0.3-3.3%). It is the second reading of the comparison for label tasks; the linear model decides. Humans against a system at the same k: Welch's test across the annotators and the system's splits (each side's own spread), or the one-sample test across annotators where the system ran on one split; exploratory, as no plan declares them. Each such cell names the system's runs it used (its zero-shot run, its runs on the humans' training splits, or all its splits where it has none on one of theirs), and where each run ran is listed with the CPU's or GPU's model. A study's plan is frozen, with its SHA-256, when its first worker arrives; a study whose data began before that has only exploratory comparisons. The planner sizes a study from a pilot's variance components under the same model (annotator, item, residual): an annotator's mean over m items varies with τ² = σ²_annotator + σ²_residual / m, and n annotators per scenario give the two-sample t-test's power at difference / τ (statsmodels' TTestIndPower); the answer comes with the range across τ's chi-square interval at the plan's level 1 − α (Satterthwaite's degrees of freedom). A pilot whose answers do not vary, or with one annotator a scenario, is not planned from: its row says why. Power at an observed difference is not computed. Every rate in this paragraph was measured by `clues-lab simulate` on a crossed logistic crowd model.";

fn interval_text(i: Option<Interval>) -> Option<String> {
    i.map(|i| format!("{}–{}", pct(i.low), pct(i.high)))
}

/// `mean (other annotators low–high; more items low–high)` in percent.
fn cell_text(mean: f64, u: Option<&Uncertainty>, units: &str) -> Option<String> {
    let u = u?;
    let parts: Vec<String> = [
        interval_text(u.other_units).map(|t| format!("other {units} {t}")),
        interval_text(u.more_items).map(|b| format!("more items {b}")),
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
            "Mean in percent with two 95% intervals, named by what they cover: \"other annotators\" (for systems \"other splits\"), the t-interval over the units on the logit scale, covers the mean of other annotators like these on these test items; \"more items\", the bootstrap over test items with the units held ({RESAMPLES} draws, expanded percentiles), covers these annotators' mean on more items like these. See how the numbers are computed."
        ),
        |c| cell_text(c.official.mean, c.official_ci.as_ref(), "annotators"),
        |m| cell_text(m.official.mean, m.official_ci.as_ref(), "splits"),
    )
}

pub(super) use crate::stats::p_text;

/// `1 − α` in percent, without trailing zeros (95, 98, 99.5).
pub(super) fn level_text(alpha: f64) -> String {
    let s = format!("{:.2}", 100.0 * (1.0 - alpha));
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn signed_points(x: f64) -> String {
    format!("{}{}", if x > 0.0 { "+" } else { "" }, pct(x))
}

fn permutation_text(t: &RelabelTest) -> String {
    format!(
        "{} (smallest possible {}{})",
        p_text(t.p),
        p_text(t.min_p),
        if t.exact { "" } else { ", random relabellings" }
    )
}

fn comparison_row(c: &Comparison) -> Vec<String> {
    let units: Vec<String> = c.sides.iter().map(Side::units_text).collect();
    vec![
        c.study.map(|s| s.to_string()).unwrap_or_default(),
        c.task.clone(),
        c.label.clone(),
        c.status.as_str().to_string(),
        units.join(" vs "),
        c.items.to_string(),
        signed_points(c.difference),
        c.interval.map_or_else(
            || c.why_no_interval(),
            |i| format!("{}–{} ({}%)", pct(i.low), pct(i.high), level_text(c.alpha)),
        ),
        c.method.describe(),
        c.test
            .map(|t| format!("{:.2}", t.df))
            .unwrap_or_else(|| "–".into()),
        c.p().map(p_text).unwrap_or_else(|| "no test".into()),
        c.p_holm
            .map(|p| format!("{} (α {})", p_text(p), c.alpha))
            .unwrap_or_else(|| "not in a family".into()),
        c.permutation
            .as_ref()
            .map(permutation_text)
            .unwrap_or_default(),
        c.effect.map(|d| format!("{d:.2}")).unwrap_or_default(),
        c.adjusted
            .map(|a| match a.test {
                Some(t) => format!(
                    "{} (SE {}, df {}, {}, p {}; slope {:.2})",
                    signed_points(a.difference),
                    pct(t.se),
                    t.df,
                    interval_text(Some(t.interval(1.0 - c.alpha))).unwrap_or_default(),
                    p_text(t.p),
                    a.slope
                ),
                None => format!(
                    "{} (slope {:.2}; no test)",
                    signed_points(a.difference),
                    a.slope
                ),
            })
            .unwrap_or_default(),
        c.these_annotators
            .map(|i| {
                format!(
                    "{}p {}",
                    interval_text(i.interval)
                        .map(|t| format!("{t}, "))
                        .unwrap_or_default(),
                    p_text(i.test.p)
                )
            })
            .unwrap_or_default(),
        c.logistic
            .as_ref()
            .map(crate::report::inference::Logistic::describe)
            .unwrap_or_default(),
    ]
}

/// The comparisons of one set of tables; `None` when there are none.
pub fn comparison_table(r: &Report, which: Which) -> Option<Table> {
    let t = which.of(r);
    (!t.comparisons.is_empty()).then(|| {
        Table::plain(
            &format!("comparisons-{}", which.id()),
            &format!("Scenario comparisons and comparisons with systems, {}", which.describe()),
            "Per study, its declared family (status primary or family; exploratory where the study's data began before its plan was frozen) and humans against each system at the same k (exploratory). Difference of test S1 in points (official scoring; the trend's slope per 10 shots) with its interval over other annotators at the level of the study's plan (1 − α: the frozen plan's α, else the configured one; 95% for humans against a system), the test (the mixed model with Satterthwaite's df, or the annotator permutation test where the cell says which variance was zero: then the interval is the shifts that test does not reject, none where its smallest p is above α, and the df is Welch's, a description; or no test, with the reason), the p that decides and Holm's p within the study's family with the α it is read against; the exact permutation test of annotator labels with the smallest p the design can reach; the difference over the pooled SD of the units' scores; the difference adjusted for screening S1 (its interval at 1 − α); and, last and outside every family, these annotators on more items (item bootstrap interval at 1 − α and the paired sign-flip p), which holds the annotators fixed and is not a test of the scenarios. Where every item S1 is 0 or 1 (a label task), the logistic mixed model of the same contrast stands beside it: the difference in log-odds with its SE, its interval at 1 − α and p against t with the between-within degrees of freedom, glmer's own p against the normal, and the restricted (REML) fit's difference, SE and p against t, the reading that holds its level with 3 annotators a scenario. See how the numbers are computed.",
            &[
                "Study",
                "Task",
                "Comparison",
                "Status",
                "Annotators",
                "Items",
                "Difference",
                "Interval at 1 − α (other annotators)",
                "Test",
                "df",
                "p",
                "p (Holm, study's family)",
                "Permutation p (annotators)",
                "Effect (SD units)",
                "Adjusted for screening",
                "These annotators on more items",
                "Logistic mixed model (label tasks)",
            ],
            t.comparisons.iter().map(comparison_row).collect(),
        )
    })
}

/// `r (n, 95% interval, p)`.
fn correlation_text(c: crate::stats::Correlation) -> String {
    let p = match c.reported_p() {
        Some(p) => format!("p {}", p_text(p)),
        None => format!("no p below {} pairs", crate::stats::MIN_PAIRS_FOR_P),
    };
    format!(
        "{:.2} (n={}{}, {p})",
        c.r,
        c.n,
        c.interval
            .map(|i| format!(", 95% {:.2} to {:.2}", i.low, i.high))
            .unwrap_or_default(),
    )
}

/// Tables 8 and 9 extended: each k-shot group's training step by position and time; `None`
/// when no group has one.
pub fn order_table(r: &Report, which: Which) -> Option<Table> {
    let t = which.of(r);
    (!t.order.is_empty()).then(|| {
        Table::plain(
            &format!("training-order-{}", which.id()),
            &format!("Training step by position and time, {}", which.describe()),
            "Per k-shot group: S1 (official) on the first half of the training examples as each worker saw them and on the second half, mean ± standard deviation over annotators; seconds from showing a training example to its answer; and Pearson's r across annotators of those seconds and test S1 (three annotators or more) with n, its 95% Fisher-z interval (four or more) and the p of the t-test of r = 0 (five or more: with fewer the test has under three degrees of freedom, so only r, n and the interval are shown). Only a study that shows each worker the examples in an order of their own makes the halves' difference a measure of learning during the training step; in the file's order the halves hold different examples for everyone.",
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
                        c.time_vs_test.map(correlation_text).unwrap_or_default(),
                    ]
                })
                .collect(),
        )
    })
}
