//! The stated rules: which item looks assisted, which worker-level signals fire at which
//! threshold, and how they combine into high, mixed or low authenticity. A level never rejects
//! work or withholds pay by itself: the researcher decides.

use super::signals::ItemSignals;
use serde::{Deserialize, Serialize};

/// Time away from the page during one item that counts as a long stretch away (long enough to
/// paste the item into another tool and read its answer).
pub const LONG_AWAY_MS: u64 = 10_000;
/// Characters of item text a copy must hold to carry the item elsewhere: a sentence, not the
/// word a reader looks up.
pub const ITEM_COPY_CHARS: u32 = 40;
/// A reading floor: an answer given faster than the item's words at this rate (words a minute)
/// was given without reading it; skimming runs at about 700.
pub const READING_FLOOR_WPM: f64 = 1_000.0;
/// Share of timed test answers under the reading floor that fires the "too fast" signal.
pub const FAST_SHARE: f64 = 0.5;
/// Least answered test items for the straight-lining signal (one label throughout).
pub const STRAIGHT_LINE_ITEMS: usize = 10;
/// Share of items with long stretches away that fires the "often away" signal (at least 3).
pub const OFTEN_AWAY_SHARE: f64 = 0.25;
/// Assisted items a worker needs for a low level: 2, or 2% of their items with signals if
/// that is more (one event alone never flags anyone).
pub const ASSISTED_ITEMS_MIN: usize = 2;
pub const ASSISTED_ITEMS_SHARE: f64 = 0.02;
/// Machine agreement: the worker's mean S1 against a system's answers exceeds their mean S1
/// against the other humans by this much, on at least `MACHINE_ITEMS` shared test items...
pub const MACHINE_GAP: f64 = 0.15;
pub const MACHINE_ITEMS: usize = 10;
/// ...and on the items that system got wrong (at least `MACHINE_ERROR_ITEMS`), the worker gave
/// the system's wrong answer in at least this share of them.
pub const MACHINE_ERROR_SHARE: f64 = 0.5;
pub const MACHINE_ERROR_ITEMS: usize = 5;
/// Other humans of the task a worker is compared with (the first ones in a stable order).
pub const PEERS: usize = 20;

/// The rules in words, for the report.
pub const RULES_TEXT: [&str; 7] = [
    "An item looks assisted when, while it was shown, the worker copied 40 characters or more including text of the item, or pasted into the page, and the page was hidden or out of focus for 10 s or more in total.",
    "Low authenticity: assisted-looking items on at least 2 items (or 2% of the items with signals, if more); or the machine-agreement signal together with any other signal.",
    "Mixed authenticity: any one signal: an assisted-looking item; stretches away of 10 s or more on at least 3 items and a quarter of them; half the timed test answers faster than the item's words at 1,000 words a minute (timed by the page, else by the server); one label throughout at least 10 answered test items whose gold has more than one; the machine-agreement signal alone.",
    "Machine agreement: the worker agrees with a system's answers (mean S1) at least 0.15 more than with the other humans of the task (up to 20, on at least 10 shared test items each), and gave that system's wrong answer on at least half of the 5 or more items it got wrong.",
    "High authenticity: none of these signals.",
    "Only counts and durations are recorded, never what was copied or pasted, nor anything of another tab; a single stretch away (a phone call, a notification) or a copy alone never lowers a level.",
    "A level is information for the researcher: it neither rejects work nor withholds pay.",
];

/// A worker's authenticity: no signal, one kind of signal, or work that looks assisted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    High,
    Mixed,
    Low,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::High => "high",
            Level::Mixed => "mixed",
            Level::Low => "low",
        }
    }
}

/// Whether one item's signals look assisted (the first rule).
pub fn assisted_item(s: &ItemSignals) -> bool {
    let carried = s.copy_from_item > 0 && s.copy_chars >= ITEM_COPY_CHARS;
    (carried || s.paste_count > 0) && s.away_ms >= LONG_AWAY_MS
}

/// What the rules read of one worker: the behavioural counts over their items with signals,
/// and the data's signals (each `None` where it could not be computed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Items whose answer came with signals.
    pub items_with_signals: usize,
    pub assisted_items: usize,
    pub long_away_items: usize,
    /// Timed test answers (the page's clock, else the server's) and those under the floor.
    pub timed_answers: usize,
    pub fast_answers: usize,
    /// The one label of a straight-lining worker.
    pub straight_line: Option<String>,
    /// The machine-agreement signal fired (see `MACHINE_GAP`).
    pub machine_signal: bool,
}

impl Evidence {
    /// Adds one item's signals.
    pub fn add(&mut self, s: &ItemSignals) {
        self.items_with_signals += 1;
        self.assisted_items += usize::from(assisted_item(s));
        self.long_away_items += usize::from(s.away_ms >= LONG_AWAY_MS);
    }

    fn assisted_needed(&self) -> usize {
        let share = (ASSISTED_ITEMS_SHARE * self.items_with_signals as f64).ceil() as usize;
        ASSISTED_ITEMS_MIN.max(share)
    }

    fn often_away(&self) -> bool {
        self.long_away_items >= 3
            && self.long_away_items as f64 >= OFTEN_AWAY_SHARE * self.items_with_signals as f64
    }

    fn too_fast(&self) -> bool {
        self.timed_answers > 0 && self.fast_answers as f64 >= FAST_SHARE * self.timed_answers as f64
    }

    /// Each signal that fired, in words.
    pub fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.assisted_items > 0 {
            out.push(format!(
                "{} of {} items look assisted (the item copied or a paste with 10 s or more away)",
                self.assisted_items, self.items_with_signals
            ));
        }
        if self.often_away() {
            out.push(format!(
                "away 10 s or more on {} of {} items",
                self.long_away_items, self.items_with_signals
            ));
        }
        if self.too_fast() {
            out.push(format!(
                "{} of {} test answers faster than reading the item at {READING_FLOOR_WPM} words a minute",
                self.fast_answers, self.timed_answers
            ));
        }
        if let Some(label) = &self.straight_line {
            out.push(format!("one label throughout: {label}"));
        }
        if self.machine_signal {
            out.push(
                "agrees with a system far more than with the other humans and repeats its errors"
                    .into(),
            );
        }
        out
    }

    /// The level the rules give.
    pub fn level(&self) -> Level {
        let others = usize::from(self.assisted_items > 0)
            + usize::from(self.often_away())
            + usize::from(self.too_fast())
            + usize::from(self.straight_line.is_some());
        if self.assisted_items >= self.assisted_needed() || (self.machine_signal && others > 0) {
            Level::Low
        } else if others > 0 || self.machine_signal {
            Level::Mixed
        } else {
            Level::High
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(copy: u32, paste: u32, away_ms: u64) -> ItemSignals {
        ItemSignals {
            away_count: u32::from(away_ms > 0),
            away_ms,
            copy_count: copy,
            copy_chars: 120 * copy,
            copy_from_item: copy,
            paste_count: paste,
            wall_ms: away_ms + 10_000,
            active_ms: 10_000,
            ..Default::default()
        }
    }

    fn evidence(items: &[ItemSignals]) -> Evidence {
        let mut e = Evidence::default();
        items.iter().for_each(|s| e.add(s));
        e
    }

    #[test]
    fn one_event_alone_never_lowers_a_level_below_mixed() {
        let mut items = vec![item(0, 0, 0); 30];
        assert_eq!(evidence(&items).level(), Level::High);
        // A phone call: one long stretch away.
        items[3] = item(0, 0, 180_000);
        assert_eq!(evidence(&items).level(), Level::High);
        // A word copied to look it up, then 12 s away: not what carries an item elsewhere.
        items[5] = ItemSignals {
            copy_chars: 9,
            ..item(1, 0, 12_000)
        };
        assert_eq!(evidence(&items).assisted_items, 0);
        // A sentence copied, then 12 s away: one assisted-looking item.
        items[7] = item(1, 0, 12_000);
        let e = evidence(&items);
        assert_eq!((e.assisted_items, e.level()), (1, Level::Mixed));
        // A second one flags.
        items[9] = item(0, 1, 20_000);
        assert_eq!(evidence(&items).level(), Level::Low);
    }

    #[test]
    fn many_items_need_two_percent() {
        let mut items = vec![item(0, 0, 0); 300];
        for s in items.iter_mut().take(5) {
            *s = item(1, 0, 15_000);
        }
        assert_eq!(evidence(&items).level(), Level::Mixed);
        items[5] = item(1, 0, 15_000);
        assert_eq!(evidence(&items).level(), Level::Low);
    }

    #[test]
    fn data_signals_combine_with_the_machine_signal() {
        let mut e = evidence(&vec![item(0, 0, 0); 20]);
        e.machine_signal = true;
        assert_eq!(e.level(), Level::Mixed);
        e.timed_answers = 20;
        e.fast_answers = 10;
        assert_eq!(e.level(), Level::Low);
        assert_eq!(e.reasons().len(), 2);
        let mut away = evidence(&[vec![item(0, 0, 0); 9], vec![item(0, 0, 11_000); 3]].concat());
        assert_eq!(away.level(), Level::Mixed);
        away.straight_line = Some("positive".into());
        assert_eq!(away.level(), Level::Mixed);
    }
}
