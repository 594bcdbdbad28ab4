//! The logistic mixed model (`mixed::logistic`) validated by simulation on the crossed logistic
//! crowd, the very model it fits: how often glmer's Wald z-test, the same statistic against t
//! with the between-within degrees of freedom, and the restricted fit's t reject δ = 0 at 0.05,
//! and how often each one's 95% interval covers the crowd's logit shift δ. Apart from `run`, as a fit costs tens of
//! milliseconds: `clues-lab simulate --logistic`.

use super::model::Crowd;
use super::{draw, spread, Config, Rate, ALPHA};
use crate::stats::dist::normal_quantile;
use crate::stats::groups;
use crate::stats::interval::LEVEL;
use serde::{Deserialize, Serialize};

/// What one configuration's studies showed of the logistic model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogisticTally {
    /// Rejections at `ALPHA`: glmer's z against the normal, and against t(annotators − 2).
    pub z: Rate,
    pub t: Rate,
    /// Coverage of δ by each one's 95% interval.
    pub z_interval: Rate,
    pub t_interval: Rate,
    /// The restricted (REML-Laplace) fit's t against t(annotators − 2), and its interval.
    pub reml_t: Rate,
    pub reml_t_interval: Rate,
    /// Fits that failed (outcomes that separate the scenarios), of every study.
    pub failed: Rate,
    /// Fits with a variance estimated at zero, of the fits made.
    pub singular: Rate,
}

impl LogisticTally {
    fn merge(&mut self, o: &LogisticTally) {
        for (a, b) in [
            (&mut self.z, o.z),
            (&mut self.t, o.t),
            (&mut self.z_interval, o.z_interval),
            (&mut self.t_interval, o.t_interval),
            (&mut self.reml_t, o.reml_t),
            (&mut self.reml_t_interval, o.reml_t_interval),
            (&mut self.failed, o.failed),
            (&mut self.singular, o.singular),
        ] {
            a.merge(b);
        }
    }
}

/// Draws one study as `run` draws it and fits the logistic model to its two scenarios.
fn one_study(crowd: &Crowd, c: &Config, rng: &mut crate::rng::SplitMix64, t: &mut LogisticTally) {
    let drawn = draw(crowd, c, rng);
    let fit = groups::fit_logistic(&[&drawn.a, &drawn.b]);
    t.failed.add(fit.is_err());
    let Ok(fit) = fit else { return };
    t.singular.add(fit.singular);
    let l = [-1.0, 1.0];
    if let Some(z) = fit.wald(&l) {
        t.z.add(z.p < ALPHA);
        let half = normal_quantile(1.0 - (1.0 - LEVEL) / 2.0) * z.se;
        t.z_interval.add((crowd.delta - z.estimate).abs() <= half);
    }
    if let Some(x) = fit.between_within(&l) {
        t.t.add(x.p < ALPHA);
        t.t_interval.add(x.interval(LEVEL).contains(crowd.delta));
    }
    let restricted = groups::fit_logistic_restricted(&[&drawn.a, &drawn.b]);
    if let Some(x) = restricted.ok().and_then(|f| f.between_within(&l)) {
        t.reml_t.add(x.p < ALPHA);
        t.reml_t_interval
            .add(x.interval(LEVEL).contains(crowd.delta));
    }
}

/// Simulates `studies` studies of `c` (the same studies `run` draws) for the logistic model.
pub fn run_logistic(c: &Config, studies: usize, seed: u64, threads: usize) -> LogisticTally {
    spread(c, (studies, seed, threads), one_study, LogisticTally::merge)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 200 studies without an effect: `annotators` a scenario on `items` items, annotator SD
    /// 9 points, item SD 1 logit.
    fn null_studies(annotators: usize, items: usize) -> LogisticTally {
        let c = Config {
            annotators,
            items,
            sd: 0.09,
            mean: 0.75,
            effect: 0.0,
            sd_item: 1.0,
        };
        run_logistic(&c, 200, 20261129, 2)
    }

    /// Whether a rate is within three binomial standard errors of `target`.
    fn within(r: Rate, target: f64) -> bool {
        let (lo, hi) = r.band(target, 3.0);
        (lo..=hi).contains(&r.rate())
    }

    /// Three annotators a scenario on 100 items, no effect: glmer's maximum-likelihood SE is
    /// too small there (its t rejects 7.1% of 1,000 null studies, `clues-lab simulate
    /// --logistic`), and the restricted (REML-Laplace) fit's t holds its level and its interval
    /// covers δ, within three binomial standard errors of 200 studies, rejecting no more often
    /// than glmer's t.
    #[test]
    fn with_three_annotators_a_scenario_the_restricted_fit_holds_its_level() {
        let t = null_studies(3, 100);
        assert_eq!(t.reml_t.of, 200, "{t:?}");
        assert!(within(t.reml_t, ALPHA), "{t:?}");
        assert!(within(t.reml_t_interval, LEVEL), "{t:?}");
        assert!(t.reml_t.hits <= t.t.hits, "{t:?}");
    }

    /// Ten annotators a scenario on 30 items, no effect: the between-within t holds its level
    /// and its interval covers δ, within three binomial standard errors of 200 studies (±0.046
    /// and ±0.046); glmer's z rejects more often than t. (At three annotators a scenario
    /// neither holds its level: `clues-lab simulate --logistic`, and the statistics chapter.)
    #[test]
    fn with_ten_annotators_a_scenario_the_t_reference_holds_its_level() {
        let t = null_studies(10, 30);
        assert_eq!(t.failed.hits, 0, "{t:?}");
        assert!(within(t.t, ALPHA), "{t:?}");
        assert!(within(t.t_interval, LEVEL), "{t:?}");
        assert!(t.z.hits >= t.t.hits, "{t:?}");
    }
}
