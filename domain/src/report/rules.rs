//! The rules of a study the report applies: pay, the training filter, the training files of
//! its scenarios and their nesting chain, and its analysis plan (frozen or declared).

use crate::analysis_plan::{self, AnalysisPlan, PlannedComparison};
use crate::shots::ShotFile;
use crate::study::StudyConfig;
use crate::study_pages::Questionnaires;
use serde::{Deserialize, Serialize};

/// The rules of a study the report applies: its pay rate, its training filter, its shot
/// group (the training file of each k, for Tables 8 and 9 and the nesting note) and its
/// analysis plan.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyRules {
    pub hourly_rate_cents: u32,
    pub filter_margin: f64,
    /// `(k, split)` of each of the study's k-shot scenarios: the files it uses.
    pub files: Vec<ShotFile>,
    /// Every file of the nesting chain the study's files come from: an annotator of the
    /// study is compared on the chain's k-shot set where another study's scenario has that k
    /// (Tables 8 and 9).
    pub chain: Vec<ShotFile>,
    pub allow_unnested: bool,
    /// The filter's second criterion: more failed attention checks than this flags a worker.
    pub attention_max_failures: Option<u32>,
    /// The study's questionnaires, for their summaries.
    pub questionnaire: Questionnaires,
    /// Each worker saw the training examples in an order of their own.
    pub shuffle_training: bool,
    /// The declared family of scenario comparisons and the primary one: the frozen plan's
    /// where there is one, else the configuration's (whose comparisons are then exploratory).
    pub family: Vec<PlannedComparison>,
    pub primary: Option<String>,
    /// The level of the family's tests, of their intervals (1 − α) and of the planner: the
    /// frozen plan's where there is one, else the configuration's.
    pub alpha: f64,
    /// The plan frozen when the first worker arrived, and where the study departs from it.
    pub frozen: Option<FrozenPlan>,
}

/// A study's analysis plan as frozen, with its hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrozenPlan {
    pub plan: AnalysisPlan,
    /// The exact text that was hashed.
    pub json: String,
    pub sha256: String,
    /// Unix milliseconds.
    pub frozen_at: i64,
    /// Where the study's configuration now departs from the plan's rules.
    pub deviations: Vec<String>,
}

impl StudyRules {
    /// The rules of a study configuration.
    pub fn of(config: &StudyConfig) -> Self {
        let files = config.scenario_files();
        let mut chain = files.clone();
        for &f in &config.shot_group {
            if !chain.iter().any(|x| x.0 == f.0) {
                chain.push(f);
            }
        }
        chain.sort_unstable();
        let mut scenarios = config.scenarios.clone();
        scenarios.sort_unstable();
        StudyRules {
            hourly_rate_cents: config.hourly_rate_cents,
            filter_margin: config.filter_margin,
            files,
            chain,
            family: analysis_plan::family(&scenarios),
            primary: analysis_plan::primary(&scenarios, &config.analysis).map(|c| c.label()),
            alpha: config.analysis.alpha,
            frozen: None,
            allow_unnested: config.allow_unnested,
            attention_max_failures: config.pages.attention_max_failures,
            questionnaire: config.pages.questionnaire.clone(),
            shuffle_training: config.shuffle_training,
        }
    }

    /// With the plan frozen for the study (`plan` as stored, its text and hash).
    pub fn with_frozen(
        mut self,
        config: &StudyConfig,
        json: String,
        sha256: String,
        frozen_at: i64,
    ) -> Result<Self, String> {
        let plan: AnalysisPlan = serde_json::from_str(&json)
            .map_err(|e| format!("the stored analysis plan cannot be read: {e}"))?;
        self.family = plan.family.clone();
        self.primary = plan.primary.clone();
        self.alpha = plan.alpha;
        self.frozen = Some(FrozenPlan {
            deviations: plan.deviations(config),
            plan,
            json,
            sha256,
            frozen_at,
        });
        Ok(self)
    }

    pub(super) fn split_for(&self, k: u32) -> Option<u32> {
        self.chain.iter().find(|f| f.0 == k).map(|f| f.1)
    }
}
