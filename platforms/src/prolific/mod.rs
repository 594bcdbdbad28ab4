//! Prolific through its published REST API (`wire`): a draft study made and published, more
//! places, the task's participant group, submissions read back, approvals, rejections and
//! bonuses. Prolific takes no idempotency key, so a call whose answer was lost is settled by
//! reading what exists before anything is sent again; a bonus, which Prolific pays again on
//! every `pay/` call, is paid at most once (`bonus`). Its hooks are checked by `hooks`.

mod bonus;
mod hooks;
pub mod wire;

pub use hooks::{hook_signature, verify_hook, HOOK_MAX_AGE_S};

use crate::accounts::ProlificAccount;
use crate::run::{Answer, CallError, Ctx};
use crate::Fault;
use domain::platform::plan::{Call, Rule};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::time::Duration;
use store::platform::calls::Effect;
use store::platform::remote::Remote;
use wire::*;

/// A Prolific account's client.
#[derive(Clone, Debug)]
pub struct Client {
    account: ProlificAccount,
    agent: ureq::Agent,
}

/// An HTTP method of the calls made.
#[derive(Clone, Copy, Debug)]
enum Method {
    Get,
    Post,
    Patch,
}

impl Client {
    pub fn new(account: ProlificAccount) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Client { account, agent }
    }

    /// One call: the account's token in its header, a JSON body, a typed answer.
    async fn call<T: DeserializeOwned + Send + 'static>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, Fault> {
        let url = format!("{}{path}", self.account.api.trim_end_matches('/'));
        let auth = format!("Token {}", self.account.token.expose());
        let agent = self.agent.clone();
        let what = format!("{method:?} {path}");
        let said = what.clone();
        tokio::task::spawn_blocking(move || {
            let sent = match (method, body) {
                (Method::Get, _) => agent.get(&url).header("Authorization", &auth).call(),
                (Method::Post, Some(b)) => agent
                    .post(&url)
                    .header("Authorization", &auth)
                    .send_json(&b),
                (Method::Post, None) => {
                    agent.post(&url).header("Authorization", &auth).send_empty()
                }
                (Method::Patch, b) => agent
                    .patch(&url)
                    .header("Authorization", &auth)
                    .send_json(b.unwrap_or(Value::Null)),
            };
            answer(&what, sent)
        })
        .await
        .map_err(|e| Fault::Unknown(format!("{said}: the call stopped: {e}")))?
    }

    async fn get<T: DeserializeOwned + Send + 'static>(&self, path: &str) -> Result<T, Fault> {
        self.call(Method::Get, path, None).await
    }

    async fn post<T: DeserializeOwned + Send + 'static>(
        &self,
        path: &str,
        body: impl Serialize,
    ) -> Result<T, Fault> {
        let body = serde_json::to_value(body).map_err(|e| Fault::Refused(e.to_string()))?;
        self.call(Method::Post, path, Some(body)).await
    }

    /// The cheap authenticated call: who the token is, and the account's balance.
    pub async fn check(&self) -> Result<String, Fault> {
        let me: Me = self.get("/api/v1/users/me/").await?;
        Ok(match (me.available_balance, me.currency_code) {
            (Some(b), Some(c)) => format!(
                "Prolific account {}: {} {c} available",
                me.id,
                domain::report::draw::text::money(b)
            ),
            _ => format!("Prolific account {}", me.id),
        })
    }

    /// What Prolific's own calculator says `places` places at `reward` cost, fees and VAT in.
    pub async fn cost(&self, reward: i64, places: u32) -> Result<i64, Fault> {
        let body = CostRequest {
            reward,
            total_available_places: places,
        };
        let a: CostAnswer = self.post("/api/v1/study-cost-calculator/", body).await?;
        Ok(a.total_cost.round() as i64)
    }

    async fn workspace(&self) -> Result<String, Fault> {
        if let Some(w) = &self.account.workspace {
            return Ok(w.clone());
        }
        let all: Workspaces = self.get("/api/v1/workspaces/").await?;
        all.results
            .into_iter()
            .next()
            .map(|w| w.id)
            .ok_or_else(|| Fault::Refused("the Prolific account has no workspace".into()))
    }

    async fn find_group(&self, name: &str) -> Result<Option<String>, Fault> {
        let w = self.workspace().await?;
        let path = format!("/api/v1/participant-groups/?workspace_id={}", enc(&w));
        let all: Groups = self.get(&path).await?;
        Ok(all
            .results
            .into_iter()
            .find(|g| g.name == name)
            .map(|g| g.id))
    }

    async fn find_study(&self, key: &str) -> Result<Option<Study>, Fault> {
        let all: Studies = self.get("/api/v1/studies/").await?;
        Ok(all.results.into_iter().find(|s| {
            s.metadata.as_deref() == Some(key) || s.internal_name.as_deref() == Some(key)
        }))
    }

    async fn study(&self, id: &str) -> Result<Study, Fault> {
        self.get(&format!("/api/v1/studies/{}/", enc(id))).await
    }

    async fn submission(&self, id: &str) -> Result<Submission, Fault> {
        self.get(&format!("/api/v1/submissions/{}/", enc(id))).await
    }

    /// Every submission of a study, page by page.
    async fn submissions(&self, study: &str) -> Result<Vec<Remote>, Fault> {
        let mut out = Vec::new();
        loop {
            let path = format!(
                "/api/v1/studies/{}/submissions/?limit=200&offset={}",
                enc(study),
                out.len()
            );
            let page: Submissions = self.get(&path).await?;
            let n = page.results.len();
            out.extend(page.results.into_iter().map(|s| Remote {
                remote_id: s.id,
                worker: s.participant_id,
                status: s.status.remote(),
                started_at: s.started_at.as_deref().and_then(unix_ms),
                submitted_at: s.completed_at.as_deref().and_then(unix_ms),
                code: s.study_code,
            }));
            if n < 200 || page.meta.is_some_and(|m| out.len() as u64 >= m.count) {
                return Ok(out);
            }
        }
    }

    /// Carries out a held call, reading what exists first where an earlier send's answer was
    /// lost.
    pub async fn carry_out(&self, ctx: &Ctx<'_>, call: &Call) -> Result<Answer, CallError> {
        let again = ctx.sent_before();
        let remote = || ctx.remote_id();
        Ok(match call {
            Call::Group { task } => self.group(ctx, task).await?,
            Call::Create => self.create(ctx).await?,
            Call::Publish => self.publish(remote()?, again).await?,
            Call::Places { total, .. } => {
                let id = remote()?;
                let now = self.study(id).await?;
                if now.total_available_places.unwrap_or(0.0) < f64::from(*total) {
                    let more = MorePlaces {
                        total_available_places: *total,
                    };
                    let body =
                        serde_json::to_value(more).map_err(|e| Fault::Refused(e.to_string()))?;
                    let path = format!("/api/v1/studies/{}/", enc(id));
                    self.call::<Study>(Method::Patch, &path, Some(body)).await?;
                }
                let effect = Effect::Places { total: *total };
                Answer::new(json!({ "total_available_places": total }), effect)
            }
            Call::Grant { worker } => {
                let group = ctx.group()?;
                let path = format!("/api/v1/participant-groups/{}/participants/", enc(group));
                let body = AddParticipants {
                    participant_ids: vec![worker.clone()],
                };
                self.post::<Value>(&path, body).await?;
                let said = json!({ "group": group, "participant": worker });
                Answer::new(said, Effect::Nothing)
            }
            Call::Sync => {
                let all = self.submissions(remote()?).await?;
                Answer::new(json!({ "submissions": all.len() }), Effect::Synced(all))
            }
            Call::Approve { remote_id, .. } => {
                self.decide(remote_id, again, "APPROVE", None).await?
            }
            Call::Reject {
                remote_id,
                rule,
                message,
                ..
            } => {
                let why = Some((message.clone(), category(*rule).to_string()));
                self.decide(remote_id, again, "REJECT", why).await?
            }
            Call::Bonus {
                remote_id, cents, ..
            } => self.bonus(ctx, remote_id, *cents).await?,
        })
    }

    /// The task's participant group, made once (found by its name after a lost answer).
    async fn group(&self, ctx: &Ctx<'_>, task: &str) -> Result<Answer, Fault> {
        let name = group_name(task);
        let found = if ctx.sent_before() {
            self.find_group(&name).await?
        } else {
            None
        };
        let id = match found {
            Some(id) => id,
            None => {
                let body = CreateGroup {
                    name,
                    workspace_id: self.workspace().await?,
                    description: format!(
                        "Every worker who took part in a study of the task {task} (clues-lab): each scenario needs workers new to the task."
                    ),
                };
                let g: Group = self.post("/api/v1/participant-groups/", body).await?;
                g.id
            }
        };
        let effect = Effect::Group {
            task: ctx.task.0,
            remote_id: id.clone(),
        };
        Ok(Answer::new(json!({ "group": id }), effect))
    }

    /// The draft study, made once (found by its metadata, the ledger's key, after a lost
    /// answer).
    async fn create(&self, ctx: &Ctx<'_>) -> Result<Answer, Fault> {
        let found = if ctx.sent_before() {
            self.find_study(&ctx.held.idem_key).await?
        } else {
            None
        };
        let study = match found {
            Some(s) => s,
            None => {
                let body = create_study(ctx, self.account.project.clone())?;
                self.post::<Study>("/api/v1/studies/", body).await?
            }
        };
        let effect = Effect::Created {
            remote_id: study.id.clone(),
            remote_group: None,
        };
        Ok(Answer::new(
            json!({ "study": study.id, "status": study.status }),
            effect,
        ))
    }

    /// The draft published, once (a study no longer unpublished is left as it is).
    async fn publish(&self, id: &str, again: bool) -> Result<Answer, Fault> {
        let now = if again {
            Some(self.study(id).await?)
        } else {
            None
        };
        let study = match now.filter(|s| s.status != "UNPUBLISHED") {
            Some(s) => s,
            None => {
                let path = format!("/api/v1/studies/{}/transition/", enc(id));
                let body = StudyTransition {
                    action: "PUBLISH".into(),
                };
                self.post::<Study>(&path, body).await?
            }
        };
        Ok(Answer::new(
            json!({ "status": study.status }),
            Effect::Nothing,
        ))
    }

    /// Approves or rejects a submission (Prolific's transition is idempotent, and a submission
    /// decided already is left as it is).
    async fn decide(
        &self,
        remote_id: &str,
        again: bool,
        action: &str,
        why: Option<(String, String)>,
    ) -> Result<Answer, Fault> {
        let before = if again {
            Some(self.submission(remote_id).await?)
        } else {
            None
        };
        let decided = |s: &Submission| {
            matches!(
                s.status,
                SubmissionStatus::Approved | SubmissionStatus::Rejected
            )
        };
        let status = match before.filter(decided) {
            Some(s) => s.status,
            None => {
                let (message, rejection_category) = why.unzip();
                let body = SubmissionTransition {
                    action: action.into(),
                    message,
                    rejection_category,
                };
                let path = format!("/api/v1/submissions/{}/transition/", enc(remote_id));
                let s: Value = self.post(&path, body).await?;
                serde_json::from_value::<SubmissionStatus>(s["status"].clone())
                    .map_err(|e| Fault::Unknown(format!("Prolific's answer had no status: {e}")))?
            }
        };
        let effect = Effect::Decided {
            remote_id: remote_id.into(),
            status: status.remote(),
        };
        Ok(Answer::new(json!({ "status": status }), effect))
    }
}

/// The task's participant group's name on Prolific.
fn group_name(task: &str) -> String {
    format!("clues-lab: workers of {task}")
}

/// Prolific's rejection category of a stated rule.
fn category(rule: Rule) -> &'static str {
    match rule {
        Rule::FailedAttention => "FAILED_CHECK",
    }
}

/// The draft study of a publication.
fn create_study(ctx: &Ctx<'_>, project: Option<String>) -> Result<CreateStudy, Fault> {
    let d = &ctx.publication.draft;
    Ok(CreateStudy {
        name: d.title.clone(),
        internal_name: ctx.held.idem_key.clone(),
        description: d.description.clone(),
        external_study_url: d.link.clone(),
        prolific_id_option: "url_parameters".into(),
        completion_codes: vec![CompletionCode {
            code: d.completion_code.clone(),
            code_type: "COMPLETED".into(),
            actor: "participant".into(),
            actions: vec![CodeAction {
                action: "MANUALLY_REVIEW".into(),
            }],
        }],
        total_available_places: d.places,
        estimated_completion_time: d.minutes,
        maximum_allowed_time: d.max_minutes,
        reward: d.reward_cents,
        device_compatibility: d.devices.clone(),
        peripheral_requirements: Vec::new(),
        filters: vec![Filter {
            filter_id: "participant_group_blocklist".into(),
            selected_values: vec![ctx.group()?.to_string()],
        }],
        project,
        submissions_config: SubmissionsConfig {
            max_submissions_per_participant: 1,
        },
        metadata: ctx.held.idem_key.clone(),
    })
}

/// A path segment, percent-encoded.
fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A call's result by what came back: the answer read, or a fault by what it means for
/// sending again.
fn answer<T: DeserializeOwned>(
    what: &str,
    sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<T, Fault> {
    let mut res = match sent {
        Ok(r) => r,
        Err(e) => return Err(transport(what, e)),
    };
    let status = res.status().as_u16();
    let text = res
        .body_mut()
        .with_config()
        .limit(16 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| Fault::Unknown(format!("{what}: its answer could not be read: {e}")))?;
    match status {
        200..=299 => {
            let text = if text.trim().is_empty() {
                "null"
            } else {
                text.as_str()
            };
            serde_json::from_str(text)
                .map_err(|e| Fault::Unknown(format!("{what}: its answer did not read: {e}")))
        }
        429 => Err(Fault::Busy(format!("{what}: Prolific asked to wait (429)"))),
        401 | 403 => Err(Fault::Refused(format!(
            "{what}: Prolific refused the account's token ({status}): check PROLIFIC_TOKEN"
        ))),
        500..=599 => Err(Fault::Failed(format!("{what}: Prolific failed ({status})"))),
        _ => Err(Fault::Refused(format!(
            "{what}: Prolific refused it ({status}): {}",
            said(&text)
        ))),
    }
}

/// Prolific's words in an error body, or the body.
fn said(text: &str) -> String {
    match serde_json::from_str::<ErrorBody>(text) {
        Ok(b) => format!("{}: {}", b.error.title, b.error.detail),
        Err(_) => text.chars().take(500).collect(),
    }
}

/// A transport error by whether the call reached Prolific.
fn transport(what: &str, e: ureq::Error) -> Fault {
    use ureq::Timeout;
    let said = format!("{what}: {e}");
    match e {
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => Fault::Unsent(said),
        ureq::Error::Timeout(Timeout::Resolve | Timeout::Connect) => Fault::Unsent(said),
        // Anything later in the exchange may have reached Prolific.
        _ => Fault::Unknown(said),
    }
}
