//! What the worker's page records about one item while it is shown, sent with the answer:
//! counts and durations only (never what was copied, pasted or shown in another tab).

use serde::{Deserialize, Serialize};

/// The longest an item can have been shown, as a check on what a client sends: a week.
pub const MAX_WALL_MS: u64 = 7 * 24 * 3600 * 1000;
/// The most events of one kind one item can record.
pub const MAX_EVENTS: u32 = 100_000;
/// The most characters copied or pasted in one item that are counted.
pub const MAX_CHARS: u32 = 100_000_000;

/// One item's behavioural signals, from its showing to its submission (milliseconds of the
/// page's monotonic clock). Missing on answers from pages that did not send them.
/// Fields a page sends beyond these are not read, so nothing else can be stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemSignals {
    /// Times the page was hidden (`visibilitychange`) or lost focus (`blur`) while the item was
    /// shown, counted once per stretch away, and the stretches' total length.
    pub away_count: u32,
    pub away_ms: u64,
    /// Copy events, the characters they copied, and how many of them copied text that is part
    /// of the item (its context or question).
    pub copy_count: u32,
    pub copy_chars: u32,
    pub copy_from_item: u32,
    /// Paste events into any input of the page, and their characters.
    pub paste_count: u32,
    pub paste_chars: u32,
    /// From the showing to the first key, pointer or touch on the page (none before submit:
    /// absent).
    pub first_input_ms: Option<u64>,
    /// Time the page was visible and focused, and the whole time from showing to submission.
    pub active_ms: u64,
    pub wall_ms: u64,
    /// Of `away_ms`, the time the page was hidden (another tab or app, the screen off); the
    /// rest it stayed visible without the focus (a window beside it had it). Absent from
    /// pages older than this field, which did not tell the two apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_ms: Option<u64>,
    /// Of `away_ms`, the time away after the first copy that held item text (0: no such copy,
    /// or no time away after it). Absent from older pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub away_after_copy_ms: Option<u64>,
    /// From the end of the last stretch away to the submission (0: submitted while away);
    /// absent when the page never lost the worker while the item was shown, and from older
    /// pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_return_ms: Option<u64>,
}

impl ItemSignals {
    /// The checks a stored record passes: each duration within the item's wall time, copies
    /// from the item among the copies, and numbers a page can produce. Each problem is a
    /// sentence that names it.
    pub fn check(&self) -> Result<(), String> {
        let bad = |what: &str| Err(format!("the answer's signals are not consistent: {what}"));
        if self.wall_ms > MAX_WALL_MS {
            return bad("an item cannot have been shown for more than a week");
        }
        // One millisecond of rounding per stretch is allowed.
        let slack = u64::from(self.away_count.min(MAX_EVENTS)) + 1;
        if self.away_ms > self.wall_ms + slack {
            return bad("the time away is longer than the item was shown");
        }
        if self.active_ms > self.wall_ms + slack {
            return bad("the active time is longer than the item was shown");
        }
        if self.first_input_ms.is_some_and(|f| f > self.wall_ms + 1) {
            return bad("the first input came after the submission");
        }
        if self.copy_from_item > self.copy_count {
            return bad("more copies from the item than copies");
        }
        if self.away_ms > 0 && self.away_count == 0 {
            return bad("time away without a stretch away");
        }
        if self.hidden_ms.is_some_and(|h| h > self.away_ms + slack) {
            return bad("the time hidden is longer than the time away");
        }
        if let Some(after) = self.away_after_copy_ms {
            if after > self.away_ms + slack {
                return bad("the time away after a copy is longer than the time away");
            }
            if after > 0 && self.copy_from_item == 0 {
                return bad("time away after a copy of the item without such a copy");
            }
        }
        if let Some(back) = self.since_return_ms {
            if self.away_count == 0 {
                return bad("a return to the page without a stretch away");
            }
            if back > self.wall_ms + 1 {
                return bad("the return to the page came before the item was shown");
            }
        }
        let counts = [self.away_count, self.copy_count, self.paste_count];
        if counts.iter().any(|&c| c > MAX_EVENTS) {
            return bad("more events than a page records on one item");
        }
        if self.copy_chars > MAX_CHARS || self.paste_chars > MAX_CHARS {
            return bad("more characters than a page records on one item");
        }
        Ok(())
    }
}

/// Whitespace runs as one space, ends trimmed: copied text and the item compared as a reader
/// sees them (a selection across a line break copies a newline).
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `copied` is part of the item: of one of its texts (context parts, question), at
/// least 3 characters once whitespace is squeezed. The page calls this on each copy and keeps
/// only the answer.
pub fn copied_from_item(copied: &str, texts: &[&str]) -> bool {
    let c = squeeze(copied);
    c.chars().count() >= 3 && texts.iter().any(|t| squeeze(t).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> ItemSignals {
        ItemSignals {
            away_count: 2,
            away_ms: 4_000,
            copy_count: 1,
            copy_chars: 20,
            copy_from_item: 1,
            paste_count: 0,
            paste_chars: 0,
            first_input_ms: Some(1_500),
            active_ms: 16_000,
            wall_ms: 20_000,
            hidden_ms: Some(3_000),
            away_after_copy_ms: Some(1_000),
            since_return_ms: Some(6_000),
        }
    }

    #[test]
    fn consistent_signals_pass_and_each_inconsistency_is_named() {
        assert_eq!(ok().check(), Ok(()));
        assert_eq!(ItemSignals::default().check(), Ok(()));
        let cases: [(ItemSignals, &str); 11] = [
            (
                ItemSignals {
                    away_ms: 30_000,
                    ..ok()
                },
                "time away",
            ),
            (
                ItemSignals {
                    active_ms: 25_000,
                    ..ok()
                },
                "active time",
            ),
            (
                ItemSignals {
                    first_input_ms: Some(21_000),
                    ..ok()
                },
                "first input",
            ),
            (
                ItemSignals {
                    copy_from_item: 2,
                    ..ok()
                },
                "copies from the item",
            ),
            (
                ItemSignals {
                    away_count: 0,
                    ..ok()
                },
                "without a stretch",
            ),
            (
                ItemSignals {
                    wall_ms: MAX_WALL_MS + 1,
                    ..ok()
                },
                "a week",
            ),
            (
                ItemSignals {
                    hidden_ms: Some(5_000),
                    ..ok()
                },
                "time hidden",
            ),
            (
                ItemSignals {
                    away_after_copy_ms: Some(5_000),
                    ..ok()
                },
                "after a copy is longer",
            ),
            (
                ItemSignals {
                    copy_from_item: 0,
                    ..ok()
                },
                "without such a copy",
            ),
            (
                ItemSignals {
                    away_count: 0,
                    away_ms: 0,
                    hidden_ms: Some(0),
                    away_after_copy_ms: Some(0),
                    ..ok()
                },
                "return to the page without",
            ),
            (
                ItemSignals {
                    since_return_ms: Some(21_000),
                    ..ok()
                },
                "before the item was shown",
            ),
        ];
        for (s, says) in cases {
            let e = s.check().unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn records_of_older_pages_still_read() {
        let s: ItemSignals = serde_json::from_str(
            r#"{"away_count":1,"away_ms":900,"copy_count":0,"copy_chars":0,"copy_from_item":0,"paste_count":0,"paste_chars":0,"first_input_ms":null,"active_ms":100,"wall_ms":1000}"#,
        )
        .unwrap();
        assert_eq!((s.hidden_ms, s.since_return_ms), (None, None));
        assert_eq!(s.check(), Ok(()));
    }

    #[test]
    fn fields_beyond_the_signals_are_not_kept() {
        let s: ItemSignals = serde_json::from_str(
            r#"{"away_count":0,"away_ms":0,"copy_count":1,"copy_chars":4,"copy_from_item":0,"paste_count":0,"paste_chars":0,"first_input_ms":null,"active_ms":0,"wall_ms":0,"clipboard":"secret"}"#,
        )
        .unwrap();
        assert!(!serde_json::to_string(&s).unwrap().contains("secret"));
    }

    #[test]
    fn copies_are_matched_against_the_item_as_read() {
        let texts = [
            "The film was  a\ndelight from start to end.",
            "positive or negative?",
        ];
        assert!(copied_from_item("a delight from", &texts));
        assert!(copied_from_item("  positive or negative? ", &texts));
        assert!(!copied_from_item("a masterpiece", &texts));
        // Too short to say where it came from.
        assert!(!copied_from_item("a", &texts));
    }
}
