//! What a study is published as on a crowd platform: the draft derived from the study (title,
//! description, link, completion code, the places the plan needs, the time, the reward at the
//! study's hourly rate, the devices its task supports), checked, and what it may cost at most.
//! The researcher edits it and confirms it; nothing is sent before. Pure.

use super::fees::{Cost, FeeRates, Payment};
use super::Platform;
use crate::ids::StudyId;
use crate::named::named_enum;
use crate::report::pay_cents;
use crate::task::AnswerForm;
use serde::{Deserialize, Serialize};

named_enum! {
    /// A kind of device a worker may take part on (Prolific's `device_compatibility`).
    pub enum Device {
        Desktop = "desktop",
        Tablet = "tablet",
        Mobile = "mobile",
    }
}

/// Where a draft's time comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Estimate {
    /// The median paid time of the workers who finished the study so far (its pilot).
    Pilot { workers: u32, median_seconds: u32 },
    /// No pilot yet: the items a worker answers, at a stated time each.
    Items { items: u32, seconds_each: u32 },
}

impl Estimate {
    pub fn describe(&self) -> String {
        match self {
            Estimate::Pilot {
                workers,
                median_seconds,
            } => format!(
                "the median time of the {workers} workers who finished so far ({median_seconds} s)"
            ),
            Estimate::Items {
                items,
                seconds_each,
            } => format!(
                "{items} items at {seconds_each} s each, with no pilot yet: run a pilot first for a better figure"
            ),
        }
    }
}

/// The finished workers a pilot needs before its times set the estimate.
pub const PILOT_WORKERS: usize = 3;

/// A worker's time per item of each answer form, where no pilot says better.
fn seconds_per_item(form: AnswerForm) -> u32 {
    match form {
        AnswerForm::Label => 15,
        AnswerForm::Spans => 40,
        AnswerForm::Text => 45,
    }
}

/// What a draft is derived from: the study as the server knows it.
#[derive(Clone, Debug)]
pub struct StudyFacts<'a> {
    pub study: StudyId,
    pub name: &'a str,
    pub task: &'a str,
    pub form: AnswerForm,
    pub scenarios: &'a [u32],
    pub annotators: u32,
    pub test_items: u32,
    pub hourly_rate_cents: u32,
    pub completion_code: &'a str,
    /// The site's origin (`https://lab.example`), which the study link starts with.
    pub origin: &'a str,
    /// The paid seconds of each worker who finished so far.
    pub finished_seconds: &'a [f64],
}

/// A publication as the researcher confirms it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub platform: Platform,
    /// MTurk's sandbox (no money moves); Prolific has none.
    pub sandbox: bool,
    pub title: String,
    pub description: String,
    /// The study link with the platform's placeholders (absolute).
    pub link: String,
    pub completion_code: String,
    /// Annotators x scenarios: the places the plan needs, no more.
    pub places: u32,
    /// The estimated time, in whole minutes.
    pub minutes: u32,
    pub estimate: Estimate,
    /// The longest a worker may take before the platform times the place out.
    pub max_minutes: u32,
    /// The base reward of a place: `minutes` at the hourly rate (topped up by a bonus later
    /// to the time the server measured).
    pub reward_cents: i64,
    pub hourly_rate_cents: u32,
    pub devices: Vec<Device>,
    /// The most the publication may spend, fees included: rewards, places asked for again,
    /// and bonuses.
    pub budget_cents: i64,
    /// Makes the publication's idempotency keys its own (two databases, one account).
    pub nonce: String,
}

/// The median of some seconds, rounded up.
fn median_seconds(xs: &[f64]) -> u32 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let m = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    m.max(0.0).ceil() as u32
}

/// The estimate: the pilot's median where enough workers finished, else the items a worker
/// answers (the test set and, averaged over the scenarios, the training examples).
pub fn estimate(f: &StudyFacts) -> Estimate {
    if f.finished_seconds.len() >= PILOT_WORKERS {
        return Estimate::Pilot {
            workers: f.finished_seconds.len() as u32,
            median_seconds: median_seconds(f.finished_seconds),
        };
    }
    let shots: u32 = f.scenarios.iter().sum();
    let mean_shots = shots.div_ceil(f.scenarios.len().max(1) as u32);
    Estimate::Items {
        items: f.test_items + mean_shots,
        seconds_each: seconds_per_item(f.form),
    }
}

/// Whole minutes for some seconds, rounded up, at least one.
fn minutes_of(seconds: u32) -> u32 {
    seconds.div_ceil(60).max(1)
}

/// The draft a study is offered as on `platform`: everything derived, the researcher's to edit.
pub fn derive(platform: Platform, sandbox: bool, f: &StudyFacts, nonce: &str) -> Draft {
    let estimate = estimate(f);
    let minutes = minutes_of(match estimate {
        Estimate::Pilot { median_seconds, .. } => median_seconds,
        Estimate::Items {
            items,
            seconds_each,
        } => items * seconds_each,
    });
    let places = f.annotators * f.scenarios.len() as u32;
    let rate = f.hourly_rate_cents;
    let devices = match f.form {
        AnswerForm::Label | AnswerForm::Text => Device::ALL.to_vec(),
        // Touch selection has not been checked on a real phone (field guide, Phones).
        AnswerForm::Spans => vec![Device::Desktop, Device::Tablet],
    };
    let mut draft = Draft {
        platform,
        sandbox: sandbox && platform == Platform::Mturk,
        title: f.name.to_string(),
        description: format!(
            "Answer questions about short texts ({}), about {minutes} minutes, paid at {} per hour: \
             the time you spend is measured and topped up to that rate with a bonus. Each person \
             takes part in one study of this task ({}) only.",
            match f.form {
                AnswerForm::Label => "choose a label",
                AnswerForm::Spans => "select the answer in the text",
                AnswerForm::Text => "write a short answer",
            },
            crate::report::draw::text::money(i64::from(rate)),
            f.task
        ),
        link: format!(
            "{}{}",
            f.origin.trim_end_matches('/'),
            platform.worker_link(f.study)
        ),
        completion_code: f.completion_code.to_string(),
        places,
        minutes,
        estimate,
        max_minutes: max_minutes(minutes),
        reward_cents: pay_cents(i64::from(minutes) * 60_000, rate),
        hourly_rate_cents: rate,
        devices,
        budget_cents: 0,
        nonce: nonce.to_string(),
    };
    // A first budget: every place at its reward, a quarter more for top-ups and places asked
    // for again, with the fees on all of it.
    draft.budget_cents = draft.rewards_cost(FeeRates::default()).total_cents() * 5 / 4;
    draft
}

/// A site's origin as a researcher gives it (`https://lab.example.org`), checked: a scheme and
/// a host (and port), nothing after them.
pub fn check_origin(origin: &str) -> Result<String, String> {
    let o = origin.trim().trim_end_matches('/');
    let rest = o
        .strip_prefix("https://")
        .or_else(|| o.strip_prefix("http://"))
        .unwrap_or_default();
    let fine = !rest.is_empty()
        && !rest.contains('/')
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if !fine {
        return Err(format!(
            "the site's address {origin:?} must be http(s)://host[:port], nothing after it"
        ));
    }
    Ok(o.to_string())
}

/// The longest a place may be held on the platform: three times the estimate, and at least
/// what Prolific asks (2 + 2T + 2 sqrt(T) minutes) and half an hour.
pub fn max_minutes(minutes: u32) -> u32 {
    let t = f64::from(minutes);
    let prolific = (2.0 + 2.0 * t + 2.0 * t.sqrt()).ceil() as u32;
    (3 * minutes).max(prolific).max(30)
}

impl Draft {
    /// What every place's reward costs with the fees.
    pub fn rewards_cost(&self, rates: FeeRates) -> Cost {
        let payment = Payment::Reward {
            places: self.places,
        };
        self.platform
            .cost(payment, self.reward_cents, rates)
            .times(self.places)
    }

    /// What is wrong with the draft, in words (empty: nothing).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.title.trim().is_empty() || self.title.chars().count() > 120 {
            out.push("the title must be 1 to 120 characters".into());
        }
        if self.description.trim().is_empty() || self.description.chars().count() > 2000 {
            out.push("the description must be 1 to 2,000 characters".into());
        }
        if self.completion_code.is_empty() {
            out.push("the study has no completion code: set one in its configuration first".into());
        }
        if self.places == 0 {
            out.push("the plan needs at least one place".into());
        }
        if self.minutes == 0 || self.minutes > 600 {
            out.push("the estimated time must be 1 to 600 minutes".into());
        }
        if self.max_minutes < max_minutes(self.minutes) {
            out.push(format!(
                "the longest time must be at least {} minutes for {} estimated",
                max_minutes(self.minutes),
                self.minutes
            ));
        }
        if self.reward_cents <= 0 {
            out.push("the reward must be more than nothing".into());
        }
        let fair = pay_cents(i64::from(self.minutes) * 60_000, self.hourly_rate_cents);
        if self.reward_cents < fair {
            out.push(format!(
                "a reward of {} is below the hourly rate for {} minutes ({}): workers are paid by the hour",
                crate::report::draw::text::money(self.reward_cents),
                self.minutes,
                crate::report::draw::text::money(fair)
            ));
        }
        if self.devices.is_empty() {
            out.push("at least one kind of device must be allowed".into());
        }
        if self.platform == Platform::Mturk && !self.sandbox && !self.link.starts_with("https://") {
            out.push(
                "MTurk shows a study link only over HTTPS: serve the site over TLS first".into(),
            );
        }
        if self.budget_cents < self.rewards_cost(FeeRates::default()).total_cents() {
            out.push("the budget must cover at least every place's reward with the fees".into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(finished: &[f64]) -> StudyFacts<'_> {
        StudyFacts {
            study: StudyId(4),
            name: "SST-2 crowd",
            task: "SST-2",
            form: AnswerForm::Label,
            scenarios: &[0, 10, 20, 30],
            annotators: 3,
            test_items: 100,
            hourly_rate_cents: 1200,
            completion_code: "C0DE",
            origin: "https://lab.example/",
            finished_seconds: finished,
        }
    }

    #[test]
    fn a_draft_asks_for_the_plans_places_at_the_hourly_rate() {
        let d = derive(Platform::Prolific, true, &facts(&[]), "n1");
        assert_eq!(d.places, 12);
        assert!(!d.sandbox, "Prolific has no sandbox");
        // 100 test items and 15 training items on average, 15 s each: 28.75 -> 29 minutes.
        assert_eq!(d.minutes, 29);
        assert_eq!(d.reward_cents, 580);
        assert!(d
            .link
            .starts_with("https://lab.example/join/4?PROLIFIC_PID="));
        assert_eq!(d.devices, Device::ALL);
        assert!(d.problems().is_empty(), "{:?}", d.problems());
        let mturk = derive(Platform::Mturk, true, &facts(&[]), "n1");
        assert!(mturk.sandbox && mturk.link == "https://lab.example/join/4");
    }

    #[test]
    fn an_origin_is_a_scheme_and_a_host_alone() {
        assert_eq!(
            check_origin("https://lab.example.org/").unwrap(),
            "https://lab.example.org"
        );
        assert!(check_origin("http://127.0.0.1:3000").is_ok());
        for bad in [
            "lab.example.org",
            "https://",
            "https://a.b/join",
            "javascript:alert(1)",
            "https://a b",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pilot_of_three_sets_the_time_by_its_median() {
        let d = derive(
            Platform::Prolific,
            false,
            &facts(&[600.0, 1500.0, 700.5]),
            "n",
        );
        assert_eq!(
            d.estimate,
            Estimate::Pilot {
                workers: 3,
                median_seconds: 701
            }
        );
        assert_eq!(d.minutes, 12);
        assert_eq!(d.reward_cents, 240);
    }

    #[test]
    fn a_reward_below_the_rate_a_short_limit_or_a_small_budget_is_refused() {
        let mut d = derive(Platform::Mturk, false, &facts(&[]), "n");
        d.link = "http://lab.example/join/4".into();
        d.reward_cents -= 1;
        d.max_minutes = 10;
        d.budget_cents = 100;
        let p = d.problems().join("; ");
        for what in ["below the hourly rate", "at least", "HTTPS", "budget"] {
            assert!(p.contains(what), "{what}: {p}");
        }
    }
}
