//! The analysis plan a study declares before its data: the family of scenario comparisons
//! (Holm's adjustment applies within it and nowhere else), the primary comparison, the level,
//! the planned annotators and items, and the exclusion rules. The server freezes it, with its
//! SHA-256, when the first worker arrives; the report and the bundle show it, and a comparison
//! outside a frozen plan is exploratory. Pre-registration inside the tool.

pub use crate::study::analysis::{parse_primary, primary_text, AnalysisChoices, DEFAULT_ALPHA};
use crate::study::StudyConfig;
use serde::{Deserialize, Serialize};

/// The plan's format; a new field makes a new version, so old hashes stay checkable.
pub const VERSION: u32 = 1;

/// What a comparison contrasts: two scenarios, or the linear trend over several.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Contrast {
    /// Scenario `b` (k shots) minus scenario `a`.
    Pair { a: u32, b: u32 },
    /// The least-squares slope of the scenarios' means on k, per 10 shots.
    Trend { ks: Vec<u32> },
}

impl Contrast {
    pub fn label(&self) -> String {
        match self {
            Contrast::Pair { a, b } => format!("k={b} vs k={a}"),
            Contrast::Trend { ks } => {
                let ks: Vec<String> = ks.iter().map(u32::to_string).collect();
                format!("linear trend over k={} (per 10 shots)", ks.join(", "))
            }
        }
    }

    /// The scenarios it involves.
    pub fn ks(&self) -> Vec<u32> {
        match self {
            Contrast::Pair { a, b } => vec![*a, *b],
            Contrast::Trend { ks } => ks.clone(),
        }
    }
}

/// A comparison the plan declares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedComparison {
    pub label: String,
    pub contrast: Contrast,
}

/// Who is left out before any test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exclusions {
    /// The training filter: more than this below the other workers of the scenario.
    pub training_filter_margin: f64,
    /// More failed attention checks than this flags a worker.
    pub attention_max_failures: Option<u32>,
    /// The screening file every worker answers first (`k_split`).
    pub screening: Option<String>,
    /// Workers the platform made for load runs never enter a report unless asked for.
    pub synthetic_workers_left_out: bool,
}

/// The plan as frozen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisPlan {
    pub version: u32,
    pub task: String,
    pub scenarios: Vec<u32>,
    /// The test of each comparison, in words.
    pub model: String,
    pub family: Vec<PlannedComparison>,
    /// The label of the primary comparison (`None` with fewer than two scenarios).
    pub primary: Option<String>,
    pub alpha: f64,
    pub adjustment: String,
    pub annotators_per_scenario: u32,
    pub items: usize,
    pub exclusions: Exclusions,
}

/// The test every comparison of the family gets, as the report computes it.
pub const MODEL: &str = "item S1 ~ scenario + (1|annotator) + (1|item), REML; each contrast tested with Satterthwaite's degrees of freedom, the model kept when only its item variance is zero; decided by the exact permutation test of annotator labels when its annotator variance is zero or it cannot be fitted (Welch's interval beside); intervals at 1 - alpha";

/// The family of a study with these scenarios: each scenario against the next, the largest k
/// against zero-shot (where that is not already a neighbour pair), and the linear trend over
/// k (with three scenarios or more).
pub fn family(scenarios: &[u32]) -> Vec<PlannedComparison> {
    let mut ks: Vec<u32> = scenarios.to_vec();
    ks.sort_unstable();
    ks.dedup();
    let mut out: Vec<Contrast> = ks
        .windows(2)
        .map(|w| Contrast::Pair { a: w[0], b: w[1] })
        .collect();
    if ks.len() >= 3 && ks[0] == 0 {
        out.push(Contrast::Pair {
            a: 0,
            b: ks[ks.len() - 1],
        });
    }
    if ks.len() >= 3 {
        out.push(Contrast::Trend { ks: ks.clone() });
    }
    out.into_iter()
        .map(|contrast| PlannedComparison {
            label: contrast.label(),
            contrast,
        })
        .collect()
}

/// The primary comparison's contrast for these scenarios and choices.
pub fn primary(scenarios: &[u32], choices: &AnalysisChoices) -> Option<Contrast> {
    if let Some((b, a)) = choices.primary {
        return Some(Contrast::Pair { a, b });
    }
    let (min, max) = (scenarios.iter().min()?, scenarios.iter().max()?);
    (min != max).then_some(Contrast::Pair { a: *min, b: *max })
}

/// The plan of a study: its configuration and its task's test items.
pub fn declare(task: &str, config: &StudyConfig, items: usize) -> AnalysisPlan {
    let mut scenarios = config.scenarios.clone();
    scenarios.sort_unstable();
    let mut planned = family(&scenarios);
    let primary = primary(&scenarios, &config.analysis);
    if let Some(p) = &primary {
        // A primary comparison outside the default family joins it.
        if !planned.iter().any(|c| &c.contrast == p) {
            planned.push(PlannedComparison {
                label: p.label(),
                contrast: p.clone(),
            });
        }
    }
    AnalysisPlan {
        version: VERSION,
        task: task.to_string(),
        scenarios,
        model: MODEL.to_string(),
        family: planned,
        primary: primary.map(|p| p.label()),
        alpha: config.analysis.alpha,
        adjustment: "Holm within the family".to_string(),
        annotators_per_scenario: config.annotators,
        items,
        exclusions: exclusions(config),
    }
}

fn exclusions(config: &StudyConfig) -> Exclusions {
    Exclusions {
        training_filter_margin: config.filter_margin,
        attention_max_failures: config.pages.attention_max_failures,
        screening: config.screening.map(crate::shots::file_name),
        synthetic_workers_left_out: true,
    }
}

impl AnalysisPlan {
    /// The JSON the hash is taken of (fields in declaration order, no spaces).
    #[expect(
        clippy::expect_used,
        reason = "a plan is plain data: it always serialises"
    )]
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("a plan is plain data")
    }

    /// Where the study's configuration now departs from the frozen plan: its exclusion rules
    /// (the margin and the time-out may still change once workers started), and its level and
    /// primary comparison (which may not, but a configuration can be stored around the app).
    pub fn deviations(&self, config: &StudyConfig) -> Vec<String> {
        let now = exclusions(config);
        let mut out = Vec::new();
        if now.training_filter_margin != self.exclusions.training_filter_margin {
            out.push(format!(
                "the training filter's margin is {}, the frozen plan says {}",
                now.training_filter_margin, self.exclusions.training_filter_margin
            ));
        }
        if now.attention_max_failures != self.exclusions.attention_max_failures {
            out.push(format!(
                "the attention checks' limit is {:?}, the frozen plan says {:?}",
                now.attention_max_failures, self.exclusions.attention_max_failures
            ));
        }
        if config.analysis.alpha != self.alpha {
            out.push(format!(
                "the study's configuration now says α = {}, the frozen plan {} (the report uses the plan's)",
                config.analysis.alpha, self.alpha
            ));
        }
        let primary = primary(&self.scenarios, &config.analysis).map(|c| c.label());
        if primary != self.primary {
            out.push(format!(
                "the study's configuration now names {} as its primary comparison, the frozen plan {} (the report uses the plan's)",
                primary.as_deref().unwrap_or("none"),
                self.primary.as_deref().unwrap_or("none")
            ));
        }
        if config.annotators != self.annotators_per_scenario {
            out.push(format!(
                "the study now plans {} annotators per scenario, the frozen plan {}",
                config.annotators, self.annotators_per_scenario
            ));
        }
        out
    }
}

#[cfg(feature = "server")]
impl AnalysisPlan {
    /// SHA-256 of the canonical JSON, in hex.
    pub fn sha256(json: &str) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(json.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_family_follows_the_scenarios() {
        let labels =
            |ks: &[u32]| -> Vec<String> { family(ks).into_iter().map(|c| c.label).collect() };
        assert_eq!(
            labels(&[0, 10, 20, 30]),
            [
                "k=10 vs k=0",
                "k=20 vs k=10",
                "k=30 vs k=20",
                "k=30 vs k=0",
                "linear trend over k=0, 10, 20, 30 (per 10 shots)"
            ]
        );
        // Two scenarios: one comparison, no trend, no duplicate of 0 against the largest.
        assert_eq!(labels(&[10, 0]), ["k=10 vs k=0"]);
        assert_eq!(
            labels(&[10, 20, 30]),
            [
                "k=20 vs k=10",
                "k=30 vs k=20",
                "linear trend over k=10, 20, 30 (per 10 shots)"
            ]
        );
        assert!(labels(&[0]).is_empty());
    }

    #[test]
    fn the_plan_names_its_primary_comparison_and_rules() {
        let config = StudyConfig::default();
        let plan = declare("SST-2", &config, 212);
        assert_eq!(plan.primary.as_deref(), Some("k=30 vs k=0"));
        assert_eq!(plan.family.len(), 5);
        assert_eq!(
            (plan.alpha, plan.items, plan.annotators_per_scenario),
            (0.05, 212, 3)
        );
        // A primary comparison outside the family joins it.
        let chosen = StudyConfig {
            analysis: AnalysisChoices {
                alpha: 0.01,
                primary: Some((20, 0)),
            },
            ..StudyConfig::default()
        };
        let plan = declare("SST-2", &chosen, 212);
        assert_eq!(plan.primary.as_deref(), Some("k=20 vs k=0"));
        assert_eq!(plan.family.len(), 6);
        assert_eq!(plan.alpha, 0.01);
        // The same plan is the same JSON; a later margin is a deviation, not a new plan.
        assert_eq!(
            plan.canonical_json(),
            declare("SST-2", &chosen, 212).canonical_json()
        );
        let later = StudyConfig {
            filter_margin: 0.3,
            ..chosen.clone()
        };
        assert_eq!(plan.deviations(&chosen), Vec::<String>::new());
        assert_eq!(plan.deviations(&later).len(), 1);
        assert!(
            AnalysisChoices {
                alpha: 0.0,
                primary: Some((10, 10))
            }
            .problems(&[0, 10])
            .len()
                == 2
        );
    }
}
