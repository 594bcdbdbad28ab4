//! The CSV's rows of inference: each comparison with its tests, the planner, each study's
//! analysis plan, and the training order with its correlation.

use super::{ends, num, opt_num, seed_hex, Base, Row};
use crate::report::inference::{Logistic, POWER};
use crate::report::{Report, Tables};
use crate::stats::interval::LEVEL;

/// Each comparison: the difference with its interval and test, Holm's p within the study's
/// family, the permutation test, the item-level view, effect and screening adjustment.
pub(super) fn comparison_rows(t: &Tables, b: &Base) -> Vec<Row> {
    t.comparisons
        .iter()
        .map(|c| {
            let units: Vec<String> = c.sides.iter().map(|s| s.units.to_string()).collect();
            let (other_units_low, other_units_high) = ends(c.interval);
            let (more_items_low, more_items_high) =
                ends(c.these_annotators.and_then(|i| i.interval));
            let adjusted_test = c.adjusted.and_then(|a| a.test);
            let k = c.sides.iter().map(|s| s.k).max().unwrap_or(0);
            let (logistic, p_wald, logistic_interval, reml) = match &c.logistic {
                Some(Logistic::Fitted {
                    test,
                    p_wald,
                    interval,
                    restricted,
                    ..
                }) => (Some(*test), Some(*p_wald), Some(*interval), *restricted),
                Some(Logistic::NotFitted { .. }) | None => (None, None, None, None),
            };
            let (logistic_other_units_low, logistic_other_units_high) = ends(logistic_interval);
            Row {
                study: c.study.map(|s| s.to_string()).unwrap_or_default(),
                subset: c.label.clone(),
                n: units.join(" vs "),
                items: c.items.to_string(),
                mean: num(c.difference),
                measure: "difference".into(),
                level: num(1.0 - c.alpha),
                other_units_low,
                other_units_high,
                more_items_low,
                more_items_high,
                se: opt_num(c.test.map(|t| t.se)),
                df: opt_num(c.test.map(|t| t.df)),
                p: opt_num(c.p()),
                p_holm: opt_num(c.p_holm),
                method: c.method.describe(),
                status: c.status.as_str().into(),
                permutation_p: opt_num(c.permutation.map(|x| x.p)),
                permutation_min_p: opt_num(c.permutation.map(|x| x.min_p)),
                items_p: opt_num(c.these_annotators.map(|i| i.test.p)),
                effect: opt_num(c.effect),
                adjusted: opt_num(c.adjusted.map(|a| a.difference)),
                adjusted_se: opt_num(adjusted_test.map(|x| x.se)),
                adjusted_p: opt_num(adjusted_test.map(|x| x.p)),
                logistic_log_odds: opt_num(logistic.map(|x| x.estimate)),
                logistic_se: opt_num(logistic.map(|x| x.se)),
                logistic_df: opt_num(logistic.map(|x| x.df)),
                logistic_p: opt_num(logistic.map(|x| x.p)),
                logistic_p_wald: opt_num(p_wald),
                logistic_other_units_low,
                logistic_other_units_high,
                logistic_reml_log_odds: opt_num(reml.map(|x| x.estimate)),
                logistic_reml_se: opt_num(reml.map(|x| x.se)),
                logistic_reml_p: opt_num(reml.map(|x| x.p)),
                seed: seed_hex(c.seed),
                ..b.row("comparison", "official", &c.task, k)
            }
        })
        .collect()
}

/// The planner: annotators per scenario needed to find each difference, per study.
pub(super) fn plan_rows(t: &Tables, b: &Base) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in &t.plan {
        for q in &p.planned {
            let (tau_low, tau_high) = ends(q.sd_interval);
            let at = |x: Option<u32>| x.map(|n| n.to_string()).unwrap_or_default();
            rows.push(Row {
                k: String::new(),
                study: p.study.to_string(),
                n: p.pilot_annotators.to_string(),
                items: p.items.to_string(),
                mean: num(q.difference),
                std: num(q.sd),
                level: num(1.0 - p.alpha),
                tau_low,
                tau_high,
                measure: format!(
                    "difference at {}% power for the two-sided test at α = {} (the study's plan); std = τ (the SD of an annotator's mean over the items); tau_low and tau_high: its interval at the level (1 − α)",
                    POWER * 100.0,
                    p.alpha
                ),
                needed: at(q.needed),
                needed_low: at(q.needed_range.and_then(|r| r.0)),
                needed_high: at(q.needed_range.and_then(|r| r.1)),
                ..b.row("planner", "official", &p.task, 0)
            });
        }
    }
    rows.extend(t.plan_refused.iter().map(|p| Row {
        k: String::new(),
        study: p.study.to_string(),
        n: p.pilot_annotators.to_string(),
        items: p.items.to_string(),
        measure: p.why.describe(),
        ..b.row("planner", "official", &p.task, 0)
    }));
    rows
}

/// Each study's analysis plan: frozen with its hash, or not.
pub(super) fn analysis_plan_rows(r: &Report) -> Vec<Row> {
    r.plans
        .iter()
        .map(|p| Row {
            table: "analysis_plan".into(),
            study: p.study.to_string(),
            task: p.task.clone(),
            subset: p.primary.clone().unwrap_or_default(),
            n: p.frozen
                .as_ref()
                .map(|f| f.plan.annotators_per_scenario.to_string())
                .unwrap_or_default(),
            items: p
                .frozen
                .as_ref()
                .map(|f| f.plan.items.to_string())
                .unwrap_or_default(),
            measure: p
                .frozen
                .as_ref()
                .map(|f| format!("sha256:{}", f.sha256))
                .unwrap_or_default(),
            status: if p.frozen.is_some() {
                "frozen"
            } else {
                "not frozen"
            }
            .into(),
            ..Row::default()
        })
        .collect()
}

/// The training order: each half's S1, seconds per example, and their correlation with test S1.
pub(super) fn order_rows(t: &Tables, b: &Base) -> Vec<Row> {
    let mut rows = Vec::new();
    for c in &t.order {
        let cell = |subset: &str| Row {
            subset: subset.into(),
            measure: c.order.as_str().into(),
            ..b.row("training_order", "official", &c.task, c.k)
        };
        rows.push(cell("first half").spread(&c.first_half));
        rows.push(cell("second half").spread(&c.second_half));
        rows.push(cell("seconds per example").spread(&c.seconds_per_example));
        if let Some(r) = c.time_vs_test {
            let (r_low, r_high) = ends(r.interval);
            rows.push(Row {
                n: r.n.to_string(),
                mean: num(r.r),
                level: num(LEVEL),
                r_low,
                r_high,
                p: r.reported_p().map(num).unwrap_or_default(),
                ..cell(&format!(
                    "pearson r of seconds and test S1 ({}% interval)",
                    LEVEL * 100.0
                ))
            });
        }
    }
    rows
}
