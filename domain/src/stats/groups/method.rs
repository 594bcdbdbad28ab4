//! How a contrast of groups was tested, and what the test gives: the method (the mixed model,
//! the permutation test that decides where it cannot, or no test with the reason), its p, and
//! the interval of the test that decides.

use super::super::interval::Interval;
use super::super::relabel::RelabelTest;
use super::super::ttest::TTest;
use serde::{Deserialize, Serialize};

/// Why the mixed model's test was not used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Fallback {
    /// The fit put the annotator variance (and perhaps the item variance too) at zero.
    AnnotatorVarianceZero { item_variance_zero: bool },
    /// The model could not be fitted.
    NotFitted { error: String },
    /// The fit has no Satterthwaite degrees of freedom (its Hessian is not positive definite).
    NoDegreesOfFreedom,
}

impl Fallback {
    pub fn describe(&self) -> String {
        match self {
            Fallback::AnnotatorVarianceZero {
                item_variance_zero: false,
            } => "the mixed model's annotator variance is estimated at zero (a singular fit)".into(),
            Fallback::AnnotatorVarianceZero {
                item_variance_zero: true,
            } => "the mixed model's annotator and item variances are both estimated at zero (a singular fit)".into(),
            Fallback::NotFitted { error } => format!("the mixed model could not be fitted: {error}"),
            Fallback::NoDegreesOfFreedom => {
                "the mixed model's Satterthwaite degrees of freedom could not be computed".into()
            }
        }
    }
}

/// How a contrast was tested.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Method {
    /// The mixed model with Satterthwaite's degrees of freedom; `item_variance_zero` when the
    /// fit put the item variance at zero.
    MixedModel { item_variance_zero: bool },
    /// Decided by the permutation test of annotator labels `test`, because of `why`; the
    /// interval is the shifts it does not reject, the SE and df Welch's across the annotators'
    /// mean scores (a description).
    Permutation { why: Fallback, test: RelabelTest },
    /// No test can be made: `why` says what the data lack.
    NoTest { why: Untestable },
    /// Welch's test across annotators, because of `reason`.
    Welch { reason: String },
    /// The one-sample test across annotators against a fixed score, because of `reason`.
    OneSample { reason: String },
}

impl Method {
    pub fn describe(&self) -> String {
        match self {
            Method::MixedModel {
                item_variance_zero: false,
            } => "mixed model (Satterthwaite)".into(),
            Method::MixedModel {
                item_variance_zero: true,
            } => "mixed model (Satterthwaite); its item variance is estimated at zero, so the annotator term carries the comparison".into(),
            Method::Permutation { why, test } => format!(
                "{} permutation test of annotator labels (smallest reachable p {}), because {}; the interval is the shifts that test does not reject (none where its smallest p is above α), and Welch's SE and df across the annotators' mean scores are a description",
                if test.exact { "exact" } else { "random" },
                crate::stats::p_text(test.min_p),
                why.describe()
            ),
            Method::NoTest { why } => format!("no test: {}", why.describe()),
            Method::Welch { reason } => format!("Welch's t-test {reason}"),
            Method::OneSample { reason } => format!("one-sample t-test {reason}"),
        }
    }

    /// The p that decides: the permutation test's where it decides, else the t-test's; `None`
    /// where there is no test.
    pub fn p(&self, t: Option<&TTest>) -> Option<f64> {
        match self {
            Method::Permutation { test, .. } => Some(test.p),
            Method::NoTest { .. } => None,
            Method::MixedModel { .. } | Method::Welch { .. } | Method::OneSample { .. } => {
                t.map(|t| t.p)
            }
        }
    }
}

/// Why a contrast has no test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Untestable {
    /// Every answer of the groups scored the same: there is no variance to test against.
    AllAlike { score: f64 },
    /// Each group the contrast weighs has one annotator: nothing separates the annotators'
    /// spread from the groups' difference.
    OneAnnotatorEach,
}

impl Untestable {
    pub fn describe(&self) -> String {
        match self {
            Untestable::AllAlike { score } => format!(
                "every answer scored the same (S1 {score}), so there is no variance to test the difference against"
            ),
            Untestable::OneAnnotatorEach => {
                "each scenario compared has one annotator, so nothing separates the annotators' spread from the scenarios' difference".into()
            }
        }
    }
}

/// A contrast tested: how, with what, and the interval of the test that decides.
#[derive(Clone, Debug, PartialEq)]
pub struct Tested {
    pub method: Method,
    /// The contrast's estimate.
    pub estimate: f64,
    /// The mixed model's t-test; in the permutation path Welch's across the annotators' means
    /// (a description; `None` where their spread is zero); `None` with no test.
    pub test: Option<TTest>,
    /// At the level asked for: the mixed model's t-interval, or the shifts the permutation
    /// test does not reject; `None` where it rejects none (or there is no test).
    pub interval: Option<Interval>,
}

impl Tested {
    /// The p that decides.
    pub fn p(&self) -> Option<f64> {
        self.method.p(self.test.as_ref())
    }

    /// Whether the interval covers `x` (no interval: every shift is kept, so it does).
    pub fn covers(&self, x: f64) -> bool {
        self.interval.is_none_or(|i| i.contains(x))
    }
}
