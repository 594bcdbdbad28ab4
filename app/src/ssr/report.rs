//! The researcher report on the database: loads a scope of studies with their tasks and every
//! assignment item (one row per worker x item), and builds `domain::report` from them.

use crate::domain::ids::{AssignmentId, ConfigId, StudyId};
use crate::domain::place::{Phase, PlaceStatus};
use crate::domain::report::machine::MachineRun;
use crate::domain::report::{self, AnnotatorRecord, ItemRecord, Report, StudyRules, TaskData};
use crate::domain::shots;
use crate::error::AppError;
use crate::ssr::catalog::{corrupt, load_spec, shot_sets, GoldColumns};
use crate::ssr::db::Backend;
use crate::ssr::study::{self, CrowdInfo, StoredSpan, Study};
use futures_util::{Stream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use sqlx::{AnyPool, FromRow};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// One worker x item: the export's row and the report's input. Times in unix milliseconds
/// (server clock); offsets and lengths in code points of the item's context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotationRow {
    pub study_id: StudyId,
    pub study: String,
    /// The study configuration the worker started under.
    pub config_id: ConfigId,
    pub task: String,
    pub assignment_id: AssignmentId,
    pub worker: String,
    #[serde(flatten)]
    pub crowd: CrowdIds,
    /// Shots of the worker's scenario (0 = zero-shot).
    pub k: u32,
    pub training_split: Option<u32>,
    /// The study's training files per k-shot scenario, e.g. `10_1,20_5,30_5`.
    pub shot_group: String,
    pub status: PlaceStatus,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub last_activity: i64,
    /// 0-based position in the worker's sequence (training items, then test items).
    pub position: i64,
    pub phase: Phase,
    pub example_id: i64,
    /// The item's id in its data file, with the file and 1-based line.
    pub item_id: String,
    pub file: String,
    pub line: i64,
    pub content_key: String,
    pub submitted: bool,
    pub answer: Vec<StoredSpan>,
    pub no_answer: bool,
    pub skipped: bool,
    pub confidence: Option<u8>,
    pub shown_at: Option<i64>,
    pub submitted_at: Option<i64>,
    pub acknowledged_at: Option<i64>,
    /// Whether the worker was shown this item's gold (training items, once submitted).
    pub gold_revealed: bool,
    pub s1: Option<f64>,
    pub s1_any_of: Option<f64>,
    pub client_id: Option<String>,
}

/// The ids a crowd link gave with the worker's arrival (all empty for password accounts).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CrowdIds {
    pub platform: Option<String>,
    pub crowd_worker_id: Option<String>,
    pub crowd_study_id: Option<String>,
    pub crowd_session_id: Option<String>,
    pub crowd_assignment_id: Option<String>,
}

impl From<CrowdInfo> for CrowdIds {
    fn from(c: CrowdInfo) -> Self {
        CrowdIds {
            platform: c.platform,
            crowd_worker_id: c.worker,
            crowd_study_id: c.study,
            crowd_session_id: c.session,
            crowd_assignment_id: c.assignment,
        }
    }
}

/// The export's columns, in order (the CSV header).
pub const ANNOTATION_COLUMNS: [&str; 37] = [
    "study_id",
    "study",
    "config_id",
    "task",
    "assignment_id",
    "worker",
    "platform",
    "crowd_worker_id",
    "crowd_study_id",
    "crowd_session_id",
    "crowd_assignment_id",
    "k",
    "training_split",
    "shot_group",
    "status",
    "started_at",
    "finished_at",
    "last_activity",
    "position",
    "phase",
    "example_id",
    "item_id",
    "file",
    "line",
    "content_key",
    "submitted",
    "answer",
    "no_answer",
    "skipped",
    "confidence",
    "shown_at",
    "submitted_at",
    "acknowledged_at",
    "gold_revealed",
    "s1",
    "s1_any_of",
    "client_id",
];

/// Everything the report needs about a scope of studies. The annotation rows themselves are
/// not kept: they are folded into `annotators` as they stream in, and the exports of rows
/// stream them again (`annotation_rows`), so memory grows with the answers, not the rows.
pub struct Loaded {
    pub studies: Vec<Study>,
    pub tasks: HashMap<String, TaskData>,
    /// Per task: its test examples (id, id in the file) in file order.
    pub test_items: HashMap<String, Vec<(i64, String)>>,
    pub annotators: Vec<AnnotatorRecord>,
    /// Per assignment: what the pay sheet needs beyond the annotator record.
    pub assignments: HashMap<AssignmentId, AssignmentInfo>,
    pub rules: HashMap<StudyId, StudyRules>,
    /// Finished machine evaluations (all of them; they belong to no study).
    pub machines: Vec<MachineRun>,
    /// Machine answers with their probability on label tasks (the reliability diagram).
    pub machine_answers: Vec<crate::domain::report::calibration::MachineAnswer>,
}

/// An assignment's crowd ids and times (unix ms).
#[derive(Clone, Debug, PartialEq)]
pub struct AssignmentInfo {
    pub crowd: CrowdIds,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub last_activity: i64,
}

/// Study ids from a query value such as `1,2,3` (sorted, each once); empty means every study.
pub fn parse_scope(s: Option<&str>) -> Result<Vec<StudyId>, AppError> {
    let mut ids = s
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<i64>()
                .map(StudyId)
                .map_err(|_| AppError::Invalid(format!("{p:?} is not a study id")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// A test item's id and gold.
#[derive(sqlx::FromRow)]
struct TestGold {
    id: i64,
    ext_id: String,
    #[sqlx(flatten)]
    gold: GoldColumns,
}

async fn task_data(pool: &AnyPool, name: &str) -> Result<(TaskData, Vec<(i64, String)>), AppError> {
    let (task_id, spec, _) = load_spec(pool, name).await?;
    let tests: Vec<TestGold> = sqlx::query_as(
        "SELECT e.id, e.ext_id, e.gold_official, e.gold_spans FROM examples e
         JOIN data_files f ON f.id = e.file_id WHERE f.task_id = $1 AND f.kind = 'test' ORDER BY e.line_no",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    let mut test_golds = HashMap::new();
    let mut order = Vec::with_capacity(tests.len());
    for r in tests {
        test_golds.insert(r.id, r.gold.decode()?);
        order.push((r.id, r.ext_id));
    }
    let shot_sets = shot_sets(pool, task_id).await?;
    Ok((
        TaskData {
            spec,
            test_golds,
            shot_sets,
        },
        order,
    ))
}

/// An assignment item joined with its assignment, study, task, worker and example, as the
/// annotation query selects it: the one decoder of those columns.
#[derive(sqlx::FromRow)]
struct StoredAnnotation {
    study_id: StudyId,
    study: String,
    config_id: ConfigId,
    task: String,
    assignment_id: AssignmentId,
    worker: String,
    crowd_json: String,
    k: i64,
    training_split: Option<i64>,
    status: PlaceStatus,
    started_at: i64,
    finished_at: Option<i64>,
    last_activity: i64,
    position: i64,
    phase: Phase,
    example_id: i64,
    ext_id: String,
    file_name: String,
    line_no: i64,
    content_key: String,
    answer_json: Option<String>,
    no_answer: i64,
    skipped: i64,
    confidence: Option<i64>,
    shown_at: Option<i64>,
    submitted_at: Option<i64>,
    acknowledged_at: Option<i64>,
    s1: Option<f64>,
    s1_any_of: Option<f64>,
    client_id: Option<String>,
}

impl StoredAnnotation {
    fn decode(self) -> Result<AnnotationRow, AppError> {
        let crowd: CrowdInfo =
            serde_json::from_str(&self.crowd_json).map_err(|e| corrupt("crowd ids", e))?;
        let answer: Vec<StoredSpan> = match &self.answer_json {
            Some(j) => serde_json::from_str(j).map_err(|e| corrupt("answer", e))?,
            None => Vec::new(),
        };
        Ok(AnnotationRow {
            study_id: self.study_id,
            study: self.study,
            config_id: self.config_id,
            task: self.task,
            assignment_id: self.assignment_id,
            worker: self.worker,
            crowd: crowd.into(),
            k: self.k as u32,
            training_split: self.training_split.map(|s| s as u32),
            shot_group: String::new(),
            status: self.status,
            started_at: self.started_at,
            finished_at: self.finished_at,
            last_activity: self.last_activity,
            position: self.position,
            gold_revealed: self.phase == Phase::Training && self.submitted_at.is_some(),
            phase: self.phase,
            example_id: self.example_id,
            item_id: self.ext_id,
            file: self.file_name,
            line: self.line_no,
            content_key: self.content_key,
            submitted: self.submitted_at.is_some(),
            answer,
            no_answer: self.no_answer != 0,
            skipped: self.skipped != 0,
            confidence: self.confidence.map(|c| c as u8),
            shown_at: self.shown_at,
            submitted_at: self.submitted_at,
            acknowledged_at: self.acknowledged_at,
            s1: self.s1,
            s1_any_of: self.s1_any_of,
            client_id: self.client_id,
        })
    }
}

/// Adds one row (rows come ordered by assignment, then position) to the annotator records.
fn fold_row(out: &mut Vec<AnnotatorRecord>, r: AnnotationRow) {
    if out.last().map(|a| a.assignment) != Some(r.assignment_id) {
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
        });
    }
    let a = out.last_mut().expect("pushed above");
    let training = r.phase == Phase::Training;
    a.items.push(ItemRecord {
        training,
        example_id: r.example_id,
        // Only training items are compared across files (Tables 8 and 9); test items keep
        // none, which saves a string per row.
        content_key: if training {
            r.content_key
        } else {
            String::new()
        },
        answer: r
            .submitted
            .then(|| r.answer.into_iter().map(|s| s.text).collect()),
        skipped: r.skipped,
        confidence: r.confidence,
        s1: r.s1,
        s1_any_of: r.s1_any_of,
        shown_at: r.shown_at,
        submitted_at: r.submitted_at,
    });
}

/// Every annotation row of `studies`, ordered by study, assignment and position, one at a time
/// from the database (the exports write each as it comes; nothing holds them all).
pub fn annotation_rows<'a>(
    pool: &'a AnyPool,
    studies: &[Study],
) -> impl Stream<Item = Result<AnnotationRow, AppError>> + Send + 'a {
    let ids: Vec<StudyId> = studies.iter().map(|s| s.id).collect();
    let json_ids = serde_json::to_string(&ids).expect("ids serialise");
    // The training files cannot change once a worker started: the study's are the worker's.
    let groups: HashMap<StudyId, String> = studies
        .iter()
        .map(|s| (s.id, shots::files_value(&s.config.scenario_files())))
        .collect();
    // The study ids arrive as one JSON array, expanded into rows in each dialect's words.
    static SQL: LazyLock<[String; 2]> = LazyLock::new(|| {
        [Backend::Sqlite, Backend::Postgres].map(|b| {
            format!(
                "SELECT a.study_id, s.name AS study, a.config_id, t.name AS task,
                    a.id AS assignment_id, u.name AS worker, a.crowd_json, a.k, a.training_split,
                    a.status, a.started_at, a.finished_at, a.last_activity, i.position, i.phase,
                    i.example_id, e.ext_id, f.file_name, e.line_no, e.content_key, i.answer_json,
                    i.no_answer, i.skipped, i.confidence, i.shown_at, i.submitted_at,
                    i.acknowledged_at, i.s1, i.s1_any_of, i.client_id
                 FROM assignments a
                 JOIN studies s ON s.id = a.study_id
                 JOIN tasks t ON t.id = a.task_id
                 JOIN users u ON u.id = a.worker_id
                 JOIN assignment_items i ON i.assignment_id = a.id
                 JOIN examples e ON e.id = i.example_id
                 JOIN data_files f ON f.id = e.file_id
                 WHERE a.study_id IN (SELECT CAST(value AS BIGINT) FROM {})
                 ORDER BY a.study_id, a.id, i.position",
                b.json_elements("$1")
            )
        })
    });
    let sql: &'static str = &SQL[Backend::of(pool) as usize];
    sqlx::query(sql).bind(json_ids).fetch(pool).map(move |row| {
        let mut r = StoredAnnotation::from_row(&row?)?.decode()?;
        r.shot_group = groups.get(&r.study_id).cloned().unwrap_or_default();
        Ok(r)
    })
}

/// The studies `scope` names (every study when empty); an unknown id is `NotFound`.
pub async fn studies_in(pool: &AnyPool, scope: &[StudyId]) -> Result<Vec<Study>, AppError> {
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

/// Loads the studies `scope` names (every study when empty); an unknown id is `NotFound`.
pub async fn load(pool: &AnyPool, scope: &[StudyId]) -> Result<Loaded, AppError> {
    let studies = studies_in(pool, scope).await?;
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
    let mut rows = annotation_rows(pool, &studies);
    while let Some(r) = rows.try_next().await? {
        assignments
            .entry(r.assignment_id)
            .or_insert_with(|| AssignmentInfo {
                crowd: r.crowd.clone(),
                started_at: r.started_at,
                finished_at: r.finished_at,
                last_activity: r.last_activity,
            });
        fold_row(&mut annotators, r);
    }
    drop(rows);
    let rules = studies
        .iter()
        .map(|s| (s.id, StudyRules::of(&s.config)))
        .collect();
    Ok(Loaded {
        annotators,
        assignments,
        studies,
        tasks,
        test_items,
        rules,
        machines: super::machine::done_runs(pool).await?,
        machine_answers: super::machine::confident_answers(pool).await?,
    })
}

impl Loaded {
    /// The human report with the machine rows attached.
    pub fn report(&self) -> Report {
        let mut r = report::build(&self.tasks, &self.annotators, &self.rules);
        report::machine::attach(&mut r, &self.machines);
        report::calibration::attach(&mut r, &self.machine_answers);
        r
    }

    pub fn flags(&self) -> HashSet<AssignmentId> {
        report::flagged(&self.annotators, &self.rules)
    }

    pub fn study(&self, id: StudyId) -> Option<&Study> {
        self.studies.iter().find(|s| s.id == id)
    }

    /// The report built on a blocking thread (on many rows it is seconds of work that would
    /// otherwise hold up every request on the same async worker); hands the scope back.
    pub async fn into_report(self) -> Result<(Loaded, Report), AppError> {
        off_runtime(move || {
            let r = self.report();
            (self, r)
        })
        .await
    }
}

/// Runs CPU-heavy report work on the blocking pool.
pub async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, AppError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(AppError::internal)
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
