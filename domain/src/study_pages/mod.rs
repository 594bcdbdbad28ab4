//! A study's own pages around the task (issue 30): informed consent, questionnaires before
//! training and after the test, attention checks in the test phase, and a debriefing.

pub mod attention;
pub mod consent;
#[cfg(feature = "server")]
pub mod form;
#[cfg(feature = "server")]
pub mod markdown;
pub mod questionnaire;

pub use attention::AttentionCheck;
pub use consent::Consent;
pub use questionnaire::{Question, Questionnaires, Replies, Reply, Stage};

use crate::task::TaskSpec;
use serde::{Deserialize, Serialize};

/// Everything a study may show besides its items. A study without any behaves as before (and
/// its configuration is stored as before: every field is left out when empty).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyPages {
    /// Accepted before the place is used for anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<Consent>,
    #[serde(default, skip_serializing_if = "Questionnaires::is_empty")]
    pub questionnaire: Questionnaires,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attention_checks: Vec<AttentionCheck>,
    /// The training filter also flags a worker who failed more than this many checks; `None`:
    /// checks are reported only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_max_failures: Option<u32>,
    /// Shown on the end page before the hand-back (Markdown).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub debriefing: String,
}

const DEBRIEFING_MAX: usize = 20_000;

impl StudyPages {
    pub fn is_empty(&self) -> bool {
        *self == StudyPages::default()
    }

    /// Every problem of the pages for a task with `test_items` test items.
    pub fn problems(&self, spec: &TaskSpec, test_items: usize) -> Vec<String> {
        let mut errs = Vec::new();
        if let Some(c) = &self.consent {
            errs.extend(c.problems());
        }
        errs.extend(self.questionnaire.problems());
        errs.extend(attention::problems(
            &self.attention_checks,
            spec,
            test_items,
        ));
        if self.attention_max_failures.is_some() && self.attention_checks.is_empty() {
            errs.push("a limit on failed attention checks needs attention checks".into());
        }
        if self.debriefing.chars().count() > DEBRIEFING_MAX {
            errs.push(format!(
                "the debriefing may have at most {DEBRIEFING_MAX} characters"
            ));
        }
        errs
    }

    /// Once workers started, what they answer may not change (questionnaires and attention
    /// checks); the consent and debriefing texts may (each worker's accepted consent is kept
    /// by its hash), and so may the failure limit, a rule of the report.
    pub fn changed_for_workers(&self, new: &StudyPages) -> bool {
        self.questionnaire != new.questionnaire
            || self.attention_checks != new.attention_checks
            || self.consent.is_some() != new.consent.is_some()
    }
}

#[cfg(test)]
mod tests;
