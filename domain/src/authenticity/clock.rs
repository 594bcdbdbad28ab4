//! The server is the clock: an item's first showing and its answer's arrival are the server's
//! times, and the page's claimed time on the item must fit inside that interval.

use super::signals::ItemSignals;

/// What the page's clock may exceed the server's interval by: its resolution, a server clock
/// slewed by NTP, rounding (a second, and 2% of the interval).
pub const SLACK_MS: f64 = 1_000.0;
pub const SLACK_SHARE: f64 = 0.02;

/// The server's interval for one item in milliseconds: from its first showing (recorded before
/// any page could show it) to the arrival of its answer; `None` while unanswered.
pub fn server_ms(shown_at: Option<i64>, submitted_at: Option<i64>) -> Option<i64> {
    Some((submitted_at? - shown_at?).max(0))
}

/// Whether the page's claimed time on the item fits the server's interval. The page starts
/// its clock after the server showed the item and stops it before the answer arrives, so its
/// wall time (every other duration lies within it, `ItemSignals::check`) is never longer.
pub fn fits(s: &ItemSignals, server_ms: i64) -> bool {
    let server = server_ms.max(0) as f64;
    s.wall_ms as f64 <= server + SLACK_MS + SLACK_SHARE * server
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(wall_ms: u64) -> ItemSignals {
        ItemSignals {
            wall_ms,
            active_ms: wall_ms,
            ..ItemSignals::default()
        }
    }

    #[test]
    fn the_page_may_not_claim_more_time_than_the_server_saw() {
        // The page's time is a little shorter than the server's: it fits.
        assert!(fits(&claimed(12_000), 12_300));
        // Clock resolution and rate: a second and 2% of slack.
        assert!(fits(&claimed(13_240), 12_000));
        assert!(!fits(&claimed(13_300), 12_000));
        // A script claims 20 s on an answer that came 80 ms after the showing.
        assert!(!fits(&claimed(20_000), 80));
        assert_eq!(server_ms(Some(1_000), Some(1_080)), Some(80));
        assert_eq!(server_ms(Some(1_000), None), None);
        // A stored showing after the arrival (a clock step) counts as no time at all.
        assert_eq!(server_ms(Some(2_000), Some(1_000)), Some(0));
    }
}
