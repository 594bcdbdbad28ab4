//! The tables of planning: each study's analysis plan (declared, frozen with its hash, and
//! where the study departs from it) and the planner from each study's variance components.

use super::table::Table;
use super::text::pct;
use crate::report::inference::{PLANNED, POWER};
use crate::report::{Report, Which};
use crate::stats::Planned;

fn needed_text(p: &Planned) -> String {
    let n = |x: Option<u32>| x.map_or("over a million".to_string(), |n| n.to_string());
    match p.needed_range {
        Some((lo, hi)) => format!("{} ({}–{})", n(p.needed), n(lo), n(hi)),
        None => n(p.needed),
    }
}

fn pilot_text(annotators: usize, scenarios: usize, items: usize) -> String {
    format!("{annotators} annotators in {scenarios} scenarios, {items} items")
}

/// The planner from each study as pilot data; `None` when no study has a fit.
pub fn plan_table(r: &Report, which: Which) -> Option<Table> {
    let t = which.of(r);
    (!t.plan.is_empty() || !t.plan_refused.is_empty()).then(|| {
        let mut header: Vec<String> = [
            "Study",
            "Task",
            "Pilot",
            "SD annotator",
            "SD item",
            "SD residual",
            "τ (SD of an annotator's mean, interval at 1 − α)",
            "α (the study's plan)",
        ]
        .map(String::from)
        .to_vec();
        header.extend(
            PLANNED
                .iter()
                .map(|d| format!("Annotators per scenario for {} points", pct(*d))),
        );
        let refused = t.plan_refused.iter().map(|p| {
            let mut row = vec![
                p.study.to_string(),
                p.task.clone(),
                pilot_text(p.pilot_annotators, p.scenarios, p.items),
                String::new(),
                String::new(),
                String::new(),
                p.why.describe(),
                String::new(),
            ];
            row.extend(PLANNED.iter().map(|_| "no plan".to_string()));
            row
        });
        let rows = t
            .plan
            .iter()
            .map(|p| {
                let c = &p.components;
                let tau = p.planned.first().map_or(String::new(), |q| match q.sd_interval {
                    Some(i) => format!("{} ({}–{})", pct(q.sd), pct(i.low), pct(i.high)),
                    None => pct(q.sd),
                });
                let mut row = vec![
                    p.study.to_string(),
                    p.task.clone(),
                    pilot_text(p.pilot_annotators, p.scenarios, p.items),
                    format!("{}{}", pct(c.sd_annotator), if c.singular { " (singular)" } else { "" }),
                    pct(c.sd_item),
                    pct(c.sd_residual),
                    tau,
                    p.alpha.to_string(),
                ];
                row.extend(PLANNED.iter().map(|d| {
                    p.planned
                        .iter()
                        .find(|q| q.difference == *d)
                        .map(needed_text)
                        .unwrap_or_default()
                }));
                row
            })
            .chain(refused)
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        Table::plain(
            &format!("planner-{}", which.id()),
            &format!("Planner: annotators a study needs, {}", which.describe()),
            &format!("Each study's fit of S1 ~ scenario + (1|annotator) + (1|item) as pilot data (standard deviations in points): on the pilot's items an annotator's mean varies between annotators with τ² = SD²annotator + SD²residual / items; each scenario then needs n annotators for the two-sided test at the study's α (its frozen plan's, else the configured one) to find the difference with {}% power, with the range across τ's interval at 1 − α in brackets. Planned from the variance components, never from an observed difference. A study whose answers do not vary, or with one annotator a scenario, is not planned from, and its row says why. `clues-lab plan` sizes other differences and numbers of items.", POWER * 100.0),
            &header,
            rows,
        )
    })
}

/// Each study's analysis plan; `None` without studies.
pub fn analysis_plan_table(r: &Report) -> Option<Table> {
    (!r.plans.is_empty()).then(|| {
        let rows = r
            .plans
            .iter()
            .map(|p| {
                let (frozen, planned, rules, deviations) = match &p.frozen {
                    Some(f) => (
                        format!(
                            "frozen at {} (unix ms), SHA-256 {}",
                            f.frozen_at, f.sha256
                        ),
                        format!(
                            "{} annotators per scenario, {} items, α = {}",
                            f.plan.annotators_per_scenario, f.plan.items, f.plan.alpha
                        ),
                        format!(
                            "training filter margin {}; attention checks: {}; screening: {}; synthetic workers left out",
                            f.plan.exclusions.training_filter_margin,
                            f.plan
                                .exclusions
                                .attention_max_failures
                                .map_or("none".to_string(), |m| format!("more than {m} failed flags")),
                            f.plan.exclusions.screening.as_deref().unwrap_or("none")
                        ),
                        if f.deviations.is_empty() {
                            "none".to_string()
                        } else {
                            f.deviations.join("; ")
                        },
                    ),
                    None => (
                        "not frozen: the study's data began before plans were frozen (its comparisons are exploratory)".to_string(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ),
                };
                vec![
                    p.study.to_string(),
                    p.task.clone(),
                    frozen,
                    p.primary.clone().unwrap_or_default(),
                    p.family.join("; "),
                    planned,
                    rules,
                    deviations,
                ]
            })
            .collect();
        Table::plain(
            "analysis-plans",
            "Analysis plans",
            "Each study's plan, frozen with the SHA-256 of its JSON when its first worker arrived: the family of scenario comparisons (Holm's adjustment applies within it), the primary comparison, the level, the planned sample and the exclusion rules. The bundle holds each plan's exact JSON (`analysis_plans.json`), so its hash can be checked.",
            &[
                "Study",
                "Task",
                "Plan",
                "Primary comparison",
                "Family",
                "Planned",
                "Exclusions",
                "Departures from the plan",
            ],
            rows,
        )
    })
}
