//! The report's authenticity tables: each annotator's page signals and data signals with the
//! level they give, and every exclusion of each view (training filter, attention checks, low
//! authenticity), counted and named.

use super::table::Table;
use super::text::duration;
use crate::authenticity::rules::{Level, RULES_TEXT};
use crate::place::PlaceStatus;
use crate::report::{AnnotatorScore, Report};

fn seconds(ms: u64) -> String {
    duration(ms as f64 / 1000.0)
}

fn level_of(a: &AnnotatorScore) -> Option<Level> {
    a.authenticity.as_ref().map(|x| x.level)
}

/// Per annotator: the level, the page's signals summed over their items, the data's signals,
/// and why. `None` in a report without annotators.
pub fn authenticity_table(r: &Report) -> Option<Table> {
    let rows: Vec<Vec<String>> = r
        .annotators
        .iter()
        .filter_map(|a| {
            let x = a.authenticity.as_ref()?;
            let (t, e) = (&x.totals, &x.evidence);
            let machine = x.machine.as_ref().map_or(String::new(), |m| {
                format!(
                    "{}: {:.2} (humans {}), its errors {}/{}",
                    m.system,
                    m.with_system,
                    m.with_humans.map_or("–".into(), |h| format!("{h:.2}")),
                    m.same_wrong,
                    m.system_wrong
                )
            });
            Some(vec![
                a.worker.clone(),
                a.study.to_string(),
                a.task.clone(),
                a.k.to_string(),
                x.level.as_str().to_string(),
                format!("{}/{}", e.items_with_signals, a.items_done),
                format!("{} ({})", t.away_count, seconds(t.away_ms)),
                format!(
                    "{} ({} from the item, {} chars)",
                    t.copy_count, t.copy_from_item, t.copy_chars
                ),
                format!("{} ({} chars)", t.paste_count, t.paste_chars),
                t.first_input_ms.map_or("–".into(), seconds),
                if t.wall_ms > 0 {
                    format!("{:.0}%", 100.0 * t.active_ms as f64 / t.wall_ms as f64)
                } else {
                    "–".into()
                },
                e.clock_items.to_string(),
                e.assisted_items.to_string(),
                e.pattern_items.to_string(),
                format!("{}/{}", e.fast_answers, e.timed_answers),
                e.straight_line.clone().unwrap_or_default(),
                machine,
                x.reasons.join("; "),
            ])
        })
        .collect();
    (!rows.is_empty()).then(|| {
        let mut note = String::from("Signals the worker's page sent with each answer (counts and durations only), read against the server's own times, and the data's own signals; a level is information for the researcher and neither rejects work nor withholds pay. ");
        note.push_str(&RULES_TEXT.join(" "));
        Table::plain(
            "authenticity",
            "Authenticity of each annotator",
            &note,
            &[
                "Worker", "Study", "Task", "Shots", "Level", "Items with signals",
                "Away (total)", "Copies", "Pastes", "First input (median)", "Active of shown",
                "Not fitting the server's clock", "Assisted-looking items", "Assistance patterns",
                "Under the reading floor", "One label", "Machine agreement", "Why",
            ],
            rows,
        )
    })
}

/// Every finished annotator some view leaves out, with each reason; and the count per view.
pub fn exclusion_table(r: &Report) -> Table {
    let finished: Vec<&AnnotatorScore> = r
        .annotators
        .iter()
        .filter(|a| a.status == PlaceStatus::Finished)
        .collect();
    let rows: Vec<Vec<String>> = finished
        .iter()
        .filter_map(|a| {
            let mut why = Vec::new();
            if a.failed_attention {
                why.push("attention checks (filtered view)".to_string());
            }
            if a.flagged && !a.failed_attention {
                why.push("training filter (filtered view)".to_string());
            }
            if level_of(a) == Some(Level::Low) {
                why.push("low authenticity (authentic view)".to_string());
            }
            (!why.is_empty()).then(|| {
                vec![
                    a.worker.clone(),
                    a.study.to_string(),
                    a.task.clone(),
                    a.k.to_string(),
                    why.join("; "),
                ]
            })
        })
        .collect();
    let filtered = finished.iter().filter(|a| a.flagged).count();
    let low = finished
        .iter()
        .filter(|a| level_of(a) == Some(Level::Low))
        .count();
    let mixed = finished
        .iter()
        .filter(|a| level_of(a) == Some(Level::Mixed))
        .count();
    Table::plain(
        "exclusions",
        "Who each view leaves out",
        &format!(
            "Of {} finished annotators, the filtered view leaves out {filtered} (training filter and attention checks) and the authentic view {low} of low authenticity; {mixed} of mixed authenticity stay in every view. Each exclusion is a sensitivity analysis: the tables of all annotators are the primary ones.",
            finished.len()
        ),
        &["Worker", "Study", "Task", "Shots", "Left out by"],
        rows,
    )
}
