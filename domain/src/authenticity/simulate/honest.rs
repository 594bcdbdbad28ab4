//! Honest workers, item by item. Every kind reads for a log-normal time and, at random points
//! of it, glances away (probability 0.10, median 3 s, sigma 0.7; three in four glances hide
//! the page, one in four go to a window beside it), is interrupted (0.01, median 60 s, sigma
//! 0.8), copies a few words to look one up elsewhere (0.015, then away a median 8 s, sigma 0.5),
//! copies item text without leaving (0.01) and pastes (0.003; 0.02 into a free-text answer).
//! The glancing kinds add a look at a window beside the page shortly before the answer.
//! The kinds differ as stated on `Honest`.

use super::timeline::{Act, Leave, Plan};
use super::{lognormal, uniform, Honest, ItemShape};
use crate::rng::SplitMix64;

/// Reading time: median `base` ms plus the item's words at `wpm`, log-normal with `sigma`.
fn reading(rng: &mut SplitMix64, item: &ItemShape, base: f64, wpm: f64, sigma: f64) -> f64 {
    lognormal(rng, base + f64::from(item.words) / wpm * 60_000.0, sigma)
}

/// An honest worker's plan for one item; `call`: a phone call backgrounds the page on it.
pub(super) fn item(rng: &mut SplitMix64, kind: Honest, item: &ItemShape, call: bool) -> Plan {
    let r = match kind {
        Honest::FastExpert => reading(rng, item, 1_500.0, 500.0, 0.35),
        Honest::ScreenReader => reading(rng, item, 6_000.0, 150.0, 0.45),
        Honest::Typical
        | Honest::PhoneCalls
        | Honest::Interruptions
        | Honest::KeyboardOnly
        | Honest::GlancesSome
        | Honest::GlancesOften => reading(rng, item, 4_000.0, 230.0, 0.45),
    };
    let mut p = Plan::new(r);
    // Keyboard users tab to the answer early; the others click it once read.
    let first_input = match kind {
        Honest::KeyboardOnly | Honest::ScreenReader => uniform(rng, 0.05, 0.4),
        _ => uniform(rng, 0.2, 0.9),
    };
    p.at(first_input, Act::Input);
    if rng.unit() < 0.10 {
        let how = if rng.unit() < 0.75 {
            Leave::Hidden
        } else {
            Leave::Beside
        };
        let glance = lognormal(rng, 3_000.0, 0.7).min(120_000.0);
        p.at(rng.unit(), Act::Away(glance, how));
    }
    let beside = match kind {
        Honest::GlancesSome => 0.10,
        Honest::GlancesOften => 0.25,
        Honest::Typical
        | Honest::PhoneCalls
        | Honest::Interruptions
        | Honest::FastExpert
        | Honest::KeyboardOnly
        | Honest::ScreenReader => 0.0,
    };
    if rng.unit() < beside {
        let back = uniform(rng, 1_000.0, 5_000.0);
        p.before_end(
            back,
            Act::Away(uniform(rng, 3_000.0, 8_000.0), Leave::Beside),
        );
    }
    let interrupted = match kind {
        Honest::Interruptions => 0.05,
        _ => 0.01,
    };
    if rng.unit() < interrupted {
        p.at(
            rng.unit(),
            Act::Away(lognormal(rng, 60_000.0, 0.8), Leave::Hidden),
        );
    }
    // A screen reader's own window takes the focus now and then (its dialogs, a list of
    // links), the page still visible behind it.
    if kind == Honest::ScreenReader && rng.unit() < 0.05 {
        p.at(
            rng.unit(),
            Act::Away(uniform(rng, 1_000.0, 3_000.0), Leave::Beside),
        );
    }
    if rng.unit() < 0.015 {
        let at = rng.unit();
        p.at(at, Act::Copy(5 + rng.below(20) as u32, true));
        p.at(at, Act::Away(lognormal(rng, 8_000.0, 0.5), Leave::Hidden));
    }
    if rng.unit() < 0.01 {
        p.at(rng.unit(), Act::Copy(5 + rng.below(60) as u32, true));
    }
    if rng.unit() < if item.free_text { 0.02 } else { 0.003 } {
        p.at(rng.unit(), Act::Paste(3 + rng.below(40) as u32));
    }
    if call {
        p.at(
            rng.unit(),
            Act::Away(uniform(rng, 120_000.0, 600_000.0), Leave::Hidden),
        );
    }
    p
}
