//! The summary printed by `import clues`: per task what was stored, the shot-group
//! checks (passed or not) and every data-quality note with its file and line.

use super::files::FileKind;
use super::load::TaskData;
use super::write::Outcome;
use domain::shots;
use std::collections::BTreeMap;
use std::fmt::Write;

fn list(xs: &[u32]) -> String {
    xs.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

pub fn render_task(task: &TaskData, outcome: Outcome) -> String {
    let mut out = String::new();
    let test_items = task.test_file().map_or(0, |f| f.rows.len());
    let train_files = task
        .files
        .iter()
        .filter(|f| f.kind != FileKind::Test)
        .count();
    let status = match outcome {
        Outcome::Imported => "imported",
        Outcome::Unchanged => "unchanged (these exact files were imported before)",
    };
    let s = &task.shots;
    let _ = writeln!(
        out,
        "{} ({}): {status}\n  test items: {test_items}; training files: {train_files} (k {}; splits {})",
        task.spec.name,
        task.spec.family.as_str(),
        list(&s.ks),
        list(&s.splits)
    );
    if s.ks.len() > 1 {
        let chains: Vec<String> = s.chains.iter().map(|c| shots::chain_text(c)).collect();
        let _ = writeln!(
            out,
            "  nesting chains ({} within each other): {}",
            s.ks.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            if chains.is_empty() {
                "none".to_string()
            } else {
                chains.join("; ")
            }
        );
    }
    if !s.nesting.is_empty() {
        let nested = s.nesting.iter().filter(|n| n.missing == 0).count();
        let _ = writeln!(
            out,
            "  nested within the same split number: {nested} of {} checks hold",
            s.nesting.len()
        );
    }
    if !s.split_overlaps.is_empty() {
        let shared: usize = s.split_overlaps.iter().map(|o| o.shared_rows).sum();
        let _ = writeln!(
            out,
            "  splits disjoint: {} ({shared} shared rows over {} pairs)",
            if shared == 0 { "yes" } else { "no" },
            s.split_overlaps.len()
        );
    }
    let overlap: usize = s.test_overlaps.iter().map(|o| o.rows).sum();
    let _ = writeln!(
        out,
        "  training rows sharing a context with the test set: {overlap}"
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &task.notes {
        *counts.entry(n.kind).or_default() += 1;
    }
    let summary = counts
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "  quality notes: {}{}",
        task.notes.len(),
        if summary.is_empty() {
            String::new()
        } else {
            format!(" ({summary})")
        }
    );
    for n in &task.notes {
        let place = match (&n.file, n.line) {
            (Some(f), Some(l)) => format!("{}/{f}:{l}", task.spec.name),
            (Some(f), None) => format!("{}/{f}", task.spec.name),
            _ => task.spec.name.clone(),
        };
        let _ = writeln!(out, "    {place}: {}: {}", n.kind, n.detail);
    }
    out
}

pub fn render_totals(tasks: &[TaskData], outcomes: &[Outcome]) -> String {
    let test: usize = tasks
        .iter()
        .map(|t| t.test_file().map_or(0, |f| f.rows.len()))
        .sum();
    let train: usize = tasks
        .iter()
        .map(|t| t.files.iter().filter(|f| f.kind != FileKind::Test).count())
        .sum();
    let imported = outcomes.iter().filter(|o| **o == Outcome::Imported).count();
    format!(
        "total: {} tasks, {test} test items, {train} training files; {imported} imported, {} unchanged\n",
        tasks.len(),
        outcomes.len() - imported
    )
}
