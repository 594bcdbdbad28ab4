//! The rules' rates per strategy: simulated sessions on a simulated label task, with 20 honest
//! workers before them as the other humans and a system run to agree with, read by the
//! report's own assessment (`report::authenticity::assess`), exactly as a study's would be.

use super::{AnswerModel, ItemShape, Session, SimAnswer, Strategy, TaskAnswers};
use crate::authenticity::{Evidence, Level};
use crate::ids::{AssignmentId, ExampleId, StudyId};
use crate::place::{Phase, PlaceStatus};
use crate::report::authenticity::{assess, SystemAnswers};
use crate::report::{AnnotatorRecord, ItemRecord, TaskData};
use crate::rng::SplitMix64;
use crate::spans::Span;
use crate::task::{Family, Gold, TaskSpec};
use std::collections::{BTreeMap, HashMap};

/// Sessions of one strategy and the levels the report gave them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub sessions: usize,
    pub low: usize,
    pub mixed: usize,
    /// How often each signal fired (`Evidence::fired`) on the sessions rated low.
    pub low_signals: BTreeMap<&'static str, usize>,
}

impl Tally {
    pub fn add(&mut self, level: Level, evidence: &Evidence) {
        self.sessions += 1;
        self.low += usize::from(level == Level::Low);
        self.mixed += usize::from(level == Level::Mixed);
        if level == Level::Low {
            for name in evidence.fired() {
                *self.low_signals.entry(name).or_default() += 1;
            }
        }
    }

    /// The share rated low.
    pub fn low_share(&self) -> f64 {
        self.low as f64 / self.sessions.max(1) as f64
    }
}

const LABELS: [&str; 2] = ["negative", "positive"];
/// The simulated task's name (one task: its annotators are each other's peers).
const TASK: &str = "Simulated";
/// Honest workers answering before the sessions, the other humans of machine agreement...
pub const PEER_SESSIONS: usize = 20;
/// ...and the sessions of one strategy beside them in a crowd: a third of its workers (the
/// reference of machine agreement withstands up to three in four, `report::authenticity`).
pub const CROWD_SESSIONS: usize = 10;

/// A simulated annotator's record: answers `answers` (label indices) with the server's times
/// running from `start`.
fn record(n: i64, sims: &[SimAnswer], answers: &[usize], start: i64) -> AnnotatorRecord {
    let mut t = start;
    let items = sims
        .iter()
        .zip(answers)
        .enumerate()
        .map(|(i, (sim, &label))| {
            let shown = t;
            t += sim.server_ms as i64;
            ItemRecord {
                phase: Phase::Test,
                example_id: ExampleId(i as i64),
                content_key: String::new(),
                answer: Some(vec![LABELS[label].to_string()]),
                skipped: false,
                confidence: Some(4),
                s1: None,
                s1_any_of: None,
                shown_at: Some(shown),
                submitted_at: Some(t),
                signals: sim.signals,
            }
        })
        .collect();
    AnnotatorRecord {
        assignment: AssignmentId(n),
        study: StudyId(1),
        worker: format!("sim-{n}"),
        task: TASK.into(),
        k: 0,
        status: PlaceStatus::Finished,
        training_split: None,
        started_at: start,
        finished_at: Some(t),
        last_activity: t,
        items,
        pages: Default::default(),
    }
}

/// The simulated task as the report sees it: gold, words, and the system's run.
fn task_data(shape: &[ItemShape], task: &TaskAnswers) -> TaskData {
    let label = |l: usize| LABELS[l].to_string();
    let ids = || (0..shape.len()).map(|i| ExampleId(i as i64));
    TaskData {
        spec: TaskSpec::plain(TASK, Family::Classification, &LABELS),
        test_golds: ids()
            .zip(&task.gold)
            .map(|(id, &g)| {
                let gold = Gold {
                    official: vec![label(g)],
                    spans: vec![Span::new(LABELS[g], None)],
                };
                (id, gold)
            })
            .collect(),
        shot_sets: HashMap::new(),
        words: ids().zip(shape).map(|(id, s)| (id, s.words)).collect(),
        systems: vec![SystemAnswers {
            name: "system k=0 split=0".into(),
            answers: ids()
                .zip(&task.system)
                .map(|(id, &l)| (id, vec![label(l)]))
                .collect(),
            wrong: ids()
                .enumerate()
                .filter(|(i, _)| task.system_wrong(*i))
                .map(|(_, id)| id)
                .collect(),
        }],
    }
}

/// `sessions` sessions of `strategy` on items of `shape`, `CROWD_SESSIONS` at a time after
/// `PEER_SESSIONS` typical honest ones (each crowd a task of its own), all seeded from `seed`;
/// the levels the report gives the sessions.
pub fn measure(strategy: Strategy, sessions: usize, shape: &[ItemShape], seed: u64) -> Tally {
    let peer = Strategy::Honest(super::Honest::Typical);
    let mut tally = Tally::default();
    for (c, start) in (0..sessions).step_by(CROWD_SESSIONS).enumerate() {
        let n = CROWD_SESSIONS.min(sessions - start);
        let crowd: Vec<Strategy> = std::iter::repeat_n(peer, PEER_SESSIONS)
            .chain(std::iter::repeat_n(strategy, n))
            .collect();
        let crowd_seed = seed ^ (c as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        for (_, level, e) in measure_crowd(&crowd, shape, crowd_seed, true)
            .iter()
            .skip(PEER_SESSIONS)
        {
            tally.add(*level, e);
        }
    }
    tally
}

/// A crowd's sessions on items of `shape`, in the order given, all seeded from `seed`: each
/// worker's strategy with the level and evidence the report gives them; `system`: whether the
/// report has the system's run (machine agreement). Paced forging scripts are a farm: they all
/// answer from one source of their own, a chatbot as often wrong as the system but not it.
pub fn measure_crowd(
    crowd: &[Strategy],
    shape: &[ItemShape],
    seed: u64,
    system: bool,
) -> Vec<(Strategy, Level, Evidence)> {
    let model = AnswerModel::default();
    let mut rng = SplitMix64(seed);
    let task = model.task(shape.len(), &mut rng);
    let source = model.system_for(task.gold.clone(), &mut rng).system;
    let mut records = Vec::with_capacity(crowd.len());
    for (n, &who) in crowd.iter().enumerate() {
        let mut s = Session::new(
            seed ^ (n as u64).wrapping_mul(0x9E37_79B9),
            who,
            shape.len(),
        );
        let sims: Vec<SimAnswer> = shape.iter().map(|i| s.item(i)).collect();
        let answers: Vec<usize> = sims
            .iter()
            .enumerate()
            .map(
                |(i, sim)| match (sim.from_system, who.answers_from_source()) {
                    (true, _) => task.system[i],
                    (false, true) => source[i],
                    (false, false) => model.human(&task, i, &mut rng),
                },
            )
            .collect();
        records.push(record(n as i64, &sims, &answers, 1_000_000_000 * n as i64));
    }
    let mut data = task_data(shape, &task);
    if !system {
        data.systems.clear();
    }
    let tasks = HashMap::from([(TASK.to_string(), data)]);
    let refs: Vec<&AnnotatorRecord> = records.iter().collect();
    let levels = assess(&refs, &tasks);
    crowd
        .iter()
        .zip(&records)
        .map(|(&who, r)| {
            let a = &levels[&r.assignment];
            (who, a.level, a.evidence.clone())
        })
        .collect()
}
