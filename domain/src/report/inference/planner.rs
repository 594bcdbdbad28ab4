//! The planner: per study, the annotators per scenario each `PLANNED` difference needs, from
//! the study's fit as pilot data; or, where the pilot cannot say how annotators spread, the
//! refusal with its reason (a pilot without variance would plan 2 annotators for anything).

use super::{default_alpha, StudyFit, PLANNED, POWER};
use crate::ids::StudyId;
use crate::stats::groups::Components;
use crate::stats::{Pilot, Planned};
use serde::{Deserialize, Serialize};

/// Below this standard deviation (in S1, annotator and residual alike) a pilot has no spread.
pub const NO_SPREAD: f64 = 1e-6;

/// Per study: the planner from its fit's variance components.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRow {
    pub task: String,
    pub study: StudyId,
    pub pilot_annotators: usize,
    pub scenarios: usize,
    pub items: usize,
    pub components: Components,
    /// The level the planner sizes the two-sided test for: the study's plan's (τ's interval
    /// is at 1 − α too).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// One plan per `PLANNED` difference, on the pilot's number of items.
    pub planned: Vec<Planned>,
}

/// Why the planner does not plan from a study's data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The scenario model could not be fitted.
    NotFitted { error: String },
    /// The answers do not vary (every one scored the same, or the fit finds no spread).
    NoSpread,
    /// One annotator a scenario: the annotators' spread cannot be told from the scenarios'.
    OneAnnotatorEach,
}

impl Refusal {
    pub fn describe(&self) -> String {
        match self {
            Refusal::NotFitted { error } => {
                format!("no plan: the scenario model could not be fitted ({error})")
            }
            Refusal::NoSpread => "no plan: the pilot's answers do not vary (every answer scored the same, or the fit finds no spread), so they say nothing of how annotators differ; a plan from them would need 2 annotators for any difference".into(),
            Refusal::OneAnnotatorEach => "no plan: one annotator a scenario, so the annotators' spread cannot be told from the scenarios' difference".into(),
        }
    }
}

/// A study the planner does not plan from, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRefusal {
    pub task: String,
    pub study: StudyId,
    pub pilot_annotators: usize,
    pub scenarios: usize,
    pub items: usize,
    pub why: Refusal,
}

impl PlanRow {
    /// The pilot as the planner reads it: the fit's variances, the annotator mean square's
    /// degrees of freedom (annotators − scenarios) and the residual's (observations −
    /// annotators − items + 1, every annotator on every item).
    pub fn pilot(&self) -> Pilot {
        let c = self.components;
        Pilot {
            unit_var: c.sd_annotator * c.sd_annotator,
            resid_var: c.sd_residual * c.sd_residual,
            items: self.items as f64,
            unit_df: self.pilot_annotators.saturating_sub(self.scenarios) as f64,
            resid_df: (self.pilot_annotators * self.items + 1)
                .saturating_sub(self.pilot_annotators + self.items) as f64,
        }
    }
}

/// The planner's row of a study from its fit: the annotators per scenario each `PLANNED`
/// difference needs on the pilot's number of items, for the two-sided test at `alpha`; or why
/// there is none.
pub fn plan(fit: &StudyFit, alpha: f64) -> Result<PlanRow, PlanRefusal> {
    let refuse = |why: Refusal| PlanRefusal {
        task: fit.task.clone(),
        study: fit.study,
        pilot_annotators: fit.annotators,
        scenarios: fit.scenarios,
        items: fit.items,
        why,
    };
    if fit.alike.is_some() {
        return Err(refuse(Refusal::NoSpread));
    }
    if fit.annotators <= fit.scenarios {
        return Err(refuse(Refusal::OneAnnotatorEach));
    }
    let components = match (fit.components, &fit.not_fitted) {
        (Some(c), _) => c,
        (None, error) => {
            return Err(refuse(Refusal::NotFitted {
                error: error.clone().unwrap_or_default(),
            }))
        }
    };
    if components.sd_annotator.max(components.sd_residual) < NO_SPREAD {
        return Err(refuse(Refusal::NoSpread));
    }
    let mut row = PlanRow {
        task: fit.task.clone(),
        study: fit.study,
        pilot_annotators: fit.annotators,
        scenarios: fit.scenarios,
        items: fit.items,
        components,
        alpha,
        planned: Vec::new(),
    };
    let pilot = row.pilot();
    row.planned = PLANNED
        .iter()
        .filter_map(|&d| pilot.plan(d, fit.items as f64, POWER, alpha))
        .collect();
    if row.planned.is_empty() {
        return Err(refuse(Refusal::NoSpread));
    }
    Ok(row)
}
