//! The platform calls as a worker runs them (`store::lease::lanes::Runner` of the `platform`
//! queue): a held call waits for the calls it needs, is marked sent before it is sent, and is
//! stored with the platform's answer and what it changes; a passing fault puts it off (it was
//! marked sent, so the next try reads what exists first), a refusal fails it with the
//! platform's words. The loop that runs them is the server's, or a command's.

use crate::{Fault, Site};
use domain::ids::TaskId;
use domain::platform::ledger::{Action, ActionState};
use domain::platform::plan::Call;
use serde_json::Value;
use sqlx::AnyPool;
use store::error::{Error, Result};
use store::lease::lanes::{KeyOf, Lost, Runner};
use store::lease::{Clock, Held, JobKind};
use store::platform::calls::{self, Effect};
use store::platform::ledger::{self, ActionKey, HeldCall, PlatformKind};
use store::platform::Publication;

/// A publication is read back at most this often by polling (hooks ask sooner).
pub const SYNC_EVERY_MS: i64 = 60_000;

/// What a carried-out call answers: the platform's words for the ledger, and their effect.
#[derive(Debug)]
pub struct Answer {
    pub said: Value,
    pub effect: Effect,
}

impl Answer {
    pub fn new(said: Value, effect: Effect) -> Self {
        Answer { said, effect }
    }
}

/// Why a call was not carried out: the platform's fault, or one here (the database).
#[derive(Debug)]
pub enum CallError {
    Platform(Fault),
    Here(Error),
}

impl From<Fault> for CallError {
    fn from(f: Fault) -> Self {
        CallError::Platform(f)
    }
}

impl From<Error> for CallError {
    fn from(e: Error) -> Self {
        CallError::Here(e)
    }
}

/// What a held call is carried out with.
pub struct Ctx<'a> {
    pub pool: &'a AnyPool,
    pub held: &'a HeldCall,
    pub publication: &'a Publication,
    pub task: (TaskId, String),
    pub group: Option<String>,
}

impl Ctx<'_> {
    /// Whether an earlier try was sent and its answer may have been lost.
    pub fn sent_before(&self) -> bool {
        self.held.state == ActionState::Sent
    }

    /// The publication's id on the platform.
    pub fn remote_id(&self) -> std::result::Result<&str, Fault> {
        self.publication
            .remote_id
            .as_deref()
            .ok_or_else(|| Fault::Busy("the publication is not created on the platform yet".into()))
    }

    /// The task's list of workers on the platform.
    pub fn group(&self) -> std::result::Result<&str, Fault> {
        self.group
            .as_deref()
            .ok_or_else(|| Fault::Busy("the task's list of workers is not made yet".into()))
    }

    pub fn now(&self) -> i64 {
        self.held.lease.clock.now_ms()
    }
}

/// The wait after a passing fault: 1 s, doubling with each send, at most 5 minutes.
pub fn backoff(tries: i64) -> i64 {
    let n = tries.clamp(1, 10) as u32 - 1;
    (1000_i64 << n).min(300_000)
}

/// The platform calls of the accounts this process has.
pub struct PlatformRunner {
    pub sites: Vec<Site>,
    /// Only this study's calls (a command that runs what it wrote); else every study's.
    pub only: Option<domain::ids::StudyId>,
    /// The operator's fee rates (the cost of places asked for again).
    pub rates: domain::platform::fees::FeeRates,
}

impl PlatformRunner {
    fn site_list(&self) -> Vec<(domain::platform::Platform, bool)> {
        self.sites
            .iter()
            .map(|s| (s.platform(), s.sandbox()))
            .collect()
    }

    fn site(&self, key: &ActionKey) -> Option<&Site> {
        self.sites
            .iter()
            .find(|s| s.platform() == key.platform && s.sandbox() == (key.sandbox != 0))
    }

    /// Whether the calls `call` needs are done (else it is put off a moment).
    async fn ready(
        &self,
        pool: &AnyPool,
        p: &Publication,
        call: &Call,
        group: bool,
    ) -> Result<bool> {
        Ok(match call {
            Call::Group { .. } | Call::Approve { .. } | Call::Reject { .. } => true,
            Call::Create | Call::Grant { .. } => group,
            Call::Publish | Call::Places { .. } | Call::Sync => p.remote_id.is_some(),
            Call::Bonus { remote_id, .. } => {
                calls::done(pool, p.study, Action::Approve, remote_id).await?
            }
        })
    }

    async fn run_call(&self, pool: &AnyPool, held: &HeldCall) -> Result<String> {
        let Some(site) = self.site(held) else {
            return Err(Error::Unfit(format!(
                "this process has no {} account{}",
                held.platform.name(),
                if held.sandbox != 0 {
                    " for the sandbox"
                } else {
                    ""
                }
            )));
        };
        if held.state == ActionState::Refused {
            return Err(Error::Refused(format!(
                "{} refused this call before",
                held.platform.name()
            )));
        }
        let p = store::platform::published(pool, held.study_id).await?;
        let call = held.call()?;
        let task = store::platform::task_of(pool, p.study).await?;
        let group = store::platform::group(pool, task.0, p.platform(), p.draft.sandbox).await?;
        if !self.ready(pool, &p, &call, group.is_some()).await? {
            calls::put_off(pool, held, "waiting for the calls it needs", 2_000).await?;
            return Err(Error::Later("it waits for the calls it needs".into()));
        }
        if held.state == ActionState::Intent {
            calls::mark_sent(pool, held).await?;
        }
        let ctx = Ctx {
            pool,
            held,
            publication: &p,
            task,
            group,
        };
        let carried = match site {
            Site::Prolific(c) => c.carry_out(&ctx, &call).await,
            Site::Mturk(c) => c.carry_out(&ctx, &call).await,
        };
        let name = PlatformKind::name(held.lease.job, held);
        match carried {
            Ok(answer) => {
                calls::finish(pool, held, &answer.said, answer.effect).await?;
                if call == Call::Sync {
                    crate::flow::after_sync(pool, &p, self.rates, &held.lease.clock).await?;
                }
                Ok(format!("{name}: {}", answer.said))
            }
            Err(CallError::Here(e)) => Err(e),
            Err(CallError::Platform(Fault::AlreadyDone(said))) => {
                let answer = serde_json::json!({ "already_done": said });
                calls::finish(pool, held, &answer, Effect::Nothing).await?;
                Ok(format!("{name}: done before ({said})"))
            }
            Err(CallError::Platform(Fault::Refused(said))) => {
                calls::refuse(pool, held, &serde_json::json!({ "refused": said })).await?;
                Err(Error::Refused(said))
            }
            Err(CallError::Platform(
                f @ (Fault::Unsent(_) | Fault::Busy(_) | Fault::Unknown(_) | Fault::Failed(_)),
            )) => {
                let said = f.to_string();
                calls::put_off(pool, held, &said, backoff(held.tries + 1)).await?;
                Err(Error::Later(said))
            }
        }
    }
}

impl Runner for PlatformRunner {
    type Kind = PlatformKind;
    type Out = String;

    async fn open(&mut self, pool: &AnyPool, clock: &Clock) -> Result<Vec<i64>> {
        let now = clock.now_ms();
        let sites = self.site_list();
        for p in store::platform::publications(pool).await? {
            if self.only.is_some_and(|s| s != p.study) {
                continue;
            }
            let ours = sites.contains(&(p.platform(), p.draft.sandbox));
            if ours && p.remote_id.is_some() && p.synced_at.is_none_or(|t| now - t >= SYNC_EVERY_MS)
            {
                ledger::request_sync(pool, &p, clock).await?;
            }
        }
        calls::runnable(pool, &sites, self.only, now).await
    }

    async fn waiting(&self, pool: &AnyPool, clock: &Clock) -> Result<bool> {
        calls::put_off_calls(pool, &self.site_list(), self.only, clock.now_ms()).await
    }

    async fn run(&self, pool: &AnyPool, held: &Held<KeyOf<Self>>, _: Lost) -> Result<String> {
        self.run_call(pool, held).await
    }

    fn report(&self, said: String) {
        tracing::info!("{said}");
    }

    fn unfit(&mut self, held: &Held<KeyOf<Self>>) -> (String, bool) {
        let (platform, sandbox) = (held.platform, held.sandbox != 0);
        self.sites
            .retain(|s| !(s.platform() == platform && s.sandbox() == sandbox));
        (format!("{} calls", platform.name()), !self.sites.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::backoff;

    #[test]
    fn a_passing_fault_waits_longer_each_time_up_to_five_minutes() {
        assert_eq!(
            (1..=5).map(backoff).collect::<Vec<_>>(),
            [1000, 2000, 4000, 8000, 16000]
        );
        assert_eq!(backoff(40), 300_000);
        assert_eq!(backoff(0), 1000);
    }
}
