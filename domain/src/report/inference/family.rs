//! One study's declared family of scenario comparisons (`analysis_plan::family`): every
//! scenario's annotators of the study on the items they all answered, one fit of the crossed
//! mixed model (`stats::groups`), each contrast tested from it, Holm within the family, and
//! beside each pair of scenarios the exact permutation test of annotator labels, the
//! item-level view (these annotators on more items) and the screening-adjusted difference.

use super::{
    effect, item_level, seed, shared_items, Comparison, Logistic, Matrix, Side, Status, HUMANS,
};
use crate::analysis_plan::{Contrast, PlannedComparison};
use crate::ids::StudyId;
use crate::stats;
use crate::stats::groups::{self, trend_weights, Components, Method};
use crate::stats::mixed::logistic::LogisticFit;
use crate::stats::mixed::FitError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What a study's fit says, for the planner and the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyFit {
    pub study: StudyId,
    pub task: String,
    /// `None` when the model could not be fitted (`not_fitted` says why).
    pub components: Option<Components>,
    #[serde(default)]
    pub not_fitted: Option<String>,
    /// The score of every answer, where all are the same.
    #[serde(default)]
    pub alike: Option<f64>,
    pub annotators: usize,
    pub scenarios: usize,
    pub items: usize,
}

/// What the family needs of one study.
pub struct FamilyInput<'a> {
    pub task: &'a str,
    pub study: StudyId,
    pub family: &'a [PlannedComparison],
    pub primary: Option<&'a str>,
    /// The plan was frozen before the study's data began.
    pub frozen: bool,
    /// The level of the tests: the interval of each comparison covers 1 − α.
    pub alpha: f64,
    /// Per k: the study's annotators of that scenario (official item scores).
    pub scenarios: &'a BTreeMap<u32, Matrix>,
    /// Per k: each annotator's (screening, test) S1, where every one of them has both.
    pub screened: &'a HashMap<u32, Vec<(f64, f64)>>,
}

/// The weights of a contrast over the scenarios present (`None` if one is missing).
fn weights(c: &Contrast, present: &[u32]) -> Option<Vec<f64>> {
    let mut w = vec![0.0; present.len()];
    let at = |k: u32| present.iter().position(|&p| p == k);
    match c {
        Contrast::Pair { a, b } => {
            w[at(*a)?] = -1.0;
            w[at(*b)?] = 1.0;
        }
        Contrast::Trend { ks } => {
            for (k, x) in ks.iter().zip(trend_weights(ks, 10.0)?) {
                w[at(*k)?] = x;
            }
        }
    }
    Some(w)
}

/// What stands beside a comparison of two scenarios: the permutation test of annotator labels
/// (the one that decided, where it did), the effect in SD units, these annotators on more
/// items, and the screening-adjusted difference.
fn beside_pair(
    c: &mut Comparison,
    (a, ma): (u32, &Matrix),
    (b, mb): (u32, &Matrix),
    input: &FamilyInput,
) {
    let (ua, ub) = (ma.unit_means(), mb.unit_means());
    c.permutation = match &c.method {
        Method::Permutation { test, .. } => Some(*test),
        Method::MixedModel { .. }
        | Method::Welch { .. }
        | Method::OneSample { .. }
        | Method::NoTest { .. } => stats::relabel_test(&ua, &ub, c.seed),
    };
    c.effect = effect(&ua, &ub, c.difference);
    c.these_annotators = item_level(ma, mb, c.seed, 1.0 - input.alpha);
    if let (Some(sa), Some(sb)) = (input.screened.get(&a), input.screened.get(&b)) {
        c.adjusted = stats::ancova(sa, sb);
    }
}

/// The logistic model's two fits of a family: glmer's (maximum likelihood), and the
/// restricted one (`None` where it failed).
struct LogisticFits {
    ml: Result<LogisticFit, FitError>,
    restricted: Option<LogisticFit>,
}

/// Where every item S1 is 0 or 1 (a label task), the logistic model of the scenarios, fitted
/// once for the family.
fn logistic_fit(rows: &[&[Vec<f64>]]) -> Option<LogisticFits> {
    rows.iter()
        .flat_map(|r| r.iter().flatten())
        .all(|y| *y == 0.0 || *y == 1.0)
        .then(|| LogisticFits {
            ml: groups::fit_logistic(rows),
            restricted: groups::fit_logistic_restricted(rows).ok(),
        })
}

/// A contrast of the logistic fits, or why there is none.
fn logistic_test(fits: &LogisticFits, w: &[f64], alpha: f64) -> Logistic {
    let fit = match &fits.ml {
        Ok(fit) => fit,
        Err(e) => {
            return Logistic::NotFitted {
                error: e.to_string(),
            }
        }
    };
    match (fit.between_within(w), fit.wald(w)) {
        (Some(test), Some(wald)) => Logistic::Fitted {
            test,
            p_wald: wald.p,
            interval: test.interval(1.0 - alpha),
            sd_annotator: fit.sd_unit,
            sd_item: fit.sd_item,
            restricted: fits.restricted.as_ref().and_then(|f| f.between_within(w)),
        },
        _ => Logistic::NotFitted {
            error: "the contrast has no standard error".into(),
        },
    }
}

/// The study's family, tested; and its fit.
pub fn study_family(input: &FamilyInput) -> (Vec<Comparison>, Option<StudyFit>) {
    let present: Vec<u32> = input
        .scenarios
        .iter()
        .filter(|(_, m)| !m.rows.is_empty())
        .map(|(k, _)| *k)
        .collect();
    let items = shared_items(present.iter().map(|k| &input.scenarios[k]));
    if present.len() < 2 || items.is_empty() {
        return (Vec::new(), None);
    }
    let cells: Vec<Matrix> = present
        .iter()
        .map(|k| input.scenarios[k].restrict(&items))
        .collect();
    let rows: Vec<&[Vec<f64>]> = cells.iter().map(|m| m.rows.as_slice()).collect();
    let fit = groups::fit(&rows);
    let logistic = logistic_fit(&rows);
    let annotators: usize = cells.iter().map(|m| m.rows.len()).sum();
    let study_fit = StudyFit {
        study: input.study,
        task: input.task.to_string(),
        components: fit.components(),
        not_fitted: fit.model.as_ref().err().map(ToString::to_string),
        alike: fit.alike,
        annotators,
        scenarios: present.len(),
        items: items.len(),
    };
    // A contrast's scenarios are among `present` once `weights` accepted it.
    let cell = |k: u32| Some(&cells[present.iter().position(|&p| p == k)?]);
    let tested: Vec<Option<Comparison>> = input
        .family
        .iter()
        .map(|planned| {
            let w = weights(&planned.contrast, &present)?;
            let name = format!("{}|study {}|{}", input.task, input.study, planned.label);
            let seed = seed(&name);
            let tested = fit.test(&w, input.alpha, seed)?;
            let sides: Vec<Side> = planned
                .contrast
                .ks()
                .into_iter()
                .map(|k| {
                    Some(Side {
                        who: HUMANS.into(),
                        k,
                        units: cell(k)?.rows.len(),
                        splits: Vec::new(),
                    })
                })
                .collect::<Option<_>>()?;
            let mut c = Comparison {
                task: input.task.to_string(),
                study: Some(input.study),
                label: planned.label.clone(),
                contrast: Some(planned.contrast.clone()),
                sides,
                items: items.len(),
                difference: tested.estimate,
                interval: tested.interval,
                alpha: input.alpha,
                p_holm: None,
                status: match (input.frozen, input.primary) {
                    (false, _) => Status::Exploratory,
                    (true, Some(p)) if p == planned.label => Status::Primary,
                    (true, _) => Status::Family,
                },
                permutation: None,
                effect: None,
                these_annotators: None,
                seed,
                adjusted: None,
                logistic: logistic.as_ref().map(|f| logistic_test(f, &w, input.alpha)),
                method: tested.method,
                test: tested.test,
            };
            if let Contrast::Pair { a, b } = planned.contrast {
                beside_pair(&mut c, (a, cell(a)?), (b, cell(b)?), input);
            }
            Some(c)
        })
        .collect();
    (with_holm(tested), Some(study_fit))
}

/// Holm over the declared family: a comparison without data yet (`None`, or without a test)
/// counts with p = 1; the comparisons there are, each with its adjusted p.
fn with_holm(tested: Vec<Option<Comparison>>) -> Vec<Comparison> {
    let p: Vec<f64> = tested
        .iter()
        .map(|c| c.as_ref().and_then(Comparison::p).unwrap_or(1.0))
        .collect();
    let adjusted = stats::holm(&p);
    tested
        .into_iter()
        .zip(adjusted)
        .filter_map(|(c, h)| {
            c.map(|mut c| {
                c.p_holm = c.p().map(|_| h);
                c
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ExampleId;

    fn matrix(rows: &[[f64; 6]]) -> Matrix {
        let units: Vec<Vec<(ExampleId, f64)>> = rows
            .iter()
            .map(|r| (0..6).map(|i| (ExampleId(i), r[i as usize])).collect())
            .collect();
        Matrix::of(&units)
    }

    #[test]
    fn where_the_permutation_test_decides_the_cell_shows_that_one_test() {
        // The annotators of a scenario differ less than their items make them: the fit puts
        // the annotator variance at zero, and the permutation test of annotator labels decides.
        let scenarios = BTreeMap::from([
            (
                0,
                matrix(&[
                    [1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                    [0.0, 1.0, 0.0, 1.0, 0.0, 1.0],
                    [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                ]),
            ),
            (
                10,
                matrix(&[
                    [1.0, 1.0, 1.0, 0.0, 1.0, 0.0],
                    [1.0, 1.0, 0.0, 1.0, 1.0, 0.0],
                    [0.0, 1.0, 1.0, 0.0, 1.0, 0.0],
                ]),
            ),
        ]);
        let family = [PlannedComparison {
            label: "k=10 vs k=0".into(),
            contrast: Contrast::Pair { a: 0, b: 10 },
        }];
        let input = FamilyInput {
            task: "t",
            study: StudyId(1),
            family: &family,
            primary: None,
            frozen: false,
            alpha: 0.05,
            scenarios: &scenarios,
            screened: &HashMap::new(),
        };
        let (tested, _) = study_family(&input);
        let Method::Permutation { test, .. } = &tested[0].method else {
            panic!("{:?}", tested[0].method);
        };
        assert_eq!(tested[0].permutation, Some(*test));
        // The annotators' means in sixths are 3, 3, 2 and 4, 4, 3 (a difference of 1): of the
        // 20 ways to split them in three and three, the 3 that put the 2 with two 3s and the 3
        // that put both 4s with a 3 differ by 1 or more.
        assert!(test.exact && test.relabellings == 20);
        assert!((test.p - 0.3).abs() < 1e-12 && (test.min_p - 0.1).abs() < 1e-12);
        // Every item S1 is 0 or 1 (a label task): the logistic model stands beside, on the
        // same contrast; fractional scores (a span task's partial credit) have none.
        let Some(Logistic::Fitted { test: lt, .. }) = &tested[0].logistic else {
            panic!("{:?}", tested[0].logistic);
        };
        assert!(lt.estimate > 0.0 && lt.df == 4.0, "{lt:?}");
        let mut partial = scenarios.clone();
        partial.get_mut(&10).unwrap().rows[0][0] = 0.5;
        let input = FamilyInput {
            scenarios: &partial,
            ..input
        };
        assert_eq!(study_family(&input).0[0].logistic, None);
    }
}
