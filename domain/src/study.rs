//! The rules of the CLUES crowd protocol (paper sec. 4.1), pure and IO-free: study
//! configuration and what may change once workers started, which scenario a newly arriving
//! worker gets, per-worker item orders, abandoned slots, and the training-step filter.

pub mod analysis;

use super::settings;
use super::shots::{file_name, ShotFile};
use super::study_pages::StudyPages;
use analysis::AnalysisChoices;
use serde::{Deserialize, Serialize};

/// What an admin configures for a study of one task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyConfig {
    /// Shots per scenario; 0 is zero-shot. Default: 0, 10, 20, 30.
    pub scenarios: Vec<u32>,
    /// Annotators per scenario (default 3).
    pub annotators: u32,
    /// The training split the humans train on (1-based, default 1): the split of the smallest
    /// training set; `shot_group` names the file of every k.
    pub training_split: u32,
    /// The training file of each k, a nesting chain such as SQuAD v2's 10_1 ⊂ 20_5 ⊂ 30_5
    /// (official files nest across split numbers). A k not listed trains on `training_split`
    /// (configurations made before shot groups list none).
    #[serde(default)]
    pub shot_group: Vec<ShotFile>,
    /// The admin allowed scenarios whose training sets are not nested (reports say so).
    #[serde(default)]
    pub allow_unnested: bool,
    /// Pay in cents per hour (default 1200 = 12 USD).
    pub hourly_rate_cents: u32,
    /// Flag a worker whose training S1 is more than this below the mean of the other
    /// workers of the same scenario (default 0.2).
    pub filter_margin: f64,
    /// Seconds without activity after which a slot is released (`DEFAULT_PLACE_TIMEOUT_SECS`
    /// for new studies, so links shared beyond the crowd cannot hold places for good; `None`:
    /// never).
    pub item_timeout_secs: Option<u32>,
    pub open: bool,
    /// Shown to the worker at the end, for the crowd platform.
    pub completion_code: String,
    /// Where Prolific workers are sent back to, `{code}` standing for the completion code;
    /// empty: Prolific's own completion URL.
    #[serde(default)]
    pub completion_url: String,
    /// Each worker sees the training examples in an order of their own (seeded by the place's
    /// order seed, so it is recorded), instead of the file's order for everyone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shuffle_training: bool,
    /// A training file of the task whose items every worker of every scenario answers first,
    /// without feedback: the same yardstick for each group (not part of any score but its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screening: Option<ShotFile>,
    /// Consent, questionnaires, attention checks and debriefing (none by default).
    #[serde(default, skip_serializing_if = "StudyPages::is_empty")]
    pub pages: StudyPages,
    /// The analysis plan's level and primary comparison (frozen when the first worker
    /// arrives; see `analysis_plan`).
    #[serde(default, skip_serializing_if = "AnalysisChoices::is_default")]
    pub analysis: AnalysisChoices,
}

/// A place with no activity for 30 minutes is released (a worker reading one item that long
/// has left; their answers so far stay).
pub const DEFAULT_PLACE_TIMEOUT_SECS: u32 = 1800;

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig {
            scenarios: vec![0, 10, 20, 30],
            annotators: 3,
            training_split: 1,
            shot_group: Vec::new(),
            allow_unnested: false,
            hourly_rate_cents: 1200,
            filter_margin: 0.2,
            item_timeout_secs: Some(DEFAULT_PLACE_TIMEOUT_SECS),
            open: false,
            completion_code: String::new(),
            completion_url: String::new(),
            shuffle_training: false,
            screening: None,
            pages: StudyPages::default(),
            analysis: AnalysisChoices::default(),
        }
    }
}

/// A study's name, trimmed: 1 to 200 characters; the problem names the field.
pub fn check_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err("Name: a study needs a name of 1 to 200 characters".into());
    }
    Ok(name.to_string())
}

impl StudyConfig {
    /// The split of the k-shot training file.
    pub fn split_for(&self, k: u32) -> u32 {
        self.shot_group
            .iter()
            .find(|f| f.0 == k)
            .map_or(self.training_split, |f| f.1)
    }

    /// The training file of each k-shot scenario (k > 0), k ascending.
    pub fn scenario_files(&self) -> Vec<ShotFile> {
        let mut ks: Vec<u32> = self.scenarios.iter().copied().filter(|&k| k > 0).collect();
        ks.sort_unstable();
        ks.dedup();
        ks.into_iter().map(|k| (k, self.split_for(k))).collect()
    }

    /// Checks the configuration on its own; `available` lists the (k, split) shot groups the
    /// task has, `within(small, big)` says whether one training file lies within another.
    /// Scenarios whose training sets are not nested are refused unless `allow_unnested`.
    /// Returns every problem, not just the first.
    pub fn validate(
        &self,
        available: &[ShotFile],
        within: &dyn Fn(ShotFile, ShotFile) -> bool,
    ) -> Result<(), Vec<String>> {
        let mut errs = Vec::new();
        if self.scenarios.is_empty() {
            errs.push("a study needs at least one scenario".to_string());
        }
        let mut seen = std::collections::BTreeSet::new();
        for &k in &self.scenarios {
            if !seen.insert(k) {
                errs.push(format!("scenario k={k} is listed twice"));
            } else if k > 0 && !available.contains(&(k, self.split_for(k))) {
                errs.push(format!(
                    "the task has no {k}-shot training set for split {}",
                    self.split_for(k)
                ));
            }
        }
        if let Some(&first) = self.shot_group.iter().min() {
            if first.1 != self.training_split {
                errs.push(format!(
                    "the training split ({}) is not the split of the shot group's smallest set ({})",
                    self.training_split,
                    file_name(first)
                ));
            }
        }
        let mut group_ks = std::collections::BTreeSet::new();
        for &(k, split) in &self.shot_group {
            if !group_ks.insert(k) {
                errs.push(format!("the shot group names two files for k={k}"));
            } else if !available.contains(&(k, split)) {
                errs.push(format!(
                    "the task has no training file {}",
                    file_name((k, split))
                ));
            }
        }
        let files = self.scenario_files();
        let all_there = files.iter().all(|f| available.contains(f));
        if all_there && !self.allow_unnested {
            for w in files.windows(2) {
                if !within(w[0], w[1]) {
                    errs.push(format!(
                        "the {}-shot training set ({}) is not within the {}-shot set ({}): choose a nested shot group, or allow training sets that are not nested",
                        w[0].0,
                        file_name(w[0]),
                        w[1].0,
                        file_name(w[1])
                    ));
                }
            }
        }
        if self.training_split == 0 {
            errs.push("splits are numbered from 1".to_string());
        }
        // Every number in its range, each message naming the field (settings.rs).
        let checks = self
            .scenarios
            .iter()
            .map(|&k| settings::SHOTS.check(f64::from(k)))
            .chain([
                settings::ANNOTATORS.check(f64::from(self.annotators)),
                settings::HOURLY_RATE.check(f64::from(self.hourly_rate_cents) / 100.0),
                settings::FILTER_MARGIN.check(self.filter_margin),
                self.item_timeout_secs
                    .map_or(Ok(()), |t| settings::TIME_OUT.check(f64::from(t))),
                settings::check_completion_code(&self.completion_code),
                super::platform::prolific::check_completion_url(&self.completion_url),
            ]);
        errs.extend(checks.filter_map(Result::err));
        errs.extend(self.analysis.problems(&self.scenarios));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }

    /// Once a worker started, only changes that do not alter what workers saw are allowed:
    /// opening or closing, pay, the filter margin, the time-out, the completion code,
    /// whether unnested sets are allowed, and the consent and debriefing texts.
    pub fn check_edit(&self, new: &StudyConfig, started: bool) -> Result<(), String> {
        if !started {
            return Ok(());
        }
        let mut changed = Vec::new();
        if self.scenarios != new.scenarios {
            changed.push("the scenarios");
        }
        if self.annotators > new.annotators {
            changed.push("fewer annotators per scenario");
        }
        if self.scenarios == new.scenarios && self.scenario_files() != new.scenario_files() {
            changed.push("the training files");
        }
        if self.shuffle_training != new.shuffle_training {
            changed.push("the order of the training examples");
        }
        if self.screening != new.screening {
            changed.push("the screening items");
        }
        if self.pages.changed_for_workers(&new.pages) {
            changed.push(
                "the questionnaires, the attention checks and whether there is a consent page",
            );
        }
        let mut refusals = Vec::new();
        if !changed.is_empty() {
            refusals.push(format!(
                "workers have started, so {} can no longer change: it would alter what they saw",
                changed.join(" and ")
            ));
        }
        if self.analysis != new.analysis {
            refusals.push(
                "workers have started, so the analysis plan (its level and primary comparison) can no longer change: it was frozen with its SHA-256 when the first worker arrived, and a level or primary test chosen after that is no longer the pre-registered one"
                    .to_string(),
            );
        }
        if refusals.is_empty() {
            Ok(())
        } else {
            Err(refusals.join("; "))
        }
    }

    /// What is wrong with the screening file: the task must have it, and it may share no item
    /// with a training set of the study (a worker would meet the item twice, once with its
    /// gold). `overlap(a, b)` says whether two files share an item.
    pub fn screening_problems(
        &self,
        available: &[ShotFile],
        overlap: &dyn Fn(ShotFile, ShotFile) -> bool,
    ) -> Vec<String> {
        let Some(screening) = self.screening else {
            return Vec::new();
        };
        if !available.contains(&screening) {
            return vec![format!(
                "the task has no training file {} for the screening items",
                file_name(screening)
            )];
        }
        self.scenario_files()
            .into_iter()
            .filter(|&f| overlap(screening, f))
            .map(|f| {
                format!(
                    "the screening items ({}) share items with the {}-shot training set ({}): choose a file they do not share with",
                    file_name(screening),
                    f.0,
                    file_name(f)
                )
            })
            .collect()
    }

    /// The scenarios' training files as text: `10_1 ⊂ 20_5 ⊂ 30_5` when `nested`, else
    /// `10_1, 20_1, 30_1 (not nested)`; `none (zero-shot only)` without k-shot scenarios.
    pub fn shot_group_text(&self, nested: bool) -> String {
        super::shots::group_text(&self.scenario_files(), nested)
    }
}

/// A scenario's slots as the assignment sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScenarioLoad {
    pub k: u32,
    /// Slots held by workers who are active or finished (released slots do not count).
    pub taken: u32,
}

use crate::platform::RETURN_ON_ANY;

/// Why a worker cannot be assigned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Refusal {
    #[error("This study is not open. {RETURN_ON_ANY} so that you are not counted.")]
    Closed,
    #[error("You already took part in the {k}-shot scenario of this task; each scenario needs workers new to the task. {RETURN_ON_ANY} so that you are not counted.")]
    OtherScenario { k: u32 },
    #[error("All places in this study are taken. {RETURN_ON_ANY} so that you are not counted. Thank you for your interest.")]
    Full,
}

/// Picks the scenario for a newly arriving worker: the one with the fewest taken slots (ties to
/// the order of the configuration), never beyond `annotators`. `prior` holds the scenarios (k)
/// of this task the worker already took part in, in any study: such a worker is not a *new*
/// worker for any scenario of the task and gets none (resuming one's own assignment is not an
/// arrival and does not come here).
pub fn choose_scenario(
    config: &StudyConfig,
    loads: &[ScenarioLoad],
    prior: &[u32],
) -> Result<u32, Refusal> {
    if !config.open {
        return Err(Refusal::Closed);
    }
    if let Some(&k) = prior.first() {
        return Err(Refusal::OtherScenario { k });
    }
    let taken = |k: u32| loads.iter().find(|l| l.k == k).map_or(0, |l| l.taken);
    config
        .scenarios
        .iter()
        .copied()
        .filter(|&k| taken(k) < config.annotators)
        .min_by_key(|&k| taken(k))
        .ok_or(Refusal::Full)
}

/// The scenarios' loads from the places a study holds, as (k, finished, last activity in unix
/// seconds) of each place not yet released: a place the time-out releases at `now` (unix
/// seconds) does not count.
pub fn loads_now(config: &StudyConfig, held: &[(u32, bool, i64)], now: i64) -> Vec<ScenarioLoad> {
    let mut loads: Vec<ScenarioLoad> = Vec::new();
    for &(k, finished, last) in held {
        if is_abandoned(config, last, now, finished) {
            continue;
        }
        match loads.iter_mut().find(|l| l.k == k) {
            Some(l) => l.taken += 1,
            None => loads.push(ScenarioLoad { k, taken: 1 }),
        }
    }
    loads
}

/// Has a slot been abandoned? `last_activity` and `now` in unix seconds.
pub fn is_abandoned(config: &StudyConfig, last_activity: i64, now: i64, finished: bool) -> bool {
    match config.item_timeout_secs {
        Some(t) if !finished => now - last_activity > i64::from(t),
        _ => false,
    }
}

/// How long a place may wait at the consent page (or the study's own time-out, if shorter):
/// someone who closes the tab there holds a place for ten minutes, not half an hour (a slow
/// reader who comes back later finds a new place, if one is free).
pub const CONSENT_WAIT_SECS: u32 = 600;

/// Has a place that still awaits its worker's consent been left? (Such a place is removed
/// altogether: nothing of it is kept.) `last_activity` and `now` in unix seconds.
pub fn consent_left(config: &StudyConfig, last_activity: i64, now: i64) -> bool {
    let wait = config
        .item_timeout_secs
        .map_or(CONSENT_WAIT_SECS, |t| t.min(CONSENT_WAIT_SECS));
    now - last_activity > i64::from(wait)
}

/// A per-worker order of `n` items: a Fisher-Yates shuffle driven by SplitMix64 from `seed`,
/// so the order is reproducible from the recorded seed.
pub fn item_order(seed: u64, n: usize) -> Vec<usize> {
    let mut rng = super::rng::SplitMix64(seed);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i + 1);
        order.swap(i, j);
    }
    order
}

/// The order of a worker's `n` training examples in a study with `shuffle_training`: the
/// same shuffle as `item_order`, from the place's seed mixed with a constant, so that it is
/// independent of the test order and reproducible from the recorded seed.
pub fn training_order(seed: u64, n: usize) -> Vec<usize> {
    item_order(seed ^ TRAINING_SALT, n)
}

/// "training" in ASCII.
const TRAINING_SALT: u64 = 0x7472_6169_6e69_6e67;

/// The training filter: which workers of one scenario score more than `margin` below the mean
/// training S1 of the *other* workers of that scenario. Input: (worker, training S1). A worker
/// exactly at the margin is kept: "more than" is decided with `s1::score_above`, so the
/// rounding of f64 arithmetic cannot flag a worker whose scores are exactly at the margin.
pub fn flag_low_performers<W: Clone>(scores: &[(W, f64)], margin: f64) -> Vec<W> {
    if scores.len() < 2 {
        return Vec::new();
    }
    let total: f64 = scores.iter().map(|(_, s)| s).sum();
    let others = (scores.len() - 1) as f64;
    scores
        .iter()
        .filter(|(_, s)| super::s1::score_above((total - s) / others - s, margin))
        .map(|(w, _)| w.clone())
        .collect()
}

#[cfg(test)]
mod tests;
