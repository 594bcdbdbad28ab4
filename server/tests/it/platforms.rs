//! A whole study through each platform's loopback stand-in: published from a previewed draft,
//! workers arriving through the stand-in's links, kept in step (a returned place taken by a new
//! worker), everyone approved and topped up to the hourly rate, asserting the ledger and the
//! stand-in's own record of payments; hooks forged, stale and duplicated; no credential
//! written anywhere. The same study under faults is `platforms_faults`.

use crate::common::client::{env, new_study, Env};
use crate::common::stand_ins::{drain, work, Stands, ORIGIN};
use domain::ids::StudyId;
use domain::platform::ledger::{Action, ActionState};
use domain::platform::Platform;
use domain::report::pay_cents;
use platforms::flow;
use platforms::standin::FaultRule;
use std::collections::BTreeMap;
use std::time::Duration;
use store::lease::Clock;

/// Seconds of the study clock each worker spends on an item.
const PACE: u64 = 150;

pub(crate) struct Ran {
    pub env: Env,
    pub stands: Stands,
    pub study: StudyId,
    pub clock: Clock,
    pub platform: Platform,
    /// The workers who finished, by their platform id: their submission or assignment.
    pub finished: BTreeMap<String, String>,
}

/// A study with its draft saved, and the stand-ins (with `fault` injected where given).
pub(crate) async fn drafted(platform: Platform, fault: Option<FaultRule>) -> Ran {
    let mut env = env().await;
    // The test's clock starts at the system's: the command line's runs (killed in some tests)
    // read the system's, and the two must agree on what is past.
    let clock = Clock::manual(Clock::System.now_ms());
    env.state.clock = clock.clone();
    let pool = &env.state.pool;
    let stands = Stands::start(true).await;
    if let Some(f) = &fault {
        stands.fault(platform, f).await;
    }
    let study = new_study(&env.state, "demo-SST-2", &[0, 2], 2).await;
    let draft = flow::derive(pool, study, (platform, true), ORIGIN)
        .await
        .unwrap();
    assert_eq!(draft.places, 4);
    store::platform::save_draft(pool, study, &draft, None, clock.now_ms())
        .await
        .unwrap();
    Ran {
        env,
        stands,
        study,
        clock,
        platform,
        finished: BTreeMap::new(),
    }
}

impl Ran {
    pub async fn publish(&self) {
        let (pool, fees) = (&self.env.state.pool, self.stands.accounts.fees);
        let preview = flow::preview_publish(pool, self.study, fees).await.unwrap();
        assert!(preview.problems.is_empty(), "{:?}", preview.problems);
        let by = (None, &self.clock);
        flow::publish(pool, self.study, (fees, &preview.fingerprint), by)
            .await
            .unwrap();
        self.drain().await;
    }

    pub async fn drain(&self) {
        drain(&self.env.state, &self.stands.accounts, &self.clock).await;
    }

    fn id(&self, n: &str) -> String {
        match self.platform {
            Platform::Mturk => format!("A{}", n.to_uppercase()),
            Platform::Prolific => format!("p{n}"),
        }
    }

    /// Each of `workers` takes a place through the stand-in's link, works through the study and
    /// hands it in on the platform.
    async fn finish_work(&mut self, remote: &str, workers: [&str; 2]) {
        let (state, platform) = (&self.env.state, self.platform);
        for w in workers {
            let id = self.id(w);
            let (link, sub) = self.stands.take(platform, remote, &id).await.unwrap();
            work(state, self.study, &link, PACE).await;
            self.stands.hand_in(platform, &id, &sub, "DONE-1234").await;
            self.finished.insert(id, sub);
        }
    }

    /// Workers arrive through the stand-in's links; one of them gives the place back on the
    /// platform, whose place a later worker takes; four finish. Everyone is then approved.
    pub async fn work_and_decide(&mut self) {
        let (state, platform, clock) = (self.env.state.clone(), self.platform, self.clock.clone());
        let (state, pool) = (&state, &state.pool);
        let remote = store::platform::published(pool, self.study)
            .await
            .unwrap()
            .remote_id
            .unwrap();
        self.finish_work(&remote, ["w1", "w2"]).await;
        // w3 takes a place and gives it back on the platform, which offers it again.
        let (link, sub3) = self
            .stands
            .take(platform, &remote, &self.id("w3"))
            .await
            .unwrap();
        let r = crate::common::client::join_link(state, &link).await;
        assert_eq!(r.status.as_u16(), 303);
        self.stands.give_back(platform, &sub3).await;
        match platform {
            // Prolific says so: the next sync releases the place at once.
            Platform::Prolific => {
                clock.advance(Duration::from_secs(61));
                self.drain().await;
            }
            // MTurk lists no returned assignment: the place is released when it idles out.
            Platform::Mturk => clock.advance(Duration::from_secs(31 * 60)),
        }
        self.finish_work(&remote, ["w4", "w5"]).await;
        // w3 may not come back: the platform's list of the task's workers has them.
        assert!(self
            .stands
            .take(platform, &remote, &self.id("w3"))
            .await
            .is_none());
        clock.advance(Duration::from_secs(61));
        self.drain().await;
        let decisions = flow::preview_decisions(pool, self.study, None, None)
            .await
            .unwrap();
        assert_eq!(decisions.proposals.len(), 4, "{:?}", decisions.proposals);
        let confirmed = (None, None, decisions.fingerprint.as_str());
        flow::decide(pool, self.study, confirmed, (None, &clock))
            .await
            .unwrap();
        self.drain().await;
    }

    /// The top-ups previewed; refused over the budget, which is then raised to cover them.
    pub async fn budget_for_pay(&self) -> String {
        let (pool, fees) = (&self.env.state.pool, self.stands.accounts.fees);
        let pay = flow::preview_pay(pool, self.study, fees).await.unwrap();
        assert_eq!(pay.top_ups.len(), 4, "{:?}", pay.top_ups);
        // The workers took longer than the estimate: the budget does not cover their top-ups.
        let by = (None, &self.clock);
        let over = flow::pay(pool, self.study, (fees, &pay.fingerprint), by).await;
        assert!(
            matches!(&over, Err(store::Error::Refused(m)) if m.contains("over its budget")),
            "{over:?}"
        );
        let enough = pay.committed_cents + pay.total_cents;
        store::platform::set_budget(pool, self.study, enough)
            .await
            .unwrap();
        pay.fingerprint
    }

    pub async fn pay(&self) {
        let fingerprint = self.budget_for_pay().await;
        let (pool, fees) = (&self.env.state.pool, self.stands.accounts.fees);
        flow::pay(pool, self.study, (fees, &fingerprint), (None, &self.clock))
            .await
            .unwrap();
        self.drain().await;
    }
}

/// The study through `platform`'s stand-in, with `fault` injected where given.
pub(crate) async fn whole_study(platform: Platform, fault: Option<FaultRule>) -> Ran {
    let mut ran = drafted(platform, fault.clone()).await;
    ran.publish().await;
    ran.work_and_decide().await;
    ran.pay().await;
    if let Some(f) = fault {
        let (_, calls, _) = ran
            .stands
            .call(platform, "GET", "/control/calls", None)
            .await;
        assert!(
            calls.contains(&format!("\"{}\"", f.op)),
            "{} was never called: {calls}",
            f.op
        );
    }
    ran
}

/// Every finished worker was paid their reward once and their top-up once, to the cent; every
/// call of the ledger is done; and nothing more is owed.
pub(crate) async fn paid_exactly_once(ran: &Ran, platform: Platform) {
    let pool = &ran.env.state.pool;
    let p = store::platform::published(pool, ran.study).await.unwrap();
    let paid = ran.stands.paid(platform).await;
    let rows = store::pay::pay_rows(
        &store::report::load(pool, &[ran.study]).await.unwrap(),
        &store::report::load(pool, &[ran.study])
            .await
            .unwrap()
            .report(),
    );
    for (worker, sub) in &ran.finished {
        let rewards: Vec<i64> = paid
            .iter()
            .filter(|x| x.kind == "reward" && &x.worker == worker)
            .map(|x| x.cents)
            .collect();
        assert_eq!(rewards, [p.draft.reward_cents], "{worker}: {paid:?}");
        let row = rows
            .iter()
            .find(|r| r.crowd.crowd_worker_id.as_ref() == Some(worker))
            .unwrap();
        let owed = pay_cents(
            (row.seconds * 1000.0).round() as i64,
            p.draft.hourly_rate_cents,
        );
        assert_eq!(owed, row.pay_cents);
        let bonuses: Vec<(String, i64)> = paid
            .iter()
            .filter(|x| x.kind == "bonus" && &x.worker == worker)
            .map(|x| (x.submission.clone(), x.cents))
            .collect();
        assert_eq!(
            bonuses,
            [(sub.clone(), owed - p.draft.reward_cents)],
            "{worker}: {paid:?}"
        );
        assert!(
            owed > p.draft.reward_cents,
            "the test's pace makes every worker owed a top-up"
        );
    }
    assert_eq!(paid.len(), 2 * ran.finished.len(), "{paid:?}");
    let ledger = store::platform::ledger::rows(pool, ran.study)
        .await
        .unwrap();
    for r in &ledger {
        assert_eq!(r.state, ActionState::Done, "{r:?}");
    }
    let again = flow::preview_pay(pool, ran.study, ran.stands.accounts.fees)
        .await
        .unwrap();
    assert!(again.top_ups.is_empty(), "{:?}", again.top_ups);
    let bonus_calls = ledger.iter().filter(|r| r.action == Action::Bonus).count();
    assert_eq!(bonus_calls, ran.finished.len());
}

#[tokio::test]
async fn a_whole_study_runs_through_prolifics_stand_in() {
    let ran = whole_study(Platform::Prolific, None).await;
    paid_exactly_once(&ran, Platform::Prolific).await;
}

#[tokio::test]
async fn a_whole_study_runs_through_mturks_stand_in() {
    let ran = whole_study(Platform::Mturk, None).await;
    paid_exactly_once(&ran, Platform::Mturk).await;
}

/// A hook as Prolific sends it, signed with `secret` at `timestamp`.
async fn hook(ran: &Ran, secret: &str, timestamp: i64, body: &str) -> u16 {
    use axum::body::Body;
    use axum::http::Request;
    let ts = timestamp.to_string();
    let signature = platforms::prolific::hook_signature(secret, &ts, body);
    let mut state = ran.env.state.clone();
    state.platforms = std::sync::Arc::new(app::ssr::platforms::Platforms::new(
        ran.stands.accounts.clone(),
    ));
    let req = Request::post("/hooks/prolific")
        .header("content-type", "application/json")
        .header("x-prolific-request-timestamp", ts)
        .header("x-prolific-request-signature", signature)
        .body(Body::from(body.to_string()))
        .unwrap();
    crate::common::client::send(&state, req)
        .await
        .status
        .as_u16()
}

#[tokio::test]
async fn a_forged_or_stale_hook_changes_nothing_and_a_true_one_asks_for_a_sync() {
    let ran = drafted(Platform::Prolific, None).await;
    ran.publish().await;
    let pool = &ran.env.state.pool;
    let now = ran.clock.now_ms() / 1000;
    let body =
        r#"{"resource_id": "x", "event_type": "submission.status.change", "status": "RETURNED"}"#;
    let before = crate::common::snapshot(pool).await;
    let calls = store::platform::ledger::rows(pool, ran.study)
        .await
        .unwrap();
    assert_eq!(hook(&ran, "not-the-secret", now, body).await, 401);
    assert_eq!(
        hook(
            &ran,
            crate::common::stand_ins::HOOK_SECRET,
            now - 3600,
            body
        )
        .await,
        401
    );
    assert_eq!(crate::common::snapshot(pool).await, before);
    let after = store::platform::ledger::rows(pool, ran.study)
        .await
        .unwrap();
    assert_eq!(format!("{after:?}"), format!("{calls:?}"));
    // A true hook, twice: one sync queued.
    let secret = crate::common::stand_ins::HOOK_SECRET;
    assert_eq!(hook(&ran, secret, now, body).await, 204);
    assert_eq!(hook(&ran, secret, now, body).await, 204);
    let rows = store::platform::ledger::rows(pool, ran.study)
        .await
        .unwrap();
    let syncs: Vec<_> = rows.iter().filter(|r| r.action == Action::Sync).collect();
    assert_eq!(syncs.len(), 1, "{rows:?}");
    assert_eq!(syncs[0].job_status, domain::run::JobStatus::Queued);
}

#[tokio::test]
async fn no_credential_reaches_the_database_the_ledger_or_the_bundle() {
    let ran = whole_study(Platform::Prolific, None).await;
    let mturk = whole_study(Platform::Mturk, None).await;
    for r in [&ran, &mturk] {
        let pool = &r.env.state.pool;
        let mut seen = String::new();
        for table in [
            "platform_studies",
            "platform_actions",
            "platform_submissions",
            "platform_decisions",
            "platform_groups",
            "jobs",
            "assignments",
            "users",
        ] {
            let rows = server::dbcopy::query(pool, &format!("SELECT * FROM {table}"), &[])
                .await
                .unwrap();
            seen.push_str(&rows.to_string());
        }
        let dump = crate::common::snapshot(pool).await;
        seen.push_str(&format!("{dump:?}"));
        seen.push_str(&store::platform::ledger::csv(pool, r.study).await.unwrap());
        let ledger = store::platform::ledger::rows(pool, r.study).await.unwrap();
        seen.push_str(&format!("{ledger:?}"));
        for secret in [
            crate::common::stand_ins::TOKEN,
            crate::common::stand_ins::SECRET,
            crate::common::stand_ins::HOOK_SECRET,
        ] {
            assert!(!seen.contains(secret), "{secret} was written");
        }
    }
}
