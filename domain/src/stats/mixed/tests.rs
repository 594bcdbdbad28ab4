//! The fit on balanced data, where REML has a closed form (the ANOVA estimators while they are
//! positive) and Satterthwaite's degrees of freedom are those of the unit mean square.

use super::*;
use crate::rng::SplitMix64;

/// Units `0..groups·per`, unit `u` in group `u / per`, every unit on every item.
fn balanced(groups: usize, per: usize, items: usize, sd: [f64; 3], seed: u64) -> Vec<Obs> {
    let mut rng = SplitMix64(seed);
    let n = groups * per;
    let unit: Vec<f64> = (0..n).map(|_| sd[0] * rng.normal()).collect();
    let item: Vec<f64> = (0..items).map(|_| sd[1] * rng.normal()).collect();
    let mut obs = Vec::new();
    for (u, ue) in unit.iter().enumerate() {
        for (i, ie) in item.iter().enumerate() {
            let g = u / per;
            let mut x = vec![0.0; groups];
            x[g] = 1.0;
            let y = 0.5 + 0.1 * g as f64 + ue + ie + sd[2] * rng.normal();
            obs.push(Obs {
                unit: u,
                item: i,
                x,
                y,
            });
        }
    }
    obs
}

/// The ANOVA mean squares (units within groups, items, residual) of a balanced design.
fn mean_squares(obs: &[Obs], groups: usize, per: usize, items: usize) -> [f64; 3] {
    let n = groups * per;
    let mut unit_mean = vec![0.0; n];
    let mut item_mean = vec![0.0; items];
    let mut group_mean = vec![0.0; groups];
    for o in obs {
        unit_mean[o.unit] += o.y / items as f64;
        item_mean[o.item] += o.y / n as f64;
        group_mean[o.unit / per] += o.y / (per * items) as f64;
    }
    let grand = group_mean.iter().sum::<f64>() / groups as f64;
    let ss_unit: f64 = (0..n)
        .map(|u| (unit_mean[u] - group_mean[u / per]).powi(2) * items as f64)
        .sum();
    let ss_item: f64 = item_mean
        .iter()
        .map(|m| (m - grand).powi(2) * n as f64)
        .sum();
    let ss_res: f64 = obs
        .iter()
        .map(|o| (o.y - unit_mean[o.unit] - item_mean[o.item] + grand).powi(2))
        .sum();
    [
        ss_unit / (n - groups) as f64,
        ss_item / (items - 1) as f64,
        ss_res / ((n - 1) * (items - 1)) as f64,
    ]
}

#[test]
fn balanced_fit_equals_the_anova_estimators() {
    let (groups, per, items) = (2, 3, 40);
    let obs = balanced(groups, per, items, [0.15, 0.2, 0.3], 11);
    let f = fit(&obs).unwrap();
    let [ms_unit, ms_item, ms_res] = mean_squares(&obs, groups, per, items);
    assert!(!f.singular);
    assert!(
        (f.sigma * f.sigma - ms_res).abs() < 1e-9,
        "{} {ms_res}",
        f.sigma
    );
    let unit_var = (ms_unit - ms_res) / items as f64;
    let item_var = (ms_item - ms_res) / (groups * per) as f64;
    assert!((f.sd_unit.powi(2) - unit_var).abs() < 1e-9);
    assert!(
        (f.sd_item.powi(2) - item_var).abs() < 1e-9,
        "{} {item_var} {:?}",
        f.sd_item.powi(2),
        f.theta
    );
    let c = f.contrast(&[-1.0, 1.0]).unwrap();
    let se = (ms_unit / items as f64 * (2.0 / per as f64)).sqrt();
    assert!((c.se - se).abs() < 1e-9, "{} {se}", c.se);
    assert!((c.df - 4.0).abs() < 1e-6, "{}", c.df);
    assert_eq!(f.contrast(&[1.0]), None, "one weight per fixed effect");
    // The estimate is the difference of the group means.
    let mean = |g: usize| {
        obs.iter()
            .filter(|o| o.unit / per == g)
            .map(|o| o.y)
            .sum::<f64>()
            / (per * items) as f64
    };
    assert!((c.estimate - (mean(1) - mean(0))).abs() < 1e-10);
}

#[test]
fn no_unit_variance_is_a_singular_fit() {
    // Units differ by less than the residual predicts: the unit mean square is below the
    // residual's, so REML puts the unit variance at zero.
    let obs = balanced(2, 3, 30, [0.0, 0.3, 0.3], 5);
    let [ms_unit, _, ms_res] = mean_squares(&obs, 2, 3, 30);
    let f = fit(&obs).unwrap();
    assert_eq!(
        ms_unit < ms_res,
        f.singular,
        "{ms_unit} {ms_res} {:?}",
        f.theta
    );
    let many = (0..20u64)
        .filter(|&s| {
            let obs = balanced(2, 3, 30, [0.0, 0.3, 0.3], 100 + s);
            let [mu, _, mr] = mean_squares(&obs, 2, 3, 30);
            fit(&obs).unwrap().singular == (mu < mr)
        })
        .count();
    assert_eq!(many, 20);
}

#[test]
fn bad_designs_are_refused() {
    assert!(fit(&[]).is_err());
    let one_unit: Vec<Obs> = (0..10)
        .map(|i| Obs {
            unit: 0,
            item: i,
            x: vec![1.0],
            y: i as f64,
        })
        .collect();
    assert!(matches!(fit(&one_unit), Err(FitError::Design(_))));
    // A column of zeros: not of full rank.
    let mut obs = balanced(2, 2, 5, [0.1, 0.1, 0.1], 1);
    for o in &mut obs {
        o.x.push(0.0);
    }
    assert!(matches!(fit(&obs), Err(FitError::Design(_))));
}
