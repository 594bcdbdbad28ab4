//! What a payment costs on each platform: the worker's amount and the platform's fees on it,
//! in the account's minor units (cents, pence). Pure integer arithmetic, half up per payment,
//! as the platforms charge it (each reward and each bonus is its own payment).
//!
//! - Prolific: a service fee on every reward and bonus (33.3% for academic accounts, 42.8% for
//!   corporate ones, per prolific.com/pricing read 2026-09-20) and VAT on that fee where the
//!   account pays it; the operator states both ([`FeeRates`]). The study's own cost calculator
//!   (`POST /api/v1/study-cost-calculator/`) is asked too where the account works, and shown
//!   beside this.
//! - MTurk: 20% on every reward and bonus, 20% more on the reward of a HIT with 10 or more
//!   assignments, at least one cent per payment (mturk.com/pricing, read 2026-10-07).

use super::Platform;
use serde::{Deserialize, Serialize};

/// The percentages a Prolific account pays, in basis points (1/100 of a percent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeeRates {
    /// Prolific's service fee on rewards and bonuses (3330: 33.3%, academic).
    pub prolific_fee_bp: u32,
    /// VAT on Prolific's fee (2000: 20%, a UK account without a VAT number; 0 elsewhere).
    pub prolific_vat_bp: u32,
}

impl Default for FeeRates {
    /// An academic UK account: the higher of the figures a lab usually pays.
    fn default() -> Self {
        FeeRates {
            prolific_fee_bp: 3330,
            prolific_vat_bp: 2000,
        }
    }
}

/// MTurk's commission on rewards and bonuses, and its extra on the reward of a large HIT.
const MTURK_FEE_BP: u32 = 2000;
const MTURK_LARGE_HIT_BP: u32 = 2000;
/// The assignments from which MTurk charges its extra fee.
pub const MTURK_LARGE_HIT: u32 = 10;

/// `amount` times `bp` basis points, half up.
fn share(amount: i64, bp: u32) -> i64 {
    (amount * i64::from(bp) + 5_000).div_euclid(10_000)
}

/// What one payment of a kind costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Payment {
    /// A place's reward, on a publication of `places` places (MTurk's fee depends on it).
    Reward { places: u32 },
    /// A bonus.
    Bonus,
}

/// One payment of `amount` with its fees, in minor units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    /// What the workers get.
    pub paid_cents: i64,
    /// What the platform takes on it (its fee, and VAT on the fee where charged).
    pub fees_cents: i64,
}

impl Cost {
    pub fn total_cents(self) -> i64 {
        self.paid_cents + self.fees_cents
    }

    /// `n` of the same payment.
    pub fn times(self, n: u32) -> Cost {
        Cost {
            paid_cents: self.paid_cents * i64::from(n),
            fees_cents: self.fees_cents * i64::from(n),
        }
    }

    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            paid_cents: self.paid_cents + other.paid_cents,
            fees_cents: self.fees_cents + other.fees_cents,
        }
    }
}

impl Platform {
    /// One payment of `amount` (minor units) with the platform's fees on it. Nothing is paid
    /// for nothing: a zero amount costs nothing.
    pub fn cost(self, payment: Payment, amount: i64, rates: FeeRates) -> Cost {
        if amount <= 0 {
            return Cost::default();
        }
        let fees = match self {
            Platform::Prolific => {
                let fee = share(amount, rates.prolific_fee_bp);
                fee + share(fee, rates.prolific_vat_bp)
            }
            Platform::Mturk => {
                let extra = match payment {
                    Payment::Reward { places } if places >= MTURK_LARGE_HIT => MTURK_LARGE_HIT_BP,
                    Payment::Reward { .. } | Payment::Bonus => 0,
                };
                share(amount, MTURK_FEE_BP + extra).max(1)
            }
        };
        Cost {
            paid_cents: amount,
            fees_cents: fees,
        }
    }

    /// The fees in words, for the cost preview.
    pub fn fee_words(self, places: u32, rates: FeeRates) -> String {
        let pct = |bp: u32| format!("{}.{}%", bp / 100, (bp % 100) / 10);
        match self {
            Platform::Prolific => format!(
                "Prolific's service fee of {} on rewards and bonuses, with VAT of {} on the fee (the operator's figures; Prolific's own calculator is shown beside them where the account works)",
                pct(rates.prolific_fee_bp),
                pct(rates.prolific_vat_bp)
            ),
            Platform::Mturk if places >= MTURK_LARGE_HIT => format!(
                "MTurk's 20% on rewards and bonuses, and 20% more on the reward of a HIT with {MTURK_LARGE_HIT} or more assignments (this one has {places}); at least 1 cent each"
            ),
            Platform::Mturk => format!(
                "MTurk's 20% on rewards and bonuses, at least 1 cent each (a HIT of fewer than {MTURK_LARGE_HIT} assignments can never be extended to {MTURK_LARGE_HIT} or more)"
            ),
        }
    }
}

/// An amount in major units as a person writes it (`12.50`, `12`) in minor units.
pub fn parse_amount(what: &str, s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    let ok =
        digits(whole) && (frac.is_empty() || digits(frac)) && frac.len() <= 2 && whole.len() <= 9;
    if !ok {
        return Err(format!("{what}: {s:?} is not an amount such as 12.50"));
    }
    let whole: i64 = whole
        .parse()
        .map_err(|_| format!("{what}: {s:?} is too large"))?;
    let frac: i64 = format!("{frac:0<2}").parse().unwrap_or(0);
    Ok(whole * 100 + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_minor_units() {
        assert_eq!(parse_amount("budget", "12.5"), Ok(1250));
        assert_eq!(parse_amount("budget", " 7 "), Ok(700));
        assert_eq!(parse_amount("budget", "0.07"), Ok(7));
        for bad in ["", "-1", "1.234", "1,50", "abc", "1e3", "12345678901"] {
            assert!(parse_amount("budget", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn prolific_charges_its_fee_and_vat_on_the_fee_half_up() {
        let r = FeeRates::default();
        // 150 pence: fee 49.95 -> 50, VAT 10.
        let c = Platform::Prolific.cost(Payment::Bonus, 150, r);
        assert_eq!(
            (c.paid_cents, c.fees_cents, c.total_cents()),
            (150, 60, 210)
        );
        let corporate = FeeRates {
            prolific_fee_bp: 4280,
            prolific_vat_bp: 0,
        };
        let c = Platform::Prolific.cost(Payment::Reward { places: 12 }, 1000, corporate);
        assert_eq!(c.fees_cents, 428);
        assert_eq!(
            Platform::Prolific.cost(Payment::Bonus, 0, r),
            Cost::default()
        );
    }

    #[test]
    fn mturk_charges_more_on_large_hits_rewards_and_at_least_a_cent() {
        let r = FeeRates::default();
        let small = Platform::Mturk.cost(Payment::Reward { places: 9 }, 300, r);
        let large = Platform::Mturk.cost(Payment::Reward { places: 10 }, 300, r);
        assert_eq!((small.fees_cents, large.fees_cents), (60, 120));
        // A bonus pays 20% whatever the HIT's size; never less than a cent.
        assert_eq!(Platform::Mturk.cost(Payment::Bonus, 300, r).fees_cents, 60);
        assert_eq!(Platform::Mturk.cost(Payment::Bonus, 2, r).fees_cents, 1);
        assert_eq!(large.times(12).total_cents(), 12 * 420);
        assert!(Platform::Mturk.fee_words(12, r).contains("this one has 12"));
    }
}
