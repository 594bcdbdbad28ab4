//! The stated rules: which item looks assisted or shows an assistance pattern, which
//! worker-level signals fire at which threshold, and how they combine into high, mixed or low
//! authenticity. Every threshold is a constant here, printed under the report's table and in
//! the docs. A level never rejects work or withholds pay by itself: the researcher decides.

mod items;

pub use items::{assisted_item, least_beyond_honest, pattern_item, patterns, Patterns};

use super::clock;
use super::signals::ItemSignals;
use items::{at_least, beyond_honest, PATTERN_KINDS};
use serde::{Deserialize, Serialize};

/// Time away from the page during one item that counts as a long stretch away (long enough to
/// paste the item into another tool and read its answer).
pub const LONG_AWAY_MS: u64 = 10_000;
/// Characters of item text a copy must hold to carry the item elsewhere: a sentence, not the
/// word a reader looks up.
pub const ITEM_COPY_CHARS: u32 = 40;
/// Patterns: time away after a copy of item text of any length...
pub const COPY_AWAY_MS: u64 = 5_000;
/// ...or the page visible but out of focus (a window beside it) this long, or hidden or out of
/// focus from `LONG_AWAY_MS` up to `ROUND_TRIP_MS` (a chatbot's round trip, not a phone call),
/// for at least `AWAY_SHARE` of the time the item was shown...
pub const BESIDE_MS: u64 = 1_000;
pub const ROUND_TRIP_MS: u64 = 60_000;
pub const AWAY_SHARE: f64 = 1.0 / 3.0;
/// ...then an answer this soon after coming back.
pub const RETURN_MS: u64 = 10_000;
/// The evidence rules: a pattern or away rule counts only where an honest worker would show as
/// many such items with a probability under `HONEST_BOUND`, given the honest rate of the
/// behaviour per item and the items with the page's record (a binomial tail). The pattern has
/// three kinds, each judged at a third of the bound, so that any of them stays under it.
pub const HONEST_BOUND: f64 = 0.001;
/// Honest rates per item: item text copied and then 5 s or more away (a word looked up)...
pub const HONEST_LOOKUP_RATE: f64 = 0.02;
/// ...an answer right after a look at a window beside the page (music, a chat, the platform's
/// own page; simulated honest workers who look beside the page on a quarter of the items show
/// it on fewer, a look being seldom a third of the item's time)...
pub const HONEST_BESIDE_RATE: f64 = 0.15;
/// ...an answer right after 10-60 s away (a message answered, a colleague at the door)...
pub const HONEST_ROUND_TRIP_RATE: f64 = 0.05;
/// ...and 10 s or more away at all (the "often away" signal).
pub const HONEST_LONG_AWAY_RATE: f64 = 0.1;
/// A reading floor: an answer given faster than the item's words at this rate (words a minute)
/// was given without reading it; skimming runs at about 700.
pub const READING_FLOOR_WPM: f64 = 1_000.0;
/// Share of timed test answers under the reading floor that fires the "too fast" signal.
pub const FAST_SHARE: f64 = 0.5;
/// Least answered test items for the straight-lining signal (one label throughout).
pub const STRAIGHT_LINE_ITEMS: usize = 10;
/// Assisted items a worker needs for a low level: 2, or 2% of their items with signals if
/// that is more (one event alone never flags anyone). The same counts for answers whose
/// page times do not fit the server's clock.
pub const ASSISTED_ITEMS_MIN: usize = 2;
pub const ASSISTED_ITEMS_SHARE: f64 = 0.02;
/// Answers without the page's record: a signal past this share of a worker's answers (and at
/// least 2 of them); low on its own past `UNSENT_MAJORITY`.
pub const UNSENT_SHARE: f64 = 0.1;
pub const UNSENT_MIN: usize = 2;
pub const UNSENT_MAJORITY: f64 = 0.5;
/// Machine agreement: the worker's mean S1 against a system's answers exceeds their mean S1
/// against the other humans by this much, on at least `MACHINE_ITEMS` shared test items...
pub const MACHINE_GAP: f64 = 0.15;
pub const MACHINE_ITEMS: usize = 10;
/// ...and on the items that system got wrong (at least `MACHINE_ERROR_ITEMS`), the worker gave
/// the system's wrong answer in at least this share of them.
pub const MACHINE_ERROR_SHARE: f64 = 0.5;
pub const MACHINE_ERROR_ITEMS: usize = 5;
/// Strong machine agreement, low on its own: the system's wrong answer on at least this share
/// of its wrong items (at least `MACHINE_ERROR_ITEMS`), closer to it than to the humans, and so
/// many of its errors that fewer than `MACHINE_CHANCE` of honest workers would repeat as many
/// if each repeated one at the other humans' rate (their lower quartile, which copiers cannot
/// raise while they are fewer than three in four of them; at least `MACHINE_HUMAN_RATE`).
pub const MACHINE_STRONG_SHARE: f64 = 0.75;
pub const MACHINE_CHANCE: f64 = 0.001;
pub const MACHINE_HUMAN_RATE: f64 = 0.2;
/// Other humans of the task a worker is compared with (the first ones in a stable order).
pub const PEERS: usize = 20;

/// The rules in words, for the report and the pay sheet's readers.
pub const RULES_TEXT: [&str; 12] = [
    "The server is the clock: an item's showing and its answer's arrival are the server's times. An answer whose page claims more time on the item than the server saw (beyond 1 s and 2%) is marked inconsistent with the server's clock.",
    "An item looks assisted when, while it was shown, the worker copied 40 characters or more including text of the item, or pasted into the page, and the page was hidden or out of focus for 10 s or more in total.",
    "An item shows an assistance pattern when it looks assisted; or item text of any length was copied and the page was then hidden or out of focus for 5 s or more; or the answer came within 10 s of returning to the page after it was away for at least a third of the item's time: visible but out of focus (a window beside it) for 1 s or more, or hidden or out of focus for 10 s to 60 s (a chatbot's round trip, not a phone call).",
    "Low authenticity: assisted-looking items on at least 2 items (or 2% of the items with the page's record, if more); assistance patterns of one kind on more items than an honest worker shows but once in 3,000 (see the evidence rule); answers inconsistent with the server's clock on at least 2 items (or 2%); more than half of the answers without the page's record (the study page always sends it); strong machine agreement; strong shared errors; or machine agreement, shared errors or answers not sent by the study page together with any other signal.",
    "The evidence rule: a count of items counts only where an honest worker would show as many with a probability under 1 in 1,000 (a binomial tail over the items with the page's record), at these honest rates per item: item text copied then 5 s or more away, 2%; an answer right after a window beside the page, 15%; an answer right after 10-60 s away, 5%; 10 s or more away, 10%. The three kinds of pattern are judged each at 1 in 3,000, so that together they stay under 1 in 1,000. On 12 items that takes 4 items copied then away, 8 answers after a window beside the page, 5 after a round trip, 6 stretches away; on 40 items 6, 16, 9 and 12; on 200 items 13, 49, 23 and 35.",
    "Mixed authenticity: any one signal: an assisted-looking item; an answer inconsistent with the server's clock; answers not sent by the study page (more than 10% of the answers, at least 2); stretches away of 10 s or more on more items than an honest worker shows but once in 1,000 (see the evidence rule); half the timed test answers (skips aside) faster than the item's words at 1,000 words a minute (timed by the server); one label throughout at least 10 answered test items whose gold has more than one; machine agreement; shared errors.",
    "Shared errors (no system run needed): of the 5 or more test items a worker got wrong that another worker of the task answered, the other gave the same wrong answer so often that fewer than 1 task in 1,000 would show any such pair of independent workers (a binomial tail at the task's own median rate of repeating another's wrong answer, at least 25%, raised for a worker who errs more than the median, times the number of pairs); strong where that chance is under 1 in a billion. Named with the number of workers it shares with.",
    "Machine agreement: the worker agrees with a system's answers (mean S1) at least 0.15 more than with the other humans of the task (up to 20, spread evenly over its finished workers, on at least 10 shared test items each), and gave that system's wrong answer on at least half of the 5 or more items it got wrong.",
    "Strong machine agreement: on the 5 or more items a system got wrong, the worker gave its wrong answer on at least 75% of them, so many that fewer than 1 honest worker in 1,000 would repeat as many if each repeated one at the other humans' rate (the lower quartile of their rates, which copiers of the system cannot raise while they are fewer than three in four of the humans; taken as at least 0.2; a binomial tail), and agrees with the system more than with the humans.",
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

/// What the rules read of one worker: the page's record over their answers, the server's
/// clock, and the data's signals (each `None` or zero where it could not be computed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Evidence {
    /// Answers stored for the worker, and those that came without the page's record.
    pub answers: usize,
    pub unsent_answers: usize,
    /// Items whose answer came with the page's record.
    pub items_with_signals: usize,
    pub assisted_items: usize,
    pub pattern_items: usize,
    /// Items of each pattern kind (`Patterns`).
    pub lookup_items: usize,
    pub beside_items: usize,
    pub round_trip_items: usize,
    pub long_away_items: usize,
    /// Answers whose page times do not fit the server's interval for the item.
    pub clock_items: usize,
    /// Timed test answers (the server's clock) and those under the floor.
    pub timed_answers: usize,
    pub fast_answers: usize,
    /// The one label of a straight-lining worker.
    pub straight_line: Option<String>,
    /// The machine-agreement signal fired (see `MACHINE_GAP`), and its strong form.
    pub machine_signal: bool,
    pub machine_strong: bool,
    /// Workers of the task with whom this one shares wrong answers past chance
    /// (`report::shared_errors`), the strong form, and the strongest pair's counts: wrong
    /// items judged and those repeated.
    pub shared_with: usize,
    pub shared_strong: bool,
    pub shared_judged: usize,
    pub shared_repeated: usize,
}

impl Evidence {
    /// Adds one stored answer: the page's record if it came with one, and the server's
    /// interval for the item (`clock::server_ms`).
    pub fn add(&mut self, signals: Option<&ItemSignals>, server_ms: Option<i64>) {
        self.answers += 1;
        let Some(s) = signals else {
            self.unsent_answers += 1;
            return;
        };
        self.items_with_signals += 1;
        self.assisted_items += usize::from(assisted_item(s));
        let p = patterns(s);
        self.pattern_items += usize::from(p.any());
        self.lookup_items += usize::from(p.lookup);
        self.beside_items += usize::from(p.beside);
        self.round_trip_items += usize::from(p.round_trip);
        self.long_away_items += usize::from(s.away_ms >= LONG_AWAY_MS);
        self.clock_items += usize::from(server_ms.is_some_and(|ms| !clock::fits(s, ms)));
    }

    fn assisted_low(&self) -> bool {
        at_least(
            self.assisted_items,
            ASSISTED_ITEMS_MIN,
            ASSISTED_ITEMS_SHARE,
            self.items_with_signals,
        )
    }

    /// The pattern kinds past what an honest worker shows, each at a third of the bound.
    fn patterns_beyond_honest(&self) -> impl Iterator<Item = (usize, f64, &'static str)> + '_ {
        PATTERN_KINDS
            .into_iter()
            .map(|(count, rate, words)| (count(self), rate, words))
            .filter(|&(n, rate, _)| {
                beyond_honest(n, self.items_with_signals, rate, HONEST_BOUND / 3.0)
            })
    }

    fn pattern_low(&self) -> bool {
        self.patterns_beyond_honest().next().is_some()
    }

    fn clock_low(&self) -> bool {
        at_least(
            self.clock_items,
            ASSISTED_ITEMS_MIN,
            ASSISTED_ITEMS_SHARE,
            self.items_with_signals,
        )
    }

    fn unsent_over(&self, share: f64) -> bool {
        self.unsent_answers >= UNSENT_MIN
            && self.unsent_answers as f64 > share * self.answers as f64
    }

    fn unsent(&self) -> bool {
        self.unsent_over(UNSENT_SHARE)
    }

    fn unsent_low(&self) -> bool {
        self.unsent_over(UNSENT_MAJORITY)
    }

    fn often_away(&self) -> bool {
        beyond_honest(
            self.long_away_items,
            self.items_with_signals,
            HONEST_LONG_AWAY_RATE,
            HONEST_BOUND,
        )
    }

    fn too_fast(&self) -> bool {
        self.timed_answers > 0 && self.fast_answers as f64 >= FAST_SHARE * self.timed_answers as f64
    }

    /// The short name of each signal that fired (the benchmark's tallies).
    pub fn fired(&self) -> Vec<&'static str> {
        let all = [
            (self.clock_items > 0, "clock"),
            (self.unsent(), "not-sent-by-page"),
            (self.assisted_items > 0, "assisted-item"),
            (self.pattern_low(), "patterns"),
            (self.often_away(), "often-away"),
            (self.too_fast(), "too-fast"),
            (self.straight_line.is_some(), "one-label"),
            (self.machine_strong, "machine-strong"),
            (self.machine_signal && !self.machine_strong, "machine"),
            (self.shared_strong, "shared-errors-strong"),
            (self.shared_with > 0 && !self.shared_strong, "shared-errors"),
        ];
        all.into_iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| name)
            .collect()
    }

    /// Each signal that fired, in words.
    pub fn reasons(&self) -> Vec<String> {
        let of = self.items_with_signals;
        let mut out = Vec::new();
        if self.clock_items > 0 {
            out.push(format!(
                "{} of {of} answers inconsistent with the server's clock (the page claims more time on the item than the server saw)",
                self.clock_items
            ));
        }
        if self.unsent() {
            out.push(format!(
                "answers not sent by the study page: {} of {} came without the page's record",
                self.unsent_answers, self.answers
            ));
        }
        if self.assisted_items > 0 {
            out.push(format!(
                "{} of {of} items look assisted (the item copied or a paste with 10 s or more away)",
                self.assisted_items
            ));
        }
        for (n, rate, words) in self.patterns_beyond_honest() {
            out.push(format!(
                "assistance patterns on {n} of {of} items ({words}): more than an honest worker shows but once in 3,000 (at {:.0}% of the items)",
                100.0 * rate
            ));
        }
        if self.often_away() {
            out.push(format!(
                "away 10 s or more on {} of {of} items: more than an honest worker is but once in 1,000 (at {:.0}% of the items)",
                self.long_away_items,
                100.0 * HONEST_LONG_AWAY_RATE
            ));
        }
        if self.too_fast() {
            out.push(format!(
                "{} of {} test answers faster than reading the item at {READING_FLOOR_WPM} words a minute (server's clock)",
                self.fast_answers, self.timed_answers
            ));
        }
        if let Some(label) = &self.straight_line {
            out.push(format!("one label throughout: {label}"));
        }
        if self.machine_strong {
            out.push("repeats a system's errors far more often than the other humans (strong machine agreement)".into());
        } else if self.machine_signal {
            out.push(
                "agrees with a system far more than with the other humans and repeats its errors"
                    .into(),
            );
        }
        if self.shared_with > 0 {
            out.push(format!(
                "shares its wrong answers with {} worker{} far beyond chance{} (one of them gave the same answer on {} of {} wrong items)",
                self.shared_with,
                if self.shared_with == 1 { "" } else { "s" },
                if self.shared_strong { ", strongly" } else { "" },
                self.shared_repeated,
                self.shared_judged
            ));
        }
        out
    }

    /// The level the rules give.
    pub fn level(&self) -> Level {
        let machine = self.machine_signal || self.machine_strong;
        let shared = self.shared_with > 0;
        let others = usize::from(self.assisted_items > 0)
            + usize::from(self.clock_items > 0)
            + usize::from(self.pattern_low())
            + usize::from(self.often_away())
            + usize::from(self.too_fast())
            + usize::from(self.straight_line.is_some());
        let strong = self.assisted_low()
            || self.pattern_low()
            || self.clock_low()
            || self.unsent_low()
            || self.machine_strong
            || self.shared_strong;
        // Machine agreement, shared errors and answers from elsewhere make any other signal
        // conclusive.
        let answers_signals =
            usize::from(machine) + usize::from(shared) + usize::from(self.unsent());
        let joined = (answers_signals > 0 && others > 0) || answers_signals > 1;
        if strong || joined {
            Level::Low
        } else if others > 0 || answers_signals > 0 {
            Level::Mixed
        } else {
            Level::High
        }
    }
}

#[cfg(test)]
mod tests;
