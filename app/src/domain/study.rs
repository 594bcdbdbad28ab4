//! The rules of the CLUES crowd protocol (paper sec. 4.1), pure and IO-free: study
//! configuration and what may change once workers started, which scenario a newly arriving
//! worker gets, per-worker item orders, abandoned slots, and the training-step filter.

use super::settings;
use super::shots::{file_name, ShotFile};
use super::study_pages::StudyPages;
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
        }
    }
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
                super::crowd::validate_completion_url(&self.completion_url)
                    .map_err(|e| format!("Prolific completion URL: {e}")),
            ]);
        errs.extend(checks.filter_map(Result::err));
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
        if changed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "workers have started, so {} can no longer change: it would alter what they saw",
                changed.join(" and ")
            ))
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

/// Why a worker cannot be assigned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Refusal {
    #[error("This study is not open.")]
    Closed,
    #[error("You already took part in the {k}-shot scenario of this task; each scenario needs workers new to the task.")]
    OtherScenario { k: u32 },
    #[error("All places in this study are taken. Please return the study on your crowd platform (Prolific: \"Return submission\"; MTurk: \"Return HIT\") so that you are not counted. Thank you for your interest.")]
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
mod tests {
    use super::*;

    #[test]
    fn training_orders_are_per_seed_and_apart_from_the_test_order() {
        let a = training_order(7, 30);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..30).collect::<Vec<_>>());
        assert_eq!(a, training_order(7, 30));
        assert_ne!(a, training_order(8, 30));
        assert_ne!(a, item_order(7, 30));
        let started = StudyConfig::default();
        let shuffled = StudyConfig {
            shuffle_training: true,
            ..StudyConfig::default()
        };
        assert!(started.check_edit(&shuffled, false).is_ok());
        assert!(started
            .check_edit(&shuffled, true)
            .unwrap_err()
            .contains("the order of the training examples"));
        // Left out of the stored JSON when off: configurations made before read the same.
        assert!(!serde_json::to_string(&started).unwrap().contains("shuffle"));
    }

    #[test]
    fn screening_items_come_from_a_file_no_training_set_shares() {
        let with = |f| StudyConfig {
            screening: Some(f),
            ..StudyConfig::default()
        };
        // 10_1 ⊂ 20_1 ⊂ 30_1 is the default chain; say 10_2 shares items with 20_1.
        let overlap = |a: ShotFile, b: ShotFile| a == b || (a == (10, 2) && b == (20, 1));
        assert!(with((10, 3))
            .screening_problems(&full_grid(), &overlap)
            .is_empty());
        let shared = with((10, 2)).screening_problems(&full_grid(), &overlap);
        assert_eq!(shared.len(), 1);
        assert!(shared[0].contains("share items with the 20-shot training set (20_1)"));
        assert!(with((10, 1)).screening_problems(&full_grid(), &overlap)[0]
            .contains("the 10-shot training set (10_1)"));
        assert!(with((40, 1)).screening_problems(&full_grid(), &overlap)[0]
            .contains("the task has no training file 40_1"));
        assert!(StudyConfig::default()
            .screening_problems(&full_grid(), &overlap)
            .is_empty());
        assert!(StudyConfig::default()
            .check_edit(&with((10, 3)), true)
            .unwrap_err()
            .contains("the screening items"));
    }

    fn open() -> StudyConfig {
        StudyConfig {
            open: true,
            ..StudyConfig::default()
        }
    }

    fn full_grid() -> Vec<(u32, u32)> {
        [10, 20, 30]
            .iter()
            .flat_map(|&k| (1..=5).map(move |s| (k, s)))
            .collect()
    }

    #[test]
    fn default_config_is_valid_and_errors_are_all_reported() {
        assert!(StudyConfig::default()
            .validate(&full_grid(), &nested)
            .is_ok());
        let bad = StudyConfig {
            scenarios: vec![10, 10, 40],
            annotators: 0,
            ..StudyConfig::default()
        };
        let errs = bad.validate(&full_grid(), &nested).unwrap_err();
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("40-shot")));
    }

    fn nested(_: ShotFile, _: ShotFile) -> bool {
        true
    }

    #[test]
    fn scenarios_must_nest_unless_the_admin_allows_otherwise() {
        // SQuAD v2's shape: 10_1 lies within 20_5 and 30_5, not within 20_1.
        let within = |a: ShotFile, b: ShotFile| {
            matches!(
                (a, b),
                ((10, 1), (20, 5)) | ((20, 5), (30, 5)) | ((10, 1), (30, 5))
            )
        };
        let same_split = StudyConfig::default();
        let errs = same_split.validate(&full_grid(), &within).unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0].contains("10-shot training set (10_1) is not within the 20-shot set (20_1)")
        );
        let allowed = StudyConfig {
            allow_unnested: true,
            ..StudyConfig::default()
        };
        assert!(allowed.validate(&full_grid(), &within).is_ok());
        let chain = StudyConfig {
            shot_group: vec![(10, 1), (20, 5), (30, 5)],
            ..StudyConfig::default()
        };
        assert!(chain.validate(&full_grid(), &within).is_ok());
        assert_eq!(chain.split_for(20), 5);
        assert_eq!(chain.scenario_files(), vec![(10, 1), (20, 5), (30, 5)]);
        assert_eq!(chain.shot_group_text(true), "10_1 ⊂ 20_5 ⊂ 30_5");
        assert_eq!(
            same_split.shot_group_text(false),
            "10_1, 20_1, 30_1 (not nested)"
        );
        // Scenarios 0 and 30 alone have nothing to nest.
        let one = StudyConfig {
            scenarios: vec![0, 30],
            ..StudyConfig::default()
        };
        assert!(one.validate(&full_grid(), &within).is_ok());
        let missing = StudyConfig {
            shot_group: vec![(10, 1), (20, 9)],
            ..StudyConfig::default()
        };
        let errs = missing.validate(&full_grid(), &within).unwrap_err();
        assert!(
            errs.iter().any(|e| e.contains("no training file 20_9")),
            "{errs:?}"
        );
        let mismatch = StudyConfig {
            training_split: 2,
            ..chain.clone()
        };
        let errs = mismatch.validate(&full_grid(), &within).unwrap_err();
        assert!(
            errs[0].contains("not the split of the shot group's smallest set (10_1)"),
            "{errs:?}"
        );
        // Once started, the files may not change; allowing unnested sets may.
        assert!(chain
            .check_edit(&same_split, true)
            .unwrap_err()
            .contains("the training files"));
        let relaxed = StudyConfig {
            allow_unnested: true,
            ..chain.clone()
        };
        assert!(chain.check_edit(&relaxed, true).is_ok());
    }

    #[test]
    fn edits_after_start_may_not_change_what_workers_saw() {
        let c = StudyConfig::default();
        let other_split = StudyConfig {
            training_split: 2,
            ..c.clone()
        };
        assert!(c.check_edit(&other_split, false).is_ok());
        assert!(c
            .check_edit(&other_split, true)
            .unwrap_err()
            .contains("the training files"));
        let pay = StudyConfig {
            hourly_rate_cents: 1500,
            open: true,
            ..c.clone()
        };
        assert!(c.check_edit(&pay, true).is_ok());
        let more = StudyConfig {
            annotators: 5,
            ..c.clone()
        };
        assert!(c.check_edit(&more, true).is_ok());
    }

    #[test]
    fn scenarios_fill_evenly_and_never_beyond_n() {
        let c = open();
        let mut loads: Vec<ScenarioLoad> = c
            .scenarios
            .iter()
            .map(|&k| ScenarioLoad { k, taken: 0 })
            .collect();
        for _ in 0..12 {
            let k = choose_scenario(&c, &loads, &[]).unwrap();
            loads.iter_mut().find(|l| l.k == k).unwrap().taken += 1;
        }
        assert!(loads.iter().all(|l| l.taken == 3));
        assert_eq!(choose_scenario(&c, &loads, &[]), Err(Refusal::Full));
        assert_eq!(
            choose_scenario(&StudyConfig::default(), &[], &[]),
            Err(Refusal::Closed)
        );
    }

    #[test]
    fn a_worker_of_a_task_is_never_assigned_again() {
        let c = open();
        assert_eq!(
            choose_scenario(&c, &[], &[20]),
            Err(Refusal::OtherScenario { k: 20 })
        );
        let only_zero = StudyConfig {
            scenarios: vec![0],
            ..open()
        };
        assert_eq!(
            choose_scenario(&only_zero, &[], &[10]),
            Err(Refusal::OtherScenario { k: 10 })
        );
        assert_eq!(choose_scenario(&only_zero, &[], &[]), Ok(0));
    }

    #[test]
    fn orders_are_permutations_and_reproducible() {
        let a = item_order(42, 200);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..200).collect::<Vec<_>>());
        assert_eq!(a, item_order(42, 200));
        assert_ne!(a, item_order(43, 200));
        assert!(item_order(1, 0).is_empty());
    }

    #[test]
    fn abandoned_slots() {
        let c = StudyConfig {
            item_timeout_secs: Some(600),
            ..open()
        };
        assert!(is_abandoned(&c, 0, 601, false));
        assert!(!is_abandoned(&c, 0, 600, false));
        assert!(!is_abandoned(&c, 0, 10_000, true));
        let never = StudyConfig {
            item_timeout_secs: None,
            ..open()
        };
        assert!(!is_abandoned(&never, 0, 10_000_000, false));
        // New studies release a place after 30 idle minutes.
        assert!(is_abandoned(&open(), 0, 1801, false) && !is_abandoned(&open(), 0, 1800, false));
    }

    #[test]
    fn filter_compares_with_the_mean_of_the_others() {
        // c: mean of others (0.8 + 0.9) / 2 = 0.85; 0.85 - 0.5 = 0.35 > 0.2 -> flagged.
        // a: others (0.9 + 0.5) / 2 = 0.7; 0.7 - 0.8 < 0 -> kept.
        let scores = [("a", 0.8), ("b", 0.9), ("c", 0.5)];
        assert_eq!(flag_low_performers(&scores, 0.2), vec!["c"]);
        assert!(flag_low_performers(&scores, 0.4).is_empty());
        assert!(flag_low_performers(&[("solo", 0.0)], 0.1).is_empty());
    }

    /// A training S1 as the report computes it: the mean of k item scores.
    fn mean_of(right: usize, k: usize) -> f64 {
        let items: Vec<f64> = (0..k).map(|i| f64::from(u8::from(i < right))).collect();
        crate::domain::s1::mean(&items).unwrap()
    }

    #[test]
    fn loads_leave_out_places_the_time_out_releases_now() {
        let c = StudyConfig {
            item_timeout_secs: Some(60),
            ..StudyConfig::default()
        };
        // At 1000 s: an active place idle for 30 s counts, one idle for 100 s does not, a
        // finished one counts however long ago it ended.
        let held = [
            (0, false, 970),
            (0, false, 900),
            (10, true, 0),
            (10, false, 999),
        ];
        assert_eq!(
            loads_now(&c, &held, 1000),
            vec![
                ScenarioLoad { k: 0, taken: 1 },
                ScenarioLoad { k: 10, taken: 2 }
            ]
        );
    }

    #[test]
    fn a_worker_exactly_at_the_margin_is_kept() {
        // 10/10, 8/10, 7/10 with margin 0.2: the 7/10 worker is exactly 0.2 below the others'
        // mean (0.9); in f64 the difference is 0.20000000000000007, which must not flag.
        let at = [
            ("a", mean_of(10, 10)),
            ("b", mean_of(8, 10)),
            ("c", mean_of(7, 10)),
        ];
        assert!(
            (0.9 - mean_of(7, 10)) > 0.2,
            "the f64 trap this guards against"
        );
        assert!(flag_low_performers(&at, 0.2).is_empty());
        // One item lower (6/10) is 0.3 below: flagged.
        let below = [
            ("a", mean_of(10, 10)),
            ("b", mean_of(8, 10)),
            ("c", mean_of(6, 10)),
        ];
        assert_eq!(flag_low_performers(&below, 0.2), vec!["c"]);
        // Every boundary of k = 10, 20, 30 and the default margin: exactly 0.2 below is kept,
        // one more wrong item is flagged.
        for k in [10usize, 20, 30] {
            for top in 0..=k {
                let gap = k / 5; // 0.2 of k items
                let Some(low) = top.checked_sub(gap) else {
                    continue;
                };
                let at = [
                    ("x", mean_of(top, k)),
                    ("y", mean_of(top, k)),
                    ("z", mean_of(low, k)),
                ];
                assert!(flag_low_performers(&at, 0.2).is_empty(), "k={k} top={top}");
                if low > 0 {
                    let under = [
                        ("x", mean_of(top, k)),
                        ("y", mean_of(top, k)),
                        ("z", mean_of(low - 1, k)),
                    ];
                    assert_eq!(
                        flag_low_performers(&under, 0.2),
                        vec!["z"],
                        "k={k} top={top}"
                    );
                }
            }
        }
    }
}
