//! The researcher view on the official CLUES SST-2 and CoNLL03 data: simulated annotators of
//! known accuracy go through the whole protocol (0/10/20/30 shots, 3 each); every table cell,
//! the filter, majority vote, agreement, the Table 8/9 subsets and the pay are checked against
//! the test's own computation from the official files, and the exports are read back.
use crate::common;

mod draws;
mod systems;
mod tamper;

use axum::http::StatusCode;
use common::client::{env, get, login, new_study, Env};
use domain::answer::{Answer, SpanAnswer};
use domain::authenticity::ItemSignals;
use domain::report::{Report, Subset};
use domain::rng::SplitMix64;
use domain::wire::study::WorkerStep;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use store::annotations::AnnotationRow;
use store::db::cli as db;
use store::study::{self, CrowdInfo};

/// A line of an official file, read by the test itself.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    id: String,
    context: String,
    question: String,
    answer: Vec<String>,
}

fn read_lines(path: &Path) -> Vec<Line> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Line {
                id: match &v["id"] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                context: v["context"].as_str().unwrap().to_string(),
                question: v["question"].as_str().unwrap().to_string(),
                answer: v["answer"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

/// Each line of a JSONL file as a JSON value.
fn read_json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// F1 between two answer sets, written here from the definition.
fn f1(pred: &[String], gold: &[String]) -> f64 {
    let p: HashSet<&String> = pred.iter().collect();
    let g: HashSet<&String> = gold.iter().collect();
    match (p.is_empty(), g.is_empty()) {
        (true, true) => return 1.0,
        (true, false) | (false, true) => return 0.0,
        _ => {}
    }
    let hits = p.intersection(&g).count() as f64;
    if hits == 0.0 {
        0.0
    } else {
        2.0 * hits / (p.len() + g.len()) as f64
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn std_pop(xs: &[f64]) -> f64 {
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt()
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-9, "{what}: platform {a}, test {b}");
}

/// A platform spread against the test's own mean and population std of `scores`.
fn close_spread(s: &domain::s1::Spread, scores: &[f64], what: &str) {
    close(s.mean, mean(scores), &format!("{what} mean"));
    close(s.std_pop, std_pop(scores), &format!("{what} std"));
}

struct TaskFiles {
    name: &'static str,
    ner: bool,
    /// File name -> lines.
    files: HashMap<String, Vec<Line>>,
    test_file: String,
    dir: PathBuf,
}

impl TaskFiles {
    fn load(dir: &Path, name: &'static str, prefix: &str) -> Self {
        let dir = dir.join(name);
        let mut files = HashMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().and_then(|e| e.to_str()) == Some("jsonl") {
                let n = p.file_name().unwrap().to_str().unwrap().to_string();
                files.insert(n, read_lines(&p));
            }
        }
        TaskFiles {
            name,
            ner: name == "CoNLL2003",
            files,
            test_file: format!("{prefix}_test.jsonl"),
            dir,
        }
    }
    fn train(&self, k: u32) -> &[Line] {
        let prefix = self.test_file.trim_end_matches("_test.jsonl");
        &self.files[&format!("{prefix}_train_{k}_1.jsonl")]
    }
    /// The official encoding of an internal answer: NER writes "no entity" as `[""]`.
    fn official(&self, answer: &[String]) -> Vec<String> {
        if self.ner && answer.is_empty() {
            vec![String::new()]
        } else {
            answer.to_vec()
        }
    }
}

/// What the test recorded of one simulated annotator. `None` answers are skips.
struct Sim {
    worker: String,
    k: u32,
    assignment: domain::ids::AssignmentId,
    training: Vec<(Line, Vec<String>)>,
    test: Vec<(Line, Option<Vec<String>>, Option<u8>)>,
}

impl Sim {
    /// Test S1 with a skip scoring 0.
    fn test_s1(&self, t: &TaskFiles) -> f64 {
        let s: Vec<f64> = self
            .test
            .iter()
            .map(|(l, a, _)| a.as_ref().map_or(0.0, |a| f1(&t.official(a), &l.answer)))
            .collect();
        mean(&s)
    }
    /// Test S1 over the answered items only, and the number of skips.
    fn answered_s1(&self, t: &TaskFiles) -> (f64, usize) {
        let s: Vec<f64> = self
            .test
            .iter()
            .filter_map(|(l, a, _)| Some(f1(&t.official(a.as_ref()?), &l.answer)))
            .collect();
        (mean(&s), self.test.len() - s.len())
    }
    fn training_s1_on(&self, t: &TaskFiles, keep: impl Fn(&Line) -> bool) -> Option<f64> {
        let s: Vec<f64> = self
            .training
            .iter()
            .filter(|(l, _)| keep(l))
            .map(|(l, a)| f1(&t.official(a), &l.answer))
            .collect();
        (!s.is_empty()).then(|| mean(&s))
    }
}

/// Spans of `strings` at their first occurrence in `context`, in code points.
fn spans_in(context: &str, strings: &[String]) -> Vec<SpanAnswer> {
    let mut out: Vec<SpanAnswer> = Vec::new();
    for s in strings {
        if s.is_empty() || out.iter().any(|x| &x.text == s) {
            continue;
        }
        if let Some(b) = context.find(s.as_str()) {
            out.push(SpanAnswer {
                text: s.clone(),
                offset: context[..b].chars().count(),
                length: s.chars().count(),
            });
        }
    }
    out
}

/// A simulated answer: right with probability `acc`, else a plausible mistake.
fn answer_for(
    t: &TaskFiles,
    labels: &[String],
    line: &Line,
    acc: f64,
    rng: &mut SplitMix64,
    may_skip: bool,
) -> Answer {
    if may_skip && rng.unit() < 0.03 {
        return Answer::Skip { confidence: None };
    }
    let right = rng.unit() < acc;
    if !t.ner {
        let gold = &line.answer[0];
        let label = if right {
            gold.clone()
        } else {
            labels.iter().find(|l| *l != gold).unwrap().clone()
        };
        let confidence = if right {
            3 + rng.below(3)
        } else {
            1 + rng.below(3)
        } as u8;
        return Answer::Label { label, confidence };
    }
    let spans = if right {
        spans_in(&line.context, &line.answer)
    } else if !line.answer.iter().all(String::is_empty) && rng.unit() < 0.5 {
        Vec::new()
    } else {
        let words: Vec<&str> = line.context.split_whitespace().collect();
        let w = words[rng.below(words.len())].to_string();
        spans_in(&line.context, &[w])
    };
    if spans.is_empty() {
        Answer::NoAnswer
    } else {
        Answer::Spans { spans }
    }
}

/// Runs one simulated worker through a study from arrival to the end page.
async fn simulate(
    env: &Env,
    study_id: domain::ids::StudyId,
    t: &TaskFiles,
    pid: &str,
    acc: f64,
    train_acc: f64,
    seed: u64,
) -> Sim {
    let pool = &env.state.pool;
    let user = store::auth::crowd_worker(pool, domain::platform::Platform::Prolific, pid)
        .await
        .unwrap();
    let crowd = CrowdInfo {
        platform: Some(domain::platform::Platform::Prolific),
        worker: Some(pid.into()),
        study: Some("P-STUDY".into()),
        session: Some(format!("S-{pid}")),
        assignment: None,
        submit_to: None,
        earlier_assignments: Vec::new(),
        presented: Vec::new(),
    };
    let loaded = study::load(pool, study_id).await.unwrap();
    let labels = loaded.spec.label_names();
    // The place, as the study link's Start takes it.
    let now = || env.state.now_ms();
    study::enter(&env.state.writer, &loaded, user.id, Some(&crowd), now())
        .await
        .unwrap();
    let mut sim = Sim {
        worker: user.name.clone(),
        k: 0,
        assignment: domain::ids::AssignmentId(0),
        training: Vec::new(),
        test: Vec::new(),
    };
    let mut n = 0;
    loop {
        let state = study::worker_state(&env.state.writer, study_id, user.id, now())
            .await
            .unwrap();
        sim.k = state.k;
        let item = match state.step {
            WorkerStep::Item(item) => item,
            WorkerStep::Done(_) => break,
            other => panic!("{pid}: {other:?} in a study without pages"),
        };
        if sim.assignment.0 == 0 {
            sim.assignment = sqlx::query_scalar(
                "SELECT id FROM assignments WHERE study_id = $1 AND worker_id = $2",
            )
            .bind(study_id)
            .bind(user.id)
            .fetch_one(pool)
            .await
            .unwrap();
        }
        if item.reveal.is_some() {
            study::acknowledge(&env.state.writer, study_id, user.id, item.position, now())
                .await
                .unwrap();
            continue;
        }
        let (file, line_no): (String, i64) = sqlx::query_as(
            "SELECT f.file_name, e.line_no FROM assignment_items i JOIN examples e ON e.id = i.example_id
             JOIN data_files f ON f.id = e.file_id WHERE i.assignment_id = $1 AND i.position = $2",
        )
        .bind(sim.assignment)
        .bind(item.position)
        .fetch_one(pool)
        .await
        .unwrap();
        let line = t.files[&file][line_no as usize - 1].clone();
        let training = item.phase == domain::place::Phase::Training;
        // The worker's draws for this item: the same whatever order the server presents the
        // items in (it shuffles them per place), so the study's data are the same every run.
        let mut rng = SplitMix64(
            file.bytes()
                .fold(seed, |h, b| h.rotate_left(7) ^ u64::from(b))
                ^ ((line_no as u64) << 40),
        );
        let a = answer_for(
            t,
            &labels,
            &line,
            if training { train_acc } else { acc },
            &mut rng,
            !training,
        );
        n += 1;
        let client_id = format!("c{n}");
        // What the page sends: its record of the item (no time away; the server's own clock
        // times the answer).
        let sent = study::Sent {
            position: item.position,
            client_id: &client_id,
            answer: a.clone(),
            signals: Some(ItemSignals::default()),
        };
        let ack = study::submit(pool, &env.state.writer, study_id, user.id, sent, now())
            .await
            .unwrap();
        if training {
            assert!(ack.reveal.is_some());
            sim.training.push((line, a.strings()));
            study::acknowledge(&env.state.writer, study_id, user.id, item.position, now())
                .await
                .unwrap();
        } else {
            let skipped = matches!(a, Answer::Skip { .. });
            sim.test
                .push((line, (!skipped).then(|| a.strings()), a.confidence()));
        }
    }
    sim
}

/// Majority answer of ballots (skips are no ballot), written here from the rule.
fn vote(ballots: &[&Vec<String>], ner: bool, labels: &[String]) -> Vec<String> {
    let mut counts: HashMap<&String, usize> = HashMap::new();
    for b in ballots {
        for s in b.iter().collect::<HashSet<_>>() {
            *counts.entry(s).or_default() += 1;
        }
    }
    if ner {
        let mut kept: Vec<String> = counts
            .iter()
            .filter(|(_, c)| 2 * **c > ballots.len())
            .map(|(s, _)| (*s).clone())
            .collect();
        kept.sort();
        kept
    } else {
        let top = counts.values().copied().max().unwrap_or(0);
        labels
            .iter()
            .find(|l| counts.get(l) == Some(&top) && top > 0)
            .map(|l| vec![l.clone()])
            .unwrap_or_default()
    }
}

fn fleiss(rows: &[Vec<usize>]) -> f64 {
    let n: usize = rows[0].iter().sum();
    let (nf, items) = (n as f64, rows.len() as f64);
    let p: f64 = rows
        .iter()
        .map(|r| (r.iter().map(|c| c * c).sum::<usize>() as f64 - nf) / (nf * (nf - 1.0)))
        .sum::<f64>()
        / items;
    let pe: f64 = (0..rows[0].len())
        .map(|j| (rows.iter().map(|r| r[j]).sum::<usize>() as f64 / (items * nf)).powi(2))
        .sum();
    (p - pe) / (1.0 - pe)
}

/// Checks every cell of one task against the test's own numbers.
/// A cell's 95% interval over other annotators from the annotators' S1 by hand, the t-interval
/// on the logit scale (the t quantile is checked against scipy in domain's tests); the item
/// bootstrap's covers the mean and lies within [0, 1].
fn check_intervals(cell: &domain::report::Cell, scores: &[f64], items: usize) {
    let ci = cell.official_ci.unwrap();
    let n = scores.len() as f64;
    let m = mean(scores);
    let sd = (scores.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = domain::stats::dist::t_quantile(0.975, n - 1.0) * sd / n.sqrt() / (m * (1.0 - m));
    let expit = |z: f64| 1.0 / (1.0 + (-z).exp());
    let logit = (m / (1.0 - m)).ln();
    let t = ci.other_units.unwrap();
    close(t.low, expit(logit - half), "interval over annotators, low");
    close(
        t.high,
        expit(logit + half),
        "interval over annotators, high",
    );
    let b = ci.more_items.unwrap();
    assert!(
        0.0 <= b.low && b.low <= m && m <= b.high && b.high <= 1.0,
        "{b:?} {m}"
    );
    assert_eq!(ci.items, items);
}

/// Per test item (by id and question: NER asks one per entity type): the mean S1 over a
/// group's annotators, a skip scoring 0.
fn item_means_of(group: &[&Sim], t: &TaskFiles) -> HashMap<(String, String), f64> {
    let mut sums: HashMap<(String, String), f64> = HashMap::new();
    for s in group {
        for (l, a, _) in &s.test {
            let x = a.as_ref().map_or(0.0, |a| f1(&t.official(a), &l.answer));
            *sums.entry((l.id.clone(), l.question.clone())).or_default() += x / group.len() as f64;
        }
    }
    sums
}

fn check_task(r: &Report, t: &TaskFiles, sims: &[Sim], labels: &[String]) {
    let flagged: HashSet<&str> = r
        .annotators
        .iter()
        .filter(|a| a.flagged)
        .map(|a| a.worker.as_str())
        .collect();
    // The filter: training S1 more than 0.2 below the mean of the others of the scenario.
    for k in [10, 20, 30] {
        let group: Vec<&Sim> = sims.iter().filter(|s| s.k == k).collect();
        let tr: Vec<f64> = group
            .iter()
            .map(|s| s.training_s1_on(t, |_| true).unwrap())
            .collect();
        for (i, s) in group.iter().enumerate() {
            let others = (tr.iter().sum::<f64>() - tr[i]) / (tr.len() - 1) as f64;
            // "More than": scores within 1e-9 are equal (f64 rounding at the boundary).
            assert_eq!(
                flagged.contains(s.worker.as_str()),
                others - tr[i] > 0.2 + 1e-9,
                "filter for {} ({k} shots)",
                s.worker
            );
        }
    }
    let in20: HashSet<(String, String)> = t
        .train(20)
        .iter()
        .map(|l| (l.context.clone(), l.question.clone()))
        .collect();
    let key = |l: &Line| (l.context.clone(), l.question.clone());
    for (tables, filtered) in [(&r.all, false), (&r.filtered, true)] {
        let mut item_means: Vec<HashMap<(String, String), f64>> = Vec::new();
        for k in [0, 10, 20, 30] {
            let group: Vec<&Sim> = sims
                .iter()
                .filter(|s| s.k == k && !(filtered && flagged.contains(s.worker.as_str())))
                .collect();
            let scores: Vec<f64> = group.iter().map(|s| s.test_s1(t)).collect();
            let cell = tables
                .main
                .iter()
                .find(|c| c.task == t.name && c.k == k)
                .unwrap();
            assert_eq!(cell.official.n, group.len());
            close_spread(&cell.official, &scores, &format!("{} k={k}", t.name));
            check_intervals(cell, &scores, group[0].test.len());
            item_means.push(item_means_of(&group, t));
            // Skips: the rate, and S1 over the answered items as the second view.
            let answered: Vec<(f64, usize)> = group.iter().map(|s| s.answered_s1(t)).collect();
            let skipped: usize = answered.iter().map(|a| a.1).sum();
            let items: usize = group.iter().map(|s| s.test.len()).sum();
            assert_eq!(
                (cell.skipped, cell.test_items),
                (skipped, items),
                "{} k={k} skips",
                t.name
            );
            let answered: Vec<f64> = answered.iter().map(|a| a.0).collect();
            close_spread(
                cell.answered.as_ref().unwrap(),
                &answered,
                &format!("{} k={k} answered", t.name),
            );
            // Majority vote and agreement on the test items.
            let agg = tables
                .scenarios
                .iter()
                .find(|s| s.task == t.name && s.k == k)
                .unwrap();
            let mut votes = Vec::new();
            let mut kappa_rows = Vec::new();
            for (line, ..) in &group[0].test {
                let ballots: Vec<&Vec<String>> = group
                    .iter()
                    .filter_map(|s| {
                        let (l, a, _) = s.test.iter().find(|(l, ..)| l.id == line.id).unwrap();
                        assert_eq!(l, line);
                        a.as_ref()
                    })
                    .collect();
                // An item every annotator skipped has no vote and scores 0.
                votes.push(if ballots.is_empty() {
                    0.0
                } else {
                    f1(&t.official(&vote(&ballots, t.ner, labels)), &line.answer)
                });
                if !t.ner && ballots.len() == group.len() {
                    kappa_rows.push(
                        labels
                            .iter()
                            .map(|l| ballots.iter().filter(|b| b[0] == *l).count())
                            .collect::<Vec<_>>(),
                    );
                }
            }
            close(
                agg.majority_s1,
                mean(&votes),
                &format!("{} k={k} majority", t.name),
            );
            if !t.ner {
                assert_eq!(agg.agreement.items, kappa_rows.len());
                close(
                    agg.agreement.value.unwrap(),
                    fleiss(&kappa_rows),
                    &format!("{} k={k} kappa", t.name),
                );
            } else {
                let mut pairs = Vec::new();
                for a in 0..group.len() {
                    for b in a + 1..group.len() {
                        let s: Vec<f64> = group[a]
                            .test
                            .iter()
                            .filter_map(|(l, x, _)| {
                                let (_, y, _) =
                                    group[b].test.iter().find(|(m, ..)| m.id == l.id)?;
                                Some(f1(x.as_ref()?, y.as_ref()?))
                            })
                            .collect();
                        pairs.push(mean(&s));
                    }
                }
                close(
                    agg.agreement.value.unwrap(),
                    mean(&pairs),
                    &format!("{} k={k} pairwise", t.name),
                );
            }
        }
        // Each scenario against the next smaller one: the mean item difference, independently
        // (on every annotator answering every item, the model's estimate is the difference of
        // the scenarios' means).
        for (i, pair) in [0u32, 10, 20, 30].windows(2).enumerate() {
            let want = Some(domain::analysis_plan::Contrast::Pair {
                a: pair[0],
                b: pair[1],
            });
            let c = tables
                .comparisons
                .iter()
                .find(|c| c.task == t.name && c.contrast == want)
                .unwrap_or_else(|| panic!("{} {pair:?} compared", t.name));
            let (a, b) = (&item_means[i], &item_means[i + 1]);
            let d: Vec<f64> = a.iter().map(|(id, x)| b[id] - x).collect();
            assert_eq!(c.items, d.len());
            close(
                c.difference,
                mean(&d),
                &format!("{} {pair:?} difference", t.name),
            );
            assert!(c.interval.is_none_or(|i| i.contains(c.difference)));
            let p = c.p().unwrap();
            assert!(c.p_holm.unwrap() >= p && p > 0.0 && p <= 1.0);
        }
        // Table 8: groups 20 and 30 on the 20-shot items; Table 9: group 30 on 30 \ 20.
        for group_k in [20, 30] {
            let s: Vec<f64> = sims
                .iter()
                .filter(|s| s.k == group_k && !(filtered && flagged.contains(s.worker.as_str())))
                .map(|s| s.training_s1_on(t, |l| in20.contains(&key(l))).unwrap())
                .collect();
            let c = tables
                .table8
                .iter()
                .find(|c| c.task == t.name && c.group_k == group_k)
                .unwrap();
            assert_eq!(c.subset, Subset::Shots { k: 20 });
            assert_eq!(c.items, t.train(20).len());
            close_spread(
                &c.spread,
                &s,
                &format!("{} table 8 group {group_k}", t.name),
            );
        }
        let s: Vec<f64> = sims
            .iter()
            .filter(|s| s.k == 30 && !(filtered && flagged.contains(s.worker.as_str())))
            .map(|s| s.training_s1_on(t, |l| !in20.contains(&key(l))).unwrap())
            .collect();
        let c = tables.table9.iter().find(|c| c.task == t.name).unwrap();
        assert_eq!(c.subset, Subset::NewIn { k: 30, without: 20 });
        assert_eq!(c.items, t.train(30).len() - t.train(20).len());
        close_spread(&c.spread, &s, &format!("{} table 9", t.name));
    }
    // Per annotator: test S1 and training S1.
    for s in sims {
        let a = r.annotators.iter().find(|a| a.worker == s.worker).unwrap();
        close(
            a.test_s1.unwrap(),
            s.test_s1(t),
            &format!("{} test S1", s.worker),
        );
        if s.k > 0 {
            close(
                a.training_s1.unwrap(),
                s.training_s1_on(t, |_| true).unwrap(),
                "training S1",
            );
        }
        assert_eq!(
            a.skips,
            s.test.iter().filter(|(_, a, _)| a.is_none()).count()
        );
    }
}

/// The reference answers beside the humans, against the test's own computation from the
/// official files: SST-2's majority label of each training file, CoNLL03's "no entity" and a
/// gazetteer of each file's entities, mean and population std over the five splits.
fn check_references(r: &Report, t: &TaskFiles, labels: &[String]) {
    let test = &t.files[&t.test_file];
    let s1_of = |answer: &dyn Fn(&Line) -> Vec<String>| {
        mean(
            &test
                .iter()
                .map(|l| f1(&t.official(&answer(l)), &l.answer))
                .collect::<Vec<_>>(),
        )
    };
    let cell = |name: &str, k: u32| {
        r.references
            .iter()
            .find(|c| c.system == name && c.task == t.name && c.k == k)
            .unwrap_or_else(|| panic!("{name} at k={k} of {}", t.name))
    };
    let prefix = t.test_file.trim_end_matches("_test.jsonl");
    let shots = |k: u32, split: u32| &t.files[&format!("{prefix}_train_{k}_{split}.jsonl")];
    let is_word = |text: &str, w: &str| {
        text.match_indices(w).any(|(b, _)| {
            let before = text[..b].chars().last();
            let after = text[b + w.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    };
    for k in [10, 20, 30] {
        let per_split: Vec<f64> = (1..=5)
            .map(|split| {
                let train = shots(k, split);
                if t.ner {
                    s1_of(&|l: &Line| {
                        let mut names: Vec<String> = Vec::new();
                        for x in train.iter().filter(|x| x.question == l.question) {
                            for a in x.answer.iter().filter(|a| !a.is_empty()) {
                                if is_word(&l.context, a) && !names.contains(a) {
                                    names.push(a.clone());
                                }
                            }
                        }
                        names
                    })
                } else {
                    let count =
                        |label: &String| train.iter().filter(|x| &x.answer[0] == label).count();
                    let top = labels.iter().map(count).max().unwrap();
                    let label = labels.iter().find(|l| count(l) == top).unwrap().clone();
                    s1_of(&|_: &Line| vec![label.clone()])
                }
            })
            .collect();
        let name = if t.ner {
            "Reference: gazetteer of the k shots' entities"
        } else {
            "Reference: majority label of the k shots"
        };
        let c = cell(name, k);
        assert_eq!(c.splits, vec![1, 2, 3, 4, 5]);
        close_spread(
            &c.official,
            &per_split,
            &format!("{name}, {} k={k}", t.name),
        );
    }
    if t.ner {
        let none = s1_of(&|_: &Line| Vec::new());
        for k in [0, 10, 20, 30] {
            let c = cell("Reference: always no answer", k);
            assert_eq!(c.splits, vec![0]);
            close(c.official.mean, none, "always no answer");
        }
        // 51.3 in the paper's own "no entity" row of CoNLL03.
        assert!((none - 0.513).abs() < 0.001, "{none}");
    } else {
        assert!(!r.references.iter().any(|c| c.task == t.name && c.k == 0));
    }
}

async fn fetch(env: &Env, path: &str, cookie: &str) -> String {
    let r = get(&env.state, path, Some(cookie)).await;
    assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    r.body
}

#[tokio::test]
async fn human_tables_from_simulated_annotators() {
    let Some(dir) = common::clues_data("human_tables_from_simulated_annotators") else {
        return;
    };
    let env = env().await;
    let pool = &env.state.pool;
    let tasks = [
        TaskFiles::load(&dir, "SST-2", "sst"),
        TaskFiles::load(&dir, "CoNLL2003", "conll"),
    ];
    let mut studies = Vec::new();
    let mut sims: Vec<Vec<Sim>> = Vec::new();
    for (ti, t) in tasks.iter().enumerate() {
        server::clues::import_dir(pool, &t.dir).await.unwrap();
        let id = new_study(&env.state, t.name, &[0, 10, 20, 30], 3).await;
        studies.push(id);
        let mut done = Vec::new();
        // Arrivals fill the scenarios in turn: 0, 10, 20, 30, 0, ...
        for w in 0..12u64 {
            let acc = [0.95, 0.85, 0.8][(w / 4) as usize];
            // The third 20-shot worker does badly in training only: the filter's target.
            let train_acc = if w == 10 { 0.05 } else { acc };
            let pid = format!("{}-w{w}", t.name);
            done.push(simulate(&env, id, t, &pid, acc, train_acc, 1000 * ti as u64 + w).await);
        }
        sims.push(done);
    }
    let rita = login(&env.state, "rita", "rita-password").await;
    let scope = format!("{},{}", studies[0], studies[1]);
    let report: Report = serde_json::from_str(
        &fetch(&env, &format!("/export/scores.json?studies={scope}"), &rita).await,
    )
    .unwrap();
    assert_eq!(report.shots, vec![0, 10, 20, 30]);
    assert_eq!(
        report
            .tasks
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["SST-2", "CoNLL2003"]
    );
    for (t, s) in tasks.iter().zip(&sims) {
        let study_id = studies[if t.ner { 1 } else { 0 }];
        let labels = study::load(pool, study_id)
            .await
            .unwrap()
            .spec
            .label_names();
        check_task(&report, t, s, &labels);
        check_references(&report, t, &labels);
        let target = format!("{}-w10", t.name);
        assert!(
            report
                .annotators
                .iter()
                .any(|a| a.flagged && a.worker.ends_with(&target)),
            "the poor trainee of {} is flagged",
            t.name
        );
    }
    // Confidence: the simulated workers are confident when right (3-5) and not when wrong (1-3).
    let conf = |l: u8| {
        report
            .all
            .confidence
            .iter()
            .find(|c| c.task == "SST-2" && c.level == l)
            .unwrap()
            .clone()
    };
    assert_eq!(conf(5).accuracy, Some(1.0));
    assert_eq!(conf(1).accuracy, Some(0.0));
    assert!(report.all.confidence.iter().all(|c| c.task == "SST-2"));

    exports_round_trip(&env, &rita, &scope, &tasks, &sims, &report).await;
    pay_sheet(&env, &rita, &scope, &sims[0][0]).await;
    // A system's runs on SST-2: the bundle's humans-against-system cells.
    systems::import_runs(&env, &rita, &tasks[0]).await;
    bundle(&env, &rita, &scope).await;
}

/// The bundle: reproducible bytes, every file listed in SHA256SUMS with its hash, and the
/// content hash (manifest) = SHA-256 of SHA256SUMS. Checked with Python's tarfile. Streamed, it
/// has no hash in a header or its name (the hash is known at its end).
async fn bundle(env: &Env, cookie: &str, scope: &str) {
    let path = format!("/export/bundle.tar?studies={scope}");
    let first = get(&env.state, &path, Some(cookie)).await;
    assert_eq!(first.status, StatusCode::OK);
    let disposition = first.headers["content-disposition"].to_str().unwrap();
    let name = format!("clues-lab-studies-{}-bundle.tar", scope.replace(',', "-"));
    assert!(disposition.contains(&name), "{disposition}");
    let again = get(&env.state, &path, Some(cookie)).await;
    assert_eq!(
        first.body, again.body,
        "the same data gives the same archive"
    );
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("b.tar");
    std::fs::write(&file, first.body.as_bytes()).unwrap();
    let said = python(PY_BUNDLE, &[file.to_str().unwrap()]);
    // 10 data files (system_scores.csv among them) and analysis.R with its five parts
    // (analysis_relabel.R, analysis_fits.R, analysis_draws.R, analysis_systems.R,
    // analysis_order.R), 24 annotators' and 8 majority prediction files, 2 charts.
    assert_eq!(said.trim(), "files 50 assignments 24", "{said}");
    let said = rerun_in_r(&file, tmp.path());
    systems::check_bundle(&tmp.path().join("clues-lab-bundle"), &said);
}

/// Whether R with lme4 and lmerTest is here for the bundle's `analysis.R`; on CI it must be.
fn r_available() -> bool {
    let has_r = std::process::Command::new("Rscript")
        .args(["-e", "library(lmerTest)"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_r {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "R with lme4 and lmerTest is needed for the bundle's analysis.R (.ci/setup installs it)"
        );
        eprintln!("SKIPPED the bundle's analysis.R: no Rscript with lmerTest here");
    }
    has_r
}

/// The bundle's `analysis.R` run in R on the unpacked bundle: every inferential cell it
/// reruns with lme4 and lmerTest agrees with the report's (it exits 1 on a difference).
fn rerun_in_r(tar: &Path, dir: &Path) -> String {
    if !r_available() {
        return String::new();
    }
    let untar = std::process::Command::new("tar")
        .arg("xf")
        .arg(tar)
        .arg("-C")
        .arg(dir)
        .status()
        .unwrap();
    assert!(untar.success());
    let bundle = dir.join("clues-lab-bundle");
    let out = std::process::Command::new("Rscript")
        .arg(bundle.join("analysis.R"))
        .arg(&bundle)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    // The cells that differ first: a long table's middle is what a CI log leaves out.
    let differ: Vec<&str> = said.lines().filter(|l| l.contains("DIFFERS")).collect();
    assert!(
        out.status.success(),
        "{}\n{said}{}",
        differ.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    // Both tasks' Table 5 cells and both studies' families of five comparisons.
    let last = said.lines().last().unwrap_or_default();
    assert!(last.contains(" cells checked, 0 differ beyond "), "{said}");
    let checked: usize = last
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(checked >= 2 * 4 * 3 + 2 * 5 * 4, "{said}");
    assert!(said.contains("study ") && said.contains(" p "), "{said}");
    // The label task's logistic cells, glmer's and the restricted fit's, were rerun too, and
    // the training order's halves, seconds and correlation.
    for cell in [
        "log-odds SE (glmer)",
        "log-odds SE (REML-Laplace)",
        "first half mean",
        "seconds SD",
        "r n",
        "r p",
    ] {
        assert!(
            said.lines().any(|l| l.contains(cell) && l.ends_with(" ok")),
            "{said}"
        );
    }
    said.into_owned()
}

const PY_BUNDLE: &str = r#"
import hashlib, json, sys, tarfile
t = tarfile.open(sys.argv[1])
files = {m.name.split("/", 1)[1]: t.extractfile(m).read() for m in t.getmembers()}
sums = files.pop("SHA256SUMS")
manifest = json.loads(files.pop("manifest.json"))
assert hashlib.sha256(sums).hexdigest() == manifest["content_sha256"]
assert [m["name"] for m in manifest["files"]] == [n.split("/", 1)[1] for n in t.getnames()[:-2]]
assert t.getnames()[-2:] == ["clues-lab-bundle/SHA256SUMS", "clues-lab-bundle/manifest.json"]
listed = {}
for line in sums.decode().splitlines():
    h, name = line.split("  ", 1)
    listed[name] = h
assert set(listed) == set(files), set(listed) ^ set(files)
for name, data in files.items():
    assert hashlib.sha256(data).hexdigest() == listed[name], name
for need in ["analysis.R", "analysis_systems.R", "system_scores.csv", "config.json", "assignments.jsonl", "annotations.jsonl", "annotations.csv", "scores.json",
             "scores.csv", "scores.md", "pay.csv", "charts/SST-2.svg", "charts/CoNLL2003.svg"]:
    assert need in files, need
assert b"reference,reference:Reference: majority label of the k shots,,official,SST-2," in files["scores.csv"]
assert b"analysis_plan," in files["scores.csv"]
plans = json.loads(files["analysis_plans.json"])
assert plans and all(hashlib.sha256(p["plan_json"].encode()).hexdigest() == p["sha256"] for p in plans), plans
assert b'data-name="Reference: always no answer"' in files["charts/CoNLL2003.svg"]
assert b"| Reference: gazetteer of the k shots' entities |" in files["scores.md"]
config = json.loads(files["config.json"])
assert all(c["versions"] and c["config"]["annotators"] == 3 for c in config)
orders = [json.loads(l) for l in files["assignments.jsonl"].decode().splitlines()]
for o in orders:
    positions = [i[0] for i in o["items"]]
    assert positions == list(range(len(positions))), positions[:5]
print("files", len(files), "assignments", len(orders))
"#;

/// Annotations read back equal the stored rows; CSV and JSONL agree under Python's csv/json;
/// CLUES-format predictions scored by the platform's scorer give the table values.
async fn exports_round_trip(
    env: &Env,
    cookie: &str,
    scope: &str,
    tasks: &[TaskFiles],
    sims: &[Vec<Sim>],
    report: &Report,
) {
    let pool = &env.state.pool;
    let jsonl = fetch(
        env,
        &format!("/export/annotations.jsonl?studies={scope}"),
        cookie,
    )
    .await;
    let rows: Vec<AnnotationRow> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    type Stored = (
        domain::ids::AssignmentId,
        i64,
        domain::ids::ExampleId,
        Option<String>,
        i64,
        i64,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<f64>,
    );
    let stored: Vec<Stored> = sqlx::query_as(
        "SELECT assignment_id, position, example_id, answer_json, no_answer, skipped, confidence,
            shown_at, submitted_at, acknowledged_at, client_id, s1 FROM assignment_items
         ORDER BY assignment_id, position",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), stored.len());
    for (r, s) in rows.iter().zip(&stored) {
        let answer: Vec<store::study::StoredSpan> =
            serde_json::from_str(s.3.as_deref().unwrap_or("[]")).unwrap();
        let back = (
            r.assignment_id,
            r.position,
            r.example_id,
            r.answer.clone(),
            i64::from(r.no_answer),
            i64::from(r.skipped),
            r.confidence.map(i64::from),
            r.shown_at,
            r.submitted_at,
            r.acknowledged_at,
            r.client_id.clone(),
            r.s1,
        );
        assert_eq!(
            back,
            (
                s.0,
                s.1,
                s.2,
                answer,
                s.4,
                s.5,
                s.6,
                s.7,
                s.8,
                s.9,
                s.10.clone(),
                s.11
            )
        );
        assert_eq!(
            r.gold_revealed,
            r.phase == domain::place::Phase::Training && r.submitted
        );
    }
    // The test's own record of every test answer is in the export.
    for sim in sims.iter().flatten() {
        for (line, answer, _) in &sim.test {
            let r = rows
                .iter()
                .find(|r| {
                    r.assignment_id == sim.assignment
                        && r.phase == domain::place::Phase::Test
                        && r.item_id == line.id
                })
                .unwrap();
            let texts: Vec<String> = r.answer.iter().map(|s| s.text.clone()).collect();
            assert_eq!(texts, answer.clone().unwrap_or_default());
            assert_eq!(r.skipped, answer.is_none());
        }
    }
    let csv = fetch(
        env,
        &format!("/export/annotations.csv?studies={scope}"),
        cookie,
    )
    .await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.jsonl"), &jsonl).unwrap();
    std::fs::write(tmp.path().join("a.csv"), &csv).unwrap();
    let a_jsonl = tmp.path().join("a.jsonl");
    let a_csv = tmp.path().join("a.csv");
    let out = python(
        PY_CHECK,
        &[a_jsonl.to_str().unwrap(), a_csv.to_str().unwrap()],
    );
    assert_eq!(out.trim(), rows.len().to_string());

    // Predictions in the CLUES format, scored by the platform's scorer against the official file.
    for (t, group) in tasks.iter().zip(sims) {
        let (golds, family) = learners::score::read_gold_file(&t.dir.join(&t.test_file)).unwrap();
        // The platform's scorer, and the same file as the official scorer reads it: without
        // the `skipped` field (a skip's answer alone must score 0).
        let score_file = |text: String, name: &str| {
            let p = tmp.path().join(name);
            std::fs::write(&p, &text).unwrap();
            let preds = learners::score::read_predictions(&p).unwrap();
            let ours = learners::score::score(&golds, family, &preds, name)
                .unwrap()
                .official;
            let bare: String = text
                .lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    v.as_object_mut().unwrap().remove("skipped");
                    format!("{v}\n")
                })
                .collect();
            std::fs::write(&p, bare).unwrap();
            let preds = learners::score::read_predictions(&p).unwrap();
            let official = learners::score::score(&golds, family, &preds, name)
                .unwrap()
                .official;
            close(
                official,
                ours,
                &format!("{name}: without the skipped field"),
            );
            ours
        };
        for s in group {
            let text = fetch(
                env,
                &format!(
                    "/export/predictions.jsonl?studies={scope}&assignment={}",
                    s.assignment
                ),
                cookie,
            )
            .await;
            close(
                score_file(text, "p.jsonl"),
                s.test_s1(t),
                &format!("{} scored predictions", s.worker),
            );
        }
        for k in [0, 10, 20, 30] {
            let text = fetch(
                env,
                &format!(
                    "/export/predictions.jsonl?studies={scope}&task={}&k={k}",
                    t.name
                ),
                cookie,
            )
            .await;
            let agg = report
                .all
                .scenarios
                .iter()
                .find(|a| a.task == t.name && a.k == k)
                .unwrap();
            close(
                score_file(text, "m.jsonl"),
                agg.majority_s1,
                &format!("{} k={k} majority file", t.name),
            );
        }
    }
}

/// Runs a Python script (Python's own csv, json, tarfile modules read the exports); its stdout.
fn python(script: &str, args: &[&str]) -> String {
    stdout_of(
        std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .args(args),
        "python3 is needed for this test (.ci/setup installs it)",
    )
}

/// What a command that must succeed prints; `missing` says what to install where it cannot run.
fn stdout_of(command: &mut std::process::Command, missing: &str) -> String {
    let out = command.output().expect(missing);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const PY_CHECK: &str = r#"
import csv, json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
with open(sys.argv[2], newline="", encoding="utf-8") as f:
    table = list(csv.DictReader(f))
assert len(rows) == len(table), (len(rows), len(table))
for j, c in zip(rows, table):
    assert list(j.keys()) == list(c.keys()), (list(j.keys()), list(c.keys()))
    for k, v in j.items():
        s = c[k]
        if v is None: assert s == "", (k, s)
        elif isinstance(v, bool): assert s == ("true" if v else "false"), (k, s)
        elif isinstance(v, (list, dict)): assert json.loads(s) == v, (k, s)
        elif isinstance(v, float): assert float(s) == v, (k, s, v)
        else: assert s == str(v), (k, s, v)
print(len(rows))
"#;

/// Time and pay from the server's timestamps at the study's hourly rate.
async fn pay_sheet(env: &Env, cookie: &str, scope: &str, sim: &Sim) {
    // 1 h 30 min at the default 12.00 an hour.
    sqlx::query("UPDATE assignments SET started_at = 1000000, finished_at = 6400000 WHERE id = $1")
        .bind(sim.assignment)
        .execute(&env.state.pool)
        .await
        .unwrap();
    let csv = fetch(env, &format!("/export/pay.csv?studies={scope}"), cookie).await;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(!csv.contains('"'), "{csv}");
    let rows: Vec<HashMap<&str, &str>> = lines
        .map(|l| header.iter().copied().zip(l.split(',')).collect())
        .collect();
    assert_eq!(rows.len(), 24);
    let row = rows.iter().find(|r| r["worker"] == sim.worker).unwrap();
    assert_eq!(
        row["crowd_worker_id"],
        sim.worker.trim_start_matches("prolific:")
    );
    assert_eq!(
        row["crowd_session_id"],
        format!("S-{}", row["crowd_worker_id"])
    );
    assert_eq!(
        (
            row["seconds"],
            row["pay_cents"],
            row["pay"],
            row["completion_code"]
        ),
        ("5400.0", "1800", "18.00", "DONE-1234")
    );
    assert_eq!(
        (row["started_at"], row["ended_at"]),
        ("1970-01-01T00:16:40.000Z", "1970-01-01T01:46:40.000Z")
    );
    // Every other worker: pay = seconds x 1200 / 3600, rounded.
    for r in &rows {
        let secs: f64 = r["seconds"].parse().unwrap();
        let cents: i64 = r["pay_cents"].parse().unwrap();
        assert_eq!(cents, (secs * 1200.0 / 3600.0).round() as i64, "{r:?}");
    }
}

#[tokio::test]
async fn exports_and_dashboard_are_for_staff_only() {
    let env = env().await;
    let pool = &env.state.pool;
    let worker = common::client::arrive(&env.state, domain::ids::StudyId(1), "someone").await;
    for path in [
        "/export/scores.json",
        "/export/bundle.tar",
        "/export/annotations.csv",
    ] {
        assert_eq!(
            get(&env.state, path, Some(&worker)).await.status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            get(&env.state, path, None).await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    let r = common::client::form(&env.state, "dashboard", "studies=", Some(&worker)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.body.contains("Forbidden"), "{}", r.body);
    let rita = login(&env.state, "rita", "rita-password").await;
    let bad = [
        ("/export/nothing.txt", StatusCode::NOT_FOUND),
        ("/export/scores.csv?studies=1,x", StatusCode::BAD_REQUEST),
        ("/export/scores.csv?studies=99", StatusCode::NOT_FOUND),
        ("/export/predictions.jsonl", StatusCode::BAD_REQUEST),
        ("/export/curve.svg?task=nope", StatusCode::NOT_FOUND),
        // The demo worker above has not finished: no predictions for a partial test set.
        (
            "/export/predictions.jsonl?assignment=1",
            StatusCode::CONFLICT,
        ),
    ];
    let before = common::snapshot(pool).await;
    for (path, status) in bad {
        let r = get(&env.state, path, Some(&rita)).await;
        assert_eq!(r.status, status, "{path}: {}", r.body);
        assert!(!r.body.is_empty());
    }
    assert_eq!(before, common::snapshot(pool).await);
    let ok = common::client::form(&env.state, "dashboard", "studies=", Some(&rita)).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
}

#[tokio::test]
async fn report_command_prints_tables_and_refuses_bad_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("r.db"));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    pool.close().await;
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &url, "report"])
            .args(args)
            .output()
            .unwrap()
    };
    let md = cli(&[]);
    assert!(
        md.status.success(),
        "{}",
        String::from_utf8_lossy(&md.stderr)
    );
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.starts_with("# Human scores\n"), "{md}");
    assert!(md.contains("### Human test S1 (official scoring), all finished annotators"));
    let csv = String::from_utf8(cli(&["--format", "csv", "--studies", "1"]).stdout).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "table,annotators,study,scoring,task,family,k,subset,n,items,mean,std,std_sample,ties,measure,level,other_units_low,other_units_high,more_items_low,more_items_high,tau_low,tau_high,r_low,r_high,se,df,p,p_holm,method,status,permutation_p,permutation_min_p,items_p,effect,needed,needed_low,needed_high,adjusted,adjusted_se,adjusted_p,logistic_log_odds,logistic_se,logistic_df,logistic_p,logistic_p_wald,logistic_other_units_low,logistic_other_units_high,logistic_reml_log_odds,logistic_reml_se,logistic_reml_p,seed"
    );
    let out = dir.path().join("b.tar");
    let b = cli(&["--format", "bundle", "--out", out.to_str().unwrap()]);
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    assert!(String::from_utf8_lossy(&b.stderr).contains("content hash"));
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
    for (args, says) in [
        (&["--format", "bundle"][..], "needs --out"),
        (&["--studies", "99"][..], "there is no study 99"),
        (&["--studies", "one"][..], "is not a study id"),
    ] {
        let r = cli(args);
        assert!(!r.status.success());
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[tokio::test]
async fn references_command_scores_the_trivial_answers_and_refuses_unknown_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("t.db"));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    pool.close().await;
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &url, "references"])
            .args(args)
            .output()
            .unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (out.status.success(), text(out.stdout), text(out.stderr))
    };
    // The demo's SQuAD v2 test file, read here: "no answer" is right on its empty items.
    let test =
        read_json_lines(&Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/squad-v2/test.jsonl"));
    let empty = test
        .iter()
        .filter(|v| v["answer"].as_array().unwrap().is_empty())
        .count();
    let expected = format!(
        "{:.1} ± 0.0 (n=1)",
        100.0 * empty as f64 / test.len() as f64
    );
    let (ok, md, err) = cli(&["--task", "demo-SQuAD-v2"]);
    assert!(ok, "{err}");
    assert!(
        md.starts_with("### Reference answers, test S1 (official scoring)"),
        "{md}"
    );
    for k in [0, 2, 4] {
        let row = format!("| {k} | Reference: always no answer | {expected} |");
        assert!(md.contains(&row), "{row} in {md}");
    }
    // Every task: the label tasks' majority label, ReCoRD's listed entity; none for CrossFit's.
    let (ok, all, err) = cli(&[]);
    assert!(ok, "{err}");
    for says in [
        "Reference: majority label of the k shots",
        "Reference: most often listed entity",
        "Reference: gazetteer of the k shots' entities",
        "demo-SST-2",
    ] {
        assert!(all.contains(says), "{says} in {all}");
    }
    assert!(!all.contains("demo-xf-"), "{all}");
    let (ok, _, err) = cli(&["--task", "nope"]);
    assert!(!ok && err.contains("nope"), "{err}");
}

#[tokio::test]
async fn plan_command_sizes_a_study_from_an_sd_or_pilot_data() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("p.db"));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    pool.close().await;
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["--database", &url])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Effect 0.1 / 0.1 = 1: statsmodels' solve_power gives 16.71 per group, so 17.
    let (ok, out, err) = cli(&["plan", "--difference", "0.1", "--sd", "0.1"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("to find 10.0 S1 points with power 0.8 at alpha 0.05"),
        "{out}"
    );
    assert!(
        out.contains("SD 10.0 points: 17 annotators per scenario"),
        "{out}"
    );
    let want = domain::stats::two_sample_power(1.0, 3.0, 3.0, 0.05);
    assert!(out.contains(&format!("power {want:.2}")), "{out}");
    for (args, says) in [
        (
            &["plan", "--difference", "0"][..],
            "--difference must be above 0",
        ),
        (
            &["plan", "--difference", "0.1", "--power", "1.5"][..],
            "--power must lie above --alpha",
        ),
        // A power at or below alpha is what a test has without any difference.
        (
            &[
                "plan",
                "--difference",
                "0.1",
                "--power",
                "0.05",
                "--sd",
                "0.1",
            ][..],
            "--power must lie above --alpha (0.05)",
        ),
        (
            &[
                "plan",
                "--difference",
                "0.1",
                "--power",
                "0.01",
                "--alpha",
                "0.05",
                "--sd",
                "0.1",
            ][..],
            "--power must lie above --alpha",
        ),
        (
            &["plan", "--difference", "0.1", "--alpha", "0"][..],
            "--alpha must lie between 0 and 1",
        ),
        (
            &["plan", "--difference", "0.1", "--sd=-1"][..],
            "--sd must be above 0",
        ),
        (
            &["plan", "--difference", "0.1", "--sd", "0.1", "--items", "0"][..],
            "--items must be at least 1",
        ),
        (&["plan", "--difference", "0.1"][..], "no pilot data"),
        (
            &["plan", "--difference", "0.1", "--studies", "99"][..],
            "there is no study 99",
        ),
    ] {
        let (ok, _, err) = cli(args);
        assert!(!ok && err.contains(says), "{args:?}: {err}");
    }
    // `load fill`'s workers are synthetic: never pilot data.
    let (ok, _, err) = cli(&["load", "fill", "--study", "1", "--rows", "800"]);
    assert!(ok, "{err}");
    let (_, _, err) = cli(&["plan", "--difference", "0.1", "--studies", "1"]);
    assert!(err.contains("no pilot data"), "{err}");
    // Made into people for this test: half of them at k=2, some items wrong, more for some
    // workers than others, so that the study's fit has annotator and residual variance.
    let pool = db::connect(&url).await.unwrap();
    for sql in [
        "UPDATE assignments SET synthetic = 0, k = CASE WHEN id % 2 = 0 THEN 2 ELSE 0 END",
        "UPDATE assignment_items SET s1 = 0, s1_any_of = 0
         WHERE (assignment_id * 7 + position * 3) % 5 = 0
            OR (assignment_id % 3 = 0 AND position % 4 = 1)",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let (ok, out, err) = cli(&["plan", "--difference", "0.1", "--studies", "1"]);
    assert!(ok, "{err}");
    let (_, csv, _) = cli(&["report", "--format", "csv", "--studies", "1"]);
    let planner = csv
        .lines()
        .find(|l| l.starts_with("planner,all,1,") && l.contains(",0.1,"))
        .unwrap_or_else(|| panic!("{csv}"));
    let fields: Vec<&str> = planner.split(',').collect();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let field = |name: &str| fields[header.iter().position(|c| *c == name).unwrap()];
    let (task, pilot, items) = (field("task"), field("n"), field("items"));
    let (needed, low, high) = (field("needed"), field("needed_low"), field("needed_high"));
    assert!(
        out.contains(&format!(
            "study 1 ({task}): pilot {pilot} annotators in 2 scenarios on {items} items"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            ": {needed} annotators per scenario ({low}–{high} across τ's 95% interval)"
        )),
        "{out}\n{planner}"
    );
    // More items shrink the residual's part of the spread, never the annotators'.
    let (ok, more, err) = cli(&[
        "plan",
        "--difference",
        "0.1",
        "--studies",
        "1",
        "--items",
        "100000",
    ]);
    assert!(ok && more.contains("on 100000 items"), "{err}{more}");
}
