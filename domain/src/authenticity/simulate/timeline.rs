//! One simulated item as the page lives it: reading time with acts placed in it (inputs,
//! stretches away, copies, pastes), played in order through the page's own `Recorder`, so a
//! simulated session's signals are what the study page would send for the same events.

use crate::authenticity::record::Recorder;
use crate::authenticity::signals::ItemSignals;

/// How the worker leaves the page: another tab or app hides it; a window beside it takes the
/// focus while the page stays visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leave {
    Hidden,
    Beside,
}

/// Something the worker does while the item is shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    Input,
    Away(f64, Leave),
    Copy(u32, bool),
    Paste(u32),
}

/// An item's plan: `reading` ms on the page, and acts at points of that reading time (a
/// stretch away adds its own time). Acts at the same point happen in the order added.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub reading: f64,
    acts: Vec<(f64, Act)>,
}

impl Plan {
    pub fn new(reading: f64) -> Self {
        Plan {
            reading: reading.max(0.0),
            acts: Vec::new(),
        }
    }

    /// `act` at `share` (0 to 1) of the reading time.
    pub fn at(&mut self, share: f64, act: Act) -> &mut Self {
        self.acts.push((share.clamp(0.0, 1.0) * self.reading, act));
        self
    }

    /// `act` `ms` before the end of the reading time (an answer that soon after it).
    pub fn before_end(&mut self, ms: f64, act: Act) -> &mut Self {
        self.acts.push(((self.reading - ms).max(0.0), act));
        self
    }

    /// Plays the plan through the page's recorder; the signals at the submission.
    pub fn play(mut self) -> ItemSignals {
        self.acts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut r = Recorder::new(0.0, false);
        let (mut t, mut read) = (0.0, 0.0);
        for (at, act) in self.acts {
            t += at - read;
            read = at;
            match act {
                Act::Input => r.input(t),
                Act::Copy(chars, from_item) => r.copy(t, chars, from_item),
                Act::Paste(chars) => {
                    r.input(t);
                    r.paste(chars);
                }
                Act::Away(ms, how) => {
                    // A tab switch fires blur, then visibilitychange; coming back, the reverse.
                    r.focus(t, false);
                    if how == Leave::Hidden {
                        r.visibility(t, true);
                    }
                    t += ms.max(0.0);
                    if how == Leave::Hidden {
                        r.visibility(t, false);
                    }
                    r.focus(t, true);
                }
            }
        }
        t += self.reading - read;
        // The click on Submit.
        r.input(t);
        r.snapshot(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acts_play_in_the_order_of_the_reading_time() {
        let mut p = Plan::new(10_000.0);
        p.at(0.5, Act::Copy(12, true))
            .at(0.5, Act::Away(6_000.0, Leave::Hidden))
            .at(0.2, Act::Input)
            .before_end(1_000.0, Act::Away(3_000.0, Leave::Beside));
        let s = p.play();
        assert_eq!((s.wall_ms, s.away_ms, s.away_count), (19_000, 9_000, 2));
        assert_eq!(s.hidden_ms, Some(6_000));
        assert_eq!(s.away_after_copy_ms, Some(9_000));
        assert_eq!(s.since_return_ms, Some(1_000));
        assert_eq!(s.first_input_ms, Some(2_000));
        assert_eq!(s.check(), Ok(()));
    }
}
