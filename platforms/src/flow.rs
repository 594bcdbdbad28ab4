//! What a researcher asks of a publication, from the dashboard or the command line: a draft,
//! publishing it, keeping it in step, deciding, paying. Each is previewed first (what would be
//! sent, what it costs, with a fingerprint of it), and written as the ledger's intents only
//! when confirmed with that fingerprint: a plan that changed since its preview is not sent.

use domain::ids::{StudyId, UserId};
use domain::platform::draft::{self, Draft};
use domain::platform::fees::{FeeRates, Payment};
use domain::platform::plan::{self, Call, Decision, Rule};
use domain::platform::sync::{reconcile, Line, Reconciled};
use domain::platform::{CrowdInfo, Platform};
use domain::wire::platform::{DecisionsView, PayView, PublishView};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::AnyPool;
use store::error::{Error, Result};
use store::lease::Clock;
use store::platform::ledger::{self, Intent};
use store::platform::{places, remote, Publication};

/// A fingerprint of what a preview shows: the confirmation must name the same.
pub fn fingerprint<T: Serialize>(what: &T) -> String {
    let json = serde_json::to_vec(what).unwrap_or_default();
    hex::encode(&Sha256::digest(&json)[..8])
}

/// Refuses a confirmation of another plan than the one previewed.
fn same_plan(previewed: &str, now: &str) -> Result<()> {
    if previewed != now {
        return Err(Error::Refused(
            "the plan changed since it was previewed (new submissions, or another decision): preview it again and confirm what it shows".into(),
        ));
    }
    Ok(())
}

/// The draft a study is offered as on `platform` (`sandbox`: MTurk's), from its places so far.
pub async fn derive(
    pool: &AnyPool,
    study: StudyId,
    (platform, sandbox): (Platform, bool),
    origin: &str,
) -> Result<Draft> {
    let p = places::of_study(pool, study, platform).await?;
    let nonce = format!("{:08x}", rand::random::<u32>());
    Ok(draft::derive(platform, sandbox, &p.facts(origin), &nonce))
}

/// The calls that publish `p`: the task's list of workers where it has none, the publication,
/// and (Prolific) its publishing; with what they may spend.
async fn publish_intents(pool: &AnyPool, p: &Publication, rates: FeeRates) -> Result<Vec<Intent>> {
    let (task, name) = store::platform::task_of(pool, p.study).await?;
    let mut out = Vec::new();
    if store::platform::group(pool, task, p.platform(), p.draft.sandbox)
        .await?
        .is_none()
    {
        out.push(Intent {
            call: Call::Group { task: name },
            amount_cents: 0,
        });
    }
    out.push(Intent {
        call: Call::Create,
        amount_cents: p.draft.rewards_cost(rates).total_cents(),
    });
    match p.platform() {
        Platform::Prolific => out.push(Intent {
            call: Call::Publish,
            amount_cents: 0,
        }),
        // MTurk has no drafts: the HIT is created on confirmation.
        Platform::Mturk => {}
    }
    Ok(out)
}

/// The preview of publishing the study's saved draft.
pub async fn preview_publish(
    pool: &AnyPool,
    study: StudyId,
    rates: FeeRates,
) -> Result<PublishView> {
    let p = store::platform::published(pool, study).await?;
    let intents = publish_intents(pool, &p, rates).await?;
    let calls: Vec<Call> = intents.into_iter().map(|i| i.call).collect();
    let fingerprint = fingerprint(&(&p.draft, &calls));
    Ok(PublishView {
        platform_quote_cents: None,
        problems: p.draft.problems(),
        rewards: p.draft.rewards_cost(rates),
        fee_words: p.platform().fee_words(p.draft.places, rates),
        draft: p.draft,
        calls,
        fingerprint,
    })
}

/// Publishes the study's saved draft as previewed (`fingerprint`): its calls written, the
/// publication marked published, in one transaction.
pub async fn publish(
    pool: &AnyPool,
    study: StudyId,
    (rates, fingerprint_seen): (FeeRates, &str),
    (by, clock): (Option<UserId>, &Clock),
) -> Result<Vec<i64>> {
    let p = store::platform::published(pool, study).await?;
    if p.published {
        return Err(Error::Refused(format!(
            "study {study} is published on {} already",
            p.platform().name()
        )));
    }
    let problems = p.draft.problems();
    if !problems.is_empty() {
        return Err(Error::Invalid(problems.join("; ")));
    }
    let intents = publish_intents(pool, &p, rates).await?;
    let calls: Vec<&Call> = intents.iter().map(|i| &i.call).collect();
    same_plan(fingerprint_seen, &fingerprint(&(&p.draft, &calls)))?;
    ledger::write(pool, &p, &intents, (by, clock), true).await
}

/// A publication in step, as the dashboard shows it.
#[derive(Clone, Debug, Serialize)]
pub struct InStep {
    pub reconciled: Reconciled,
    pub planned: u32,
    pub asked: u32,
}

/// The study's places matched to what the platform last said.
pub async fn in_step(pool: &AnyPool, p: &Publication) -> Result<(InStep, Vec<Line>)> {
    let ours = places::of_study(pool, p.study, p.platform()).await?;
    let remotes = remote::submissions(pool, p.study).await?;
    let reconciled = reconcile(&ours.places, &remotes, p.draft.places, p.places);
    let lines = reconciled.lines.clone();
    Ok((
        InStep {
            reconciled,
            planned: p.draft.places,
            asked: p.places,
        },
        lines,
    ))
}

/// After a sync: places whose worker gave them back are released, every worker who started is
/// put on the task's list, and places the study reclaimed are asked for again (within the
/// budget: where it would go over, that is logged and shown, and nothing is asked).
pub async fn after_sync(
    pool: &AnyPool,
    p: &Publication,
    rates: FeeRates,
    clock: &Clock,
) -> Result<()> {
    let p = store::platform::published(pool, p.study).await?;
    let (step, _) = in_step(pool, &p).await?;
    let r = &step.reconciled;
    for a in &r.release {
        store::study::release(pool, p.study, *a, clock.now_ms()).await?;
    }
    let grants: Vec<Intent> = r
        .lines
        .iter()
        .filter_map(|l| l.place.as_ref())
        .map(|place| Intent {
            call: Call::Grant {
                worker: place.worker.clone(),
            },
            amount_cents: 0,
        })
        .collect();
    ledger::write(pool, &p, &grants, (None, clock), false).await?;
    if r.more_places > 0 && p.published {
        let more = Intent {
            call: Call::Places {
                total: p.places + r.more_places,
                more: r.more_places,
            },
            amount_cents: places_cost(&p, r.more_places, rates),
        };
        if let Err(e) = ledger::write(pool, &p, &[more], (None, clock), false).await {
            tracing::warn!(
                "study {}: {} more places not asked for: {e}",
                p.study,
                r.more_places
            );
        }
    }
    Ok(())
}

/// What `n` more places cost with the fees.
fn places_cost(p: &Publication, n: u32, rates: FeeRates) -> i64 {
    let payment = Payment::Reward {
        places: p.places + n,
    };
    p.platform()
        .cost(payment, p.draft.reward_cents, rates)
        .times(n)
        .total_cents()
}

/// A worker who took a place through a link of the study's platform is put on the task's list
/// at once (a sync does it too, for any arrival missed).
pub async fn on_arrival(
    pool: &AnyPool,
    study: StudyId,
    crowd: &CrowdInfo,
    clock: &Clock,
) -> Result<()> {
    let Some(p) = store::platform::publication(pool, study).await? else {
        return Ok(());
    };
    let (Some(platform), Some(worker)) = (crowd.platform, crowd.worker.as_ref()) else {
        return Ok(());
    };
    if !p.published || platform != p.platform() {
        return Ok(());
    }
    let grant = Intent {
        call: Call::Grant {
            worker: worker.clone(),
        },
        amount_cents: 0,
    };
    ledger::write(pool, &p, &[grant], (None, clock), false).await?;
    Ok(())
}

/// The decisions proposed now for the handed-in submissions not decided yet: approve, or
/// reject by `rule` (with `message` in place of the rule's own words, where given).
pub async fn preview_decisions(
    pool: &AnyPool,
    study: StudyId,
    rule: Option<Rule>,
    message: Option<&str>,
) -> Result<DecisionsView> {
    let p = store::platform::published(pool, study).await?;
    let (_, lines) = in_step(pool, &p).await?;
    let decided: Vec<String> = remote::decisions(pool, study)
        .await?
        .into_iter()
        .map(|d| d.remote_id)
        .collect();
    let mut proposals = plan::propose(&lines, rule, &decided);
    if let Some(m) = message.map(str::trim).filter(|m| !m.is_empty()) {
        plan::check_message(m).map_err(Error::Invalid)?;
        for p in proposals
            .iter_mut()
            .filter(|p| p.decision == Decision::Reject)
        {
            p.message = Some(m.to_string());
        }
    }
    let fingerprint = fingerprint(&proposals);
    Ok(DecisionsView {
        rule,
        proposals,
        fingerprint,
    })
}

/// Stores the previewed decisions and writes their calls.
pub async fn decide(
    pool: &AnyPool,
    study: StudyId,
    (rule, message, fingerprint_seen): (Option<Rule>, Option<&str>, &str),
    (by, clock): (Option<UserId>, &Clock),
) -> Result<Vec<i64>> {
    let preview = preview_decisions(pool, study, rule, message).await?;
    same_plan(fingerprint_seen, &preview.fingerprint)?;
    remote::decide(pool, study, &preview.proposals, by, clock.now_ms()).await?;
    let p = store::platform::published(pool, study).await?;
    let intents: Vec<Intent> = remote::decisions(pool, study)
        .await?
        .into_iter()
        .filter_map(|d| {
            let prop = preview
                .proposals
                .iter()
                .find(|x| x.remote_id == d.remote_id)?;
            let call = match (d.decision, d.rule, d.message) {
                (Decision::Approve, ..) => Call::Approve {
                    remote_id: d.remote_id,
                    worker: prop.worker.clone(),
                },
                (Decision::Reject, Some(rule), Some(message)) => Call::Reject {
                    remote_id: d.remote_id,
                    worker: prop.worker.clone(),
                    rule,
                    message,
                },
                (Decision::Reject, ..) => return None,
            };
            Some(Intent {
                call,
                amount_cents: 0,
            })
        })
        .collect();
    ledger::write(pool, &p, &intents, (by, clock), false).await
}

/// The top-ups owed now: each approved worker's time at the hourly rate beyond the reward.
pub async fn preview_pay(pool: &AnyPool, study: StudyId, rates: FeeRates) -> Result<PayView> {
    let p = store::platform::published(pool, study).await?;
    let (_, lines) = in_step(pool, &p).await?;
    let approved: Vec<String> = remote::decisions(pool, study)
        .await?
        .into_iter()
        .filter(|d| d.decision == Decision::Approve)
        .map(|d| d.remote_id)
        .collect();
    let rows = ledger::rows(pool, study).await?;
    let paid: Vec<String> = rows
        .iter()
        .filter(|r| r.action == domain::platform::ledger::Action::Bonus)
        .filter_map(|r| r.target.clone())
        .collect();
    let committed_cents = rows
        .iter()
        .filter(|r| r.state != domain::platform::ledger::ActionState::Refused)
        .map(|r| r.amount_cents)
        .sum();
    let terms = (p.platform(), p.draft.reward_cents, rates);
    let top_ups = plan::top_ups(&lines, &approved, &paid, terms);
    let total_cents = top_ups.iter().map(|t| t.cost_cents).sum();
    let fingerprint = fingerprint(&top_ups);
    Ok(PayView {
        top_ups,
        total_cents,
        committed_cents,
        budget_cents: p.budget_cents,
        fingerprint,
    })
}

/// Writes the previewed top-ups' calls (within the budget).
pub async fn pay(
    pool: &AnyPool,
    study: StudyId,
    (rates, fingerprint_seen): (FeeRates, &str),
    (by, clock): (Option<UserId>, &Clock),
) -> Result<Vec<i64>> {
    let preview = preview_pay(pool, study, rates).await?;
    same_plan(fingerprint_seen, &preview.fingerprint)?;
    let p = store::platform::published(pool, study).await?;
    let intents: Vec<Intent> = preview
        .top_ups
        .into_iter()
        .map(|t| Intent {
            amount_cents: t.cost_cents,
            call: Call::Bonus {
                remote_id: t.remote_id,
                worker: t.worker,
                cents: t.bonus_cents,
                reason: t.reason,
            },
        })
        .collect();
    ledger::write(pool, &p, &intents, (by, clock), false).await
}
