//! The crowd protocol on the database: study configuration, taking a place (one transaction
//! per arrival), the worker's current item, locked submissions with idempotent resends.

use crate::api::study::{
    Completion, Phase, Reveal, ScenarioProgress, StudyOverview, StudySummary, SubmitAck,
    WorkerItem, WorkerRow, WorkerStep, WorkerStudy,
};
use crate::domain::answer::{check_answer, Answer, SpanAnswer};
use crate::domain::s1::Scoring;
use crate::domain::shots;
use crate::domain::study::{choose_scenario, is_abandoned, item_order, ScenarioLoad, StudyConfig};
use crate::domain::task::{Context, Family, Gold, TaskSpec};
use crate::error::AppError;
use crate::ssr::auth::now_ms;
use crate::ssr::catalog::{context_of, corrupt, gold_of, load_spec, shot_sets};
use serde::{Deserialize, Serialize};
use sqlx::{Row, Sqlite, SqlitePool, Transaction};

/// What a crowd link said about the arrival, kept with the assignment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CrowdInfo {
    pub platform: Option<String>,
    pub worker: Option<String>,
    pub study: Option<String>,
    pub session: Option<String>,
    pub assignment: Option<String>,
    /// MTurk's `turkSubmitTo` (one of `crowd::MTURK_HOSTS`), where the end page posts the HIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_to: Option<String>,
}

/// A study with its task and the configuration in force.
pub struct Study {
    pub id: i64,
    pub name: String,
    pub task_id: i64,
    pub spec: TaskSpec,
    pub config_id: i64,
    pub config: StudyConfig,
}

pub async fn load(pool: &SqlitePool, id: i64) -> Result<Study, AppError> {
    let row: Option<(String, i64, String, i64, String)> = sqlx::query_as(
        "SELECT s.name, s.task_id, t.name, c.id, c.config_json FROM studies s
         JOIN tasks t ON t.id = s.task_id JOIN study_configs c ON c.id = s.config_id WHERE s.id = ?",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?;
    let (name, task_id, task, config_id, json) =
        row.ok_or_else(|| AppError::NotFound(format!("there is no study {id}")))?;
    let (_, spec, _) = load_spec(pool, &task).await?;
    Ok(Study {
        id,
        name,
        task_id,
        spec,
        config_id,
        config: serde_json::from_str(&json).map_err(|e| corrupt("study configuration", e))?,
    })
}

/// The (k, split) shot groups of a task.
pub async fn shot_groups(pool: &SqlitePool, task_id: i64) -> Result<Vec<(u32, u32)>, AppError> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT k, split FROM data_files WHERE task_id = ? AND kind = 'train' ORDER BY k, split",
    )
    .bind(task_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(k, s)| (k as u32, s as u32))
        .collect())
}

fn check_name(name: &str) -> Result<String, AppError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(AppError::Invalid(
            "a study needs a name of 1 to 200 characters".into(),
        ));
    }
    Ok(name.to_string())
}

/// Checks a configuration against the task's training files and their nesting.
async fn check_config(
    pool: &SqlitePool,
    config: &StudyConfig,
    task_id: i64,
) -> Result<(), AppError> {
    let groups = shot_groups(pool, task_id).await?;
    let sets = shot_sets(pool, task_id).await?;
    config
        .validate(&groups, &|a, b| shots::within(&sets, a, b))
        .map_err(|errs| {
            AppError::Invalid(format!("The study cannot be saved: {}.", errs.join("; ")))
        })
}

/// A completion code for studies configured without one: 8 characters, no look-alikes.
fn new_completion_code() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::thread_rng();
    (0..8)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

async fn insert_config(
    tx: &mut Transaction<'_, Sqlite>,
    study_id: i64,
    config: &StudyConfig,
    by: Option<i64>,
) -> Result<(), AppError> {
    let json = serde_json::to_string(config).map_err(AppError::internal)?;
    let config_id = sqlx::query(
        "INSERT INTO study_configs (study_id, config_json, created_by) VALUES (?, ?, ?)",
    )
    .bind(study_id)
    .bind(json)
    .bind(by)
    .execute(&mut **tx)
    .await?
    .last_insert_rowid();
    sqlx::query("UPDATE studies SET config_id = ? WHERE id = ?")
        .bind(config_id)
        .bind(study_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Creates a study. A configuration that names no training files gets the task's nesting
/// chain that begins with its training split (e.g. split 1 of SQuAD v2: 10_1 ⊂ 20_5 ⊂ 30_5);
/// where there is none, the same split for every k, which is refused unless unnested training
/// sets are allowed.
pub async fn create(
    pool: &SqlitePool,
    by: Option<i64>,
    task: &str,
    name: &str,
    mut config: StudyConfig,
) -> Result<i64, AppError> {
    let name = check_name(name)?;
    let (task_id, _, _) = load_spec(pool, task).await?;
    if config.shot_group.is_empty() {
        // No files named: the nesting chain that begins with the training split, if any.
        let chains = shots::chains(&shot_sets(pool, task_id).await?);
        if let Some(chain) = shots::chain_of_split(&chains, config.training_split) {
            config.shot_group = chain.clone();
        }
    }
    check_config(pool, &config, task_id).await?;
    if config.completion_code.trim().is_empty() {
        config.completion_code = new_completion_code();
    }
    let mut tx = pool.begin().await?;
    let id = sqlx::query("INSERT INTO studies (task_id, name, created_by) VALUES (?, ?, ?)")
        .bind(task_id)
        .bind(&name)
        .bind(by)
        .execute(&mut *tx)
        .await?
        .last_insert_rowid();
    insert_config(&mut tx, id, &config, by).await?;
    tx.commit().await?;
    Ok(id)
}

pub async fn update(
    pool: &SqlitePool,
    by: Option<i64>,
    id: i64,
    name: &str,
    config: StudyConfig,
) -> Result<(), AppError> {
    let name = check_name(name)?;
    let study = load(pool, id).await?;
    check_config(pool, &config, study.task_id).await?;
    if config.completion_code.trim().is_empty() {
        return Err(AppError::Invalid(
            "the completion code may not be empty".into(),
        ));
    }
    // Everything below runs on the one connection of the write transaction.
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let result = async {
        let in_force: i64 = sqlx::query_scalar("SELECT config_id FROM studies WHERE id = ?")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        if in_force != study.config_id {
            return Err(AppError::Refused(
                "The configuration was changed meanwhile; reload the page and try again.".into(),
            ));
        }
        let started: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM assignments WHERE study_id = ?)")
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
        study
            .config
            .check_edit(&config, started)
            .map_err(AppError::Refused)?;
        sqlx::query("UPDATE studies SET name = ? WHERE id = ?")
            .bind(&name)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if config != study.config {
            insert_config(&mut tx, id, &config, by).await?;
        }
        Ok(())
    }
    .await;
    crate::ssr::tx::finish(tx, result).await
}

pub async fn list(pool: &SqlitePool) -> Result<Vec<StudySummary>, AppError> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM studies ORDER BY id DESC")
        .fetch_all(pool)
        .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(summary(pool, &load(pool, id).await?).await?);
    }
    Ok(out)
}

/// One study's summary, or `NotFound`.
pub async fn summary_of(pool: &SqlitePool, id: i64) -> Result<StudySummary, AppError> {
    summary(pool, &load(pool, id).await?).await
}

async fn summary(pool: &SqlitePool, s: &Study) -> Result<StudySummary, AppError> {
    let (workers, finished): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COALESCE(SUM(status = 'finished'), 0) FROM assignments WHERE study_id = ?",
    )
    .bind(s.id)
    .fetch_one(pool)
    .await?;
    let sets = shot_sets(pool, s.task_id).await?;
    let nested = shots::not_nested(&sets, &s.config.scenario_files()).is_empty();
    Ok(StudySummary {
        id: s.id,
        name: s.name.clone(),
        task: s.spec.name.clone(),
        family: s.spec.family,
        shot_group: s.config.shot_group_text(nested),
        nested,
        config: s.config.clone(),
        config_id: s.config_id,
        started: workers > 0,
        workers,
        finished,
    })
}

pub async fn admin_view(pool: &SqlitePool, id: i64) -> Result<StudyOverview, AppError> {
    let s = load(pool, id).await?;
    let rows = sqlx::query(
        "SELECT u.name, a.k, a.status, a.started_at,
            (SELECT COUNT(*) FROM assignment_items i WHERE i.assignment_id = a.id AND i.submitted_at IS NOT NULL) AS done,
            (SELECT COUNT(*) FROM assignment_items i WHERE i.assignment_id = a.id) AS total,
            (SELECT AVG(i.s1) FROM assignment_items i WHERE i.assignment_id = a.id AND i.phase = 'training' AND i.submitted_at IS NOT NULL) AS train_s1,
            (SELECT COALESCE(SUM(i.submitted_at - i.shown_at), 0) FROM assignment_items i WHERE i.assignment_id = a.id AND i.submitted_at IS NOT NULL) AS ms
         FROM assignments a JOIN users u ON u.id = a.worker_id WHERE a.study_id = ? ORDER BY a.k, a.id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let workers: Vec<WorkerRow> = rows
        .iter()
        .map(|r| WorkerRow {
            name: r.get("name"),
            k: r.get::<i64, _>("k") as u32,
            status: r.get("status"),
            items_done: r.get("done"),
            items_total: r.get("total"),
            training_s1: r.get("train_s1"),
            seconds: r.get::<i64, _>("ms") as f64 / 1000.0,
        })
        .collect();
    let progress = s
        .config
        .scenarios
        .iter()
        .map(|&k| {
            let of_k = || workers.iter().filter(move |w| w.k == k);
            let count = |status: &str| of_k().filter(|w| w.status == status).count() as i64;
            ScenarioProgress {
                k,
                slots: s.config.annotators,
                active: count("active"),
                finished: count("finished"),
                abandoned: count("abandoned"),
                items_done: of_k().map(|w| w.items_done).sum(),
                items_total: of_k()
                    .filter(|w| w.status != "abandoned")
                    .map(|w| w.items_total)
                    .sum(),
            }
        })
        .collect();
    Ok(StudyOverview {
        summary: summary(pool, &s).await?,
        shot_groups: shot_groups(pool, s.task_id).await?,
        chains: shots::chains(&shot_sets(pool, s.task_id).await?),
        progress,
        workers,
    })
}

/// The worker's assignment for a task: (id, study, k, status).
async fn assignment_for_task(
    tx: &mut Transaction<'_, Sqlite>,
    task_id: i64,
    worker: i64,
) -> Result<Option<(i64, i64, u32, String)>, AppError> {
    let row: Option<(i64, i64, i64, String)> = sqlx::query_as(
        "SELECT id, study_id, k, status FROM assignments WHERE task_id = ? AND worker_id = ?",
    )
    .bind(task_id)
    .bind(worker)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|(id, s, k, st)| (id, s, k as u32, st)))
}

/// Takes a place for the worker in `study` (or finds the one they hold): one `BEGIN
/// IMMEDIATE` transaction, so concurrent arrivals are serialised and a scenario never gets
/// more than its N workers. Releases places abandoned past the time-out first.
pub async fn enter(
    pool: &SqlitePool,
    study: &Study,
    worker: i64,
    crowd: Option<&CrowdInfo>,
) -> Result<i64, AppError> {
    let mut tx = crate::ssr::tx::begin_write(pool).await?;
    let result = enter_in(&mut tx, study, worker, crowd).await;
    crate::ssr::tx::finish(tx, result).await
}

async fn enter_in(
    tx: &mut Transaction<'static, Sqlite>,
    study: &Study,
    worker: i64,
    crowd: Option<&CrowdInfo>,
) -> Result<i64, AppError> {
    // Resuming one's own place is not an arrival; a place in another study of the task makes
    // the worker not new to it.
    let mut prior = Vec::new();
    if let Some((id, study_id, k, _)) = assignment_for_task(tx, study.task_id, worker).await? {
        if study_id == study.id {
            return Ok(id);
        }
        prior.push(k);
    }
    let now = now_ms();
    let active: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT id, last_activity FROM assignments WHERE study_id = ? AND status = 'active'",
    )
    .bind(study.id)
    .fetch_all(&mut **tx)
    .await?;
    for (id, last) in active {
        if is_abandoned(&study.config, last / 1000, now / 1000, false) {
            sqlx::query(
                "UPDATE assignments SET status = 'abandoned', abandoned_at = ? WHERE id = ?",
            )
            .bind(now)
            .bind(id)
            .execute(&mut **tx)
            .await?;
        }
    }
    let loads: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT k, COUNT(*) FROM assignments WHERE study_id = ? AND status != 'abandoned' GROUP BY k",
    )
    .bind(study.id)
    .fetch_all(&mut **tx)
    .await?;
    let loads: Vec<ScenarioLoad> = loads
        .into_iter()
        .map(|(k, n)| ScenarioLoad {
            k: k as u32,
            taken: n as u32,
        })
        .collect();
    let k = choose_scenario(&study.config, &loads, &prior)
        .map_err(|r| AppError::Refused(r.to_string()))?;
    let seed = {
        use rand::Rng;
        rand::thread_rng().gen_range(0..i64::MAX)
    };
    let split = (k > 0).then_some(study.config.split_for(k));
    let crowd_json =
        serde_json::to_string(&crowd.cloned().unwrap_or_default()).map_err(AppError::internal)?;
    let id = sqlx::query(
        "INSERT INTO assignments (study_id, task_id, worker_id, k, config_id, training_split, order_seed,
            status, crowd_json, started_at, last_activity)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)",
    )
    .bind(study.id)
    .bind(study.task_id)
    .bind(worker)
    .bind(k)
    .bind(study.config_id)
    .bind(split)
    .bind(seed)
    .bind(crowd_json)
    .bind(now)
    .bind(now)
    .execute(&mut **tx)
    .await?
    .last_insert_rowid();
    // Training: the split's k examples in file order, the same fixed order for everyone.
    let training: Vec<i64> = match split {
        Some(split) => sqlx::query_scalar(
            "SELECT e.id FROM examples e JOIN data_files f ON f.id = e.file_id
             WHERE f.task_id = ? AND f.kind = 'train' AND f.k = ? AND f.split = ? ORDER BY e.line_no",
        )
        .bind(study.task_id)
        .bind(k)
        .bind(split)
        .fetch_all(&mut **tx)
        .await?,
        None => Vec::new(),
    };
    // Test: the whole test set in this worker's own order, recorded row by row.
    let test: Vec<i64> = sqlx::query_scalar(
        "SELECT e.id FROM examples e JOIN data_files f ON f.id = e.file_id
         WHERE f.task_id = ? AND f.kind = 'test' ORDER BY e.line_no",
    )
    .bind(study.task_id)
    .fetch_all(&mut **tx)
    .await?;
    let test_order = item_order(seed as u64, test.len());
    let items = training
        .iter()
        .map(|&e| (Phase::Training, e))
        .chain(test_order.iter().map(|&i| (Phase::Test, test[i])));
    for (position, (phase, example)) in items.enumerate() {
        sqlx::query(
            "INSERT INTO assignment_items (assignment_id, position, phase, example_id) VALUES (?, ?, ?, ?)",
        )
        .bind(id)
        .bind(position as i64)
        .bind(phase.as_str())
        .bind(example)
        .execute(&mut **tx)
        .await?;
    }
    Ok(id)
}

/// The worker's assignment in this study: (id, k, status, started_at).
async fn own_assignment(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
) -> Result<Option<(i64, u32, String, i64, i64)>, AppError> {
    let row: Option<(i64, i64, String, i64, i64)> = sqlx::query_as(
        "SELECT id, k, status, started_at, last_activity FROM assignments WHERE study_id = ? AND worker_id = ?",
    )
    .bind(study_id)
    .bind(worker)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(id, k, st, s, l)| (id, k as u32, st, s, l)))
}

/// A row of `assignment_items` joined with its example.
struct ItemRow {
    phase: Phase,
    submitted: bool,
    context: Context,
    question: String,
    gold: Gold,
    answer: Option<Answer>,
    client_id: Option<String>,
}

async fn item_row(
    pool: &SqlitePool,
    family: Family,
    assignment: i64,
    position: i64,
) -> Result<Option<ItemRow>, AppError> {
    let row = sqlx::query(
        "SELECT i.phase, i.submitted_at, i.client_id, i.answer_json, i.no_answer, i.skipped, i.confidence,
                e.context, e.context2, e.question, e.gold_official, e.gold_spans
         FROM assignment_items i JOIN examples e ON e.id = i.example_id
         WHERE i.assignment_id = ? AND i.position = ?",
    )
    .bind(assignment)
    .bind(position)
    .fetch_optional(pool)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let context = context_of(r.get("context"), r.get("context2"));
    let gold = gold_of(&r)?;
    let submitted = r.get::<Option<i64>, _>("submitted_at").is_some();
    let answer = if submitted {
        let spans: Vec<StoredSpan> = serde_json::from_str(
            r.get::<Option<String>, _>("answer_json")
                .as_deref()
                .unwrap_or("[]"),
        )
        .map_err(|e| corrupt("answer", e))?;
        let confidence = r.get::<Option<i64>, _>("confidence").map(|c| c as u8);
        Some(if r.get::<i64, _>("skipped") != 0 {
            Answer::Skip { confidence }
        } else if r.get::<i64, _>("no_answer") != 0 {
            Answer::NoAnswer
        } else if let (
            [StoredSpan {
                text, offset: None, ..
            }],
            Family::TextToText,
        ) = (spans.as_slice(), family)
        {
            Answer::Text { text: text.clone() }
        } else if let [StoredSpan {
            text, offset: None, ..
        }] = spans.as_slice()
        {
            Answer::Label {
                label: text.clone(),
                confidence: confidence.unwrap_or(0),
            }
        } else {
            Answer::Spans {
                spans: spans
                    .into_iter()
                    .map(|s| SpanAnswer {
                        text: s.text,
                        offset: s.offset.unwrap_or(0),
                        length: s.length,
                    })
                    .collect(),
            }
        })
    } else {
        None
    };
    let phase: String = r.get("phase");
    Ok(Some(ItemRow {
        phase: if phase == "training" {
            Phase::Training
        } else {
            Phase::Test
        },
        submitted,
        context,
        question: r.get("question"),
        gold,
        answer,
        client_id: r.get("client_id"),
    }))
}

/// An answer span as stored in `assignment_items.answer_json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredSpan {
    pub text: String,
    /// Code points into the context; `None` for a label.
    pub offset: Option<usize>,
    pub length: usize,
}

/// The gold beside the worker's answer: only ever built for a submitted training item.
fn reveal(spec: &TaskSpec, item: &ItemRow) -> Option<Reveal> {
    if item.phase != Phase::Training {
        return None;
    }
    let yours = item.answer.clone()?;
    Some(Reveal {
        s1: yours.score(spec, &item.gold, Scoring::Official),
        gold: spec.from_official(&item.gold.official),
        gold_spans: item.gold.spans.clone(),
        yours,
    })
}

/// The position of the worker's current item: the first not yet moved on from.
async fn current_position(pool: &SqlitePool, assignment: i64) -> Result<Option<i64>, AppError> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(position) FROM assignment_items WHERE assignment_id = ? AND acknowledged_at IS NULL",
    )
    .bind(assignment)
    .fetch_one(pool)
    .await?)
}

/// The worker's view of a study, taking a place on first arrival. Showing an item records
/// the first time it was shown (a reload does not reset it).
pub async fn worker_state(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
    crowd: Option<&CrowdInfo>,
) -> Result<WorkerStudy, AppError> {
    let study = load(pool, study_id).await?;
    let (assignment, k, mut status, started_at, _) =
        match own_assignment(pool, study_id, worker).await? {
            Some(a) => a,
            None => {
                enter(pool, &study, worker, crowd).await?;
                own_assignment(pool, study_id, worker)
                    .await?
                    .ok_or_else(|| AppError::internal("assignment vanished after insert"))?
            }
        };
    // A place past its time-out is released only when a new worker arrives (`enter`);
    // until then its worker may go on.
    let now = now_ms();
    let counts: (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(phase = 'training'), 0), COALESCE(SUM(phase = 'test'), 0)
         FROM assignment_items WHERE assignment_id = ?",
    )
    .bind(assignment)
    .fetch_one(pool)
    .await?;
    let step = if status == "abandoned" {
        WorkerStep::Abandoned
    } else {
        match current_position(pool, assignment).await? {
            Some(position) => {
                sqlx::query(
                    "UPDATE assignment_items SET shown_at = COALESCE(shown_at, ?) WHERE assignment_id = ? AND position = ?",
                )
                .bind(now)
                .bind(assignment)
                .bind(position)
                .execute(pool)
                .await?;
                touch(pool, assignment, now).await?;
                let item = item_row(pool, study.spec.family, assignment, position)
                    .await?
                    .ok_or_else(|| AppError::internal("current item missing"))?;
                let (index, of) = match item.phase {
                    Phase::Training => (position + 1, counts.0),
                    Phase::Test => (position - counts.0 + 1, counts.1),
                };
                WorkerStep::Item(WorkerItem {
                    position,
                    phase: item.phase,
                    index,
                    of,
                    reveal: if item.submitted {
                        reveal(&study.spec, &item)
                    } else {
                        None
                    },
                    context: item.context,
                    question: item.question,
                })
            }
            None => {
                if status == "active" {
                    sqlx::query(
                        "UPDATE assignments SET status = 'finished', finished_at = ? WHERE id = ? AND status = 'active'",
                    )
                    .bind(now)
                    .bind(assignment)
                    .execute(pool)
                    .await?;
                    status = "finished".into();
                }
                debug_assert_eq!(status, "finished");
                WorkerStep::Done(completion(pool, &study, assignment, started_at).await?)
            }
        }
    };
    Ok(WorkerStudy {
        study_id,
        study_name: study.name.clone(),
        description: study.spec.description.clone(),
        family: study.spec.family,
        labels: study.spec.labels.clone(),
        k,
        training_items: counts.0,
        test_items: counts.1,
        step,
    })
}

async fn touch(pool: &SqlitePool, assignment: i64, now: i64) -> Result<(), AppError> {
    sqlx::query("UPDATE assignments SET last_activity = ? WHERE id = ?")
        .bind(now)
        .bind(assignment)
        .execute(pool)
        .await?;
    Ok(())
}

async fn completion(
    pool: &SqlitePool,
    study: &Study,
    assignment: i64,
    started_at: i64,
) -> Result<Completion, AppError> {
    let r = sqlx::query(
        "SELECT
            (SELECT AVG(s1) FROM assignment_items WHERE assignment_id = ?1 AND phase = 'training') AS train_s1,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = ?1 AND phase = 'training') AS n_train,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = ?1 AND phase = 'test') AS n_test,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = ?1 AND skipped = 1) AS skipped,
            (SELECT COALESCE(SUM(submitted_at - shown_at), 0) FROM assignment_items WHERE assignment_id = ?1) AS on_items,
            (SELECT COALESCE(MAX(submitted_at), ?2) FROM assignment_items WHERE assignment_id = ?1) AS last,
            (SELECT crowd_json FROM assignments WHERE id = ?1) AS crowd",
    )
    .bind(assignment)
    .bind(started_at)
    .fetch_one(pool)
    .await?;
    let crowd: CrowdInfo =
        serde_json::from_str(r.get("crowd")).map_err(|e| corrupt("crowd ids", e))?;
    Ok(Completion {
        hand_back: crate::domain::crowd::hand_back(
            crowd.platform.as_deref(),
            &study.config.completion_url,
            &study.config.completion_code,
            crowd.assignment.as_deref(),
            crowd.submit_to.as_deref(),
        ),
        code: study.config.completion_code.clone(),
        training_s1: r.get("train_s1"),
        training_items: r.get("n_train"),
        test_items: r.get("n_test"),
        skipped: r.get("skipped"),
        seconds_on_items: r.get::<i64, _>("on_items") as f64 / 1000.0,
        seconds_elapsed: (r.get::<i64, _>("last") - started_at) as f64 / 1000.0,
    })
}

fn no_place() -> AppError {
    AppError::NotFound(
        "You have no place in this study; open it through your study link first.".into(),
    )
}

fn locked() -> AppError {
    AppError::Refused(
        "This answer was already submitted and is locked; it cannot be changed.".into(),
    )
}

/// Stores the answer to the worker's current item. A resend with the same `client_id` is
/// acknowledged again without storing anything; any other second submission is refused.
pub async fn submit(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
    position: i64,
    client_id: &str,
    answer: Answer,
) -> Result<SubmitAck, AppError> {
    crate::domain::people::validate_client_id(client_id).map_err(AppError::Invalid)?;
    let study = load(pool, study_id).await?;
    let (assignment, _, status, _, _) = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    let item = item_row(pool, study.spec.family, assignment, position)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("your assignment has no item {position}")))?;
    let ack = |item: &ItemRow| SubmitAck {
        position,
        reveal: reveal(&study.spec, item),
    };
    if item.submitted {
        return if item.client_id.as_deref() == Some(client_id) {
            Ok(ack(&item))
        } else {
            Err(locked())
        };
    }
    if status == "abandoned" {
        return Err(AppError::Refused(
            "Your place in this study was released after the time-out; your earlier answers are kept.".into(),
        ));
    }
    if current_position(pool, assignment).await? != Some(position) {
        // A concurrent send of this very submission may have stored it (and moved the worker
        // on) since the item was read: acknowledge that one.
        let again = item_row(pool, study.spec.family, assignment, position).await?;
        if let Some(again) =
            again.filter(|i| i.submitted && i.client_id.as_deref() == Some(client_id))
        {
            return Ok(ack(&again));
        }
        return Err(AppError::Refused(
            "This is not your current item; reload the page to continue where you are.".into(),
        ));
    }
    check_answer(&study.spec, &item.context, &answer).map_err(AppError::Invalid)?;
    let s1 = answer.score(&study.spec, &item.gold, Scoring::Official);
    let s1_any = answer.score(&study.spec, &item.gold, Scoring::AnyOf);
    let spans: Vec<StoredSpan> = answer
        .spans()
        .into_iter()
        .map(|(text, offset, length)| StoredSpan {
            text,
            offset,
            length,
        })
        .collect();
    let now = now_ms();
    let ack_at = (item.phase == Phase::Test).then_some(now);
    let stored = sqlx::query(
        "UPDATE assignment_items SET submitted_at = ?, acknowledged_at = ?, client_id = ?, answer_json = ?,
            no_answer = ?, skipped = ?, confidence = ?, s1 = ?, s1_any_of = ?,
            shown_at = COALESCE(shown_at, ?)
         WHERE assignment_id = ? AND position = ? AND submitted_at IS NULL",
    )
    .bind(now)
    .bind(ack_at)
    .bind(client_id)
    .bind(serde_json::to_string(&spans).map_err(AppError::internal)?)
    .bind(matches!(answer, Answer::NoAnswer))
    .bind(matches!(answer, Answer::Skip { .. }))
    .bind(answer.confidence())
    .bind(s1)
    .bind(s1_any)
    .bind(now)
    .bind(assignment)
    .bind(position)
    .execute(pool)
    .await;
    let stored = match stored {
        Ok(done) => done.rows_affected(),
        // The same client id on another item of this assignment.
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
            return Err(AppError::Invalid(
                "this client id was already used for another item".into(),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    if stored == 0 {
        // A concurrent send got there first: the same submission is acknowledged.
        let again = item_row(pool, study.spec.family, assignment, position)
            .await?
            .ok_or_else(|| AppError::internal("item vanished"))?;
        return if again.client_id.as_deref() == Some(client_id) {
            Ok(ack(&again))
        } else {
            Err(locked())
        };
    }
    touch(pool, assignment, now).await?;
    // What was just stored, without reading it back.
    let saved = ItemRow {
        submitted: true,
        answer: Some(answer),
        client_id: Some(client_id.to_string()),
        ..item
    };
    Ok(ack(&saved))
}

/// Moves on from a revealed training item. Idempotent.
pub async fn acknowledge(
    pool: &SqlitePool,
    study_id: i64,
    worker: i64,
    position: i64,
) -> Result<(), AppError> {
    let (assignment, ..) = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    let submitted: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT submitted_at FROM assignment_items WHERE assignment_id = ? AND position = ?",
    )
    .bind(assignment)
    .bind(position)
    .fetch_optional(pool)
    .await?;
    match submitted {
        None => Err(AppError::NotFound(format!(
            "your assignment has no item {position}"
        ))),
        Some(None) => Err(AppError::Refused(
            "Submit an answer to this item first.".into(),
        )),
        Some(Some(_)) => {
            let now = now_ms();
            sqlx::query(
                "UPDATE assignment_items SET acknowledged_at = COALESCE(acknowledged_at, ?) WHERE assignment_id = ? AND position = ?",
            )
            .bind(now)
            .bind(assignment)
            .bind(position)
            .execute(pool)
            .await?;
            touch(pool, assignment, now).await
        }
    }
}
