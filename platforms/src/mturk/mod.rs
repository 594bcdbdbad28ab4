//! MTurk through the official SDK (`aws-sdk-mturk`): the task's qualification (given to every
//! worker who starts, required not to exist), the HIT with its ExternalQuestion (MTurk has no
//! drafts: it is created on confirmation), more assignments, assignments read back, approvals,
//! rejections and bonuses. Every call that takes MTurk's `UniqueRequestToken` carries the
//! ledger's key, so one sent twice is done once; the others are settled by reading first.
//! The SDK's own retries are off: the job queue retries, with the same keys.

use crate::accounts::MturkAccount;
use crate::run::{Answer, CallError, Ctx};
use crate::Fault;
use aws_sdk_mturk::config::retry::RetryConfig;
use aws_sdk_mturk::config::timeout::TimeoutConfig;
use aws_sdk_mturk::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_mturk::types::{
    AssignmentStatus, Comparator, HitAccessActions, QualificationRequirement,
    QualificationTypeStatus,
};
use aws_smithy_http_client::{tls, Builder};
use domain::platform::ledger::RemoteStatus;
use domain::platform::plan::Call;
use sdk::{dollars, done_or_already, external_question, fault, status};
use serde_json::json;
use std::time::Duration;
use store::platform::calls::Effect;
use store::platform::remote::Remote;

mod sdk;

/// An MTurk account's client.
#[derive(Clone, Debug)]
pub struct Client {
    sdk: aws_sdk_mturk::Client,
    pub sandbox: bool,
}

/// How long a HIT stays up, and after how long MTurk approves what was not decided.
const HIT_LIFETIME_S: i64 = 14 * 24 * 3600;
const AUTO_APPROVE_S: i64 = 7 * 24 * 3600;

impl Client {
    pub fn new(a: &MturkAccount) -> Client {
        let http = Builder::new()
            .tls_provider(tls::Provider::Rustls(
                tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let credentials = Credentials::new(
            a.access_key.expose(),
            a.secret_key.expose(),
            None,
            None,
            "clues-lab",
        );
        let conf = aws_sdk_mturk::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(credentials)
            .endpoint_url(&a.endpoint)
            .http_client(http)
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(10))
                    .operation_attempt_timeout(Duration::from_secs(60))
                    .build(),
            )
            .retry_config(RetryConfig::disabled())
            .build();
        Client {
            sdk: aws_sdk_mturk::Client::from_conf(conf),
            sandbox: a.sandbox,
        }
    }

    /// The cheap authenticated call: the account's balance.
    pub async fn check(&self) -> Result<String, Fault> {
        let b = self.sdk.get_account_balance().send().await.map_err(fault)?;
        Ok(format!(
            "MTurk{} account: ${} available",
            if self.sandbox { " sandbox" } else { "" },
            b.available_balance().unwrap_or("?")
        ))
    }

    async fn find_qualification(&self, name: &str) -> Result<Option<String>, Fault> {
        let found = self
            .sdk
            .list_qualification_types()
            .query(name)
            .must_be_requestable(false)
            .must_be_owned_by_caller(true)
            .max_results(100)
            .send()
            .await
            .map_err(fault)?;
        Ok(found
            .qualification_types()
            .iter()
            .find(|q| q.name() == Some(name))
            .and_then(|q| q.qualification_type_id().map(str::to_string)))
    }

    /// The HIT this platform made with `key` (its `RequesterAnnotation`).
    async fn find_hit(&self, key: &str) -> Result<Option<(String, Option<String>)>, Fault> {
        let mut pages = self
            .sdk
            .list_hits()
            .max_results(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(fault)?;
            if let Some(h) = page
                .hits()
                .iter()
                .find(|h| h.requester_annotation() == Some(key))
            {
                let id = h.hit_id().unwrap_or_default().to_string();
                return Ok(Some((id, h.hit_type_id().map(str::to_string))));
            }
        }
        Ok(None)
    }

    async fn assignments(&self, hit: &str) -> Result<Vec<Remote>, Fault> {
        let mut out = Vec::new();
        let mut pages = self
            .sdk
            .list_assignments_for_hit()
            .hit_id(hit)
            .assignment_statuses(AssignmentStatus::Submitted)
            .assignment_statuses(AssignmentStatus::Approved)
            .assignment_statuses(AssignmentStatus::Rejected)
            .max_results(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            for a in page.map_err(fault)?.assignments() {
                let ms = |t: Option<&aws_sdk_mturk::primitives::DateTime>| {
                    t.and_then(|t| t.to_millis().ok())
                };
                out.push(Remote {
                    remote_id: a.assignment_id().unwrap_or_default().to_string(),
                    worker: a.worker_id().unwrap_or_default().to_string(),
                    status: status(a.assignment_status()),
                    started_at: ms(a.accept_time()),
                    submitted_at: ms(a.submit_time()),
                    code: None,
                });
            }
        }
        Ok(out)
    }

    async fn assignment_status(&self, id: &str) -> Result<RemoteStatus, Fault> {
        let a = self
            .sdk
            .get_assignment()
            .assignment_id(id)
            .send()
            .await
            .map_err(fault)?;
        Ok(status(a.assignment().and_then(|a| a.assignment_status())))
    }

    /// Carries out a held call; one whose answer was lost is sent again with the same token,
    /// or settled by reading first where MTurk takes no token.
    pub async fn carry_out(&self, ctx: &Ctx<'_>, call: &Call) -> Result<Answer, CallError> {
        let key = ctx.held.idem_key.as_str();
        Ok(match call {
            Call::Group { task } => self.group(ctx, task).await?,
            Call::Create => self.create(ctx).await?,
            // Creating the HIT published it.
            Call::Publish => Answer::new(json!({ "published": "with the HIT" }), Effect::Nothing),
            Call::Places { total, more } => {
                let sent = self
                    .sdk
                    .create_additional_assignments_for_hit()
                    .hit_id(ctx.remote_id()?)
                    .number_of_additional_assignments(*more as i32)
                    .unique_request_token(key)
                    .send()
                    .await;
                done_or_already(sent.map(|_| ()).map_err(fault))?;
                let effect = Effect::Places { total: *total };
                Answer::new(json!({ "assignments": total }), effect)
            }
            Call::Grant { worker } => {
                self.sdk
                    .associate_qualification_with_worker()
                    .qualification_type_id(ctx.group()?)
                    .worker_id(worker)
                    .integer_value(1)
                    .send_notification(false)
                    .send()
                    .await
                    .map_err(fault)?;
                Answer::new(json!({ "qualified": worker }), Effect::Nothing)
            }
            Call::Sync => {
                let all = self.assignments(ctx.remote_id()?).await?;
                Answer::new(json!({ "assignments": all.len() }), Effect::Synced(all))
            }
            Call::Approve { remote_id, .. } => self.decide(ctx, remote_id, None).await?,
            Call::Reject {
                remote_id, message, ..
            } => self.decide(ctx, remote_id, Some(message)).await?,
            Call::Bonus {
                remote_id,
                worker,
                cents,
                reason,
            } => {
                let sent = self
                    .sdk
                    .send_bonus()
                    .worker_id(worker)
                    .assignment_id(remote_id)
                    .bonus_amount(dollars(*cents))
                    .reason(reason)
                    .unique_request_token(key)
                    .send()
                    .await;
                done_or_already(sent.map(|_| ()).map_err(fault))?;
                Answer::new(json!({ "bonus": dollars(*cents) }), Effect::Nothing)
            }
        })
    }

    /// The task's qualification, made once: a name MTurk already has is the one made before.
    async fn group(&self, ctx: &Ctx<'_>, task: &str) -> Result<Answer, Fault> {
        let name = format!("clues-lab: took part in {task}");
        let found = if ctx.sent_before() {
            self.find_qualification(&name).await?
        } else {
            None
        };
        let id = match found {
            Some(id) => id,
            None => {
                let made = self
                    .sdk
                    .create_qualification_type()
                    .name(&name)
                    .description(format!(
                        "Took part in a study of the task {task}: each scenario needs workers new to the task."
                    ))
                    .qualification_type_status(QualificationTypeStatus::Active)
                    .send()
                    .await;
                match made.map_err(fault) {
                    Ok(q) => q
                        .qualification_type()
                        .and_then(|q| q.qualification_type_id())
                        .unwrap_or_default()
                        .to_string(),
                    Err(Fault::Refused(why) | Fault::AlreadyDone(why))
                        if why.contains("already") =>
                    {
                        self.find_qualification(&name)
                            .await?
                            .ok_or(Fault::Refused(why))?
                    }
                    Err(f) => return Err(f),
                }
            }
        };
        let effect = Effect::Group {
            task: ctx.task.0,
            remote_id: id.clone(),
        };
        Ok(Answer::new(json!({ "qualification": id }), effect))
    }

    /// The HIT, with the task's qualification required not to exist; its token and
    /// annotation are the ledger's key, so one sent twice is made once and found again.
    async fn create(&self, ctx: &Ctx<'_>) -> Result<Answer, Fault> {
        let (d, key) = (&ctx.publication.draft, ctx.held.idem_key.as_str());
        let requirement = QualificationRequirement::builder()
            .qualification_type_id(ctx.group()?)
            .comparator(Comparator::DoesNotExist)
            .actions_guarded(HitAccessActions::DiscoverPreviewAndAccept)
            .build()
            .map_err(|e| Fault::Refused(e.to_string()))?;
        let made = self
            .sdk
            .create_hit()
            .title(&d.title)
            .description(&d.description)
            .keywords("text, reading, annotation, research")
            .reward(dollars(d.reward_cents))
            .max_assignments(d.places as i32)
            .assignment_duration_in_seconds(i64::from(d.max_minutes) * 60)
            .lifetime_in_seconds(HIT_LIFETIME_S)
            .auto_approval_delay_in_seconds(AUTO_APPROVE_S)
            .question(external_question(&d.link))
            .requester_annotation(key)
            .qualification_requirements(requirement)
            .unique_request_token(key)
            .send()
            .await
            .map_err(fault);
        let (id, group) = match made {
            Ok(h) => {
                let hit = h.hit();
                let id = hit.and_then(|h| h.hit_id()).unwrap_or_default().to_string();
                (id, hit.and_then(|h| h.hit_type_id()).map(str::to_string))
            }
            Err(Fault::AlreadyDone(why)) => self
                .find_hit(key)
                .await?
                .ok_or(Fault::Unknown(format!("{why}; the HIT is not listed yet")))?,
            Err(f) => return Err(f),
        };
        let said = json!({ "hit": id, "hit_type": group });
        let effect = Effect::Created {
            remote_id: id,
            remote_group: group,
        };
        Ok(Answer::new(said, effect))
    }

    /// Approves an assignment, or rejects it with `message` to the worker; one decided that
    /// way already (read first after a lost answer) is left as it is.
    async fn decide(
        &self,
        ctx: &Ctx<'_>,
        id: &str,
        message: Option<&String>,
    ) -> Result<Answer, Fault> {
        let wanted = match message {
            None => RemoteStatus::Approved,
            Some(_) => RemoteStatus::Rejected,
        };
        let decided = if ctx.sent_before() {
            Some(self.assignment_status(id).await?)
        } else {
            None
        };
        if decided != Some(wanted) {
            let sent = match message {
                None => self
                    .sdk
                    .approve_assignment()
                    .assignment_id(id)
                    .send()
                    .await
                    .map(|_| ())
                    .map_err(fault),
                Some(m) => self
                    .sdk
                    .reject_assignment()
                    .assignment_id(id)
                    .requester_feedback(m)
                    .send()
                    .await
                    .map(|_| ())
                    .map_err(fault),
            };
            self.settle(id, sent, wanted).await?;
        }
        let effect = Effect::Decided {
            remote_id: id.to_string(),
            status: wanted,
        };
        Ok(Answer::new(json!({ "status": wanted.as_str() }), effect))
    }

    /// A decision MTurk refused because the assignment is decided already that way is done.
    async fn settle(
        &self,
        id: &str,
        sent: Result<(), Fault>,
        wanted: RemoteStatus,
    ) -> Result<(), Fault> {
        match sent {
            Err(Fault::Refused(why)) if self.assignment_status(id).await? == wanted => {
                tracing::info!("assignment {id} was {} already ({why})", wanted.as_str());
                Ok(())
            }
            other => other,
        }
    }
}
