//! The rules of one item (assisted-looking, and its kinds of assistance pattern) and of counts
//! of items: the evidence rule (`beyond_honest`) and the old floor with a share (`at_least`).

use super::{
    Evidence, AWAY_SHARE, BESIDE_MS, COPY_AWAY_MS, HONEST_BESIDE_RATE, HONEST_LOOKUP_RATE,
    HONEST_ROUND_TRIP_RATE, ITEM_COPY_CHARS, LONG_AWAY_MS, RETURN_MS, ROUND_TRIP_MS,
};
use crate::authenticity::signals::ItemSignals;
use crate::stats::dist::binomial_tail;

/// Whether one item's signals look assisted (the item carried elsewhere and a long time away).
pub fn assisted_item(s: &ItemSignals) -> bool {
    let carried = s.copy_from_item > 0 && s.copy_chars >= ITEM_COPY_CHARS;
    (carried || s.paste_count > 0) && s.away_ms >= LONG_AWAY_MS
}

/// The kinds of assistance pattern one item shows (it may show more than one): item text
/// carried elsewhere (an assisted-looking item, or item text copied then time away); an answer
/// soon after returning from a window beside the page; or from a round trip of 10-60 s away.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Patterns {
    pub lookup: bool,
    pub beside: bool,
    pub round_trip: bool,
}

impl Patterns {
    /// Whether the item shows any of them.
    pub fn any(self) -> bool {
        self.lookup || self.beside || self.round_trip
    }
}

/// The assistance patterns of one item.
pub fn patterns(s: &ItemSignals) -> Patterns {
    let copy_then_away = s.copy_from_item > 0 && s.away_after_copy_ms.unwrap_or(0) >= COPY_AWAY_MS;
    let on_return = s.since_return_ms.is_some_and(|r| r <= RETURN_MS)
        && s.away_ms as f64 >= AWAY_SHARE * s.wall_ms as f64;
    let beside = s
        .hidden_ms
        .is_some_and(|h| s.away_ms.saturating_sub(h) >= BESIDE_MS);
    Patterns {
        lookup: assisted_item(s) || copy_then_away,
        beside: on_return && beside,
        round_trip: on_return && (LONG_AWAY_MS..=ROUND_TRIP_MS).contains(&s.away_ms),
    }
}

/// Whether one item shows any assistance pattern (`patterns`).
pub fn pattern_item(s: &ItemSignals) -> bool {
    patterns(s).any()
}

/// Whether `count` items of `of` are more than an honest worker shows at `rate` an item, but
/// for a probability under `bound` (a binomial tail).
pub(super) fn beyond_honest(count: usize, of: usize, rate: f64, bound: f64) -> bool {
    count > 0 && binomial_tail(count as u64, of as u64, rate) < bound
}

/// The least count of `of` items that `beyond_honest` holds for at `rate` and `bound` (what the
/// docs' table and the report's note print); `None` when no count is enough.
pub fn least_beyond_honest(of: usize, rate: f64, bound: f64) -> Option<usize> {
    (1..=of).find(|&n| beyond_honest(n, of, rate, bound))
}

/// A pattern kind: its count in `Evidence`, its honest rate and its words.
type PatternKind = (fn(&Evidence) -> usize, f64, &'static str);

/// The pattern kinds.
pub(super) const PATTERN_KINDS: [PatternKind; 3] = [
    (
        |e| e.lookup_items,
        HONEST_LOOKUP_RATE,
        "item text copied then time away",
    ),
    (
        |e| e.beside_items,
        HONEST_BESIDE_RATE,
        "answers right after a window beside the page",
    ),
    (
        |e| e.round_trip_items,
        HONEST_ROUND_TRIP_RATE,
        "answers right after 10-60 s away",
    ),
];

/// At least `min` items and `share` of `of`: a worker-level count that one event never reaches.
pub(super) fn at_least(n: usize, min: usize, share: f64, of: usize) -> bool {
    n >= min.max((share * of as f64).ceil() as usize)
}
