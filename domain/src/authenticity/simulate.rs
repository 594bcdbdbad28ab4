//! Honest and assisted work sessions drawn from stated timing distributions: the input of the
//! benchmark that measures the rules' false flags and detection (`clues-lab load
//! authenticity`, over the API) and of the seeded tests here (the rules alone).
//!
//! An honest worker, per item: reads for a log-normal time (median 4 s plus the item's words
//! at 230 words a minute, sigma 0.45); glances away with probability 0.10 (median 3 s, sigma
//! 0.7); is interrupted with probability 0.01 (median 60 s, sigma 0.8); copies a few words of
//! the item to look one up elsewhere with probability 0.015 (away a median 8 s, sigma 0.5);
//! copies item text without leaving with probability 0.01; pastes with probability 0.003 (0.02
//! into a free-text answer). Once per session, with probability 0.2, a phone call backgrounds
//! the page for 2-10 minutes. An assisted worker is honest on some items and, on a share of
//! them drawn uniformly from 0.3 to 1, takes the item to a chatbot: copies the whole item
//! (with probability 0.85; else retypes it), is away 15-40 s, then answers, pasting the reply
//! into a free-text answer.

use super::signals::ItemSignals;
use crate::rng::SplitMix64;

/// The shape of one item as the simulation needs it.
#[derive(Clone, Copy, Debug)]
pub struct ItemShape {
    pub words: u32,
    pub chars: u32,
    pub free_text: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    Honest,
    Assisted,
}

fn lognormal(rng: &mut SplitMix64, median_ms: f64, sigma: f64) -> u64 {
    (median_ms * (sigma * rng.normal()).exp()).round() as u64
}

fn uniform(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.unit()
}

/// One item's record as the page would send it.
#[derive(Default)]
struct Draft {
    s: ItemSignals,
    reading_ms: u64,
}

impl Draft {
    fn away(&mut self, ms: u64) {
        self.s.away_count += 1;
        self.s.away_ms += ms;
    }
    fn copy(&mut self, chars: u32, from_item: bool) {
        self.s.copy_count += 1;
        self.s.copy_chars += chars;
        self.s.copy_from_item += u32::from(from_item);
    }
    fn paste(&mut self, chars: u32) {
        self.s.paste_count += 1;
        self.s.paste_chars += chars;
    }
    fn finish(mut self, rng: &mut SplitMix64) -> ItemSignals {
        self.s.active_ms = self.reading_ms;
        self.s.wall_ms = self.reading_ms + self.s.away_ms;
        self.s.first_input_ms = Some((self.s.wall_ms as f64 * uniform(rng, 0.2, 0.9)) as u64);
        self.s
    }
}

fn honest_item(rng: &mut SplitMix64, item: &ItemShape) -> Draft {
    let median = 4_000.0 + f64::from(item.words) / 230.0 * 60_000.0;
    let mut d = Draft {
        reading_ms: lognormal(rng, median, 0.45),
        ..Draft::default()
    };
    if rng.unit() < 0.10 {
        d.away(lognormal(rng, 3_000.0, 0.7).min(120_000));
    }
    if rng.unit() < 0.01 {
        d.away(lognormal(rng, 60_000.0, 0.8));
    }
    if rng.unit() < 0.015 {
        d.copy(5 + rng.below(20) as u32, true);
        d.away(lognormal(rng, 8_000.0, 0.5));
    }
    if rng.unit() < 0.01 {
        d.copy(5 + rng.below(60) as u32, true);
    }
    if rng.unit() < if item.free_text { 0.02 } else { 0.003 } {
        d.paste(3 + rng.below(40) as u32);
    }
    d
}

fn assisted_item(rng: &mut SplitMix64, item: &ItemShape) -> Draft {
    let mut d = Draft {
        reading_ms: lognormal(rng, 3_000.0 + f64::from(item.words) / 460.0 * 60_000.0, 0.4),
        ..Draft::default()
    };
    if rng.unit() < 0.85 {
        d.copy(item.chars, true);
    }
    d.away(uniform(rng, 15_000.0, 40_000.0) as u64);
    if item.free_text {
        d.paste(5 + rng.below(60) as u32);
    }
    d
}

/// One worker's session, item by item (a client over the API meets its items one at a time).
pub struct Session {
    rng: SplitMix64,
    /// Share of items taken to a chatbot (0 for an honest worker).
    share: f64,
    /// The item a phone call backgrounds the page on, if any.
    call: Option<usize>,
    done: usize,
}

impl Session {
    /// A session of about `items` items.
    pub fn new(seed: u64, worker: Worker, items: usize) -> Self {
        let mut rng = SplitMix64(seed);
        let share = match worker {
            Worker::Honest => 0.0,
            Worker::Assisted => uniform(&mut rng, 0.3, 1.0),
        };
        let call = (rng.unit() < 0.2).then(|| rng.below(items.max(1)));
        Session {
            rng,
            share,
            call,
            done: 0,
        }
    }

    /// The signals of the next item.
    pub fn item(&mut self, item: &ItemShape) -> ItemSignals {
        let rng = &mut self.rng;
        let mut d = if rng.unit() < self.share {
            assisted_item(rng, item)
        } else {
            honest_item(rng, item)
        };
        if self.call == Some(self.done) {
            d.away(uniform(rng, 120_000.0, 600_000.0) as u64);
        }
        self.done += 1;
        d.finish(rng)
    }
}

/// One session's item signals, in the order of `items`.
pub fn session(seed: u64, worker: Worker, items: &[ItemShape]) -> Vec<ItemSignals> {
    let mut s = Session::new(seed, worker, items.len());
    items.iter().map(|i| s.item(i)).collect()
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

#[cfg(test)]
mod tests {
    use super::super::rules::{Evidence, Level};
    use super::*;

    /// Share of `n` sessions the rules give a low level.
    fn flagged(worker: Worker, n: usize, items: &[ItemShape], seed: u64) -> f64 {
        let low = (0..n as u64)
            .filter(|i| {
                let mut e = Evidence::default();
                for s in session(seed * 1_000_003 + i, worker, items) {
                    assert_eq!(s.check(), Ok(()));
                    e.add(&s);
                }
                e.level() == Level::Low
            })
            .count();
        low as f64 / n as f64
    }

    #[test]
    fn the_rules_meet_prolifics_figures_on_simulated_sessions() {
        for (items, seed) in [
            (items(30, 25, false), 1),
            (items(30, 150, false), 2),
            (items(100, 40, true), 3),
            (items(12, 120, false), 4),
        ] {
            let false_flags = flagged(Worker::Honest, 2_000, &items, seed);
            let detected = flagged(Worker::Assisted, 2_000, &items, seed + 100);
            assert!(false_flags <= 0.01, "{false_flags}");
            assert!(detected >= 0.95, "{detected}");
        }
    }

    #[test]
    fn sessions_are_seeded() {
        let items = items(10, 30, false);
        let a = session(7, Worker::Assisted, &items);
        let b = session(7, Worker::Assisted, &items);
        assert_eq!(a, b);
        assert!(a.iter().any(|s| s.away_ms >= 15_000));
    }
}
