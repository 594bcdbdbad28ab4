//! The scenario test on groups of annotators who answered the same items: the crossed mixed
//! model `S1 ~ 0 + group + (1|annotator) + (1|item)` with Satterthwaite's degrees of freedom for
//! each contrast of groups, or, when the fit is singular or fails, Welch's test of the contrast
//! across the annotators' mean scores, with the reason. The report and the simulation that
//! validates it (`simulate`) call the same code.

use super::mixed::{self, FitError, Obs};
use super::ttest::{welch_contrast, TTest};
use serde::{Deserialize, Serialize};

/// How a contrast was tested.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Method {
    /// The mixed model with Satterthwaite's degrees of freedom.
    MixedModel,
    /// Welch's test across annotators, because of `reason`.
    Welch { reason: String },
    /// The one-sample test across annotators against a fixed score, because of `reason`.
    OneSample { reason: String },
}

impl Method {
    pub fn describe(&self) -> String {
        match self {
            Method::MixedModel => "mixed model (Satterthwaite)".into(),
            Method::Welch { reason } => format!("Welch's t-test {reason}"),
            Method::OneSample { reason } => format!("one-sample t-test {reason}"),
        }
    }
}

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
}

/// Fits the model to `groups[g][annotator][item]`, every row over the same items.
pub fn fit(groups: &[&[Vec<f64>]]) -> GroupFit {
    let p = groups.len();
    let items = groups
        .iter()
        .flat_map(|g| g.iter())
        .map(Vec::len)
        .next()
        .unwrap_or(0);
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
    let ragged = groups
        .iter()
        .flat_map(|g| g.iter())
        .any(|r| r.len() != items);
    GroupFit {
        model: if ragged {
            Err(FitError::Design(
                "annotators answered different items".into(),
            ))
        } else {
            mixed::fit(&obs)
        },
        unit_means: groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|r| r.iter().sum::<f64>() / r.len().max(1) as f64)
                    .collect()
            })
            .collect(),
        items,
    }
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

    /// Why the model's test cannot be used, if it cannot.
    fn fallback(&self) -> Option<String> {
        match &self.model {
            Err(e) => Some(format!("the mixed model could not be fitted: {e}")),
            Ok(m) if m.singular => {
                Some("singular fit: the annotator variance is estimated at zero".into())
            }
            Ok(_) => None,
        }
    }

    /// The test of `Σ w_g · mean(group g)`: the mixed model's, else Welch's across annotators.
    pub fn test(&self, weights: &[f64]) -> Option<(Method, TTest)> {
        let reason = match (self.fallback(), &self.model) {
            (None, Ok(m)) => match m.contrast(weights) {
                Some(t) => return Some((Method::MixedModel, t)),
                None => {
                    "across annotators (Satterthwaite's degrees of freedom could not be computed)"
                        .to_string()
                }
            },
            (Some(r), _) => r,
            (None, Err(_)) => unreachable!("an unfitted model has a fallback"),
        };
        let groups: Vec<&[f64]> = self.unit_means.iter().map(Vec::as_slice).collect();
        welch_contrast(&groups, weights).map(|t| (Method::Welch { reason }, t))
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

    #[test]
    fn singular_fits_fall_back_to_welch_with_the_reason() {
        // Annotators far closer to their group's mean than the noise predicts: REML puts the
        // annotator variance at zero.
        let (a, b) = (
            group(0.5, [0.001, -0.002, 0.001], 1),
            group(0.6, [0.0, 0.002, -0.002], 2),
        );
        let f = fit(&[&a, &b]);
        assert!(f.components().unwrap().singular);
        let (method, t) = f.test(&[-1.0, 1.0]).unwrap();
        let Method::Welch { reason } = method else {
            panic!("{method:?}")
        };
        assert!(reason.contains("singular"), "{reason}");
        let means = |g: &[Vec<f64>]| -> Vec<f64> {
            g.iter().map(|r| r.iter().sum::<f64>() / 30.0).collect()
        };
        assert_eq!(Some(t), crate::stats::welch(&means(&a), &means(&b)));
        // Annotators that differ: the model's own test, about n1 + n2 - 2 degrees of freedom.
        let (a, b) = (
            group(0.5, [0.1, -0.2, 0.1], 3),
            group(0.6, [0.0, 0.2, -0.2], 4),
        );
        let f = fit(&[&a, &b]);
        let (method, t) = f.test(&[-1.0, 1.0]).unwrap();
        assert_eq!(method, Method::MixedModel);
        assert!(
            (t.df - 4.0).abs() < 1e-6 && (t.estimate - 0.1).abs() < 1e-12,
            "{t:?}"
        );
        // Rows of different lengths are no design.
        let ragged = vec![vec![0.1, 0.2], vec![0.3]];
        assert!(fit(&[&ragged, &a]).model.is_err());
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
