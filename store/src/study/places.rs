//! Taking a place: one write transaction per arrival picks the scenario, records the
//! assignment and every item the worker will see, in the worker's own order.

use super::{CrowdInfo, Study};
use crate::auth::{self, User};
use crate::catalog::example_ids;
use crate::error::Error;
use crate::tx::Lock;
use crate::writer::Writer;
use domain::ids::{AssignmentId, ExampleId, StudyId, TaskId, UserId};
use domain::place::{Phase, PlaceStatus};
use domain::platform::Outcome;
use domain::study::{
    choose_scenario, consent_left, is_abandoned, item_order, loads_now, training_order,
    ScenarioLoad,
};
use sqlx::{AnyConnection, AnyPool};

/// A worker's place for a task, in whichever study.
#[derive(sqlx::FromRow)]
struct TaskPlace {
    id: AssignmentId,
    study_id: StudyId,
    k: i64,
    status: PlaceStatus,
}

/// The worker's assignment for a task: (id, study, k, status).
async fn assignment_for_task(
    tx: &mut AnyConnection,
    task_id: TaskId,
    worker: UserId,
) -> Result<Option<(AssignmentId, StudyId, u32, PlaceStatus)>, Error> {
    let row: Option<TaskPlace> = sqlx::query_as(
        "SELECT id, study_id, k, status FROM assignments WHERE task_id = $1 AND worker_id = $2",
    )
    .bind(task_id)
    .bind(worker)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(row.map(|p| (p.id, p.study_id, p.k as u32, p.status)))
}

/// What a returning worker's link leads to: their place as it is (`Continue`), or, when the
/// place has ended and the link presents an id the work was not done under, only the record
/// that they were told to return that one (`Ended`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Continue,
    Ended { finished: bool },
}

/// What `crowd`'s link leads to, given the place's record in `stored` and its status, and what
/// of the visit is to be recorded (`None`: nothing). A new id becomes the one in hand while the
/// place is active, and is told to return after it ended; after the end, a link without the
/// platform's id, or with the id in hand but another study, is recorded as a visit.
fn presence_of(
    stored: &CrowdInfo,
    crowd: &CrowdInfo,
    status: PlaceStatus,
) -> (Presence, Option<Outcome>) {
    let told = Presence::Ended {
        finished: status == PlaceStatus::Finished,
    };
    let visit = match status {
        PlaceStatus::Active => None,
        PlaceStatus::Finished | PlaceStatus::Abandoned => Some(Outcome::Visited),
    };
    let Some(id) = crowd.presented_id() else {
        return (Presence::Continue, visit);
    };
    // A visit is listed beside an id's own record, never as it.
    let known = stored
        .presentations()
        .into_iter()
        .find(|p| p.id == id && p.outcome != Outcome::Visited);
    match (known.map(|p| p.outcome), status) {
        (Some(Outcome::InHand | Outcome::Visited), _) => {
            let other_study = crowd.study.is_some() && crowd.study != stored.study;
            (Presence::Continue, visit.filter(|_| other_study))
        }
        (Some(Outcome::ToldToReturn), _) => (told, None),
        (Some(Outcome::Replaced) | None, PlaceStatus::Active) => {
            (Presence::Continue, Some(Outcome::InHand))
        }
        (Some(Outcome::Replaced) | None, PlaceStatus::Finished | PlaceStatus::Abandoned) => {
            (told, Some(Outcome::ToldToReturn))
        }
    }
}

/// A returning worker's link: an id presented while the place is active becomes the one in
/// hand (a second HIT's assignment, with its `hitId` and `turkSubmitTo`; the end page hands it
/// back), the one before it replaced; an id presented after the place ended is recorded as told
/// to return, and nothing changes for the work.
async fn in_hand(
    tx: &mut AnyConnection,
    place: AssignmentId,
    crowd: &CrowdInfo,
    now: i64,
) -> Result<Presence, Error> {
    let (stored, status): (String, PlaceStatus) =
        sqlx::query_as("SELECT crowd_json, status FROM assignments WHERE id = $1")
            .bind(place)
            .fetch_one(&mut *tx)
            .await?;
    let mut kept: CrowdInfo =
        serde_json::from_str(&stored).map_err(|e| crate::catalog::corrupt("crowd ids", e))?;
    let (presence, record) = presence_of(&kept, crowd, status);
    let Some(outcome) = record else {
        return Ok(presence);
    };
    let id = crowd.presented_id().unwrap_or_default();
    if !kept.present(id, crowd.study.as_deref(), now, outcome) {
        // A full record keeps what it has; the worker is told all the same.
        return Ok(presence);
    }
    if outcome == Outcome::InHand {
        kept.assignment = crowd.assignment.clone().or(kept.assignment);
        kept.session = crowd.session.clone().or(kept.session);
        kept.study = crowd.study.clone().or(kept.study);
        kept.submit_to = crowd.submit_to.clone().or(kept.submit_to);
    }
    let json = serde_json::to_string(&kept).map_err(Error::internal)?;
    sqlx::query("UPDATE assignments SET crowd_json = $1 WHERE id = $2")
        .bind(json)
        .bind(place)
        .execute(&mut *tx)
        .await?;
    Ok(presence)
}

/// What a returning crowd worker's link leads to before anything else (the start page's GET):
/// `None` without a place here. Writes only the record of an id presented after the place
/// ended (the worker is told to return it) or of a visit after it ended, and nothing in any
/// other case.
pub async fn present(
    writer: &Writer,
    study: &Study,
    worker: UserId,
    crowd: &CrowdInfo,
    now: i64,
) -> Result<Option<Presence>, Error> {
    let Some(place) = super::items::own_assignment(writer.pool(), study.id, worker).await? else {
        return Ok(None);
    };
    let stored: String = sqlx::query_scalar("SELECT crowd_json FROM assignments WHERE id = $1")
        .bind(place.id)
        .fetch_one(writer.pool())
        .await?;
    let kept: CrowdInfo =
        serde_json::from_str(&stored).map_err(|e| crate::catalog::corrupt("crowd ids", e))?;
    let (presence, record) = presence_of(&kept, crowd, place.status);
    match record {
        // Taking the new id in hand waits for Start (its POST): a GET changes no work.
        None | Some(Outcome::InHand | Outcome::Replaced) => return Ok(Some(presence)),
        Some(Outcome::ToldToReturn | Outcome::Visited) => {}
    }
    let crowd = crowd.clone();
    let presence = writer
        .write(&[Lock::Worker(worker)], move |conn| {
            Box::pin(async move { in_hand(conn, place.id, &crowd, now).await })
        })
        .await?;
    Ok(Some(presence))
}

/// Whether a newly arriving worker would find a place (read only, nothing written): places held
/// by workers who finished or are still active count, and so do none that the time-out has
/// released or would release now. A new worker has no earlier scenario of the task, so only
/// the scenarios' loads matter. `enter` decides for good; this lets a study link turn a new
/// crowd id away before any account is made for it.
pub async fn has_free_place(pool: &AnyPool, study: &Study, now: i64) -> Result<bool, Error> {
    let held: Vec<(i64, PlaceStatus, i64, Option<i64>)> = sqlx::query_as(
        "SELECT k, status, last_activity, consented_at FROM assignments
         WHERE study_id = $1 AND status != 'abandoned'",
    )
    .bind(study.id)
    .fetch_all(pool)
    .await?;
    let now = now / 1000;
    let held: Vec<(u32, bool, i64)> = held
        .into_iter()
        .filter(|(_, status, last, consented)| {
            let waiting = study.awaits_consent(*status, *consented);
            !(waiting && consent_left(&study.config, last / 1000, now))
        })
        .map(|(k, status, last, _)| (k as u32, status == PlaceStatus::Finished, last / 1000))
        .collect();
    let loads = loads_now(&study.config, &held, now);
    Ok(choose_scenario(&study.config, &loads, &[]).is_ok())
}

/// Takes a place for the worker in `study` (or finds the one they hold): one write (on SQLite
/// in the answers' group commit, `Writer::write`)
/// locking the study and the worker, so concurrent arrivals at this study take turns and a
/// scenario never gets more than its N workers, while other studies' arrivals go on.
/// Releases places abandoned past the time-out first. A worker who holds a place gets it back,
/// with what their link presents (`in_hand`).
pub async fn enter(
    writer: &Writer,
    study: &Study,
    worker: UserId,
    crowd: Option<&CrowdInfo>,
    now: i64,
) -> Result<(AssignmentId, Presence), Error> {
    let locks = [Lock::Study(study.id), Lock::Worker(worker)];
    let (study, crowd) = (study.clone(), crowd.cloned());
    writer
        .write(&locks, move |conn| {
            Box::pin(async move { enter_in(conn, &study, worker, crowd.as_ref(), now).await })
        })
        .await
}

/// A new crowd worker's arrival: the account, the place and the session in one write
/// transaction, so that a worker who gets no place gets no account either (a burst of
/// arrivals at a nearly full study makes accounts for the places only). On SQLite it shares
/// the answers' group commit (`Writer::write`), so a join waits for one commit, not for the
/// lock. Returns the worker and the session's token; a refusal (full, closed, another
/// scenario) leaves nothing behind.
pub async fn enter_new(
    writer: &Writer,
    study: &Study,
    crowd: &CrowdInfo,
    now: i64,
) -> Result<(User, String), Error> {
    let (platform, worker) = crowd.identity().map_err(Error::Invalid)?;
    let locks = [Lock::Study(study.id), Lock::CrowdId(platform, worker)];
    let (study, crowd) = (study.clone(), crowd.clone());
    let (p, w) = (platform, worker.to_string());
    writer
        .write(&locks, move |conn| {
            Box::pin(async move {
                let user = auth::crowd_worker_in(conn, p, &w).await?;
                enter_in(conn, &study, user.id, Some(&crowd), now).await?;
                let token = auth::open_session_in(conn, user.id).await?;
                Ok((user, token))
            })
        })
        .await
}

async fn enter_in(
    tx: &mut AnyConnection,
    study: &Study,
    worker: UserId,
    crowd: Option<&CrowdInfo>,
    now: i64,
) -> Result<(AssignmentId, Presence), Error> {
    // Resuming one's own place is not an arrival; a place in another study of the task makes
    // the worker not new to it.
    let mut prior = Vec::new();
    if let Some((id, study_id, k, _)) = assignment_for_task(tx, study.task_id, worker).await? {
        if study_id == study.id {
            let presence = match crowd {
                Some(crowd) => in_hand(tx, id, crowd, now).await?,
                None => Presence::Continue,
            };
            return Ok((id, presence));
        }
        prior.push(k);
    }
    let loads = scenario_loads(tx, study, now).await?;
    let k = choose_scenario(&study.config, &loads, &prior)
        .map_err(|r| Error::Refused(r.to_string()))?;
    let seed = {
        use rand::Rng;
        rand::thread_rng().gen_range(0..i64::MAX)
    };
    let split = (k > 0).then_some(study.config.split_for(k));
    // The id the place is taken with is the first one presented, in hand.
    let mut crowd = crowd.cloned().unwrap_or_default();
    if let Some(id) = crowd.presented_id().map(str::to_string) {
        let study = crowd.study.clone();
        crowd.present(&id, study.as_deref(), now, Outcome::InHand);
    }
    let crowd_json = serde_json::to_string(&crowd).map_err(Error::internal)?;
    let id = sqlx::query_scalar::<_, AssignmentId>(
        "INSERT INTO assignments (study_id, task_id, worker_id, k, config_id, training_split, order_seed,
            status, crowd_json, started_at, last_activity)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', $8, $9, $10) RETURNING id",
    )
    .bind(study.id)
    .bind(study.task_id)
    .bind(worker)
    .bind(i64::from(k))
    .bind(study.config_id)
    .bind(split.map(i64::from))
    .bind(seed)
    .bind(crowd_json)
    .bind(now)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let items = place_items(tx, study, k, split, seed).await?;
    insert_items(tx, id, &items).await?;
    // The first arrival freezes the study's analysis plan (later ones leave it as it is).
    let test_items = items.iter().filter(|(p, _)| *p == Phase::Test).count();
    super::plan::freeze_in(tx, study, test_items, now).await?;
    Ok((id, Presence::Continue))
}

/// Releases the study's places idle past the time-out, then counts the places each scenario
/// holds.
async fn scenario_loads(
    tx: &mut AnyConnection,
    study: &Study,
    now: i64,
) -> Result<Vec<ScenarioLoad>, Error> {
    let active: Vec<(AssignmentId, UserId, i64, Option<i64>)> = sqlx::query_as(
        "SELECT id, worker_id, last_activity, consented_at FROM assignments
         WHERE study_id = $1 AND status = 'active'",
    )
    .bind(study.id)
    .fetch_all(&mut *tx)
    .await?;
    for (id, worker, last, consented) in active {
        // Left at the consent page: nothing of the place is kept. Claimed first by a write
        // that re-checks the row (on PostgreSQL it waits for, then sees, a consent being
        // given at this moment, and the place stays).
        if study.awaits_consent(PlaceStatus::Active, consented)
            && consent_left(&study.config, last / 1000, now / 1000)
        {
            let still = sqlx::query(
                "UPDATE assignments SET last_activity = last_activity
                 WHERE id = $1 AND status = 'active' AND consented_at IS NULL AND last_activity = $2",
            )
            .bind(id)
            .bind(last)
            .execute(&mut *tx)
            .await?;
            if still.rows_affected() == 1 {
                remove_unconsented(tx, id, worker).await?;
            }
        } else if is_abandoned(&study.config, last / 1000, now / 1000, false) {
            sqlx::query(
                "UPDATE assignments SET status = 'abandoned', abandoned_at = $1 WHERE id = $2",
            )
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
    }
    let loads: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT k, COUNT(*) FROM assignments WHERE study_id = $1 AND status != 'abandoned' GROUP BY k",
    )
    .bind(study.id)
    .fetch_all(&mut *tx)
    .await?;
    Ok(loads
        .into_iter()
        .map(|(k, n)| ScenarioLoad {
            k: k as u32,
            taken: n as u32,
        })
        .collect())
}

/// Removes a place that never got its worker's consent (declined, or left at the consent
/// page) and everything of it, and the crowd worker's account with their platform id when it
/// holds no other place: nothing of the worker is kept (a decline keeps only its refusal).
pub(super) async fn remove_unconsented(
    conn: &mut sqlx::AnyConnection,
    place: AssignmentId,
    worker: UserId,
) -> Result<(), Error> {
    for sql in [
        "DELETE FROM attention_answers WHERE assignment_id = $1",
        "DELETE FROM questionnaire_answers WHERE assignment_id = $1",
        "DELETE FROM assignment_items WHERE assignment_id = $1",
        "DELETE FROM assignments WHERE id = $1",
    ] {
        sqlx::query(sql).bind(place).execute(&mut *conn).await?;
    }
    let others: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM assignments WHERE worker_id = $1")
        .bind(worker)
        .fetch_one(&mut *conn)
        .await?;
    let crowd_account: Option<i64> =
        sqlx::query_scalar("SELECT user_id FROM crowd_ids WHERE user_id = $1")
            .bind(worker)
            .fetch_optional(&mut *conn)
            .await?;
    if others == 0 && crowd_account.is_some() {
        for sql in [
            "DELETE FROM sessions WHERE user_id = $1",
            "DELETE FROM crowd_ids WHERE user_id = $1",
            "DELETE FROM users WHERE id = $1",
        ] {
            sqlx::query(sql).bind(worker).execute(&mut *conn).await?;
        }
    }
    Ok(())
}

/// A new place's items: the screening file, the training examples (in file order or the
/// worker's own), then the whole test set in the worker's own order.
async fn place_items(
    tx: &mut AnyConnection,
    study: &Study,
    k: u32,
    split: Option<u32>,
    seed: i64,
) -> Result<Vec<(Phase, ExampleId)>, Error> {
    // Training: the split's k examples in file order, the same for everyone, or in this
    // worker's own order where the study shuffles them (recorded row by row, as the test's).
    let mut training = match split {
        Some(split) => example_ids(&mut *tx, study.task_id, Some((k, split))).await?,
        None => Vec::new(),
    };
    if study.config.shuffle_training {
        let file = training.clone();
        training = training_order(seed as u64, file.len())
            .into_iter()
            .map(|i| file[i])
            .collect();
    }
    // Screening: the study's screening file in file order, the same for every scenario
    // (zero-shot included), before anything else.
    let screening = match study.config.screening {
        Some(file) => example_ids(&mut *tx, study.task_id, Some(file)).await?,
        None => Vec::new(),
    };
    // Test: the whole test set in this worker's own order, recorded row by row.
    let test = example_ids(&mut *tx, study.task_id, None).await?;
    let test_order = item_order(seed as u64, test.len());
    let items = screening
        .iter()
        .map(|&e| (Phase::Screening, e))
        .chain(training.iter().map(|&e| (Phase::Training, e)))
        .chain(test_order.iter().map(|&i| (Phase::Test, test[i])));
    Ok(items.collect())
}

/// Rows per `INSERT` of a place's items: 4 parameters each, within both engines' limits
/// (SQLite 32,766, PostgreSQL 65,535), so a test set of up to this size is one statement.
const ITEMS_PER_INSERT: usize = 2_000;

/// Records a place's items, in order, with one statement per [`ITEMS_PER_INSERT`] items.
async fn insert_items(
    tx: &mut AnyConnection,
    id: AssignmentId,
    items: &[(Phase, ExampleId)],
) -> Result<(), Error> {
    for (chunk_no, chunk) in items.chunks(ITEMS_PER_INSERT).enumerate() {
        let rows: Vec<String> = (0..chunk.len())
            .map(|i| {
                format!(
                    "(${}, ${}, ${}, ${})",
                    4 * i + 1,
                    4 * i + 2,
                    4 * i + 3,
                    4 * i + 4
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO assignment_items (assignment_id, position, phase, example_id) VALUES {}",
            rows.join(", ")
        );
        let mut insert = sqlx::query(&sql);
        for (i, (phase, example)) in chunk.iter().enumerate() {
            insert = insert
                .bind(id)
                .bind((chunk_no * ITEMS_PER_INSERT + i) as i64)
                .bind(phase.as_str())
                .bind(*example);
        }
        insert.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Releases an active place whose worker gave it back on their crowd platform (returned, or
/// timed out there): it no longer counts towards its scenario, so a new worker takes it; its
/// answers stay. `false` where the place was no longer active.
pub async fn release(
    pool: &AnyPool,
    study: StudyId,
    id: AssignmentId,
    now: i64,
) -> Result<bool, Error> {
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(study)]).await?;
    let result = sqlx::query(
        "UPDATE assignments SET status = 'abandoned', abandoned_at = $1
         WHERE id = $2 AND study_id = $3 AND status = 'active'",
    )
    .bind(now)
    .bind(id)
    .bind(study)
    .execute(&mut *tx)
    .await
    .map(|r| r.rows_affected() == 1)
    .map_err(Error::from);
    crate::tx::finish(tx, result).await
}
