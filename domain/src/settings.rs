//! The allowed range of each number a study is configured with, and the message that names the
//! field and its range: one rule for the server's check, the admin form and the command line.

/// One numeric setting: the name people see (the admin form's label), its range and unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    pub field: &'static str,
    pub min: f64,
    pub max: f64,
    /// Appended to the range ("seconds"); empty for plain counts.
    pub unit: &'static str,
    /// Whole numbers only.
    pub whole: bool,
    /// At most this many decimals (a finer value would be one the rules cannot tell apart).
    pub decimals: Option<u32>,
    /// Why the range is what it is, where that helps (shown after it).
    pub why: &'static str,
}

/// k of a scenario: 0 (zero-shot) up to any training-set size a task could have.
pub const SHOTS: Setting = Setting {
    field: "Scenarios",
    min: 0.0,
    max: 10_000.0,
    unit: "shots",
    whole: true,
    decimals: None,
    why: "",
};

/// Up to a million: load runs fill one scenario with that many synthetic workers.
pub const ANNOTATORS: Setting = Setting {
    field: "Annotators per scenario",
    min: 1.0,
    max: 1_000_000.0,
    unit: "",
    whole: true,
    decimals: None,
    why: "each scenario needs at least one annotator",
};

/// The hourly rate as the admin form shows it (USD; stored in cents).
pub const HOURLY_RATE: Setting = Setting {
    field: "Hourly rate",
    min: 0.0,
    max: 1_000.0,
    unit: "USD",
    whole: false,
    decimals: None,
    why: "",
};

pub const FILTER_MARGIN: Setting = Setting {
    field: "Training filter margin",
    min: 0.0,
    max: 1.0,
    unit: "",
    whole: false,
    // The filter counts scores within 1e-9 as equal (`s1::score_above`): a margin such as
    // 0.1999999995 would sit inside that tolerance of 0.2.
    decimals: Some(6),
    why: "S1 lies between 0 and 1; the filter counts scores within 1e-9 as equal",
};

/// The level of the analysis plan's tests.
pub const ALPHA: Setting = Setting {
    field: "Analysis plan: level (alpha)",
    min: 0.0001,
    max: 0.5,
    unit: "",
    whole: false,
    decimals: Some(4),
    why: "a test's level lies between 0 and 0.5",
};

/// Seconds without activity before a place is released (empty in the form: never).
pub const TIME_OUT: Setting = Setting {
    field: "Time-out",
    min: 60.0,
    max: 604_800.0,
    unit: "seconds",
    whole: true,
    decimals: None,
    why: "one minute to seven days; leave it empty to never release a place",
};

/// The longest completion code; codes are letters, digits, `-` and `_` (what Prolific and
/// MTurk workers type or paste back, and safe in a URL).
pub const CODE_MAX: usize = 64;

fn number(v: f64) -> String {
    // Whole values without a fraction; others as written (shortest round trip).
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

impl Setting {
    /// "a whole number from 1 to 1000000 (each scenario needs at least one annotator)".
    pub fn range(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let kind = if self.whole { "a whole number " } else { "" };
        let decimals = self
            .decimals
            .map_or(String::new(), |d| format!(" with at most {d} decimals"));
        let why = if self.why.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.why)
        };
        format!(
            "{kind}from {} to {}{unit}{decimals}{why}",
            number(self.min),
            number(self.max)
        )
    }

    /// The message for a value outside the range, as it was given.
    pub fn refusal(&self, given: &str) -> String {
        format!(
            "{}: {given} is not allowed; it must be {}",
            self.field,
            self.range()
        )
    }

    /// Checks a value.
    pub fn check(&self, v: f64) -> Result<(), String> {
        let whole = !self.whole || v.fract() == 0.0;
        let fine = self.decimals.is_none_or(|d| {
            let scaled = v * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        });
        if v.is_finite() && whole && fine && v >= self.min && v <= self.max {
            Ok(())
        } else {
            Err(self.refusal(&number(v)))
        }
    }

    /// Reads a value as typed (the admin form, the command line): text that is no number at
    /// all is named as such, with the range.
    pub fn parse(&self, text: &str) -> Result<f64, String> {
        let t = text.trim();
        let v: f64 = t.parse().map_err(|_| {
            format!(
                "{}: {t:?} is not a number; it must be {}",
                self.field,
                self.range()
            )
        })?;
        self.check(v).map(|()| v)
    }

    /// `parse` for a whole-number setting.
    pub fn parse_whole(&self, text: &str) -> Result<u32, String> {
        self.parse(text).map(|v| v as u32)
    }
}

/// Checks a completion code: empty (one is generated), else 1 to `CODE_MAX` letters, digits,
/// `-` and `_`.
pub fn check_completion_code(code: &str) -> Result<(), String> {
    let ok = code.len() <= CODE_MAX
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "Completion code: {code:?} is not allowed; it must be at most {CODE_MAX} letters, digits, - and _ (empty: one is generated)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_setting_names_its_field_and_range() {
        assert_eq!(
            FILTER_MARGIN.check(7.0).unwrap_err(),
            "Training filter margin: 7 is not allowed; it must be from 0 to 1 with at most 6 decimals (S1 lies between 0 and 1; the filter counts scores within 1e-9 as equal)"
        );
        assert!(FILTER_MARGIN.check(0.2).is_ok() && FILTER_MARGIN.check(f64::NAN).is_err());
        // Finer than the filter's tie tolerance can tell from 0.2: refused, and said why.
        let fine = FILTER_MARGIN.parse("0.1999999995").unwrap_err();
        assert!(
            fine.contains("0.1999999995 is not allowed") && fine.contains("at most 6 decimals"),
            "{fine}"
        );
        assert!(FILTER_MARGIN.check(0.123456).is_ok() && FILTER_MARGIN.check(0.1234567).is_err());
        assert_eq!(
            TIME_OUT.parse("-60").unwrap_err(),
            "Time-out: -60 is not allowed; it must be a whole number from 60 to 604800 seconds (one minute to seven days; leave it empty to never release a place)"
        );
        assert!(TIME_OUT.parse("90.5").is_err());
        assert_eq!(TIME_OUT.parse_whole(" 1800 ").unwrap(), 1800);
        assert_eq!(
            ANNOTATORS.parse("three").unwrap_err(),
            "Annotators per scenario: \"three\" is not a number; it must be a whole number from 1 to 1000000 (each scenario needs at least one annotator)"
        );
        assert!(ANNOTATORS
            .check(0.0)
            .unwrap_err()
            .contains("at least one annotator"));
        assert!(HOURLY_RATE.check(12.5).is_ok() && HOURLY_RATE.check(-1.0).is_err());
        assert!(SHOTS.check(10.0).is_ok() && SHOTS.check(20_000.0).is_err());
    }

    #[test]
    fn completion_codes_are_plain() {
        for ok in ["", "C0DE-1", "ten_shot", &"X".repeat(CODE_MAX)] {
            assert!(check_completion_code(ok).is_ok(), "{ok}");
        }
        for bad in ["my code <b>", "a b", "é", &"X".repeat(CODE_MAX + 1)] {
            let e = check_completion_code(bad).unwrap_err();
            assert!(
                e.starts_with("Completion code: ") && e.contains("letters, digits"),
                "{e}"
            );
        }
    }
}
