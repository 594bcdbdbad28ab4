//! Assisted workers on the items they take elsewhere, as stated on `Assisted`: what the page
//! sees of each way of getting help (scripts are in `mod.rs`: they send no page at all).

use super::timeline::{Act, Leave, Plan};
use super::{lognormal, uniform, Assisted, ItemShape};
use crate::rng::SplitMix64;

/// The plan of one assisted item; `None` for the strategies that never use the page's own
/// events (scripts), which `Session` answers itself.
pub(super) fn item(rng: &mut SplitMix64, kind: Assisted, item: &ItemShape) -> Option<Plan> {
    let words = f64::from(item.words);
    let mut p = match kind {
        Assisted::ChatbotTab => {
            // Skims the item, copies it whole (else retypes it), waits for the reply in
            // another tab, answers (pasting the reply into a free-text answer).
            let mut p = Plan::new(lognormal(rng, 3_000.0 + words / 460.0 * 60_000.0, 0.4));
            let at = uniform(rng, 0.3, 0.7);
            if rng.unit() < 0.85 {
                p.at(at, Act::Copy(item.chars, true));
            }
            p.at(
                at,
                Act::Away(uniform(rng, 15_000.0, 40_000.0), Leave::Hidden),
            );
            if item.free_text {
                p.before_end(
                    uniform(rng, 500.0, 2_000.0),
                    Act::Paste(5 + rng.below(60) as u32),
                );
            }
            p
        }
        Assisted::ShortCopies => {
            // A piece of the question or text under 40 characters to another tab.
            let mut p = Plan::new(uniform(rng, 3_000.0, 8_000.0));
            p.at(0.1, Act::Input);
            let back = uniform(rng, 1_500.0, 8_000.0);
            p.before_end(back, Act::Copy(10 + rng.below(29) as u32, true));
            p.before_end(
                back,
                Act::Away(uniform(rng, 10_000.0, 30_000.0), Leave::Hidden),
            );
            p
        }
        Assisted::SideWindowSlow | Assisted::SideWindowFast => {
            // A chatbot's window beside the study: read, ask it there (the page stays
            // visible), come back and answer. 10-20 s an item, or 6-9 s.
            let (read, away, back) = match kind {
                Assisted::SideWindowSlow => {
                    ((2_000.0, 5_000.0), (6_000.0, 13_000.0), (1_000.0, 3_000.0))
                }
                _ => ((1_000.0, 3_000.0), (3_000.0, 5_000.0), (500.0, 1_500.0)),
            };
            let back = uniform(rng, back.0, back.1);
            let mut p = Plan::new(uniform(rng, read.0, read.1) + back);
            if rng.unit() < 0.5 {
                p.before_end(back, Act::Copy(item.chars.min(300), true));
            }
            p.before_end(back, Act::Away(uniform(rng, away.0, away.1), Leave::Beside));
            p
        }
        Assisted::RetypedInTab => {
            // Reads, types the question into a chatbot in another tab, answers on return.
            let back = uniform(rng, 2_000.0, 8_000.0);
            let mut p = Plan::new(uniform(rng, 3_000.0, 8_000.0) + back);
            p.before_end(
                back,
                Act::Away(uniform(rng, 15_000.0, 40_000.0), Leave::Hidden),
            );
            p
        }
        Assisted::SecondDevice | Assisted::MachineCopying | Assisted::MachineCopyingSome => {
            // Types the item into a phone (or reads a model's answer there) with the page in
            // front and focused the whole time.
            let mut p = Plan::new(
                lognormal(rng, 4_000.0 + words / 230.0 * 60_000.0, 0.45)
                    + uniform(rng, 15_000.0, 40_000.0),
            );
            p.at(uniform(rng, 0.5, 0.95), Act::Input);
            p
        }
        Assisted::ScriptWithoutSignals
        | Assisted::ScriptForgedSignals
        | Assisted::ScriptForgedPaced => return None,
    };
    let second_device = matches!(
        kind,
        Assisted::SecondDevice | Assisted::MachineCopying | Assisted::MachineCopyingSome
    );
    if !second_device {
        p.before_end(uniform(rng, 0.0, 500.0), Act::Input);
    }
    Some(p)
}
