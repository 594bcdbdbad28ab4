//! The choices a study makes for its analysis plan (`analysis_plan`): the level of the plan's
//! tests and its primary comparison, as the admin form and the command line write them.

use serde::{Deserialize, Serialize};

/// The default level of the plan's tests.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// The choices a researcher makes for the plan (the rest follows from the study).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisChoices {
    /// The level of every test of the plan.
    pub alpha: f64,
    /// The primary comparison `(b, a)`: scenario b against scenario a. Default: the largest k
    /// against zero-shot (or against the smallest k without a zero-shot scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<(u32, u32)>,
}

impl Default for AnalysisChoices {
    fn default() -> Self {
        AnalysisChoices {
            alpha: DEFAULT_ALPHA,
            primary: None,
        }
    }
}

impl AnalysisChoices {
    pub fn is_default(&self) -> bool {
        *self == AnalysisChoices::default()
    }

    /// What is wrong with the choices for a study of these scenarios.
    pub fn problems(&self, scenarios: &[u32]) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = crate::settings::ALPHA.check(self.alpha) {
            out.push(e);
        }
        if let Some((b, a)) = self.primary {
            if a == b || !scenarios.contains(&a) || !scenarios.contains(&b) {
                out.push(format!(
                    "the primary comparison must name two different scenarios of the study ({b} vs {a} does not)"
                ));
            }
        }
        out
    }
}

/// A primary comparison as people write it: `30 vs 0` or `30-0` (scenario 30 against 0);
/// empty is the default.
pub fn parse_primary(text: &str) -> Result<Option<(u32, u32)>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let parts: Vec<&str> = if t.contains("vs") {
        t.split("vs").collect()
    } else {
        t.split('-').collect()
    };
    let number = |s: &str| s.trim().parse::<u32>().ok();
    match parts[..] {
        [b, a] => match (number(b), number(a)) {
            (Some(b), Some(a)) => Ok(Some((b, a))),
            _ => Err(format!(
                "Primary comparison: {t:?} is not two numbers of shots, such as \"30 vs 0\""
            )),
        },
        _ => Err(format!(
            "Primary comparison: {t:?} is not of the form \"30 vs 0\""
        )),
    }
}

/// The text `parse_primary` reads back.
pub fn primary_text(primary: Option<(u32, u32)>) -> String {
    primary.map_or(String::new(), |(b, a)| format!("{b} vs {a}"))
}
