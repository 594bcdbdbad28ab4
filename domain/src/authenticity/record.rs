//! The page's record of one item while it is shown: what the study page does on each event
//! (visibility, window focus, copy, paste, input), kept here without IO so that the browser and
//! the simulation of work sessions turn the same events into the same signals.

use super::signals::ItemSignals;

/// One item's record since its showing; times in milliseconds of the page's monotonic clock
/// (`performance.now()` in the browser, the simulated session's clock in the simulation).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    shown: f64,
    hidden: bool,
    blurred: bool,
    away_since: Option<f64>,
    hidden_since: Option<f64>,
    away_ms: f64,
    hidden_ms: f64,
    /// The first copy that held item text.
    copied_at: Option<f64>,
    away_after_copy_ms: f64,
    /// When the last stretch away ended.
    returned_at: Option<f64>,
    first_input: Option<f64>,
    counts: ItemSignals,
}

impl Recorder {
    /// A record that starts at `now`, the page hidden or not at that moment (a page opened in
    /// a background tab starts away).
    pub fn new(now: f64, hidden: bool) -> Self {
        let mut r = Recorder {
            shown: now,
            ..Recorder::default()
        };
        r.set(now, Some(hidden), None);
        r
    }

    /// When the record started (the item's showing on the page).
    pub fn shown(&self) -> f64 {
        self.shown
    }

    fn away(&self) -> bool {
        self.hidden || self.blurred
    }

    /// The page became hidden or visible (`visibilitychange`).
    pub fn visibility(&mut self, now: f64, hidden: bool) {
        self.set(now, Some(hidden), None);
    }

    /// The window lost or got the focus (the window's own `blur` and `focus`, not an input's).
    pub fn focus(&mut self, now: f64, focused: bool) {
        self.set(now, None, Some(!focused));
    }

    /// Applies a change of visibility or focus at `now`: a stretch away starts or ends (a tab
    /// switch fires blur, then visibilitychange: one stretch).
    fn set(&mut self, now: f64, hidden: Option<bool>, blurred: Option<bool>) {
        let (was_away, was_hidden) = (self.away(), self.hidden);
        self.hidden = hidden.unwrap_or(self.hidden);
        self.blurred = blurred.unwrap_or(self.blurred);
        match (was_hidden, self.hidden) {
            (false, true) => self.hidden_since = Some(now),
            (true, false) => {
                if let Some(since) = self.hidden_since.take() {
                    self.hidden_ms += (now - since).max(0.0);
                }
            }
            _ => {}
        }
        match (was_away, self.away()) {
            (false, true) => {
                self.counts.away_count = self.counts.away_count.saturating_add(1);
                self.away_since = Some(now);
            }
            (true, false) => {
                if let Some(since) = self.away_since.take() {
                    self.away_ms += (now - since).max(0.0);
                    self.away_after_copy_ms += self.after_copy(since, now);
                }
                self.returned_at = Some(now);
            }
            _ => {}
        }
    }

    /// The part of the stretch away from `since` to `now` after the first copy of item text.
    fn after_copy(&self, since: f64, now: f64) -> f64 {
        self.copied_at
            .map_or(0.0, |copied| (now - since.max(copied)).max(0.0))
    }

    /// A copy of `chars` characters, of item text or not.
    pub fn copy(&mut self, now: f64, chars: u32, from_item: bool) {
        let c = &mut self.counts;
        c.copy_count = c.copy_count.saturating_add(1);
        c.copy_chars = c.copy_chars.saturating_add(chars);
        if from_item {
            c.copy_from_item = c.copy_from_item.saturating_add(1);
            self.copied_at.get_or_insert(now);
        }
    }

    /// A paste of `chars` characters into an input of the page (only its length is read).
    pub fn paste(&mut self, chars: u32) {
        let c = &mut self.counts;
        c.paste_count = c.paste_count.saturating_add(1);
        c.paste_chars = c.paste_chars.saturating_add(chars);
    }

    /// A key, pointer or touch on the page.
    pub fn input(&mut self, now: f64) {
        self.first_input.get_or_insert(now);
    }

    /// The signals as of `now`, each duration within the wall time.
    pub fn snapshot(&self, now: f64) -> ItemSignals {
        let wall = (now - self.shown).max(0.0);
        let open = self.away_since.map_or(0.0, |since| (now - since).max(0.0));
        let away = (self.away_ms + open).min(wall);
        let hidden_open = self.hidden_since.map_or(0.0, |s| (now - s).max(0.0));
        let hidden = (self.hidden_ms + hidden_open).min(away);
        let after_open = self.away_since.map_or(0.0, |s| self.after_copy(s, now));
        let after_copy = (self.away_after_copy_ms + after_open).min(away);
        let since_return = match (self.away_since, self.returned_at) {
            (Some(_), _) => Some(0.0),
            (None, Some(back)) => Some((now - back).max(0.0).min(wall)),
            (None, None) => None,
        };
        let ms = |x: f64| x.round() as u64;
        ItemSignals {
            away_ms: ms(away),
            wall_ms: ms(wall),
            active_ms: ms((wall - away).max(0.0)),
            first_input_ms: self
                .first_input
                .map(|t| ms((t - self.shown).max(0.0).min(wall))),
            hidden_ms: Some(ms(hidden)),
            away_after_copy_ms: Some(ms(after_copy)),
            since_return_ms: since_return.filter(|_| self.counts.away_count > 0).map(ms),
            ..self.counts
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_away_are_counted_once_and_bounded_by_the_wall_time() {
        let mut r = Recorder::new(1_000.0, false);
        // Switching tabs fires blur, then visibilitychange: one stretch.
        r.focus(2_000.0, false);
        r.visibility(2_010.0, true);
        r.visibility(20_000.0, false);
        r.focus(20_005.0, true);
        let s = r.snapshot(25_000.0);
        assert_eq!(
            (s.away_count, s.away_ms, s.wall_ms, s.active_ms),
            (1, 18_005, 24_000, 5_995)
        );
        assert_eq!(
            (s.hidden_ms, s.since_return_ms),
            (Some(17_990), Some(4_995))
        );
        assert_eq!(s.check(), Ok(()));
        // Submitted while away (a click from another window): the open stretch counts.
        r.focus(26_000.0, false);
        let s = r.snapshot(27_000.0);
        assert_eq!((s.away_count, s.away_ms), (2, 19_005));
        assert_eq!((s.hidden_ms, s.since_return_ms), (Some(17_990), Some(0)));
        assert_eq!(s.check(), Ok(()));
    }

    #[test]
    fn a_window_beside_the_page_is_away_but_not_hidden() {
        let mut r = Recorder::new(0.0, false);
        r.focus(3_000.0, false);
        r.focus(9_000.0, true);
        let s = r.snapshot(11_000.0);
        assert_eq!(
            (s.away_ms, s.hidden_ms, s.since_return_ms),
            (6_000, Some(0), Some(2_000))
        );
        assert_eq!(s.first_input_ms, None);
    }

    #[test]
    fn time_away_after_a_copy_of_the_item_is_kept_apart() {
        let mut r = Recorder::new(0.0, false);
        // A glance before any copy, a copy of a word not in the item, then one of item text.
        r.visibility(1_000.0, true);
        r.visibility(2_000.0, false);
        r.copy(3_000.0, 7, false);
        r.input(3_000.0);
        r.copy(4_000.0, 12, true);
        r.visibility(5_000.0, true);
        r.visibility(12_000.0, false);
        let s = r.snapshot(13_000.0);
        assert_eq!((s.copy_count, s.copy_chars, s.copy_from_item), (2, 19, 1));
        assert_eq!((s.away_ms, s.away_after_copy_ms), (8_000, Some(7_000)));
        assert_eq!(s.first_input_ms, Some(3_000));
        // Still away at submission: the open stretch after the copy counts too.
        r.visibility(14_000.0, true);
        assert_eq!(r.snapshot(15_000.0).away_after_copy_ms, Some(8_000));
    }

    #[test]
    fn a_page_opened_hidden_starts_away() {
        let mut r = Recorder::new(0.0, true);
        r.visibility(4_000.0, false);
        let s = r.snapshot(5_000.0);
        assert_eq!(
            (s.away_count, s.away_ms, s.hidden_ms),
            (1, 4_000, Some(4_000))
        );
        assert_eq!(s.since_return_ms, Some(1_000));
    }
}
