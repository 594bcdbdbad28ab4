//! The scenario test on groups of annotators who answered the same items: the crossed mixed
//! model `S1 ~ 0 + group + (1|annotator) + (1|item)` with Satterthwaite's degrees of freedom for
//! each contrast of groups, kept when only the item variance is estimated at zero (the annotator
//! term still carries the comparison, as lmerTest's fit does). When the annotator variance is
//! at zero, or the fit or its degrees of freedom fail, the exact permutation test of annotator
//! labels decides (it holds its level by construction), with Welch's test across the annotators'
//! mean scores beside it for the interval. The report and the simulation that validates it
//! (`simulate`) call the same code.

mod method;

pub use method::{Fallback, Method, Tested, Untestable};

use super::mixed::logistic::LogisticFit;
use super::mixed::{self, FitError, Obs, SINGULAR};
use super::relabel::contrast_relabel_test;
use super::relabel_interval::invert;
use super::ttest::welch_contrast;
use serde::{Deserialize, Serialize};

/// Variance components of a fit, for the planner and the report.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Components {
    pub sd_annotator: f64,
    pub sd_item: f64,
    pub sd_residual: f64,
    pub singular: bool,
}

/// The groups' fit: the model (or why there is none) and each annotator's mean score.
pub struct GroupFit {
    pub model: Result<mixed::Fit, FitError>,
    /// Per group, each annotator's mean over the items.
    pub unit_means: Vec<Vec<f64>>,
    pub items: usize,
    /// The score every answer has, where they all have the same.
    pub alike: Option<f64>,
}

/// The observations of `groups[g][annotator][item]`: annotators numbered across the groups,
/// each with its group's indicator; an error unless every row is over the same items.
pub fn observations(groups: &[&[Vec<f64>]]) -> Result<Vec<Obs>, FitError> {
    let p = groups.len();
    let items = groups
        .iter()
        .flat_map(|g| g.iter())
        .map(Vec::len)
        .next()
        .unwrap_or(0);
    if groups
        .iter()
        .flat_map(|g| g.iter())
        .any(|r| r.len() != items)
    {
        return Err(FitError::Design(
            "annotators answered different items".into(),
        ));
    }
    let mut obs = Vec::new();
    let mut unit = 0;
    for (g, rows) in groups.iter().enumerate() {
        for row in rows.iter() {
            for (item, &y) in row.iter().enumerate() {
                let mut x = vec![0.0; p];
                x[g] = 1.0;
                obs.push(Obs { unit, item, x, y });
            }
            unit += 1;
        }
    }
    Ok(obs)
}

/// Fits the model to `groups[g][annotator][item]`, every row over the same items.
pub fn fit(groups: &[&[Vec<f64>]]) -> GroupFit {
    GroupFit {
        model: observations(groups).and_then(|obs| mixed::fit(&obs)),
        unit_means: groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|r| r.iter().sum::<f64>() / r.len().max(1) as f64)
                    .collect()
            })
            .collect(),
        items: groups
            .iter()
            .flat_map(|g| g.iter())
            .map(Vec::len)
            .next()
            .unwrap_or(0),
        alike: alike(groups),
    }
}

/// The score of every answer of `groups`, where they are all the same.
fn alike(groups: &[&[Vec<f64>]]) -> Option<f64> {
    let mut all = groups.iter().flat_map(|g| g.iter().flatten());
    let first = *all.next()?;
    all.all(|y| *y == first).then_some(first)
}

/// The logistic mixed model of the same groups, where every outcome is 0 or 1 (a label task's
/// item S1): `logit P(right) = group + (1|annotator) + (1|item)`, as glmer fits it.
pub fn fit_logistic(groups: &[&[Vec<f64>]]) -> Result<LogisticFit, FitError> {
    mixed::logistic::fit(&observations(groups)?)
}

/// The same model by restricted maximum likelihood (`mixed::logistic::fit_restricted`).
pub fn fit_logistic_restricted(groups: &[&[Vec<f64>]]) -> Result<LogisticFit, FitError> {
    mixed::logistic::fit_restricted(&observations(groups)?)
}

impl GroupFit {
    pub fn components(&self) -> Option<Components> {
        let m = self.model.as_ref().ok()?;
        Some(Components {
            sd_annotator: m.sd_unit,
            sd_item: m.sd_item,
            sd_residual: m.sigma,
            singular: m.singular,
        })
    }

    /// The test of `Σ w_g · mean(group g)` with its interval at `1 − alpha`: the mixed
    /// model's, else decided by the annotator permutation test (relabellings drawn from `seed`
    /// where there are too many to list), else none where the data cannot be tested. `None`
    /// unless every group the contrast weighs has an annotator.
    pub fn test(&self, weights: &[f64], alpha: f64, seed: u64) -> Option<Tested> {
        let groups: Vec<&[f64]> = self.unit_means.iter().map(Vec::as_slice).collect();
        let weighed = || groups.iter().zip(weights).filter(|(_, w)| **w != 0.0);
        if groups.len() != weights.len() || weighed().any(|(g, _)| g.is_empty()) {
            return None;
        }
        let estimate: f64 = weighed()
            .map(|(g, w)| w * g.iter().sum::<f64>() / g.len() as f64)
            .sum();
        let untestable = match self.alike {
            Some(score) => Some(Untestable::AllAlike { score }),
            None if weighed().all(|(g, _)| g.len() == 1) => Some(Untestable::OneAnnotatorEach),
            None => None,
        };
        if let Some(why) = untestable {
            return Some(Tested {
                method: Method::NoTest { why },
                estimate,
                test: None,
                interval: None,
            });
        }
        let why = match &self.model {
            Err(e) => Fallback::NotFitted {
                error: e.to_string(),
            },
            Ok(m) if m.theta[0] < SINGULAR => Fallback::AnnotatorVarianceZero {
                item_variance_zero: m.theta[1] < SINGULAR,
            },
            Ok(m) => match m.contrast(weights) {
                Some(t) => {
                    let item_variance_zero = m.theta[1] < SINGULAR;
                    return Some(Tested {
                        method: Method::MixedModel { item_variance_zero },
                        estimate: t.estimate,
                        test: Some(t),
                        interval: Some(t.interval(1.0 - alpha)),
                    });
                }
                None => Fallback::NoDegreesOfFreedom,
            },
        };
        let test = contrast_relabel_test(&groups, weights, seed)?;
        Some(Tested {
            method: Method::Permutation { why, test },
            estimate,
            test: welch_contrast(&groups, weights),
            interval: invert(&groups, weights, alpha, seed, &test),
        })
    }
}

/// The weights of the linear trend over `ks`: the least-squares slope of the groups' means on
/// k, per `per` shots (`None` for fewer than two distinct k).
pub fn trend_weights(ks: &[u32], per: f64) -> Option<Vec<f64>> {
    let n = ks.len() as f64;
    let mean = ks.iter().map(|&k| f64::from(k)).sum::<f64>() / n;
    let ss: f64 = ks.iter().map(|&k| (f64::from(k) - mean).powi(2)).sum();
    (ss > 0.0).then(|| {
        ks.iter()
            .map(|&k| per * (f64::from(k) - mean) / ss)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three annotators a group on 30 items with noise of SD 0.3; each annotator's mean is
    /// then set to the group's plus `offsets[k]`.
    fn group(shift: f64, offsets: [f64; 3], seed: u64) -> Vec<Vec<f64>> {
        let mut rng = crate::rng::SplitMix64(seed);
        let rows: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..30).map(|_| 0.3 * rng.normal()).collect())
            .collect();
        rows.iter()
            .zip(offsets)
            .map(|(r, o)| {
                let m = r.iter().sum::<f64>() / 30.0;
                r.iter().map(|x| x - m + shift + o).collect()
            })
            .collect()
    }

    fn means(g: &[Vec<f64>]) -> Vec<f64> {
        g.iter().map(|r| r.iter().sum::<f64>() / 30.0).collect()
    }

    #[test]
    fn a_zero_annotator_variance_is_decided_by_relabelling_annotators() {
        // Annotators far closer to their group's mean than the noise predicts: REML puts the
        // annotator variance at zero.
        let (a, b) = (
            group(0.5, [0.001, -0.002, 0.001], 1),
            group(0.6, [0.0, 0.002, -0.002], 2),
        );
        let f = fit(&[&a, &b]);
        assert!(f.components().unwrap().singular);
        let tested = f.test(&[-1.0, 1.0], 0.05, 7).unwrap();
        let (method, t) = (&tested.method, tested.test.unwrap());
        let Method::Permutation { why, test } = method else {
            panic!("{method:?}")
        };
        assert!(
            matches!(why, Fallback::AnnotatorVarianceZero { .. }),
            "{why:?}"
        );
        // The permutation test decides, with its own interval (3 against 3 rejects no shift
        // at 0.05); Welch's test is beside it as a description.
        let (ma, mb) = (means(&a), means(&b));
        assert_eq!(Some(*test), crate::stats::relabel_test(&ma, &mb, 7));
        assert_eq!(Some(t), crate::stats::welch(&ma, &mb));
        assert_eq!(tested.p(), Some(test.p));
        assert_eq!(tested.interval, None);
        assert!((test.min_p - 0.1).abs() < 1e-15);
        let words = method.describe();
        assert!(
            words.contains("annotator and item variances are both estimated at zero")
                && words.contains("smallest reachable p 0.100"),
            "{words}"
        );
        // Rows of different lengths are no design: the permutation test decides, and says why.
        let ragged = vec![vec![0.1, 0.2], vec![0.3]];
        let f = fit(&[&ragged, &a]);
        assert!(f.model.is_err());
        let method = f.test(&[-1.0, 1.0], 0.05, 7).unwrap().method;
        assert!(
            method.describe().contains("could not be fitted"),
            "{method:?}"
        );
    }

    #[test]
    fn a_zero_item_variance_keeps_the_mixed_model() {
        // Annotators that differ: the model's own test, about n1 + n2 - 2 degrees of freedom.
        let (a, b) = (
            group(0.5, [0.1, -0.2, 0.1], 3),
            group(0.6, [0.0, 0.2, -0.2], 4),
        );
        let f = fit(&[&a, &b]);
        let tested = f.test(&[-1.0, 1.0], 0.05, 0).unwrap();
        let (method, t) = (tested.method, tested.test.unwrap());
        assert_eq!(
            method,
            Method::MixedModel {
                item_variance_zero: false
            }
        );
        assert_eq!(tested.interval, Some(t.interval(0.95)));
        assert!(
            (t.df - 4.0).abs() < 1e-6 && (t.estimate - 0.1).abs() < 1e-12,
            "{t:?}"
        );
        // The same annotators with every item's mean over all six made equal: no item variance
        // is left, the annotator term still carries the comparison, and the test is unchanged
        // in its estimate.
        let mut rows: Vec<Vec<f64>> = a.iter().chain(&b).cloned().collect();
        for j in 0..30 {
            let m = rows.iter().map(|r| r[j]).sum::<f64>() / 6.0;
            for r in rows.iter_mut() {
                r[j] -= m;
            }
        }
        let (a, b) = rows.split_at(3);
        let f = fit(&[a, b]);
        let c = f.components().unwrap();
        assert!(
            c.singular && c.sd_item == 0.0 && c.sd_annotator > 0.05,
            "{c:?}"
        );
        let tested = f.test(&[-1.0, 1.0], 0.05, 0).unwrap();
        let (method, t) = (tested.method, tested.test.unwrap());
        assert_eq!(
            method,
            Method::MixedModel {
                item_variance_zero: true
            }
        );
        assert!((t.estimate - 0.1).abs() < 1e-12 && t.df > 3.0, "{t:?}");
        assert!(method
            .describe()
            .contains("item variance is estimated at zero"));
    }

    #[test]
    fn data_that_cannot_be_tested_say_why() {
        let right = vec![vec![1.0; 5]; 3];
        let tested = fit(&[&right, &right]).test(&[-1.0, 1.0], 0.05, 1).unwrap();
        assert_eq!(
            tested.method,
            Method::NoTest {
                why: Untestable::AllAlike { score: 1.0 }
            }
        );
        assert_eq!(
            (tested.estimate, tested.test, tested.p()),
            (0.0, None, None)
        );
        let (a, b) = (vec![vec![1.0, 0.0, 1.0]], vec![vec![0.0, 0.0, 1.0]]);
        let tested = fit(&[&a, &b]).test(&[-1.0, 1.0], 0.05, 1).unwrap();
        assert_eq!(
            tested.method,
            Method::NoTest {
                why: Untestable::OneAnnotatorEach
            }
        );
        assert!((tested.estimate + 1.0 / 3.0).abs() < 1e-12);
        assert!(tested
            .method
            .describe()
            .starts_with("no test: each scenario"));
    }

    #[test]
    fn trend_is_the_slope_per_ten_shots() {
        assert_eq!(
            trend_weights(&[0, 10, 20, 30], 10.0).unwrap(),
            vec![-0.3, -0.1, 0.1, 0.3]
        );
        assert_eq!(trend_weights(&[10, 10], 10.0), None);
    }
}
