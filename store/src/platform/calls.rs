//! A held platform call's life: which calls a worker may claim now (or later, after a
//! passing fault's wait), marked sent before it is sent, a step's id kept between two calls,
//! put off, and ended with the platform's answer and what it changes (`Effect`) in one
//! transaction with the job marked done, or with its refusal.

use super::ledger::{HeldCall, PlatformKind};
use crate::error::{Error, Result};
use crate::lease::{self, JobKind, Lease};
use crate::tx::Lock;
use domain::ids::{StudyId, TaskId};
use domain::platform::ledger::{Action, ActionState, RemoteStatus};
use domain::platform::Platform;
use sqlx::{AnyConnection, AnyPool};

/// The calls a worker may claim now (queued, or held under a lease that may run out) on the
/// platforms and sites it has accounts for, whose wait after a passing fault is over.
pub async fn runnable(
    pool: &AnyPool,
    sites: &[(Platform, bool)],
    only: Option<StudyId>,
    now: i64,
) -> Result<Vec<i64>> {
    Ok(open_calls(pool, sites, only)
        .await?
        .into_iter()
        .filter(|(_, next)| *next <= now)
        .map(|(id, _)| id)
        .collect())
}

/// Whether some calls are put off until later (see [`runnable`]).
pub async fn put_off_calls(
    pool: &AnyPool,
    sites: &[(Platform, bool)],
    only: Option<StudyId>,
    now: i64,
) -> Result<bool> {
    Ok(open_calls(pool, sites, only)
        .await?
        .iter()
        .any(|(_, next)| *next > now))
}

/// The unfinished calls on `sites` (of the study `only`, where given), with when each may be
/// tried.
async fn open_calls(
    pool: &AnyPool,
    sites: &[(Platform, bool)],
    only: Option<StudyId>,
) -> Result<Vec<(i64, i64)>> {
    let rows: Vec<(i64, StudyId, Platform, i64, i64)> = sqlx::query_as(
        "SELECT a.id, a.study_id, a.platform, a.sandbox, a.next_try_at
         FROM platform_actions a JOIN jobs j ON j.id = a.id
         WHERE j.status IN ('queued', 'claimed') ORDER BY a.id",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(_, study, p, s, _)| {
            sites.contains(&(*p, *s != 0)) && only.is_none_or(|o| o == *study)
        })
        .map(|(id, .., next)| (id, next))
        .collect())
}

/// Marks a held call sent, before it is sent: from now on a retry treats its answer as
/// possibly lost. Refused where the worker no longer holds it.
pub async fn mark_sent(pool: &AnyPool, held: &HeldCall) -> Result<()> {
    let now = held.lease.clock.now_ms();
    let set = "state = 'sent', tries = tries + 1, sent_at = $3";
    while_held(pool, held, set, (now, None)).await
}

/// Updates a held call's row with `set` (`$3` a time, and `$4` a text where one is given), only
/// while the worker still holds its job; refused where it no longer does.
async fn while_held(
    pool: &AnyPool,
    held: &HeldCall,
    set: &str,
    (at, text): (i64, Option<String>),
) -> Result<()> {
    let lease = &held.lease;
    let sql = format!(
        "UPDATE platform_actions SET {set} WHERE id = $1 AND EXISTS
         (SELECT 1 FROM jobs j WHERE j.id = $1 AND j.worker = $2 AND j.status = 'claimed')"
    );
    let query = sqlx::query(&sql)
        .bind(lease.job)
        .bind(&lease.worker)
        .bind(at);
    let query = match text {
        Some(t) => query.bind(t),
        None => query,
    };
    let updated = query.execute(pool).await?;
    if updated.rows_affected() == 0 {
        return Err(lost(lease));
    }
    Ok(())
}

fn lost(lease: &Lease) -> Error {
    Error::LeaseLost(format!(
        "this worker ({}) no longer holds platform call {}; nothing was sent",
        lease.worker, lease.job
    ))
}

/// Keeps a step's id between two calls (Prolific's bulk bonus, made before it is paid), only
/// while the worker holds the call: a worker that lost it must not go on to pay.
pub async fn set_ref(pool: &AnyPool, held: &HeldCall, remote_ref: &str) -> Result<()> {
    let now = held.lease.clock.now_ms();
    let set = "remote_ref = $4, next_try_at = $3";
    while_held(pool, held, set, (now, Some(remote_ref.to_string()))).await
}

/// Puts a held call off after a passing fault: kept with `why`, not claimed again before
/// `wait` has passed (the worker then hands the job back).
pub async fn put_off(pool: &AnyPool, held: &HeldCall, why: &str, wait_ms: i64) -> Result<()> {
    let at = held.lease.clock.now_ms() + wait_ms;
    let why = serde_json::json!({ "passing_fault": why }).to_string();
    let set = "answer_json = $4, next_try_at = $3";
    while_held(pool, held, set, (at, Some(why))).await
}

/// What a platform's answer changes beside the ledger, stored in the same transaction.
#[derive(Clone, Debug)]
pub enum Effect {
    Nothing,
    /// The task's list of workers was made.
    Group {
        task: TaskId,
        remote_id: String,
    },
    /// The publication was created on the platform.
    Created {
        remote_id: String,
        remote_group: Option<String>,
    },
    /// The platform was asked for places to this total.
    Places {
        total: u32,
    },
    /// A decision was carried out: the submission's status as the platform now has it.
    Decided {
        remote_id: String,
        status: RemoteStatus,
    },
    /// The submissions were read back (see `remote::store`).
    Synced(Vec<super::remote::Remote>),
}

/// Stores a held call's platform answer and what it changes, with the job marked done, in
/// one transaction, only while the worker still holds it.
pub async fn finish(
    pool: &AnyPool,
    held: &HeldCall,
    answer: &serde_json::Value,
    effect: Effect,
) -> Result<()> {
    let lease = &held.lease;
    let now = lease.clock.now_ms();
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(held.study_id)]).await?;
    let result = async {
        let what = PlatformKind::name(lease.job, &held.key);
        lease::complete(&mut tx, lease, &what).await?;
        sqlx::query(
            "UPDATE platform_actions SET state = 'done', answer_json = $1, answered_at = $2 WHERE id = $3",
        )
        .bind(answer.to_string())
        .bind(now)
        .bind(lease.job)
        .execute(&mut *tx)
        .await?;
        apply(&mut tx, held, effect, now).await
    }
    .await;
    crate::tx::finish(tx, result).await
}

/// Stores a platform's refusal of a held call (nothing was done for it); the worker then
/// marks the job failed with the refusal's words, and the researcher may send it again.
pub async fn refuse(pool: &AnyPool, held: &HeldCall, answer: &serde_json::Value) -> Result<()> {
    let now = held.lease.clock.now_ms();
    let set = "state = 'refused', answered_at = $3, answer_json = $4";
    while_held(pool, held, set, (now, Some(answer.to_string()))).await
}

async fn apply(tx: &mut AnyConnection, held: &HeldCall, effect: Effect, now: i64) -> Result<()> {
    let study = held.study_id;
    match effect {
        Effect::Nothing => {}
        Effect::Group { task, remote_id } => {
            sqlx::query(
                "INSERT INTO platform_groups (task_id, platform, sandbox, remote_id)
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(task)
            .bind(held.platform)
            .bind(held.sandbox)
            .bind(remote_id)
            .execute(&mut *tx)
            .await?;
        }
        Effect::Created {
            remote_id,
            remote_group,
        } => {
            sqlx::query(
                "UPDATE platform_studies SET remote_id = $1, remote_group = $2 WHERE study_id = $3",
            )
            .bind(remote_id)
            .bind(remote_group)
            .bind(study)
            .execute(&mut *tx)
            .await?;
        }
        Effect::Places { total } => {
            sqlx::query(
                "UPDATE platform_studies SET places = $1 WHERE study_id = $2 AND places < $1",
            )
            .bind(i64::from(total))
            .bind(study)
            .execute(&mut *tx)
            .await?;
        }
        Effect::Decided { remote_id, status } => {
            sqlx::query(
                "UPDATE platform_submissions SET status = $1 WHERE study_id = $2 AND remote_id = $3",
            )
            .bind(status)
            .bind(study)
            .bind(remote_id)
            .execute(&mut *tx)
            .await?;
        }
        Effect::Synced(remotes) => super::remote::store(tx, study, &remotes, now).await?,
    }
    Ok(())
}

/// Whether the study's call of `action` on `target` is done (a call another waits for).
pub async fn done(pool: &AnyPool, study: StudyId, action: Action, target: &str) -> Result<bool> {
    let state: Option<ActionState> = sqlx::query_scalar(
        "SELECT state FROM platform_actions WHERE study_id = $1 AND action = $2 AND target = $3
         ORDER BY id DESC LIMIT 1",
    )
    .bind(study)
    .bind(action)
    .bind(target)
    .fetch_optional(pool)
    .await?;
    Ok(state == Some(ActionState::Done))
}
