//! How every table writes its numbers and headers: S1 in percent, `mean ± std (n)`, durations,
//! money, and the shots-by-tasks header grouped by task family.

use crate::report::Report;
use crate::s1::Spread;
use crate::task::Family;

/// A score in percent with one decimal, as the paper prints S1.
pub fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// `mean ± std (n)` in percent; the standard deviation is the population one.
pub fn spread_text(s: &Spread) -> String {
    format!("{} ± {} (n={})", pct(s.mean), pct(s.std_pop), s.n)
}

/// A score in percent, or a dash where there is none.
pub fn opt_pct(x: Option<f64>) -> String {
    x.map(pct).unwrap_or_else(|| "–".into())
}

/// The header of a table with a `Shots` column and a column per task, and the family groups
/// above it (sentence classification / NER / reading comprehension / text to text).
pub fn group_header(r: &Report) -> (Vec<(String, usize)>, Vec<String>) {
    let mut groups: Vec<(String, usize)> = vec![(String::new(), 1)];
    for fam in [
        Family::Classification,
        Family::SequenceLabelling,
        Family::ReadingComprehension,
        Family::TextToText,
    ] {
        let n = r.tasks.iter().filter(|c| c.family == fam).count();
        if n > 0 {
            groups.push((fam.label().to_string(), n));
        }
    }
    let mut header = vec!["Shots".to_string()];
    header.extend(r.tasks.iter().map(|c| c.name.clone()));
    (groups, header)
}

/// Seconds as `1 h 02 min 03 s`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as i64;
    if s >= 3600 {
        format!("{} h {:02} min {:02} s", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// Cents as `12.34`.
pub fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}
