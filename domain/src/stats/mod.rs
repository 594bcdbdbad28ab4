//! The statistics a reviewer asks of the report, pure and IO-free: 95% intervals (t and a
//! bootstrap over units and items), the paired test between scenarios, the power planner,
//! and Pearson's r.
//! Each is checked against scipy and statsmodels on fixtures (`domain/tests/stats_scipy.rs`).

pub mod correlation;
pub mod dist;
pub mod groups;
pub mod interval;
pub mod mixed;
pub mod numdiff;
pub mod paired;
pub mod power;
pub mod relabel;
pub mod relabel_interval;
pub mod simulate;
pub mod ttest;

pub use correlation::{ancova, correlation, pearson, Ancova, Correlation, MIN_PAIRS_FOR_P};
pub use interval::{
    bootstrap_difference, bootstrap_items, bootstrap_items_difference, bootstrap_mean,
    logit_t_interval, t_interval, Interval,
};
pub use paired::{cohen_dz, holm, sign_flip_test, PermutationTest};
pub use power::{pooled_sd, two_sample_power, units_needed, Pilot, Planned};
pub use relabel::{contrast_relabel_test, relabel_test, RelabelTest};
pub use relabel_interval::shift_interval;
pub use ttest::{against_fixed, welch, welch_contrast, TTest};

/// A p-value as the report prints it: three decimals, or two significant digits below 0.001.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}
