//! The researcher report on the database: loads a scope of studies with their tasks and every
//! assignment item (one row per worker x item), and builds `domain::report` from them.

use crate::annotations::{annotation_rows, AnnotationRow, CrowdIds};
use crate::catalog::{examples_of, load_spec, shot_groups, shot_sets, test_golds};
use crate::error::Error;
use crate::heavy::Kind;
use crate::study::{self, Study};
use domain::ids::{AssignmentId, ExampleId, StudyId, TaskId};
use domain::place::Phase;
use domain::report::machine::MachineRun;
use domain::report::{self, AnnotatorRecord, ItemRecord, Report, StudyRules, TaskData};
use futures_util::TryStreamExt;
use sqlx::AnyPool;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

mod version;
pub use version::{prune_versions, version};

/// Everything the report needs about a scope of studies. The annotation rows themselves are
/// not kept: they are folded into `annotators` as they stream in, and the exports of rows
/// stream them again (`annotation_rows`), so memory grows with the answers, not the rows.
pub struct Loaded {
    pub studies: Vec<Study>,
    pub tasks: HashMap<String, TaskData>,
    /// Per task: its test examples (id, id in the file) in file order.
    pub test_items: HashMap<String, Vec<(ExampleId, String)>>,
    pub annotators: Vec<AnnotatorRecord>,
    /// Per assignment: what the pay sheet needs beyond the annotator record.
    pub assignments: HashMap<AssignmentId, AssignmentInfo>,
    pub rules: HashMap<StudyId, StudyRules>,
    /// Finished machine evaluations (all of them; they belong to no study).
    pub machines: Vec<MachineRun>,
    /// The reference answers of every task in the report, scored (`domain::report::reference`).
    pub references: Vec<MachineRun>,
    /// Machine answers with their probability on label tasks (the reliability diagram).
    pub machine_answers: Vec<domain::report::calibration::MachineAnswer>,
    /// The study pages' rows: questionnaires, attention checks, consent decisions.
    pub pages: study::PageRows,
    /// The synthetic workers (`load fill`) of the scope: in the tables where `scope.synthetic`
    /// asked for them, else left out and only counted.
    pub synthetic: Synthetic,
}

/// A scope of studies, and whether the synthetic workers of `load fill` count.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Scope {
    pub studies: Vec<StudyId>,
    pub synthetic: bool,
}

/// The synthetic workers of a scope.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Synthetic {
    /// Whether they are in the tables and files.
    pub included: bool,
    /// How many there are in the scope's studies.
    pub workers: usize,
}

/// An assignment's crowd ids and times (unix ms).
#[derive(Clone, Debug, PartialEq)]
pub struct AssignmentInfo {
    pub crowd: CrowdIds,
    /// Every assignment or session id the worker's links presented, with what became of it.
    pub presented: Vec<domain::platform::Presented>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub last_activity: i64,
}

/// Study ids from a query value such as `1,2,3` (sorted, each once); empty means every study.
pub fn parse_scope(s: Option<&str>) -> Result<Vec<StudyId>, Error> {
    let mut ids = s
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<i64>()
                .map(StudyId)
                .map_err(|_| Error::Invalid(format!("{p:?} is not a study id")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

async fn task_data(
    pool: &AnyPool,
    name: &str,
) -> Result<(TaskData, Vec<(ExampleId, String)>), Error> {
    let (task_id, spec, _) = load_spec(pool, name).await?;
    let tests = test_golds(pool, task_id).await?;
    let mut golds = HashMap::new();
    let mut order = Vec::with_capacity(tests.len());
    for (id, ext_id, gold) in tests {
        golds.insert(id, gold);
        order.push((id, ext_id));
    }
    let shot_sets = shot_sets(pool, task_id).await?;
    Ok((
        TaskData {
            spec,
            test_golds: golds,
            shot_sets,
            words: item_words(pool, task_id).await?,
            systems: super::machine::system_answers(pool, task_id).await?,
        },
        order,
    ))
}

/// The words of each test item (contexts and question), the reading floor's measure.
async fn item_words(pool: &AnyPool, task_id: TaskId) -> Result<HashMap<ExampleId, u32>, Error> {
    #[derive(sqlx::FromRow)]
    struct Texts {
        id: ExampleId,
        context: String,
        context2: Option<String>,
        question: String,
    }
    let rows: Vec<Texts> = sqlx::query_as(
        "SELECT e.id, e.context, e.context2, e.question
         FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = $1 AND f.kind = 'test'",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    let words = |s: &str| s.split_whitespace().count() as u32;
    Ok(rows
        .into_iter()
        .map(|t| {
            let n = words(&t.context) + t.context2.as_deref().map_or(0, words) + words(&t.question);
            (t.id, n)
        })
        .collect())
}

/// Adds one row (rows come ordered by assignment, then position) to the annotator records.
fn fold_row(out: &mut Vec<AnnotatorRecord>, r: AnnotationRow) {
    if out.last().map(|a| a.assignment) != Some(r.assignment_id) {
        finish_annotator(out);
        out.push(AnnotatorRecord {
            assignment: r.assignment_id,
            study: r.study_id,
            worker: r.worker,
            task: r.task,
            k: r.k,
            status: r.status,
            training_split: r.training_split,
            started_at: r.started_at,
            finished_at: r.finished_at,
            last_activity: r.last_activity,
            items: Vec::new(),
            pages: Default::default(),
        });
    }
    let Some(a) = out.last_mut() else {
        return;
    };
    let training = r.phase == Phase::Training;
    a.items.push(ItemRecord {
        phase: r.phase,
        example_id: r.example_id,
        // Only training items are compared across files (Tables 8 and 9); test items keep
        // none, which saves a string per row.
        content_key: if training {
            r.content_key
        } else {
            String::new()
        },
        answer: r.submitted.then(|| {
            // Collected in place, the strings would keep the decoded spans' larger buffer.
            let mut texts: Vec<String> = r.answer.into_iter().map(|s| s.text).collect();
            texts.shrink_to_fit();
            texts
        }),
        skipped: r.skipped,
        confidence: r.confidence,
        s1: r.s1,
        s1_any_of: r.s1_any_of,
        shown_at: r.shown_at,
        submitted_at: r.submitted_at,
        signals: r.signals.signals(),
    });
}

/// Gives back what the last annotator's item list grew beyond its length: loaded row by row,
/// each list doubles as it grows, up to 1.7 times its 300 items on a 300-item test set.
fn finish_annotator(out: &mut [AnnotatorRecord]) {
    if let Some(a) = out.last_mut() {
        a.items.shrink_to_fit();
    }
}

/// The studies `scope` names (every study when empty); an unknown id is `NotFound`.
pub async fn studies_in(pool: &AnyPool, scope: &[StudyId]) -> Result<Vec<Study>, Error> {
    let ids: Vec<StudyId> = if scope.is_empty() {
        sqlx::query_scalar("SELECT id FROM studies ORDER BY id")
            .fetch_all(pool)
            .await?
    } else {
        scope.to_vec()
    };
    let mut studies = Vec::with_capacity(ids.len());
    for &id in &ids {
        studies.push(study::load(pool, id).await?);
    }
    Ok(studies)
}

/// Loads the studies `scope` names (every study when empty), without synthetic workers; an
/// unknown id is `NotFound`.
pub async fn load(pool: &AnyPool, scope: &[StudyId]) -> Result<Loaded, Error> {
    load_scope(
        pool,
        &Scope {
            studies: scope.to_vec(),
            synthetic: false,
        },
    )
    .await
}

/// The synthetic workers of the studies.
async fn synthetic_workers(pool: &AnyPool, studies: &[Study]) -> Result<usize, Error> {
    let mut n = 0;
    for s in studies {
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM assignments WHERE study_id = $1 AND synthetic != 0",
        )
        .bind(s.id)
        .fetch_one(pool)
        .await?;
        n += count as usize;
    }
    Ok(n)
}

/// Each study's rules, with its analysis plan where one was frozen.
async fn study_rules(
    pool: &AnyPool,
    studies: &[Study],
) -> Result<HashMap<StudyId, StudyRules>, Error> {
    let ids: Vec<StudyId> = studies.iter().map(|s| s.id).collect();
    let mut plans = study::frozen_plans(pool, &ids).await?;
    let mut rules = HashMap::new();
    for s in studies {
        let mut r = StudyRules::of(&s.config);
        if let Some(p) = plans.remove(&s.id) {
            r = r
                .with_frozen(&s.config, p.plan_json, p.sha256, p.frozen_at)
                .map_err(Error::internal)?;
        }
        rules.insert(s.id, r);
    }
    Ok(rules)
}

/// Loads a scope of studies (every study when it names none); an unknown id is `NotFound`.
pub async fn load_scope(pool: &AnyPool, scope: &Scope) -> Result<Loaded, Error> {
    let studies = studies_in(pool, &scope.studies).await?;
    let mut tasks = HashMap::new();
    let mut test_items = HashMap::new();
    for s in &studies {
        if !tasks.contains_key(&s.spec.name) {
            let (data, order) = task_data(pool, &s.spec.name).await?;
            tasks.insert(s.spec.name.clone(), data);
            test_items.insert(s.spec.name.clone(), order);
        }
    }
    let mut annotators = Vec::new();
    let mut assignments = HashMap::new();
    let mut rows = annotation_rows(pool, &studies, scope.synthetic, Kind::Build);
    while let Some(r) = rows.try_next().await? {
        assignments
            .entry(r.assignment_id)
            .or_insert_with(|| AssignmentInfo {
                crowd: r.crowd.clone(),
                presented: r.presented.clone(),
                started_at: r.started_at,
                finished_at: r.finished_at,
                last_activity: r.last_activity,
            });
        fold_row(&mut annotators, r);
    }
    finish_annotator(&mut annotators);
    drop(rows);
    let pages = study::page_rows(pool, &studies).await?;
    let mut records = pages.records();
    for a in &mut annotators {
        if let Some(p) = records.remove(&a.assignment) {
            a.pages = p;
        }
    }
    let rules = study_rules(pool, &studies).await?;
    let synthetic = Synthetic {
        included: scope.synthetic,
        workers: synthetic_workers(pool, &studies).await?,
    };
    let machines = super::machine::done_runs(pool).await?;
    let names: BTreeSet<&str> = tasks
        .keys()
        .map(String::as_str)
        .chain(machines.iter().map(|m| m.task.as_str()))
        .collect();
    let references = reference_runs(pool, names).await?;
    Ok(Loaded {
        annotators,
        assignments,
        studies,
        tasks,
        test_items,
        rules,
        machines,
        references,
        machine_answers: super::machine::confident_answers(pool).await?,
        pages,
        synthetic,
    })
}

/// Each named task's reference answers scored on its test set, computed from the data on every
/// load (a task imported again is scored again); text-to-text tasks have none.
pub async fn reference_runs<'a>(
    pool: &AnyPool,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<MachineRun>, Error> {
    let mut out = Vec::new();
    for name in names {
        let (task_id, spec, _) = load_spec(pool, name).await?;
        if spec.family == domain::task::Family::TextToText {
            continue;
        }
        let test = examples_of(pool, task_id, None).await?;
        let mut groups = BTreeMap::new();
        for g in shot_groups(pool, task_id).await? {
            let shots = examples_of(pool, task_id, Some(g)).await?;
            groups.insert(g, shots.into_iter().map(|(_, e)| e).collect());
        }
        out.extend(report::reference::runs(&spec, &test, &groups));
    }
    Ok(out)
}

impl Loaded {
    /// The human report with the machine rows attached.
    pub fn report(&self) -> Report {
        let mut r = report::build(&self.tasks, &self.annotators, &self.rules);
        report::machine::attach(&mut r, &self.machines);
        report::reference::attach(&mut r, &self.references);
        report::calibration::attach(&mut r, &self.machine_answers);
        let n = self.synthetic.workers;
        if self.synthetic.included {
            r.synthetic_workers = n;
            if n > 0 {
                r.notes.push(format!("This report includes {n} synthetic workers (made by `load fill` for load runs), as asked: they are not people."));
            }
        } else if n > 0 {
            r.notes.push(format!("{n} synthetic workers (made by `load fill` for load runs) are left out of every table; add synthetic=1 to an export (or --synthetic on the command line) to include them."));
        }
        r
    }

    pub fn flags(&self) -> HashSet<AssignmentId> {
        report::flagged(&self.annotators, &self.rules)
    }

    pub fn study(&self, id: StudyId) -> Option<&Study> {
        self.studies.iter().find(|s| s.id == id)
    }

    /// The report built on a heavy thread (on many rows it is seconds of work that would
    /// otherwise hold up every request on the same async worker); hands the scope back.
    pub async fn into_report(self) -> Result<(Loaded, Report), Error> {
        off_runtime(move || {
            let r = self.report();
            (self, r)
        })
        .await
    }
}

/// A scope's report, built from the data as it stood at `version` (or later: the counter is
/// read before the rows, so a change made meanwhile is in the build and only costs a rebuild).
pub struct Built {
    pub version: i64,
    pub loaded: Loaded,
    pub report: Report,
}

impl Built {
    /// Loads and builds the scope (the building on a heavy thread).
    pub async fn of(pool: &AnyPool, scope: &Scope) -> Result<Built, Error> {
        let version = version(pool, &scope.studies).await?;
        let (loaded, report) = load_scope(pool, scope).await?.into_report().await?;
        Ok(Built {
            version,
            loaded,
            report,
        })
    }
}

/// Runs CPU-heavy report work off the async workers, on a thread of lower priority
/// (`heavy`): the crowd's answers go first.
pub async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    crate::heavy::spawn(crate::heavy::Kind::Build, work).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        assert_eq!(parse_scope(None), Ok(vec![]));
        assert_eq!(
            parse_scope(Some(" 3, 1,3,, ")),
            Ok(vec![StudyId(1), StudyId(3)])
        );
        assert!(parse_scope(Some("1,x"))
            .unwrap_err()
            .to_string()
            .contains("\"x\" is not a study id"));
    }
}
