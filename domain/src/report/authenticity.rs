//! Each annotator's authenticity: the signals their page sent with each answer, summed and
//! checked against the server's clock, and the data's own signals (answers under a reading
//! floor, one label throughout, agreement with a system far above the other humans), combined
//! by `authenticity::rules` into a level.

use super::shared_errors::{shared_errors, Answers, Shared};
use super::{AnnotatorRecord, ItemRecord, TaskData};
use crate::authenticity::clock::server_ms;
use crate::authenticity::rules::{
    Evidence, Level, MACHINE_CHANCE, MACHINE_ERROR_ITEMS, MACHINE_ERROR_SHARE, MACHINE_GAP,
    MACHINE_HUMAN_RATE, MACHINE_ITEMS, MACHINE_STRONG_SHARE, PEERS, READING_FLOOR_WPM,
    STRAIGHT_LINE_ITEMS,
};
use crate::ids::{AssignmentId, ExampleId};
use crate::place::{Phase, PlaceStatus};
use crate::s1::{mean, s1_item, Scoring};
use crate::stats::dist::binomial_tail;
use crate::task::Family;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A system's answers on a task's test items (official encoding), and the items it got wrong:
/// what an assisted worker's answers would repeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemAnswers {
    /// `system k=.. split=..`, as the report names it.
    pub name: String,
    pub answers: HashMap<ExampleId, Vec<String>>,
    pub wrong: HashSet<ExampleId>,
}

/// The page's signals of one annotator, summed over the items that came with them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignalTotals {
    pub away_count: u64,
    pub away_ms: u64,
    pub copy_count: u64,
    pub copy_from_item: u64,
    pub copy_chars: u64,
    pub paste_count: u64,
    pub paste_chars: u64,
    pub active_ms: u64,
    pub wall_ms: u64,
    /// Median time to the first input, over the items with one.
    pub first_input_ms: Option<u64>,
}

/// An annotator's agreement with the system they agree with most, beside the other humans.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineAgreement {
    pub system: String,
    /// Mean S1 between the annotator's answers and the system's, over shared test items.
    pub with_system: f64,
    pub items: usize,
    /// Mean over the other humans (up to `PEERS`) of the mean S1 between their answers.
    pub with_humans: Option<f64>,
    /// Shared items the system got wrong, and those on which the annotator gave its answer.
    pub system_wrong: usize,
    pub same_wrong: usize,
    /// On those items, the share of the other humans' answers that were the system's wrong
    /// answer: the lower quartile over the humans who answered any of them (`lower_quartile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub humans_same_wrong: Option<f64>,
}

/// The machine-agreement signal and its strong form, as `MachineAgreement` reads.
struct MachineSignals {
    fired: bool,
    strong: bool,
}

/// One annotator's authenticity as the report shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Authenticity {
    pub level: Level,
    /// Each signal that fired, in words, and a note where the page sent no signals.
    pub reasons: Vec<String>,
    pub evidence: Evidence,
    pub totals: SignalTotals,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineAgreement>,
}

fn totals(items: &[&ItemRecord]) -> SignalTotals {
    let mut t = SignalTotals::default();
    let mut firsts = Vec::new();
    for s in items.iter().filter_map(|i| i.signals.as_ref()) {
        t.away_count += u64::from(s.away_count);
        t.away_ms += s.away_ms;
        t.copy_count += u64::from(s.copy_count);
        t.copy_from_item += u64::from(s.copy_from_item);
        t.copy_chars += u64::from(s.copy_chars);
        t.paste_count += u64::from(s.paste_count);
        t.paste_chars += u64::from(s.paste_chars);
        t.active_ms += s.active_ms;
        t.wall_ms += s.wall_ms;
        firsts.extend(s.first_input_ms);
    }
    firsts.sort_unstable();
    t.first_input_ms = firsts.get(firsts.len() / 2).copied();
    t
}

/// An annotator's answered test items in the official encoding, by example.
fn answers(a: &AnnotatorRecord, data: &TaskData) -> HashMap<ExampleId, Vec<String>> {
    a.items
        .iter()
        .filter(|i| i.phase == Phase::Test && !i.skipped)
        .filter_map(|i| Some((i.example_id, data.spec.to_official(i.answer.as_ref()?))))
        .collect()
}

/// Mean S1 between two answer sets over their shared items, with the count.
fn agreement(
    a: &HashMap<ExampleId, Vec<String>>,
    b: &HashMap<ExampleId, Vec<String>>,
) -> (Option<f64>, usize) {
    let xs: Vec<f64> = a
        .iter()
        .filter_map(|(id, x)| Some(s1_item(x, b.get(id)?)))
        .collect();
    (mean(&xs), xs.len())
}

/// The share of `items` (of the system's wrong answers) on which `answers` gave the system's
/// answer, over those it answered.
fn same_wrong_share(
    answers: &HashMap<ExampleId, Vec<String>>,
    system: &SystemAnswers,
    items: &[&ExampleId],
) -> Option<f64> {
    let same: Vec<f64> = items
        .iter()
        .filter_map(|id| Some(s1_item(answers.get(id)?, &system.answers[id])))
        .map(|s| f64::from(u8::from(s == 1.0)))
        .collect();
    mean(&same)
}

/// The lower quartile of the other humans' rates of repeating a system's errors: the reference
/// that copiers of the system cannot raise while they are fewer than three in four of the
/// humans compared with (a mean moved with every copier among them). `None` without humans.
fn lower_quartile(mut rates: Vec<f64>) -> Option<f64> {
    rates.sort_by(f64::total_cmp);
    rates.get(rates.len().saturating_sub(1) / 4).copied()
}

fn machine_agreement(
    mine: &HashMap<ExampleId, Vec<String>>,
    peers: &[&HashMap<ExampleId, Vec<String>>],
    systems: &[SystemAnswers],
) -> Option<(MachineAgreement, MachineSignals)> {
    let with_humans: Vec<f64> = peers
        .iter()
        .filter_map(|p| match agreement(mine, p) {
            (Some(v), n) if n >= MACHINE_ITEMS => Some(v),
            _ => None,
        })
        .collect();
    let with_humans = mean(&with_humans);
    let best = systems
        .iter()
        .filter_map(|s| match agreement(mine, &s.answers) {
            (Some(v), n) if n >= MACHINE_ITEMS => Some((s, v, n)),
            _ => None,
        })
        .max_by(|x, y| x.1.total_cmp(&y.1))?;
    let (system, with_system, items) = best;
    let mut wrong: Vec<&ExampleId> = system
        .wrong
        .iter()
        .filter(|id| mine.contains_key(id) && system.answers.contains_key(id))
        .collect();
    wrong.sort_unstable();
    let same_wrong = wrong
        .iter()
        .filter(|id| s1_item(&mine[id], &system.answers[id]) == 1.0)
        .count();
    let humans: Vec<f64> = peers
        .iter()
        .filter_map(|p| same_wrong_share(p, system, &wrong))
        .collect();
    let humans_same_wrong = lower_quartile(humans);
    let share = same_wrong as f64 / wrong.len().max(1) as f64;
    let enough = wrong.len() >= MACHINE_ERROR_ITEMS;
    let fired = with_humans.is_some_and(|h| with_system - h >= MACHINE_GAP)
        && enough
        && share >= MACHINE_ERROR_SHARE;
    let rate = humans_same_wrong.map(|q| q.max(MACHINE_HUMAN_RATE));
    let strong = with_humans.is_some_and(|h| with_system > h)
        && enough
        && share >= MACHINE_STRONG_SHARE
        && rate.is_some_and(|q| {
            binomial_tail(same_wrong as u64, wrong.len() as u64, q) < MACHINE_CHANCE
        });
    Some((
        MachineAgreement {
            system: system.name.clone(),
            with_system,
            items,
            with_humans,
            system_wrong: wrong.len(),
            same_wrong,
            humans_same_wrong,
        },
        MachineSignals { fired, strong },
    ))
}

/// The one label of every answered test item, where there are enough of them and their golds
/// hold more than one label.
fn straight_line(a: &AnnotatorRecord, data: &TaskData) -> Option<String> {
    if data.spec.family != Family::Classification {
        return None;
    }
    let answered: Vec<&ItemRecord> = a
        .items
        .iter()
        .filter(|i| i.phase == Phase::Test && !i.skipped && i.answer.is_some())
        .collect();
    if answered.len() < STRAIGHT_LINE_ITEMS {
        return None;
    }
    let labels: BTreeSet<&Vec<String>> =
        answered.iter().filter_map(|i| i.answer.as_ref()).collect();
    let golds: BTreeSet<&Vec<String>> = answered
        .iter()
        .filter_map(|i| data.test_golds.get(&i.example_id).map(|g| &g.official))
        .collect();
    match (labels.len(), golds.len() > 1) {
        (1, true) => labels.first().and_then(|l| l.first().cloned()),
        _ => None,
    }
}

/// Timed test answers and those faster than reading the item at the floor, on the server's
/// clock (from showing the item to receiving the answer): the page's claim is not the measure.
/// A skip is no answer, and needs no reading.
fn fast_answers(a: &AnnotatorRecord, data: &TaskData) -> (usize, usize) {
    let times: Vec<(i64, u32)> = a
        .items
        .iter()
        .filter(|i| i.phase == Phase::Test && !i.skipped)
        .filter_map(|i| {
            let ms = server_ms(i.shown_at, i.submitted_at)?;
            Some((ms, *data.words.get(&i.example_id)?))
        })
        .collect();
    let fast = times
        .iter()
        .filter(|(ms, words)| (*ms as f64) < f64::from(*words) / READING_FLOOR_WPM * 60_000.0)
        .count();
    (times.len(), fast)
}

/// Shared errors among each task's annotators (`shared_errors`): wrong is under full credit
/// on the item (any of its gold answers).
fn shared_by_task(
    annotators: &[&AnnotatorRecord],
    tasks: &HashMap<String, TaskData>,
    answered: &HashMap<AssignmentId, HashMap<ExampleId, Vec<String>>>,
) -> HashMap<AssignmentId, Shared> {
    let mut by_task: HashMap<&str, Vec<Answers>> = HashMap::new();
    for a in annotators {
        let data = &tasks[&a.task];
        let answers = &answered[&a.assignment];
        let wrong = answers
            .iter()
            .filter(|(id, pred)| {
                data.test_golds
                    .get(id)
                    .is_some_and(|g| data.spec.score(g, pred, Scoring::AnyOf) < 1.0)
            })
            .map(|(id, _)| *id)
            .collect();
        by_task.entry(a.task.as_str()).or_default().push(Answers {
            assignment: a.assignment,
            answers,
            wrong,
        });
    }
    by_task
        .values()
        .flat_map(|workers| shared_errors(workers))
        .collect()
}

/// Up to `PEERS` of a task's finished annotators (by assignment) other than `me`, spread evenly
/// over them: the first to finish (a farm that starts first) are no more of them than of all.
fn spread(all: &[AssignmentId], me: AssignmentId) -> impl Iterator<Item = &AssignmentId> {
    let others: Vec<&AssignmentId> = all.iter().filter(|p| **p != me).collect();
    let n = others.len();
    let take = n.min(PEERS);
    (0..take).map(move |k| others[k * n / take])
}

/// Every annotator's authenticity. Machine agreement compares each with up to `PEERS` other
/// finished annotators of its task, spread over them (`spread`), and with each system's
/// answers.
pub fn assess(
    annotators: &[&AnnotatorRecord],
    tasks: &HashMap<String, TaskData>,
) -> HashMap<AssignmentId, Authenticity> {
    // Answers in the official encoding (shared errors read every task's), and each task's
    // finished annotators as peers, only for the tasks that have system runs to agree with.
    let with_systems = |a: &&&AnnotatorRecord| !tasks[&a.task].systems.is_empty();
    let answered: HashMap<AssignmentId, HashMap<ExampleId, Vec<String>>> = annotators
        .iter()
        .map(|a| (a.assignment, answers(a, &tasks[&a.task])))
        .collect();
    let shared = shared_by_task(annotators, tasks, &answered);
    let mut peers_of: HashMap<&str, Vec<AssignmentId>> = HashMap::new();
    let mut finished: Vec<&&AnnotatorRecord> = annotators
        .iter()
        .filter(with_systems)
        .filter(|a| a.status == PlaceStatus::Finished)
        .collect();
    finished.sort_by_key(|a| a.assignment);
    for a in finished {
        peers_of
            .entry(a.task.as_str())
            .or_default()
            .push(a.assignment);
    }
    annotators
        .iter()
        .map(|a| {
            let data = &tasks[&a.task];
            let items: Vec<&ItemRecord> = a
                .items
                .iter()
                .filter(|i| i.submitted_at.is_some())
                .collect();
            let mut e = Evidence::default();
            for i in &items {
                e.add(i.signals.as_ref(), server_ms(i.shown_at, i.submitted_at));
            }
            (e.timed_answers, e.fast_answers) = fast_answers(a, data);
            e.straight_line = straight_line(a, data);
            let machine = answered.get(&a.assignment).and_then(|mine| {
                let all = peers_of.get(a.task.as_str()).map_or(&[][..], Vec::as_slice);
                let peers: Vec<&HashMap<ExampleId, Vec<String>>> =
                    spread(all, a.assignment).map(|p| &answered[p]).collect();
                machine_agreement(mine, &peers, &data.systems)
            });
            e.machine_signal = machine.as_ref().is_some_and(|m| m.1.fired);
            e.machine_strong = machine.as_ref().is_some_and(|m| m.1.strong);
            if let Some(s) = shared.get(&a.assignment).filter(|s| s.partners > 0) {
                (e.shared_with, e.shared_strong) = (s.partners, s.strong);
                (e.shared_judged, e.shared_repeated) = (s.judged, s.repeated);
            }
            let reasons = e.reasons();
            let auth = Authenticity {
                level: e.level(),
                reasons,
                totals: totals(&items),
                machine: machine.map(|m| m.0),
                evidence: e,
            };
            (a.assignment, auth)
        })
        .collect()
}
