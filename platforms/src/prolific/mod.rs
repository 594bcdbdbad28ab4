//! Prolific through its published REST API (`wire`): a draft study made and published, more
//! places, the task's participant group, submissions read back, approvals, rejections and
//! bonuses. Prolific takes no idempotency key, so a call whose answer was lost is settled by
//! reading what exists before anything is sent again; a bonus, which Prolific pays again on
//! every `pay/` call, is paid at most once: its bulk bonus is kept before it is paid, and a pay
//! whose answer was lost is looked for on the submission, never sent again by itself.

pub mod wire;

use crate::accounts::ProlificAccount;
use crate::run::{Answer, CallError, Ctx};
use crate::Fault;
use domain::platform::plan::{Call, Rule};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::time::Duration;
use store::platform::ledger::{self, Effect};
use store::platform::remote::Remote;
use wire::*;

/// How long a bonus pay whose answer was lost is looked for before the researcher is asked to
/// check it, and how long one answered with a 5xx is looked for before it is paid again
/// (Prolific pays a bulk bonus "in the following minutes").
const PAY_CONFIRM_MS: i64 = 30 * 60 * 1000;
const PAY_FAILED_MS: i64 = 10 * 60 * 1000;

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
            Call::Group { task } => {
                let name = group_name(task);
                let found = if again {
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
                Answer::new(
                    json!({ "group": id }),
                    Effect::Group {
                        task: ctx.task.0,
                        remote_id: id,
                    },
                )
            }
            Call::Create => {
                let key = &ctx.held.idem_key;
                let found = if again {
                    self.find_study(key).await?
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
                Answer::new(json!({ "study": study.id, "status": study.status }), effect)
            }
            Call::Publish => {
                let id = remote()?;
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
                Answer::new(json!({ "status": study.status }), Effect::Nothing)
            }
            Call::Places { total, .. } => {
                let id = remote()?;
                let now = self.study(id).await?;
                if now.total_available_places.unwrap_or(0.0) < f64::from(*total) {
                    let body = serde_json::to_value(MorePlaces {
                        total_available_places: *total,
                    })
                    .map_err(|e| Fault::Refused(e.to_string()))?;
                    let path = format!("/api/v1/studies/{}/", enc(id));
                    self.call::<Study>(Method::Patch, &path, Some(body)).await?;
                }
                Answer::new(
                    json!({ "total_available_places": total }),
                    Effect::Places { total: *total },
                )
            }
            Call::Grant { worker } => {
                let group = ctx.group()?;
                let path = format!("/api/v1/participant-groups/{}/participants/", enc(group));
                let body = AddParticipants {
                    participant_ids: vec![worker.clone()],
                };
                self.post::<Value>(&path, body).await?;
                Answer::new(
                    json!({ "group": group, "participant": worker }),
                    Effect::Nothing,
                )
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

    /// A bonus in two steps: the bulk bonus made and kept, then paid. Prolific pays a bulk
    /// bonus again on every `pay/` call, so a pay is sent again only where it surely did
    /// nothing: refused with a 429 or never sent; after a 5xx, once the bonus has not appeared
    /// on the submission for `PAY_FAILED_MS`; a pay whose answer was lost is looked for on the
    /// submission and left to the researcher after `PAY_CONFIRM_MS`, never sent again by
    /// itself.
    async fn bonus(&self, ctx: &Ctx<'_>, remote_id: &str, cents: i64) -> Result<Answer, CallError> {
        let bulk = match BonusStep::read(ctx.held.remote_ref.as_deref()) {
            BonusStep::Unmade => {
                let amount = format!("{}.{:02}", cents / 100, cents % 100);
                let body = BonusRequest {
                    study_id: ctx.remote_id()?.to_string(),
                    csv_bonuses: format!("{remote_id},{amount}\n"),
                };
                let b: BulkBonus = self
                    .post("/api/v1/submissions/bonus-payments/", body)
                    .await?;
                ledger::set_ref(ctx.pool, ctx.held, &BonusStep::Made(b.id.clone()).write()).await?;
                b.id
            }
            BonusStep::Made(bulk) => bulk,
            // Sent again by the researcher's Retry, who found it unpaid on Prolific (a call
            // this platform sends again by itself is marked sent first).
            BonusStep::Paying(bulk, _) | BonusStep::Failed(bulk, _) if !ctx.sent_before() => bulk,
            BonusStep::Paying(bulk, at) | BonusStep::Failed(bulk, at) => {
                let failed = matches!(
                    BonusStep::read(ctx.held.remote_ref.as_deref()),
                    BonusStep::Failed(..)
                );
                let s = self.submission(remote_id).await?;
                if s.bonus_payments.iter().any(|b| (b.round() as i64) == cents) {
                    let said = json!({ "bulk": bulk, "confirmed": "on the submission" });
                    return Ok(Answer::new(said, Effect::Nothing));
                }
                let waited = ctx.now() - at;
                match (failed, waited > PAY_FAILED_MS, waited > PAY_CONFIRM_MS) {
                    // Prolific answered that the pay failed, and nothing came of it since.
                    (true, true, _) => bulk,
                    (false, _, true) => {
                        return Err(Fault::Refused(format!(
                            "the pay of bulk bonus {bulk} was sent but Prolific's answer was lost, and the bonus has not appeared on submission {remote_id} in {} minutes: check it on Prolific, and press Retry only if it was not paid",
                            PAY_CONFIRM_MS / 60_000
                        ))
                        .into())
                    }
                    _ => {
                        return Err(Fault::Unknown(format!(
                            "the pay of bulk bonus {bulk} may have gone through; looking for it on the submission"
                        ))
                        .into())
                    }
                }
            }
        };
        let paying = BonusStep::Paying(bulk.clone(), ctx.now());
        ledger::set_ref(ctx.pool, ctx.held, &paying.write()).await?;
        let path = format!("/api/v1/bulk-bonus-payments/{}/pay/", enc(&bulk));
        let after = match self.call::<Value>(Method::Post, &path, None).await {
            Ok(_) => {
                return Ok(Answer::new(
                    json!({ "bulk": bulk, "paid_cents": cents }),
                    Effect::Nothing,
                ))
            }
            // Surely not paid: paid again at the next try.
            Err(f @ (Fault::Busy(_) | Fault::Unsent(_) | Fault::Refused(_))) => {
                (BonusStep::Made(bulk), f)
            }
            Err(f @ Fault::Failed(_)) => (BonusStep::Failed(bulk, ctx.now()), f),
            // The answer was lost: the pay stays marked as sent.
            Err(f @ (Fault::Unknown(_) | Fault::AlreadyDone(_))) => return Err(f.into()),
        };
        ledger::set_ref(ctx.pool, ctx.held, &after.0.write()).await?;
        Err(after.1.into())
    }
}

/// Where a Prolific bonus stands between its two calls, as the ledger keeps it (`remote_ref`).
#[derive(Debug, PartialEq, Eq)]
enum BonusStep {
    /// No bulk bonus made yet (or one whose answer was lost: another is made; an unpaid bulk
    /// bonus costs nothing).
    Unmade,
    /// Made, not paid.
    Made(String),
    /// Its pay was sent at this time (unix ms); the answer may have been lost.
    Paying(String, i64),
    /// Its pay was answered with a 5xx at this time.
    Failed(String, i64),
}

impl BonusStep {
    fn read(kept: Option<&str>) -> BonusStep {
        let Some(kept) = kept else {
            return BonusStep::Unmade;
        };
        let at = |t: &str| t.parse().unwrap_or(0);
        match kept.split_once(':') {
            Some((bulk, rest)) => match rest.split_once('@') {
                Some(("failed", t)) => BonusStep::Failed(bulk.into(), at(t)),
                // A pay marked by an earlier version or cut short reads as sent.
                Some((_, t)) => BonusStep::Paying(bulk.into(), at(t)),
                None => BonusStep::Paying(bulk.into(), 0),
            },
            None => BonusStep::Made(kept.into()),
        }
    }

    fn write(&self) -> String {
        match self {
            BonusStep::Unmade => String::new(),
            BonusStep::Made(b) => b.clone(),
            BonusStep::Paying(b, t) => format!("{b}:paying@{t}"),
            BonusStep::Failed(b, t) => format!("{b}:failed@{t}"),
        }
    }
}

/// Prolific's hook signature: base64 of HMAC-SHA256 over the timestamp header and then the
/// body, keyed with the workspace's hook secret (api-reference/webhooks/verifying).
pub fn hook_signature(secret: &str, timestamp: &str, body: &str) -> String {
    use base64::Engine;
    use hmac::{Hmac, Mac};
    // An HMAC takes a key of any length.
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(timestamp.as_bytes());
    mac.update(body.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// How old a hook may be (its timestamp against the server's clock), so an old one replayed is
/// refused.
pub const HOOK_MAX_AGE_S: i64 = 300;

/// Checks a hook: its signature over the bytes received, and its age.
pub fn verify_hook(
    secret: &str,
    (timestamp, signature): (&str, &str),
    body: &str,
    now_s: i64,
) -> Result<(), String> {
    let sent: i64 = timestamp
        .trim()
        .split('.')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("the hook's timestamp is not a number")?;
    if (now_s - sent).abs() > HOOK_MAX_AGE_S {
        return Err(format!(
            "the hook is {} s old: refused as a replay",
            now_s - sent
        ));
    }
    let want = hook_signature(secret, timestamp, body);
    // Compared in time independent of where they differ.
    let same = want.len() == signature.len()
        && want
            .bytes()
            .zip(signature.bytes())
            .fold(0u8, |d, (a, b)| d | (a ^ b))
            == 0;
    if !same {
        return Err("the hook's signature does not match".into());
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::BonusStep;

    #[test]
    fn a_bonus_step_reads_back_as_it_was_kept() {
        for step in [
            BonusStep::Made("b1".into()),
            BonusStep::Paying("b1".into(), 17),
            BonusStep::Failed("b1".into(), 18),
        ] {
            assert_eq!(BonusStep::read(Some(&step.write())), step);
        }
        assert_eq!(BonusStep::read(None), BonusStep::Unmade);
        assert_eq!(
            BonusStep::read(Some("b1:paying")),
            BonusStep::Paying("b1".into(), 0)
        );
    }
}
