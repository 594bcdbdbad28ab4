//! The scores in one long CSV, a row per cell, full precision (fractions, not percent): every
//! table of the report for all and for filtered annotators, the studies' training files, and
//! the machine systems' cells last.

use super::table::csv_line;
use crate::report::inference::Uncertainty;
use crate::report::{Report, Tables, Which};
use crate::s1::Spread;
use crate::stats::Interval;

/// One line of the CSV; empty fields stay empty.
#[derive(Default)]
struct Row {
    table: String,
    annotators: String,
    scoring: String,
    task: String,
    k: String,
    subset: String,
    n: String,
    items: String,
    mean: String,
    std: String,
    std_sample: String,
    ties: String,
    measure: String,
    t_low: String,
    t_high: String,
    boot_low: String,
    boot_high: String,
    p: String,
    p_holm: String,
    effect: String,
    power: String,
    needed: String,
    adjusted: String,
}

const HEADER: [&str; 24] = [
    "table",
    "annotators",
    "scoring",
    "task",
    "family",
    "k",
    "subset",
    "n",
    "items",
    "mean",
    "std",
    "std_sample",
    "ties",
    "measure",
    "t_low",
    "t_high",
    "boot_low",
    "boot_high",
    "p",
    "p_holm",
    "effect",
    "power",
    "needed",
    "adjusted",
];

fn num(x: f64) -> String {
    format!("{x}")
}

fn opt_num(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

impl Row {
    /// A spread's n, mean and both standard deviations.
    fn spread(self, s: &Spread) -> Row {
        Row {
            n: s.n.to_string(),
            mean: num(s.mean),
            std: num(s.std_pop),
            std_sample: opt_num(s.std_sample),
            ..self
        }
    }

    /// A cell's 95% intervals.
    fn intervals(self, u: Option<&Uncertainty>) -> Row {
        let Some(u) = u else { return self };
        let ends = |i: Option<Interval>| (opt_num(i.map(|i| i.low)), opt_num(i.map(|i| i.high)));
        let ((t_low, t_high), (boot_low, boot_high)) = (ends(u.t), ends(u.bootstrap));
        Row {
            t_low,
            t_high,
            boot_low,
            boot_high,
            ..self
        }
    }
}

/// `table, annotators, scoring, task, family, k, subset, n, items, mean, std, std_sample, ties,
/// measure, t_low, t_high, boot_low, boot_high, p, p_holm, effect, power, needed`. Table 5
/// (with its 95% t and bootstrap intervals) and its answered-only view (`table5-answered`), the skip rate (`skips`:
/// items = submitted test items, mean = skipped / submitted), Tables 8 and 9, the majority vote,
/// agreement and confidence; `shot_group` rows give each study's file of each k (`annotators` =
/// `study:<id>`, `subset` = its split, `measure` = nested or not); `machine` rows hold
/// `machine:<system>` in `annotators` and the splits in `subset`, `reference` rows the same
/// for each reference answer (`reference:<name>`, split 0 where it needs no shots); `calibration` rows give a
/// system's accuracy (`mean`) per probability bin of its label-task answers, the bin's mean
/// probability in `std` (beside the crowd's `confidence` rows); `comparison` rows give a
/// difference b − a (`subset` names both sides, `n` their units) with its bootstrap interval,
/// p, Holm's p, d_z (`effect`), the design's power and the units per side for 80% (`needed`);
/// `adjusted` the difference adjusted for the groups' screening S1 (`screening` rows give
/// each group's screening S1); `planner` rows the annotators per scenario (`needed`) to find the difference in `mean`;
/// `training_order` rows each k-shot group's S1 on the first and second half of the training
/// examples as shown, seconds per example, and Pearson's r of those seconds and test S1
/// (`measure` names the order: random per worker, file order or mixed).
pub fn scores_csv(r: &Report) -> String {
    let family = |task: &str| {
        r.tasks
            .iter()
            .find(|c| c.name == task)
            .map_or("", |c| c.family.as_str())
    };
    let mut rows = Vec::new();
    for which in [Which::All, Which::Filtered] {
        let t = which.of(r);
        let b = Base(which.id());
        rows.extend(main_rows(t, &b));
        rows.extend(subset_rows(t, &b));
        rows.extend(scenario_rows(t, &b));
        rows.extend(order_rows(t, &b));
        rows.extend(comparison_rows(t, &b));
        rows.extend(plan_rows(t, &b));
        rows.extend(confidence_rows(t, &b));
    }
    rows.extend(shot_group_rows(r));
    rows.extend(machine_rows(r));
    rows.extend(calibration_rows(r));
    let mut out = csv_line(&HEADER);
    for row in rows {
        out.push_str(&csv_line(&[
            row.table.as_str(),
            row.annotators.as_str(),
            row.scoring.as_str(),
            row.task.as_str(),
            family(&row.task),
            row.k.as_str(),
            row.subset.as_str(),
            row.n.as_str(),
            row.items.as_str(),
            row.mean.as_str(),
            row.std.as_str(),
            row.std_sample.as_str(),
            row.ties.as_str(),
            row.measure.as_str(),
            row.t_low.as_str(),
            row.t_high.as_str(),
            row.boot_low.as_str(),
            row.boot_high.as_str(),
            row.p.as_str(),
            row.p_holm.as_str(),
            row.effect.as_str(),
            row.power.as_str(),
            row.needed.as_str(),
            row.adjusted.as_str(),
        ]));
    }
    out
}

/// The start of every row of one set of annotators (`all` or `filtered`).
struct Base(&'static str);

impl Base {
    fn row(&self, table: &str, scoring: &str, task: &str, k: u32) -> Row {
        Row {
            table: table.into(),
            annotators: self.0.to_string(),
            scoring: scoring.into(),
            task: task.into(),
            k: k.to_string(),
            ..Row::default()
        }
    }
}

/// Table 5 both ways with its intervals, its answered-only view, screening and skip rates.
fn main_rows(t: &Tables, b: &Base) -> Vec<Row> {
    let mut rows = Vec::new();
    for c in &t.main {
        let views = [
            (
                "table5",
                "official",
                Some(&c.official),
                c.official_ci.as_ref(),
            ),
            ("table5", "any-of", Some(&c.any_of), c.any_of_ci.as_ref()),
            ("table5-answered", "official", c.answered.as_ref(), None),
            (
                "table5-answered",
                "any-of",
                c.answered_any_of.as_ref(),
                None,
            ),
        ];
        for (table, scoring, s, ci) in views {
            if let Some(s) = s {
                rows.push(b.row(table, scoring, &c.task, c.k).spread(s).intervals(ci));
            }
        }
        if let Some(s) = &c.screening {
            rows.push(b.row("screening", "official", &c.task, c.k).spread(s));
        }
        rows.push(Row {
            n: c.official.n.to_string(),
            items: c.test_items.to_string(),
            mean: num(c.skip_rate()),
            measure: "skip rate".into(),
            ..b.row("skips", "", &c.task, c.k)
        });
    }
    rows
}

/// Tables 8 and 9: S1 on subsets of the test set.
fn subset_rows(t: &Tables, b: &Base) -> Vec<Row> {
    [("table8", &t.table8), ("table9", &t.table9)]
        .into_iter()
        .flat_map(|(name, cells)| {
            cells.iter().map(move |c| Row {
                subset: c.subset.describe(),
                items: c.items_text(),
                ..b.row(name, "official", &c.task, c.group_k)
                    .spread(&c.spread)
            })
        })
        .collect()
}

/// Each scenario's majority vote both ways and its agreement.
fn scenario_rows(t: &Tables, b: &Base) -> Vec<Row> {
    let mut rows = Vec::new();
    for s in &t.scenarios {
        let vote = |scoring: &str, v: f64| Row {
            n: s.annotators.to_string(),
            items: s.items.to_string(),
            mean: num(v),
            ties: s.ties.to_string(),
            ..b.row("majority", scoring, &s.task, s.k)
        };
        rows.push(vote("official", s.majority_s1));
        rows.push(vote("any-of", s.majority_s1_any_of));
        rows.push(Row {
            n: s.annotators.to_string(),
            items: s.agreement.items.to_string(),
            mean: opt_num(s.agreement.value),
            measure: s.agreement.measure.clone(),
            ..b.row("agreement", "", &s.task, s.k)
        });
    }
    rows
}

/// The training order: each half's S1, seconds per example, and their correlation with test S1.
fn order_rows(t: &Tables, b: &Base) -> Vec<Row> {
    let mut rows = Vec::new();
    for c in &t.order {
        let cell = |subset: &str| Row {
            subset: subset.into(),
            measure: c.order.as_str().into(),
            ..b.row("training_order", "official", &c.task, c.k)
        };
        rows.push(cell("first half").spread(&c.first_half));
        rows.push(cell("second half").spread(&c.second_half));
        rows.push(cell("seconds per example").spread(&c.seconds_per_example));
        if let Some(r) = c.time_vs_test {
            rows.push(Row {
                mean: num(r),
                ..cell("pearson r of seconds and test S1")
            });
        }
    }
    rows
}

/// Each comparison: the difference with its interval, p and Holm's p, effect and power.
fn comparison_rows(t: &Tables, b: &Base) -> Vec<Row> {
    t.comparisons
        .iter()
        .map(|c| Row {
            subset: format!("{} vs {}", c.b.describe(), c.a.describe()),
            n: format!("{} vs {}", c.b.units, c.a.units),
            items: c.items.to_string(),
            mean: num(c.difference),
            measure: "difference".into(),
            boot_low: opt_num(c.interval.map(|i| i.low)),
            boot_high: opt_num(c.interval.map(|i| i.high)),
            p: num(c.test.p),
            p_holm: num(c.p_holm),
            effect: opt_num(c.effect_dz),
            power: opt_num(c.design.map(|d| d.power)),
            needed: c
                .design
                .and_then(|d| d.needed)
                .map(|n| n.to_string())
                .unwrap_or_default(),
            adjusted: opt_num(c.adjusted.map(|a| a.difference)),
            ..b.row("comparison", "official", &c.task, c.b.k)
        })
        .collect()
}

/// The planner: annotators per scenario needed to find each difference.
fn plan_rows(t: &Tables, b: &Base) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in &t.plan {
        for &(d, needed) in &p.needed {
            rows.push(Row {
                k: String::new(),
                n: p.pilot_annotators.to_string(),
                mean: num(d),
                std: num(p.pooled_sd),
                measure: "difference; std column = pooled SD of annotator S1".into(),
                power: num(crate::report::inference::POWER),
                needed: needed.map(|n| n.to_string()).unwrap_or_default(),
                ..b.row("planner", "official", &p.task, 0)
            });
        }
    }
    rows
}

/// The crowd's accuracy per confidence level.
fn confidence_rows(t: &Tables, b: &Base) -> Vec<Row> {
    t.confidence
        .iter()
        .map(|c| Row {
            k: String::new(),
            subset: format!("confidence {}", c.level),
            n: c.answers.to_string(),
            items: c.correct.to_string(),
            mean: opt_num(c.accuracy),
            measure: "accuracy".into(),
            ..b.row("confidence", "", &c.task, 0)
        })
        .collect()
}

/// Each study's training file of each k, and whether they nest.
fn shot_group_rows(r: &Report) -> Vec<Row> {
    let mut rows = Vec::new();
    for g in &r.shot_groups {
        for &(k, split) in &g.files {
            rows.push(Row {
                table: "shot_group".into(),
                annotators: format!("study:{}", g.study),
                task: g.task.clone(),
                k: k.to_string(),
                subset: format!("split {split}"),
                measure: if g.nested { "nested" } else { "not nested" }.into(),
                ..Row::default()
            });
        }
    }
    rows
}

/// Each system's cells both ways, over its splits, with their intervals; then each reference
/// answer's (table `reference`, no intervals).
fn machine_rows(r: &Report) -> Vec<Row> {
    let mut rows = Vec::new();
    let systems = r.machines.iter().map(|m| ("machine", m));
    let references = r.references.iter().map(|m| ("reference", m));
    for (table, m) in systems.chain(references) {
        let splits: Vec<String> = m.splits.iter().map(u32::to_string).collect();
        for (scoring, sp, ci) in [
            ("official", &m.official, m.official_ci.as_ref()),
            ("any-of", &m.any_of, m.any_of_ci.as_ref()),
        ] {
            rows.push(
                Row {
                    table: table.into(),
                    annotators: format!("{table}:{}", m.system),
                    scoring: scoring.into(),
                    task: m.task.clone(),
                    k: m.k.to_string(),
                    subset: format!("splits {}", splits.join(" ")),
                    ..Row::default()
                }
                .spread(sp)
                .intervals(ci),
            );
        }
    }
    rows
}

/// Each system's accuracy per probability bin of its label-task answers.
fn calibration_rows(r: &Report) -> Vec<Row> {
    r.calibration
        .iter()
        .filter(|b| b.answers > 0)
        .map(|b| Row {
            table: "calibration".into(),
            annotators: format!("machine:{}", b.system),
            task: b.task.clone(),
            subset: format!("probability {:.1}-{:.1}", b.low, b.high),
            n: b.answers.to_string(),
            items: b.correct.to_string(),
            mean: opt_num(b.accuracy),
            std: opt_num(b.mean_probability),
            measure: "accuracy; std column = mean probability".into(),
            ..Row::default()
        })
        .collect()
}
