//! The report's statistics validated by simulation: studies of two scenarios drawn from the
//! crossed logistic crowd model (`model`), each analysed as the report analyses it, counting how
//! often each test rejects at 0.05 (type I error under no effect, power under one) and how
//! often each interval covers what it claims to cover. `clues-lab simulate` prints the full
//! grid; a seeded test runs a small part of it.
//!
//! What each interval covers, for a simulated study with its drawn items b_j and abilities u_a:
//! - the scenario difference and a cell's interval over annotators: other annotators on these
//!   items, `E_u[mean_j P(right | u, b_j)]` (per scenario, and their difference);
//! - the item bootstrap: these annotators on more items, `mean_a E_b[P(right | u_a, b)]`;
//! - the two-level bootstrap (dropped from the report): the population's mean, `E_u E_b`.

pub mod logistic;
pub mod model;

use super::groups::{self, Method};
use super::interval::{
    bootstrap_items, bootstrap_mean, logit_t_interval, t_interval, LEVEL, RESAMPLES,
};
use super::paired::{self, sign_flip_test};
use super::relabel::relabel_test;
use super::ttest::welch;
use crate::rng::SplitMix64;
use model::Crowd;
use serde::{Deserialize, Serialize};

/// The level of every simulated test.
pub const ALPHA: f64 = 0.05;

/// One design and truth to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Annotators per scenario and test items.
    pub annotators: usize,
    pub items: usize,
    /// The standard deviation of annotators' expected S1 (fraction), the first scenario's mean
    /// S1, the second scenario's difference, and the items' difficulty spread (logits).
    pub sd: f64,
    pub mean: f64,
    pub effect: f64,
    pub sd_item: f64,
}

/// `hits` of `of`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub hits: u64,
    pub of: u64,
}

impl Rate {
    pub fn rate(&self) -> f64 {
        self.hits as f64 / self.of.max(1) as f64
    }

    /// `nominal ± z · √(nominal (1 − nominal) / of)`: where the rate of a procedure that is
    /// exactly right falls in all but a small share of runs (z = 3: 0.27%).
    pub fn band(&self, nominal: f64, z: f64) -> (f64, f64) {
        let half = z * (nominal * (1.0 - nominal) / self.of.max(1) as f64).sqrt();
        (nominal - half, nominal + half)
    }

    pub(super) fn add(&mut self, hit: bool) {
        self.hits += u64::from(hit);
        self.of += 1;
    }

    pub(super) fn merge(&mut self, o: Rate) {
        self.hits += o.hits;
        self.of += o.of;
    }
}

/// What one configuration's studies showed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Rejections at `ALPHA`: the report's scenario test (the mixed model, Welch when the fit
    /// is singular), Welch's test across annotators, the exact permutation test across
    /// annotators, and the item-level sign-flip test the report used before.
    pub scenario_test: Rate,
    pub welch: Rate,
    pub permutation: Rate,
    pub item_sign_flip: Rate,
    /// Coverage of the scenario test's 95% interval of the difference.
    pub difference_interval: Rate,
    /// Studies whose interval leaves zero out exactly where the deciding p is at or below
    /// `ALPHA` (interval and decision agree), of all tested.
    #[serde(default)]
    pub interval_agrees: Rate,
    /// A cell's 95% intervals: the t-interval on the logit scale and the plain one (other
    /// annotators), the item bootstrap (these annotators, more items), the two-level bootstrap.
    pub cell_logit_t: Rate,
    pub cell_t: Rate,
    pub cell_item_bootstrap: Rate,
    pub cell_two_level_bootstrap: Rate,
    /// Fits whose annotator (or item) variance was estimated at zero.
    pub singular: Rate,
    /// The scenario test's rejections on each of its paths, `of` the studies that took it: the
    /// mixed model with both variances positive, the mixed model with the item variance at
    /// zero, and the annotator permutation test (annotator variance at zero, or no fit).
    pub path_mixed: Rate,
    pub path_item_zero: Rate,
    pub path_relabel: Rate,
}

impl Tally {
    fn merge(&mut self, o: &Tally) {
        for (a, b) in self.rates_mut().into_iter().zip(o.rates()) {
            a.merge(b);
        }
    }

    fn rates(&self) -> [Rate; 14] {
        [
            self.scenario_test,
            self.welch,
            self.permutation,
            self.item_sign_flip,
            self.difference_interval,
            self.interval_agrees,
            self.cell_logit_t,
            self.cell_t,
            self.cell_item_bootstrap,
            self.cell_two_level_bootstrap,
            self.singular,
            self.path_mixed,
            self.path_item_zero,
            self.path_relabel,
        ]
    }

    fn rates_mut(&mut self) -> [&mut Rate; 14] {
        [
            &mut self.scenario_test,
            &mut self.welch,
            &mut self.permutation,
            &mut self.item_sign_flip,
            &mut self.difference_interval,
            &mut self.interval_agrees,
            &mut self.cell_logit_t,
            &mut self.cell_t,
            &mut self.cell_item_bootstrap,
            &mut self.cell_two_level_bootstrap,
            &mut self.singular,
            &mut self.path_mixed,
            &mut self.path_item_zero,
            &mut self.path_relabel,
        ]
    }
}

/// Study i's own generator: its seed scrambled by one SplitMix64 step, so that no two
/// studies' streams are shifts of each other (consecutive states would be).
fn stream(seed: u64, i: usize) -> SplitMix64 {
    let mut mix = SplitMix64(seed ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    SplitMix64(mix.next_u64())
}

fn unit_means(rows: &[Vec<f64>]) -> Vec<f64> {
    rows.iter()
        .map(|r| r.iter().sum::<f64>() / r.len() as f64)
        .collect()
}

fn covers(i: Option<super::Interval>, truth: f64) -> bool {
    i.is_some_and(|i| i.contains(truth))
}

/// One study drawn: the items' difficulties, each scenario's abilities and answers.
struct Drawn {
    items: Vec<f64>,
    ua: Vec<f64>,
    a: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
}

fn draw(crowd: &Crowd, c: &Config, rng: &mut SplitMix64) -> Drawn {
    let items = crowd.draw_items(rng, c.items);
    let (ua, ub) = (
        crowd.draw_units(rng, c.annotators),
        crowd.draw_units(rng, c.annotators),
    );
    let a = crowd.answer(rng, 0, &ua, &items);
    let b = crowd.answer(rng, 1, &ub, &items);
    Drawn { items, ua, a, b }
}

/// Draws one study and analyses it as the report does.
fn one_study(crowd: &Crowd, c: &Config, rng: &mut SplitMix64, t: &mut Tally) {
    let Drawn { items, ua, a, b } = draw(crowd, c, rng);
    let truth_a = crowd.other_annotators(0, &items);
    let truth = crowd.other_annotators(1, &items) - truth_a;
    let seed = rng.next_u64();
    let fit = groups::fit(&[&a, &b]);
    t.singular.add(fit.components().is_none_or(|c| c.singular));
    let test = fit.test(&[-1.0, 1.0], ALPHA, seed);
    let rejects = |x: &groups::Tested| x.p().is_some_and(|p| p < ALPHA);
    t.scenario_test.add(test.as_ref().is_some_and(rejects));
    if let Some(x) = &test {
        let path = match &x.method {
            Method::MixedModel {
                item_variance_zero: false,
            } => Some(&mut t.path_mixed),
            Method::MixedModel {
                item_variance_zero: true,
            } => Some(&mut t.path_item_zero),
            Method::Permutation { .. } => Some(&mut t.path_relabel),
            // Not the scenario test's methods: they test humans against a system, or there
            // is no test.
            Method::Welch { .. } | Method::OneSample { .. } | Method::NoTest { .. } => None,
        };
        if let Some(path) = path {
            path.add(rejects(x));
        }
    }
    // At 1 − ALPHA, the test's own interval (the permutation test's: every shift it keeps).
    t.difference_interval
        .add(test.as_ref().is_some_and(|x| x.covers(truth)));
    if let Some(x) = &test {
        let excludes_zero = x.interval.is_some_and(|i| !i.contains(0.0));
        t.interval_agrees
            .add(excludes_zero == x.p().is_some_and(|p| p <= ALPHA));
    }
    let (ma, mb) = (unit_means(&a), unit_means(&b));
    t.welch.add(welch(&ma, &mb).is_some_and(|x| x.p < ALPHA));
    t.permutation
        .add(relabel_test(&ma, &mb, seed).is_some_and(|x| x.p < ALPHA));
    let d: Vec<f64> = (0..c.items)
        .map(|j| {
            let col =
                |rows: &[Vec<f64>]| rows.iter().map(|r| r[j]).sum::<f64>() / rows.len() as f64;
            col(&b) - col(&a)
        })
        .collect();
    t.item_sign_flip
        .add(sign_flip_test(&d, paired::RESAMPLES, seed).is_some_and(|x| x.p < ALPHA));
    t.cell_logit_t
        .add(covers(logit_t_interval(&ma, LEVEL), truth_a));
    t.cell_t.add(covers(t_interval(&ma, LEVEL), truth_a));
    t.cell_item_bootstrap.add(covers(
        bootstrap_items(&a, RESAMPLES, seed),
        crowd.more_items(0, &ua),
    ));
    t.cell_two_level_bootstrap.add(covers(
        bootstrap_mean(&a, RESAMPLES, seed),
        crowd.population(0),
    ));
}

/// Runs `one` on `studies` studies of `c` spread over `threads` threads, study i with its own
/// generator (`seed`, i), and merges the tallies: the result does not depend on the threads.
fn spread<T: Default + Send>(
    c: &Config,
    (studies, seed, threads): (usize, u64, usize),
    one: fn(&Crowd, &Config, &mut SplitMix64, &mut T),
    merge: fn(&mut T, &T),
) -> T {
    let crowd = Crowd::calibrated(c.mean, c.sd, c.sd_item, c.effect);
    let threads = threads.clamp(1, studies.max(1));
    let tallies: Vec<T> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                let crowd = &crowd;
                s.spawn(move || {
                    let mut t = T::default();
                    for i in (w..studies).step_by(threads) {
                        one(crowd, c, &mut stream(seed, i), &mut t);
                    }
                    t
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut total = T::default();
    for t in &tallies {
        merge(&mut total, t);
    }
    total
}

/// Simulates `studies` studies of `c`, spread over `threads` threads; study i is drawn from
/// its own seed (`seed`, i), so the result does not depend on the threads.
pub fn run(c: &Config, studies: usize, seed: u64, threads: usize) -> Tally {
    spread(c, (studies, seed, threads), one_study, Tally::merge)
}

/// The planner checked by simulating its own model: two scenarios of `n` annotators on `m`
/// items from the normal mixed model with the given standard deviations and `difference`,
/// each analysed by the scenario test; the share that rejects at `alpha`.
pub fn planned_power(
    sd: groups::Components,
    n: usize,
    m: usize,
    difference: f64,
    studies: usize,
    seed: u64,
) -> Rate {
    let mut rate = Rate::default();
    for i in 0..studies {
        let mut rng = stream(seed, i);
        let items: Vec<f64> = (0..m).map(|_| sd.sd_item * rng.normal()).collect();
        let mut group = |shift: f64| -> Vec<Vec<f64>> {
            (0..n)
                .map(|_| {
                    let u = sd.sd_annotator * rng.normal();
                    items
                        .iter()
                        .map(|v| shift + u + v + sd.sd_residual * rng.normal())
                        .collect()
                })
                .collect()
        };
        let (a, b) = (group(0.0), group(difference));
        let test = groups::fit(&[&a, &b]).test(&[-1.0, 1.0], ALPHA, rng.next_u64());
        rate.add(test.and_then(|t| t.p()).is_some_and(|p| p < ALPHA));
    }
    rate
}

#[cfg(test)]
mod tests;
