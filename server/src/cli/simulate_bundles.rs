//! `simulate --bundles DIR` (hidden): unpacked report bundles of simulated studies, each built by
//! the report's own code, for the false-alarm benchmark of `analysis.R` (`server/bench/analysis-r.sh`).
//!
//! Each study is one folder with what the bundle's `analysis.R` reads: `annotations.csv` (the
//! columns it reads, named as the bundle's), `scores.csv` (`scores_csv` of `report::build`) and
//! `analysis_plans.json` (the bundle's own writer). Four scenarios (k = 0, 10, 20, 30) of 3
//! annotators, some studies 5 or 10; α 0.05, every third study 0.02; a crossed logistic crowd
//! (`stats::simulate::model::Crowd`) whose variance components aim at one of the scenario
//! test's paths. Partial credit (S1 0, ½ or 1) keeps the logistic model away but in its own path.
//! The `no-test` path makes data no comparison can test (every answer right, or one annotator
//! per scenario), for `analysis.R`'s check of a "no test" row.

use domain::analysis_plan;
use domain::ids::{AssignmentId, ExampleId, StudyId};
use domain::place::{Phase, PlaceStatus};
use domain::report::draw::scores_csv::scores_csv;
use domain::report::draw::table::csv_line;
use domain::report::{build, AnnotatorRecord, ItemRecord, StudyRules, TaskData};
use domain::rng::SplitMix64;
use domain::stats::simulate::model::Crowd;
use domain::study::analysis::AnalysisChoices;
use domain::study::StudyConfig;
use domain::task::{Family, Gold, TaskSpec};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use store::error::{Error, Result};

/// Which of the scenario test's paths the crowd aims at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BundlePath {
    /// Annotators and items both vary: the mixed model.
    Mixed,
    /// No item spread: the mixed model with its item variance at zero (about half the fits).
    ItemZero,
    /// No annotator spread: the permutation test decides (about half the fits).
    AnnotatorZero,
    /// Every item S1 0 or 1: the logistic mixed model beside the linear one.
    Logistic,
    /// Data no comparison can test: every answer right (even studies), or one annotator per
    /// scenario (odd ones); each comparison row says why there is no test.
    NoTest,
}

impl BundlePath {
    fn name(self) -> &'static str {
        match self {
            BundlePath::Mixed => "mixed",
            BundlePath::ItemZero => "item-zero",
            BundlePath::AnnotatorZero => "annotator-zero",
            BundlePath::Logistic => "logistic",
            BundlePath::NoTest => "no-test",
        }
    }

    /// The crowd's annotator SD (points of S1) and item SD (logits).
    fn spread(self) -> (f64, f64) {
        match self {
            BundlePath::Mixed | BundlePath::Logistic | BundlePath::NoTest => (0.09, 1.0),
            BundlePath::ItemZero => (0.09, 0.0),
            BundlePath::AnnotatorZero => (0.0, 1.0),
        }
    }
}

const TASK: &str = "Sim";
const KS: [u32; 4] = [0, 10, 20, 30];
const ITEMS: usize = 40;
const SCREENING: usize = 6;
/// The shift of k = 20 and 30 over k = 0 and 10 in the studies with an effect.
const EFFECT: f64 = 0.08;

/// One simulated study's design, from its number.
struct Design {
    per: usize,
    alpha: f64,
    screening: bool,
    effect: bool,
    skip: bool,
}

impl Design {
    fn of(i: usize) -> Design {
        Design {
            per: [3, 3, 3, 3, 3, 3, 3, 5, 5, 10][i % 10],
            alpha: if i.is_multiple_of(3) { 0.02 } else { 0.05 },
            screening: i % 4 == 1,
            effect: i % 2 == 1,
            skip: i % 7 == 3,
        }
    }
}

/// Writes `studies` bundles of `path` under `dir` (`<path>-<n>/`), on `threads` threads.
pub fn write_bundles(
    dir: &Path,
    path: BundlePath,
    studies: usize,
    seed: u64,
    threads: usize,
) -> Result<()> {
    let (sd, sd_item) = path.spread();
    let crowds = [
        Crowd::calibrated(0.75, sd, sd_item, 0.0),
        Crowd::calibrated(0.75, sd, sd_item, EFFECT),
    ];
    let threads = threads.max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let crowds = &crowds;
                s.spawn(move || -> Result<()> {
                    for i in (t..studies).step_by(threads) {
                        let design = Design::of(i);
                        let crowd = &crowds[usize::from(design.effect)];
                        let mut rng = SplitMix64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9));
                        let out = dir.join(format!("{}-{i:04}", path.name()));
                        write_study(&out, path, &design, crowd, &mut rng, StudyId(i as i64 + 1))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .map_err(|_| Error::Request("a thread of the bundles panicked".into()))?
        })
    })
}

/// One study's folder: its annotators drawn, the report built, its files written.
fn write_study(
    out: &Path,
    path: BundlePath,
    d: &Design,
    crowd: &Crowd,
    rng: &mut SplitMix64,
    study: StudyId,
) -> Result<()> {
    let items = crowd.draw_items(rng, ITEMS);
    let screening = crowd.draw_items(rng, SCREENING);
    let untestable = path == BundlePath::NoTest;
    let alike = untestable && study.0 % 2 == 0;
    let per = if untestable && !alike { 1 } else { d.per };
    let mut annotators = Vec::new();
    for (g, &k) in KS.iter().enumerate() {
        let units = crowd.draw_units(rng, per);
        let group = usize::from(g >= 2);
        let mut test = scores(crowd, rng, path, group, &units, &items);
        if alike {
            test.iter_mut().flatten().for_each(|s| *s = 1.0);
        }
        let screened = scores(crowd, rng, path, 0, &units, &screening);
        for (u, row) in test.iter().enumerate() {
            let n = annotators.len() as i64 + 1;
            let mut records: Vec<ItemRecord> = Vec::new();
            if d.screening {
                records.extend(
                    screened[u]
                        .iter()
                        .enumerate()
                        .map(|(j, &s)| item(Phase::Screening, 1000 + j as i64, Some(s))),
                );
            }
            records.extend(row.iter().enumerate().map(|(j, &s)| {
                // The first annotator of k = 10 skips the first item (it scores 0).
                let skipped = d.skip && !alike && g == 1 && u == 0 && j == 0;
                item(Phase::Test, j as i64 + 1, (!skipped).then_some(s))
            }));
            annotators.push(AnnotatorRecord {
                assignment: AssignmentId(n),
                study,
                worker: format!("w{n}"),
                task: TASK.into(),
                k,
                status: PlaceStatus::Finished,
                training_split: (k > 0).then_some(1),
                started_at: 0,
                finished_at: Some(3_600_000),
                last_activity: 3_600_000,
                items: records,
                pages: Default::default(),
            });
        }
    }
    let rules = rules(study, d.alpha)?;
    let tasks: HashMap<String, TaskData> = [(TASK.to_string(), task_data())].into();
    let report = build(&tasks, &annotators, &[(study, rules)].into());
    let cannot = |e| Error::io(format!("cannot write {}", out.display()), e);
    std::fs::create_dir_all(out).map_err(cannot)?;
    for (name, text) in [
        ("annotations.csv", annotations_csv(&annotators)),
        ("scores.csv", scores_csv(&report)),
        (
            "analysis_plans.json",
            store::bundle::analysis_plans(&report)?,
        ),
    ] {
        std::fs::write(out.join(name), text).map_err(cannot)?;
    }
    Ok(())
}

/// Item scores of `units` in `group`: the crowd's 0/1, or the mean of two draws (partial
/// credit) off the logistic path.
fn scores(
    crowd: &Crowd,
    rng: &mut SplitMix64,
    path: BundlePath,
    group: usize,
    units: &[f64],
    items: &[f64],
) -> Vec<Vec<f64>> {
    let first = crowd.answer(rng, group, units, items);
    if path == BundlePath::Logistic {
        return first;
    }
    let second = crowd.answer(rng, group, units, items);
    first
        .iter()
        .zip(&second)
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| 0.5 * (x + y)).collect())
        .collect()
}

/// A submitted item scored `s1`; `None` is a skip.
fn item(phase: Phase, id: i64, s1: Option<f64>) -> ItemRecord {
    let answer = match s1 {
        Some(s) if s > 0.0 => vec!["positive".to_string()],
        Some(_) => vec!["negative".to_string()],
        None => Vec::new(),
    };
    ItemRecord {
        phase,
        example_id: ExampleId(id),
        content_key: String::new(),
        answer: Some(answer),
        skipped: s1.is_none(),
        confidence: None,
        s1,
        s1_any_of: s1,
        shown_at: Some(1_000 * id),
        submitted_at: Some(1_000 * id + 900),
        signals: None,
    }
}

/// The study's rules with its plan frozen before its data (so its family is declared).
fn rules(study: StudyId, alpha: f64) -> Result<StudyRules> {
    let config = StudyConfig {
        scenarios: KS.to_vec(),
        analysis: AnalysisChoices {
            alpha,
            primary: None,
        },
        ..Default::default()
    };
    let json = analysis_plan::declare(TASK, &config, ITEMS).canonical_json();
    let sha = format!("{:x}", Sha256::digest(json.as_bytes()));
    StudyRules::of(&config)
        .with_frozen(&config, json, sha, 0)
        .map_err(|e| Error::Invalid(format!("study {study}: {e}")))
}

/// A label task whose every item's gold is "positive".
fn task_data() -> TaskData {
    let gold = Gold {
        official: vec!["positive".into()],
        spans: vec![domain::spans::Span::new("positive", None)],
    };
    TaskData {
        spec: TaskSpec::plain(TASK, Family::Classification, &["negative", "positive"]),
        test_golds: (1..=ITEMS as i64)
            .map(|i| (ExampleId(i), gold.clone()))
            .collect(),
        shot_sets: HashMap::new(),
        words: HashMap::new(),
        systems: Vec::new(),
    }
}

/// The bundle's `annotations.csv` in the columns `analysis.R` reads, named and written as
/// `store::annotations` writes them (the other columns are about the crowd and its pages).
fn annotations_csv(annotators: &[AnnotatorRecord]) -> String {
    let columns = [
        "study_id",
        "task",
        "assignment_id",
        "k",
        "status",
        "phase",
        "example_id",
        "submitted",
        "answer",
        "skipped",
        "s1",
    ];
    let mut out = csv_line(&columns);
    for a in annotators {
        for i in &a.items {
            out.push_str(&csv_line(&[
                a.study.to_string(),
                a.task.clone(),
                a.assignment.to_string(),
                a.k.to_string(),
                a.status.as_str().to_string(),
                i.phase.as_str().to_string(),
                i.example_id.to_string(),
                i.submitted_at.is_some().to_string(),
                serde_json::to_string(&i.answer).unwrap_or_default(),
                i.skipped.to_string(),
                i.s1.map(|s| s.to_string()).unwrap_or_default(),
            ]));
        }
    }
    out
}
