//! Study configuration: creating and editing studies (checked against the task's training
//! files and their nesting), their configuration history, summaries and the admin overview.

use super::{load, Study};
use crate::catalog::{load_spec, shot_groups, shot_sets};
use crate::error::Error;
use crate::tx::Lock;
use domain::ids::{ConfigId, StudyId, TaskId, UserId};
use domain::place::PlaceStatus;
use domain::shots::{self, ShotSets};
use domain::study::StudyConfig;
use domain::wire::study::{ScenarioProgress, StudyOverview, StudySummary, WorkerRow};
use sqlx::{Any, AnyPool, Transaction};
use std::collections::HashMap;

/// Checks a study's name and configuration together, every problem at once: the name, the
/// configuration against the task's training files (`sets`) and their nesting, and its study
/// pages against the task (labels, spans, the size of its test set). An edited study keeps a
/// completion code (`editing`). Returns the name trimmed.
async fn check_config(
    pool: &AnyPool,
    name: &str,
    config: &StudyConfig,
    (task_id, spec, sets): (TaskId, &domain::task::TaskSpec, &ShotSets),
    editing: bool,
) -> Result<String, Error> {
    let groups = shot_groups(pool, task_id).await?;
    let name = domain::study::check_name(name);
    let mut errs: Vec<String> = name.clone().err().into_iter().collect();
    errs.extend(
        config
            .validate(&groups, &|a, b| shots::within(sets, a, b))
            .err()
            .unwrap_or_default(),
    );
    if editing && config.completion_code.trim().is_empty() {
        errs.push("Completion code: an edited study keeps one; it may not be empty".into());
    }
    errs.extend(config.screening_problems(&groups, &|a, b| shots::overlap(sets, a, b)));
    if !config.pages.is_empty() {
        let tests = crate::catalog::example_ids(pool, task_id, None).await?;
        errs.extend(config.pages.problems(spec, tests.len()));
    }
    match name {
        Ok(name) if errs.is_empty() => Ok(name),
        _ => Err(Error::Invalid(format!(
            "The study cannot be saved: {}.",
            errs.join("; ")
        ))),
    }
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
    tx: &mut Transaction<'_, Any>,
    study_id: StudyId,
    config: &StudyConfig,
    by: Option<UserId>,
) -> Result<(), Error> {
    let json = serde_json::to_string(config).map_err(Error::internal)?;
    let config_id = sqlx::query_scalar::<_, ConfigId>(
        "INSERT INTO study_configs (study_id, config_json, created_by) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(study_id)
    .bind(json)
    .bind(by)
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query("UPDATE studies SET config_id = $1 WHERE id = $2")
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
    pool: &AnyPool,
    by: Option<UserId>,
    task: &str,
    name: &str,
    mut config: StudyConfig,
) -> Result<StudyId, Error> {
    let (task_id, spec, _) = load_spec(pool, task).await?;
    let sets = shot_sets(pool, task_id).await?;
    if config.shot_group.is_empty() {
        // No files named: the nesting chain that begins with the training split, if any.
        let chains = shots::chains(&sets);
        if let Some(chain) = shots::chain_of_split(&chains, config.training_split) {
            config.shot_group = chain.clone();
        }
    }
    let name = check_config(pool, name, &config, (task_id, &spec, &sets), false).await?;
    if config.completion_code.trim().is_empty() {
        config.completion_code = new_completion_code();
    }
    let mut tx = crate::tx::begin_write(pool, &[]).await?;
    let id = sqlx::query_scalar::<_, StudyId>(
        "INSERT INTO studies (task_id, name, created_by) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(task_id)
    .bind(&name)
    .bind(by)
    .fetch_one(&mut *tx)
    .await?;
    insert_config(&mut tx, id, &config, by).await?;
    tx.commit().await?;
    Ok(id)
}

pub async fn update(
    pool: &AnyPool,
    by: Option<UserId>,
    id: StudyId,
    name: &str,
    config: StudyConfig,
) -> Result<(), Error> {
    let study = load(pool, id).await?;
    let sets = shot_sets(pool, study.task_id).await?;
    let task = (study.task_id, &study.spec, &sets);
    let name = check_config(pool, name, &config, task, true).await?;
    // Everything below runs on the one connection of the write transaction.
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(id)]).await?;
    let result = async {
        let in_force: ConfigId = sqlx::query_scalar("SELECT config_id FROM studies WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        if in_force != study.config_id {
            return Err(Error::Refused(
                "The configuration was changed meanwhile; reload the page and try again.".into(),
            ));
        }
        let started: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM assignments WHERE study_id = $1 LIMIT 1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        let started = started.is_some();
        study
            .config
            .check_edit(&config, started)
            .map_err(Error::Refused)?;
        sqlx::query("UPDATE studies SET name = $1 WHERE id = $2")
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
    crate::tx::finish(tx, result).await
}

pub async fn list(pool: &AnyPool) -> Result<Vec<StudySummary>, Error> {
    let ids: Vec<StudyId> = sqlx::query_scalar("SELECT id FROM studies ORDER BY id DESC")
        .fetch_all(pool)
        .await?;
    let mut out = Vec::with_capacity(ids.len());
    // Each task's training sets are read once, however many studies it has.
    let mut sets: HashMap<TaskId, ShotSets> = HashMap::new();
    for id in ids {
        let s = load(pool, id).await?;
        if let std::collections::hash_map::Entry::Vacant(e) = sets.entry(s.task_id) {
            e.insert(shot_sets(pool, s.task_id).await?);
        }
        out.push(summary(pool, &s, &sets[&s.task_id]).await?);
    }
    Ok(out)
}

/// One study's summary, or `NotFound`.
pub async fn summary_of(pool: &AnyPool, id: StudyId) -> Result<StudySummary, Error> {
    let s = load(pool, id).await?;
    summary(pool, &s, &shot_sets(pool, s.task_id).await?).await
}

/// A study's summary; `sets` are its task's training sets.
async fn summary(pool: &AnyPool, s: &Study, sets: &ShotSets) -> Result<StudySummary, Error> {
    let (workers, finished): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN status = 'finished' THEN 1 ELSE 0 END), 0) FROM assignments WHERE study_id = $1",
    )
    .bind(s.id)
    .fetch_one(pool)
    .await?;
    let nested = shots::not_nested(sets, &s.config.scenario_files()).is_empty();
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

/// A worker's place with their progress, as the admin's overview lists it.
#[derive(sqlx::FromRow)]
struct PlaceRow {
    name: String,
    k: i64,
    status: PlaceStatus,
    done: i64,
    total: i64,
    train_s1: Option<f64>,
    ms: i64,
    consented_at: Option<i64>,
}

pub async fn admin_view(pool: &AnyPool, id: StudyId) -> Result<StudyOverview, Error> {
    admin_view_of(pool, &load(pool, id).await?).await
}

/// `admin_view` of a study the caller has loaded already (the dashboard loads its scope once).
pub async fn admin_view_of(pool: &AnyPool, s: &Study) -> Result<StudyOverview, Error> {
    let id = s.id;
    let rows: Vec<PlaceRow> = sqlx::query_as(
        "SELECT u.name, a.k, a.status,
            (SELECT COUNT(*) FROM assignment_items i WHERE i.assignment_id = a.id AND i.submitted_at IS NOT NULL) AS done,
            (SELECT COUNT(*) FROM assignment_items i WHERE i.assignment_id = a.id) AS total,
            (SELECT AVG(i.s1) FROM assignment_items i WHERE i.assignment_id = a.id AND i.phase = 'training' AND i.submitted_at IS NOT NULL) AS train_s1,
            (SELECT CAST(COALESCE(SUM(i.submitted_at - i.shown_at), 0) AS BIGINT) FROM assignment_items i WHERE i.assignment_id = a.id AND i.submitted_at IS NOT NULL) AS ms,
            a.consented_at
         FROM assignments a JOIN users u ON u.id = a.worker_id WHERE a.study_id = $1 ORDER BY a.k, a.id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    // A place awaiting its worker's consent counts in the progress (it is held), but nobody's
    // name is shown before they agreed.
    let awaiting: Vec<bool> = rows
        .iter()
        .map(|r| s.awaits_consent(r.status, r.consented_at))
        .collect();
    let workers: Vec<WorkerRow> = rows
        .into_iter()
        .map(|r| WorkerRow {
            name: r.name,
            k: r.k as u32,
            status: r.status,
            items_done: r.done,
            items_total: r.total,
            training_s1: r.train_s1,
            seconds: r.ms as f64 / 1000.0,
        })
        .collect();
    let progress = s
        .config
        .scenarios
        .iter()
        .map(|&k| {
            let of_k = || workers.iter().filter(move |w| w.k == k);
            let count = |status| of_k().filter(|w| w.status == status).count() as i64;
            ScenarioProgress {
                k,
                slots: s.config.annotators,
                active: count(PlaceStatus::Active),
                finished: count(PlaceStatus::Finished),
                abandoned: count(PlaceStatus::Abandoned),
                items_done: of_k().map(|w| w.items_done).sum(),
                items_total: of_k()
                    .filter(|w| w.status != PlaceStatus::Abandoned)
                    .map(|w| w.items_total)
                    .sum(),
            }
        })
        .collect();
    let sets = shot_sets(pool, s.task_id).await?;
    Ok(StudyOverview {
        summary: summary(pool, s, &sets).await?,
        shot_groups: shot_groups(pool, s.task_id).await?,
        chains: shots::chains(&sets),
        progress,
        workers: workers
            .into_iter()
            .zip(awaiting)
            .filter_map(|(w, awaiting)| (!awaiting).then_some(w))
            .collect(),
        // The server function sets it for the reader.
        can_edit: false,
    })
}
