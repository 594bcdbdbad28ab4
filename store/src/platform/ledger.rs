//! The ledger of platform calls: each call a row of `platform_actions` and a job of the
//! `platform` queue with the same id. A plan's calls are written together, as intents with
//! their idempotency keys, in one transaction that keeps them within the budget; a held call's
//! life (marked sent, answered with its effect) is `calls`. Also a study's ledger as rows and
//! as `ledger.csv`, a sync queued again, a refused call sent again.

use super::Publication;
use crate::error::{Error, Result};
use crate::lease::{self, Clock, Held, JobKind, Queue};
use crate::tx::Lock;
use domain::ids::{StudyId, UserId};
use domain::platform::ledger::{key, Action, ActionState};
use domain::platform::plan::{within_budget, Call};
use domain::platform::Platform;
use sqlx::{AnyConnection, AnyPool};

/// The platform calls as a kind of job.
pub struct PlatformKind;

/// What a worker reads of a held call.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct ActionKey {
    pub study_id: StudyId,
    pub platform: Platform,
    pub sandbox: i64,
    pub action: Action,
    pub idem_key: String,
    pub target: Option<String>,
    pub amount_cents: i64,
    pub request_json: String,
    pub state: ActionState,
    pub remote_ref: Option<String>,
    pub tries: i64,
    /// When the last send began (unix ms).
    pub sent_at: Option<i64>,
}

impl ActionKey {
    /// The call as it was planned.
    pub fn call(&self) -> Result<Call> {
        serde_json::from_str(&self.request_json)
            .map_err(|e| crate::catalog::corrupt("platform call", e))
    }
}

impl JobKind for PlatformKind {
    const QUEUE: Queue = Queue::Platform;
    const TABLE: &'static str = "platform_actions";
    type Key = ActionKey;
    const KEY_SQL: &'static str = "SELECT study_id, platform, sandbox, action, idem_key, target,
        amount_cents, request_json, state, remote_ref, tries, sent_at FROM platform_actions WHERE id = $1";
    const ON_LEAVE: Option<&'static str> = None;
    const WEIGHT: &'static str = "1";
    const OWNER: &'static str = "k.action";
    fn name(job: i64, key: &ActionKey) -> String {
        format!(
            "{} call {job} ({} {}) of study {}",
            key.platform.name(),
            key.action.as_str(),
            key.target.as_deref().unwrap_or_default(),
            key.study_id
        )
    }
}

/// A held call.
pub type HeldCall = Held<ActionKey>;

/// A call to write, with what it may spend (fees included).
#[derive(Clone, Debug)]
pub struct Intent {
    pub call: Call,
    pub amount_cents: i64,
}

/// What is committed of a publication's budget: the calls written and not refused.
pub(super) async fn committed(tx: &mut AnyConnection, study: StudyId) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(amount_cents), 0) AS BIGINT) FROM platform_actions
         WHERE study_id = $1 AND state != 'refused'",
    )
    .bind(study)
    .fetch_one(&mut *tx)
    .await?)
}

/// Writes `intents` for `p` in one transaction, each once (a call whose key is written
/// already is left as it is), within the budget; with `publish`, the publication is marked
/// published in the same transaction. The ids of the calls written now.
pub async fn write(
    pool: &AnyPool,
    p: &Publication,
    intents: &[Intent],
    (by, clock): (Option<UserId>, &Clock),
    publish: bool,
) -> Result<Vec<i64>> {
    let study = p.study;
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(study)]).await?;
    let result = async {
        let now = clock.now_ms();
        let mut fresh = Vec::new();
        for i in intents {
            let target = i.call.target(&study.to_string());
            let k = key(i.call.action(), &p.draft.nonce, &target);
            let known: Option<i64> =
                sqlx::query_scalar("SELECT id FROM platform_actions WHERE idem_key = $1")
                    .bind(&k)
                    .fetch_optional(&mut *tx)
                    .await?;
            if known.is_none() {
                fresh.push((i, target, k));
            }
        }
        let more: i64 = fresh.iter().map(|(i, ..)| i.amount_cents).sum();
        let budget: i64 =
            sqlx::query_scalar("SELECT budget_cents FROM platform_studies WHERE study_id = $1")
                .bind(study)
                .fetch_one(&mut *tx)
                .await?;
        within_budget(
            budget,
            committed(&mut tx, study).await?,
            more,
            "these calls",
        )
        .map_err(Error::Refused)?;
        let mut ids = Vec::new();
        for (i, target, k) in fresh {
            let id = lease::add(&mut tx, Queue::Platform, None, clock).await?;
            let request = serde_json::to_string(&i.call).map_err(Error::internal)?;
            sqlx::query(
                "INSERT INTO platform_actions (id, study_id, platform, sandbox, action, idem_key,
                    target, amount_cents, request_json, state, next_try_at, created_by, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'intent', $10, $11, $10)",
            )
            .bind(id)
            .bind(study)
            .bind(p.platform())
            .bind(i64::from(p.draft.sandbox))
            .bind(i.call.action())
            .bind(&k)
            .bind(&target)
            .bind(i.amount_cents)
            .bind(&request)
            .bind(now)
            .bind(by)
            .execute(&mut *tx)
            .await?;
            ids.push(id);
        }
        if publish {
            sqlx::query(
                "UPDATE platform_studies SET status = 'published', published_at = $1
                 WHERE study_id = $2 AND status = 'draft'",
            )
            .bind(now)
            .bind(study)
            .execute(&mut *tx)
            .await?;
        }
        Ok(ids)
    }
    .await;
    crate::tx::finish(tx, result).await
}

/// Queues the publication's sync: a new one, or its one sync call again once that ended.
pub async fn request_sync(pool: &AnyPool, p: &Publication, clock: &Clock) -> Result<()> {
    let k = key(Action::Sync, &p.draft.nonce, &p.study.to_string());
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(p.study)]).await?;
    let result = async {
        let known: Option<(i64, domain::run::JobStatus)> = sqlx::query_as(
            "SELECT a.id, j.status FROM platform_actions a JOIN jobs j ON j.id = a.id
             WHERE a.idem_key = $1",
        )
        .bind(&k)
        .fetch_optional(&mut *tx)
        .await?;
        match known {
            Some((id, domain::run::JobStatus::Done | domain::run::JobStatus::Failed)) => {
                send_again(&mut tx, id, clock).await?;
                Ok(false)
            }
            Some((_, domain::run::JobStatus::Queued | domain::run::JobStatus::Claimed)) => {
                Ok(false)
            }
            None => Ok(true),
        }
    }
    .await;
    if crate::tx::finish(tx, result).await? {
        let sync = Intent {
            call: Call::Sync,
            amount_cents: 0,
        };
        write(pool, p, &[sync], (None, clock), false).await?;
    }
    Ok(())
}

/// A call back to an intent, due now, and its job queued again.
async fn send_again(tx: &mut sqlx::AnyConnection, id: i64, clock: &Clock) -> Result<()> {
    sqlx::query("UPDATE platform_actions SET state = 'intent', next_try_at = $1 WHERE id = $2")
        .bind(clock.now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?;
    lease::requeue(tx, id, None, clock).await
}

/// Queues a refused or failed call again (the researcher's Retry, once the cause is fixed):
/// nothing was done for it, so it is sent as new.
pub async fn retry(pool: &AnyPool, study: StudyId, id: i64, clock: &Clock) -> Result<()> {
    let mut tx = crate::tx::begin_write(pool, &[Lock::Study(study)]).await?;
    let result = async {
        let state: Option<ActionState> = sqlx::query_scalar(
            "SELECT state FROM platform_actions WHERE id = $1 AND study_id = $2",
        )
        .bind(id)
        .bind(study)
        .fetch_optional(&mut *tx)
        .await?;
        match state {
            None => Err(Error::NotFound(format!("study {study} has no call {id}"))),
            Some(ActionState::Refused) => send_again(&mut tx, id, clock).await,
            Some(s @ (ActionState::Intent | ActionState::Sent | ActionState::Done)) => {
                Err(Error::Refused(format!(
                    "call {id} is {}: only a refused call is sent again",
                    s.as_str()
                )))
            }
        }
    }
    .await;
    crate::tx::finish(tx, result).await
}

/// One line of the ledger: the call as a worker reads it (`call`, its fields read through the
/// row), its answer, and its job's status and error.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct LedgerRow {
    pub id: i64,
    #[sqlx(flatten)]
    pub call: ActionKey,
    pub answer_json: Option<String>,
    pub created_at: i64,
    pub answered_at: Option<i64>,
    pub job_status: domain::run::JobStatus,
    pub error: Option<String>,
}

impl std::ops::Deref for LedgerRow {
    type Target = ActionKey;
    fn deref(&self) -> &ActionKey {
        &self.call
    }
}

/// The study's ledger, oldest first.
pub async fn rows(pool: &AnyPool, study: StudyId) -> Result<Vec<LedgerRow>> {
    Ok(sqlx::query_as(
        "SELECT a.id, a.study_id, a.platform, a.sandbox, a.action, a.idem_key, a.target,
            a.amount_cents, a.state, a.tries, a.request_json, a.answer_json, a.remote_ref,
            a.created_at, a.sent_at, a.answered_at, j.status AS job_status, j.error
         FROM platform_actions a JOIN jobs j ON j.id = a.id WHERE a.study_id = $1 ORDER BY a.id",
    )
    .bind(study)
    .fetch_all(pool)
    .await?)
}

/// A line of `ledger.csv`: a call, its state, what it may spend, and the platform's answer.
#[derive(serde::Serialize)]
struct LedgerLine<'a> {
    id: i64,
    study_id: StudyId,
    platform: Platform,
    site: &'static str,
    action: Action,
    target: &'a str,
    state: ActionState,
    job_status: domain::run::JobStatus,
    amount_cents: i64,
    amount: String,
    tries: i64,
    idempotency_key: &'a str,
    created_at: String,
    sent_at: String,
    answered_at: String,
    request: &'a str,
    answer: &'a str,
    error: &'a str,
}

/// The columns of `ledger.csv`, in order.
pub const LEDGER_COLUMNS: [&str; 18] = [
    "id",
    "study_id",
    "platform",
    "site",
    "action",
    "target",
    "state",
    "job_status",
    "amount_cents",
    "amount",
    "tries",
    "idempotency_key",
    "created_at",
    "sent_at",
    "answered_at",
    "request",
    "answer",
    "error",
];

/// The study's ledger as CSV, oldest call first (the requests hold no credential).
pub async fn csv(pool: &AnyPool, study: StudyId) -> Result<String> {
    csv_of(pool, &[study]).await.map(|(text, _)| text)
}

/// The ledgers of `studies` (none: every study's) as one CSV, and how many calls it lists.
pub async fn csv_of(pool: &AnyPool, studies: &[StudyId]) -> Result<(String, usize)> {
    let mut rows = Vec::new();
    if studies.is_empty() {
        let all: Vec<StudyId> =
            sqlx::query_scalar("SELECT DISTINCT study_id FROM platform_actions ORDER BY study_id")
                .fetch_all(pool)
                .await?;
        for s in all {
            rows.extend(self::rows(pool, s).await?);
        }
    } else {
        for s in studies {
            rows.extend(self::rows(pool, *s).await?);
        }
    }
    let time = |t: Option<i64>| t.map(crate::export::iso_utc).unwrap_or_default();
    let lines: Vec<LedgerLine> = rows
        .iter()
        .map(|r| LedgerLine {
            id: r.id,
            study_id: r.study_id,
            platform: r.platform,
            site: if r.sandbox != 0 { "sandbox" } else { "live" },
            action: r.action,
            target: r.target.as_deref().unwrap_or_default(),
            state: r.state,
            job_status: r.job_status,
            amount_cents: r.amount_cents,
            amount: domain::report::draw::text::money(r.amount_cents),
            tries: r.tries,
            idempotency_key: &r.idem_key,
            created_at: time(Some(r.created_at)),
            sent_at: time(r.sent_at),
            answered_at: time(r.answered_at),
            request: &r.request_json,
            answer: r.answer_json.as_deref().unwrap_or_default(),
            error: r.error.as_deref().unwrap_or_default(),
        })
        .collect();
    Ok((crate::export::csv_of(&LEDGER_COLUMNS, &lines)?, lines.len()))
}
