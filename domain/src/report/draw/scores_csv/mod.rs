//! The scores in one long CSV, a row per cell, full precision (fractions, not percent): every
//! table of the report for all and for filtered annotators, the studies' training files, and
//! the machine systems' cells last. The rows of inference (comparisons, planner, plans, the
//! training order's correlation) are written in `inference`.

mod inference;

use super::table::csv_line;
use crate::report::inference::Uncertainty;
use crate::report::{Report, Tables, Which};
use crate::s1::Spread;
use crate::stats::interval::LEVEL;
use crate::stats::Interval;

/// One line of the CSV; empty fields stay empty. Each field is a column of `HEADER`, in order
/// (`family` is filled from the task when written).
#[derive(Default)]
struct Row {
    table: String,
    annotators: String,
    study: String,
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
    level: String,
    other_units_low: String,
    other_units_high: String,
    more_items_low: String,
    more_items_high: String,
    tau_low: String,
    tau_high: String,
    r_low: String,
    r_high: String,
    se: String,
    df: String,
    p: String,
    p_holm: String,
    method: String,
    status: String,
    permutation_p: String,
    permutation_min_p: String,
    items_p: String,
    effect: String,
    needed: String,
    needed_low: String,
    needed_high: String,
    adjusted: String,
    adjusted_se: String,
    adjusted_p: String,
    logistic_log_odds: String,
    logistic_se: String,
    logistic_df: String,
    logistic_p: String,
    logistic_p_wald: String,
    logistic_other_units_low: String,
    logistic_other_units_high: String,
    logistic_reml_log_odds: String,
    logistic_reml_se: String,
    logistic_reml_p: String,
    seed: String,
}

const HEADER: [&str; 51] = [
    "table",
    "annotators",
    "study",
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
    "level",
    "other_units_low",
    "other_units_high",
    "more_items_low",
    "more_items_high",
    "tau_low",
    "tau_high",
    "r_low",
    "r_high",
    "se",
    "df",
    "p",
    "p_holm",
    "method",
    "status",
    "permutation_p",
    "permutation_min_p",
    "items_p",
    "effect",
    "needed",
    "needed_low",
    "needed_high",
    "adjusted",
    "adjusted_se",
    "adjusted_p",
    "logistic_log_odds",
    "logistic_se",
    "logistic_df",
    "logistic_p",
    "logistic_p_wald",
    "logistic_other_units_low",
    "logistic_other_units_high",
    "logistic_reml_log_odds",
    "logistic_reml_se",
    "logistic_reml_p",
    "seed",
];

impl Row {
    /// The fields in `HEADER`'s order.
    fn fields<'a>(&'a self, family: &'a str) -> [&'a str; 51] {
        [
            &self.table,
            &self.annotators,
            &self.study,
            &self.scoring,
            &self.task,
            family,
            &self.k,
            &self.subset,
            &self.n,
            &self.items,
            &self.mean,
            &self.std,
            &self.std_sample,
            &self.ties,
            &self.measure,
            &self.level,
            &self.other_units_low,
            &self.other_units_high,
            &self.more_items_low,
            &self.more_items_high,
            &self.tau_low,
            &self.tau_high,
            &self.r_low,
            &self.r_high,
            &self.se,
            &self.df,
            &self.p,
            &self.p_holm,
            &self.method,
            &self.status,
            &self.permutation_p,
            &self.permutation_min_p,
            &self.items_p,
            &self.effect,
            &self.needed,
            &self.needed_low,
            &self.needed_high,
            &self.adjusted,
            &self.adjusted_se,
            &self.adjusted_p,
            &self.logistic_log_odds,
            &self.logistic_se,
            &self.logistic_df,
            &self.logistic_p,
            &self.logistic_p_wald,
            &self.logistic_other_units_low,
            &self.logistic_other_units_high,
            &self.logistic_reml_log_odds,
            &self.logistic_reml_se,
            &self.logistic_reml_p,
            &self.seed,
        ]
    }
}

fn num(x: f64) -> String {
    format!("{x}")
}

fn opt_num(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

/// A seed of the report's draws as 16 hex digits (a reader's CSV parser would round a u64).
fn seed_hex(seed: u64) -> String {
    format!("{seed:016x}")
}

fn ends(i: Option<Interval>) -> (String, String) {
    (opt_num(i.map(|i| i.low)), opt_num(i.map(|i| i.high)))
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

    /// A cell's 95% intervals: over other units and over more items.
    fn intervals(self, u: Option<&Uncertainty>) -> Row {
        let Some(u) = u else { return self };
        let ((other_units_low, other_units_high), (more_items_low, more_items_high)) =
            (ends(u.other_units), ends(u.more_items));
        Row {
            level: num(LEVEL),
            other_units_low,
            other_units_high,
            more_items_low,
            more_items_high,
            seed: u.more_items.map(|_| seed_hex(u.seed)).unwrap_or_default(),
            ..self
        }
    }
}

/// One row per cell, the columns of `HEADER`, for each view of the annotators (`annotators` =
/// `all`, `filtered`, `authentic`). Every interval's columns are named by what it covers, and
/// `level` says its coverage. Table 5 with its 95% intervals (`other_units_low`/`_high` over
/// other annotators, `more_items_low`/`_high` these annotators over more items) and its
/// answered-only view
/// (`table5-answered`); skip rates (`skips`: items = submitted test items, mean = skipped /
/// submitted; `subset` `empty gold` and `with gold` apart); Tables 8 and 9, the majority vote,
/// agreement and confidence; `shot_group` rows give each study's file of each k (`annotators` =
/// `study:<id>`, `subset` = its split, `measure` = nested or not); `analysis_plan` rows each
/// study's plan (`status` frozen or not, `measure` its SHA-256, `subset` its primary
/// comparison, `n` and `items` the planned annotators and items); `machine` rows hold
/// `machine:<system>` in `annotators` and the splits in `subset`, a `machine_run` row per run
/// says where it ran (`subset` its split, `measure` the provider with the CPU's or GPU's
/// model), `reference` rows the same as `machine` rows for
/// each reference answer (`reference:<name>`, split 0 where it needs no shots); `calibration`
/// rows give a system's accuracy (`mean`) per probability bin, the bin's mean probability in
/// `std`; `comparison` rows a study's family and humans against systems (`subset` the
/// comparison, `n` the units per side, `mean` the difference, `other_units_low`/`_high` its
/// interval over other annotators at `level` = 1 − the study plan's α, `se`, `df`, `p` (the p
/// that decides: the permutation test's where `method` says it decides), `p_holm` within the
/// study's family, `method`, `status` primary/family/exploratory, the annotator permutation
/// test's `permutation_p` and the smallest p the design can reach, the item-level view's
/// interval in `more_items_low`/`_high` and p in `items_p`, `effect` in SD units, and the screening-adjusted difference with its SE
/// and p; where every item S1 is 0 or 1, the logistic mixed model's difference in log-odds,
/// SE, between-within df and p in `logistic_*`, glmer's own p in `logistic_p_wald`, and its
/// interval over other annotators at `level`, and the restricted (REML-Laplace) fit's
/// difference, SE and p against t with the same df in `logistic_reml_*`); `planner` rows the annotators per scenario (`needed`, with `needed_low`/`needed_high`
/// across τ's interval) to find the difference in `mean` at the plan's α (in `measure`), τ in
/// `std` and its interval in `tau_low`/`tau_high`; `training_order` rows each k-shot group's
/// S1 on the two halves of the training examples as shown, seconds per example, and Pearson's
/// r with n, its Fisher-z interval in `r_low`/`r_high` and p (none below five pairs). `seed`
/// (16 hex digits) is the SplitMix64 seed of a row's random draws (the item bootstrap of a cell;
/// a comparison's relabellings, sign flips and item bootstrap), so that `analysis.R` redraws
/// them.
pub fn scores_csv(r: &Report) -> String {
    let family = |task: &str| {
        r.tasks
            .iter()
            .find(|c| c.name == task)
            .map_or("", |c| c.family.as_str())
    };
    let mut rows = Vec::new();
    for which in Which::VIEWS {
        let t = which.of(r);
        let b = Base(which.id());
        rows.extend(main_rows(t, &b));
        rows.extend(subset_rows(t, &b));
        rows.extend(scenario_rows(t, &b));
        rows.extend(inference::order_rows(t, &b));
        rows.extend(inference::comparison_rows(t, &b));
        rows.extend(inference::plan_rows(t, &b));
        rows.extend(confidence_rows(t, &b));
    }
    rows.extend(shot_group_rows(r));
    rows.extend(inference::analysis_plan_rows(r));
    rows.extend(machine_rows(r));
    rows.extend(calibration_rows(r));
    let mut out = csv_line(&HEADER);
    for row in rows {
        out.push_str(&csv_line(&row.fields(family(&row.task))));
    }
    out
}

/// The start of every row of one set of annotators (`all`, `filtered` or `authentic`).
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
        let g = &c.skips_by_gold;
        for (subset, s) in [("empty gold", g.empty_gold), ("with gold", g.with_gold)] {
            if s.submitted > 0 {
                rows.push(Row {
                    subset: subset.into(),
                    n: c.official.n.to_string(),
                    items: s.submitted.to_string(),
                    mean: opt_num(s.rate()),
                    measure: "skip rate".into(),
                    ..b.row("skips", "", &c.task, c.k)
                });
            }
        }
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
        // Where each split's run ran (references are computed, not run).
        let runs = m
            .splits
            .iter()
            .zip(&m.devices)
            .filter(|_| table == "machine");
        rows.extend(runs.map(|(split, device)| Row {
            table: "machine_run".into(),
            annotators: format!("{table}:{}", m.system),
            task: m.task.clone(),
            k: m.k.to_string(),
            subset: format!("split {split}"),
            measure: device.clone(),
            ..Row::default()
        }));
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
