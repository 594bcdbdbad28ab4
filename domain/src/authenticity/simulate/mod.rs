//! Honest and assisted work sessions drawn from stated behaviours: what the page records of
//! each item (played through the page's own `Recorder`) and what the server sees (its interval
//! from showing the item to receiving the answer). The input of the per-strategy rates that the
//! tests assert (`measure`, through the report's own assessment) and of the benchmark over the
//! API (`clues-lab load authenticity`).
//!
//! An assisted worker uses help on a share of the items drawn uniformly from 0.3 to 1 (scripts:
//! every item) and works as a typical honest worker on the others. The page's answer reaches the
//! server a log-normal 150 ms (sigma 0.8) after the page's submission (render and network).

mod answers;
mod assisted;
mod honest;
pub mod measure;
pub mod timeline;

pub use answers::{AnswerModel, TaskAnswers};

use super::signals::ItemSignals;
use crate::rng::SplitMix64;

/// The shape of one item as the simulation needs it.
#[derive(Clone, Copy, Debug)]
pub struct ItemShape {
    pub words: u32,
    pub chars: u32,
    pub free_text: bool,
}

/// Items of a study for the simulation: `n` items of `words` words (about 6 characters each).
pub fn items(n: usize, words: u32, free_text: bool) -> Vec<ItemShape> {
    vec![
        ItemShape {
            words,
            chars: words * 6,
            free_text,
        };
        n
    ]
}

/// Honest workers: `Typical` as `honest` states; `PhoneCalls` takes two calls of 2-10 minutes
/// (the page hidden); `Interruptions` is interrupted on 5% of the items; `FastExpert` reads at
/// 500 words a minute after 1.5 s; `KeyboardOnly` reaches the answer by keys early in the item;
/// `ScreenReader` listens at 150 words a minute after 6 s and its own window takes the focus on
/// 5% of the items (1-3 s); `GlancesSome` and `GlancesOften` also look at a window beside the
/// page (music, a chat, the platform's page) for 3-8 s on 10% or 25% of the items and answer
/// 1-5 s after coming back. Every kind but `PhoneCalls` takes one 2-10 minute call in a fifth
/// of its sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Honest {
    Typical,
    PhoneCalls,
    Interruptions,
    FastExpert,
    KeyboardOnly,
    ScreenReader,
    GlancesSome,
    GlancesOften,
}

/// Assisted workers: a chatbot in another tab with the item copied (85%, else retyped) and
/// 15-40 s away, its reply pasted into free text (`ChatbotTab`); pieces of the item under 40
/// characters copied to another tab, 10-30 s away, answered 1.5-8 s after coming back
/// (`ShortCopies`); a chatbot's window beside the page (the page visible, without the focus),
/// at 10-20 s or 6-9 s an item (`SideWindowSlow`, `SideWindowFast`); the item retyped into
/// another tab without copying (`RetypedInTab`); a script that posts answers without the page's
/// record at a human pace (`ScriptWithoutSignals`); a script that posts made-up clean records
/// 5-150 ms after each showing (`ScriptForgedSignals`), or waits as long as its record claims
/// (`ScriptForgedPaced`); a second device with the page in front (`SecondDevice`); a system's
/// answers copied from a second device, its errors included, on nearly every item (0.8 to 1,
/// `MachineCopying`) or on some (0.3 to 0.8, `MachineCopyingSome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Assisted {
    ChatbotTab,
    ShortCopies,
    SideWindowSlow,
    SideWindowFast,
    RetypedInTab,
    ScriptWithoutSignals,
    ScriptForgedSignals,
    ScriptForgedPaced,
    SecondDevice,
    MachineCopying,
    MachineCopyingSome,
}

/// A worker's way of working.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    Honest(Honest),
    Assisted(Assisted),
}

impl Strategy {
    pub const ALL: [Strategy; 19] = [
        Strategy::Honest(Honest::Typical),
        Strategy::Honest(Honest::PhoneCalls),
        Strategy::Honest(Honest::Interruptions),
        Strategy::Honest(Honest::FastExpert),
        Strategy::Honest(Honest::KeyboardOnly),
        Strategy::Honest(Honest::ScreenReader),
        Strategy::Honest(Honest::GlancesSome),
        Strategy::Honest(Honest::GlancesOften),
        Strategy::Assisted(Assisted::ChatbotTab),
        Strategy::Assisted(Assisted::ShortCopies),
        Strategy::Assisted(Assisted::SideWindowSlow),
        Strategy::Assisted(Assisted::SideWindowFast),
        Strategy::Assisted(Assisted::RetypedInTab),
        Strategy::Assisted(Assisted::ScriptWithoutSignals),
        Strategy::Assisted(Assisted::ScriptForgedSignals),
        Strategy::Assisted(Assisted::ScriptForgedPaced),
        Strategy::Assisted(Assisted::SecondDevice),
        Strategy::Assisted(Assisted::MachineCopying),
        Strategy::Assisted(Assisted::MachineCopyingSome),
    ];

    /// Its name in the benchmark's table (and in the simulated workers' ids).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Honest(h) => match h {
                Honest::Typical => "honest-typical",
                Honest::PhoneCalls => "honest-phone-calls",
                Honest::Interruptions => "honest-interruptions",
                Honest::FastExpert => "honest-fast-expert",
                Honest::KeyboardOnly => "honest-keyboard-only",
                Honest::ScreenReader => "honest-screen-reader",
                Honest::GlancesSome => "honest-glances-beside-10",
                Honest::GlancesOften => "honest-glances-beside-25",
            },
            Strategy::Assisted(a) => match a {
                Assisted::ChatbotTab => "chatbot-in-a-tab",
                Assisted::ShortCopies => "short-copies",
                Assisted::SideWindowSlow => "side-window-10-20s",
                Assisted::SideWindowFast => "side-window-6-9s",
                Assisted::RetypedInTab => "retyped-in-a-tab",
                Assisted::ScriptWithoutSignals => "script-without-signals",
                Assisted::ScriptForgedSignals => "script-forged-signals",
                Assisted::ScriptForgedPaced => "script-forged-and-paced",
                Assisted::SecondDevice => "second-device",
                Assisted::MachineCopying => "machine-copying",
                Assisted::MachineCopyingSome => "machine-copying-some",
            },
        }
    }

    pub fn is_honest(self) -> bool {
        matches!(self, Strategy::Honest(_))
    }

    /// Whether this strategy's sessions answer from one source shared by all of them in a
    /// crowd (paced forging scripts are a farm: a chatbot as often wrong as the system, not it).
    pub fn answers_from_source(self) -> bool {
        self == Strategy::Assisted(Assisted::ScriptForgedPaced)
    }

    /// Why the rules cannot catch this strategy, for the ones that are undetectable by design
    /// (the benchmark and the docs print the reason beside the rate).
    pub fn undetectable(self) -> Option<&'static str> {
        match self {
            Strategy::Assisted(Assisted::SecondDevice) => Some(
                "the page sees nothing of a second device: it stays in front and focused, and only the answers (machine agreement) can tell",
            ),
            Strategy::Assisted(Assisted::ScriptForgedPaced) => Some(
                "a script that forges the page's record and waits as long as it claims sends what the page sends, when the page would send it; only its answers can tell (a farm of them answering from one source shares its errors, found on long studies)",
            ),
            Strategy::Assisted(Assisted::MachineCopyingSome) => Some(
                "copying a system on some of the items repeats about as few of its errors as an honest worker does on the hard items: the answers cannot tell, and the page sees a second device",
            ),
            Strategy::Honest(_)
            | Strategy::Assisted(
                Assisted::ChatbotTab
                | Assisted::ShortCopies
                | Assisted::SideWindowSlow
                | Assisted::SideWindowFast
                | Assisted::RetypedInTab
                | Assisted::ScriptWithoutSignals
                | Assisted::ScriptForgedSignals
                | Assisted::MachineCopying,
            ) => None,
        }
    }
}

impl Strategy {
    /// Where a detectable strategy is rated low less often than the goal (95%) on a study of
    /// `items` items: the pattern rule must let pass what honest workers do (a look at a window
    /// beside the page before answering, on up to 15% of the items), so help used on only part
    /// of a short study reads as that. The reason, and the least share low the simulation
    /// measures (the tests assert it; the docs print both).
    pub fn below_goal(self, items: usize) -> Option<(&'static str, f64)> {
        const BESIDE: &str = "a chatbot's window beside the page for 6-9 s an item looks like an honest worker's glance at another window; it is caught where it is used on most of the items";
        const SHORT: &str = "on a short study, help on a third to two thirds of the items is too few items to tell from an honest worker's look-ups and glances";
        match self {
            Strategy::Assisted(Assisted::SideWindowFast) if items < 100 => {
                Some((BESIDE, if items < 30 { 0.25 } else { 0.55 }))
            }
            Strategy::Assisted(
                Assisted::SideWindowSlow | Assisted::RetypedInTab | Assisted::ShortCopies,
            ) if items < 30 => Some((SHORT, 0.65)),
            Strategy::Honest(_)
            | Strategy::Assisted(
                Assisted::ChatbotTab
                | Assisted::SideWindowFast
                | Assisted::SideWindowSlow
                | Assisted::RetypedInTab
                | Assisted::ShortCopies
                | Assisted::ScriptWithoutSignals
                | Assisted::ScriptForgedSignals
                | Assisted::ScriptForgedPaced
                | Assisted::SecondDevice
                | Assisted::MachineCopying
                | Assisted::MachineCopyingSome,
            ) => None,
        }
    }
}

pub(crate) fn lognormal(rng: &mut SplitMix64, median_ms: f64, sigma: f64) -> f64 {
    (median_ms * (sigma * rng.normal()).exp()).round()
}

pub(crate) fn uniform(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.unit()
}

/// One answer as the server receives it: the page's record (none from a script that sends
/// none), the server's interval from showing the item to the answer's arrival, and whether the
/// answer is a system's (copied) rather than the worker's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimAnswer {
    pub signals: Option<ItemSignals>,
    pub server_ms: u64,
    pub from_system: bool,
}

/// One worker's session, item by item (a client over the API meets its items one at a time).
pub struct Session {
    rng: SplitMix64,
    strategy: Strategy,
    /// Share of items the worker takes elsewhere (0 for an honest worker).
    share: f64,
    /// The items a phone call backgrounds the page on.
    calls: Vec<usize>,
    done: usize,
}

impl Session {
    /// A session of about `items` items.
    pub fn new(seed: u64, strategy: Strategy, items: usize) -> Self {
        let mut rng = SplitMix64(seed);
        let share = match strategy {
            Strategy::Honest(_) => 0.0,
            Strategy::Assisted(
                Assisted::ScriptWithoutSignals
                | Assisted::ScriptForgedSignals
                | Assisted::ScriptForgedPaced,
            ) => 1.0,
            Strategy::Assisted(Assisted::MachineCopying) => uniform(&mut rng, 0.8, 1.0),
            Strategy::Assisted(Assisted::MachineCopyingSome) => uniform(&mut rng, 0.3, 0.8),
            Strategy::Assisted(_) => uniform(&mut rng, 0.3, 1.0),
        };
        let n = items.max(1);
        let calls = match strategy {
            Strategy::Honest(Honest::PhoneCalls) => vec![rng.below(n), rng.below(n)],
            _ => (rng.unit() < 0.2)
                .then(|| rng.below(n))
                .into_iter()
                .collect(),
        };
        Session {
            rng,
            strategy,
            share,
            calls,
            done: 0,
        }
    }

    /// The share of items this session takes elsewhere.
    pub fn share(&self) -> f64 {
        self.share
    }

    /// The next item's answer as the server receives it.
    pub fn item(&mut self, item: &ItemShape) -> SimAnswer {
        let call = self.calls.contains(&self.done);
        self.done += 1;
        let rng = &mut self.rng;
        let helped = rng.unit() < self.share;
        let (kind, honest) = match self.strategy {
            Strategy::Honest(h) => (None, h),
            Strategy::Assisted(a) => (helped.then_some(a), Honest::Typical),
        };
        let latency = lognormal(rng, 150.0, 0.8) as u64;
        let page = |plan: timeline::Plan| {
            let s = plan.play();
            (Some(s), s.wall_ms + latency)
        };
        let (signals, server_ms) = match kind {
            None => page(honest::item(rng, honest, item, call)),
            Some(Assisted::ScriptWithoutSignals) => {
                // At a human reading pace, so no reading floor catches it.
                let plan = honest::item(rng, Honest::Typical, item, false);
                (None, plan.reading as u64 + latency)
            }
            Some(Assisted::ScriptForgedSignals) => {
                let forged = honest::item(rng, Honest::Typical, item, false).play();
                (Some(forged), uniform(rng, 5.0, 150.0) as u64)
            }
            Some(Assisted::ScriptForgedPaced) => {
                let forged = honest::item(rng, Honest::Typical, item, false).play();
                (Some(forged), forged.wall_ms + latency)
            }
            Some(a) => match assisted::item(rng, a, item) {
                Some(plan) => page(plan),
                // Scripts are answered above.
                None => (None, latency),
            },
        };
        SimAnswer {
            signals,
            server_ms,
            from_system: helped
                && matches!(
                    self.strategy,
                    Strategy::Assisted(Assisted::MachineCopying | Assisted::MachineCopyingSome)
                ),
        }
    }
}

/// One session's answers, in the order of `items`.
pub fn session(seed: u64, strategy: Strategy, items: &[ItemShape]) -> Vec<SimAnswer> {
    let mut s = Session::new(seed, strategy, items.len());
    items.iter().map(|i| s.item(i)).collect()
}

#[cfg(test)]
mod tests;
