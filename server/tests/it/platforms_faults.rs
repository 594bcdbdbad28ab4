//! A whole study through each platform's stand-in with a fault at every step (a 429, a 5xx,
//! an answer lost after the work was done), and the command line killed (-9) at any moment of
//! publishing and paying: the ledger and the stand-in's own record of payments show nothing
//! paid twice and nothing lost.

use crate::platforms::{drafted, paid_exactly_once, whole_study, Ran};
use domain::platform::ledger::{Action, ActionState};
use domain::platform::Platform;
use platforms::standin::{FaultKind, FaultRule};
use std::time::Duration;

/// Each operation a study calls, by the stand-in's name for it.
fn operations(platform: Platform) -> Vec<&'static str> {
    match platform {
        Platform::Prolific => vec![
            "group",
            "create-study",
            "publish",
            "grant",
            "submissions",
            "approve",
            "bonus",
            "pay",
        ],
        Platform::Mturk => vec![
            "CreateQualificationType",
            "CreateHIT",
            "AssociateQualificationWithWorker",
            "ListAssignmentsForHIT",
            "ApproveAssignment",
            "SendBonus",
        ],
    }
}

/// A fault at each step, of each kind: the study ends the same, and nothing is paid twice.
async fn faults_at_every_step(platform: Platform) {
    for op in operations(platform) {
        for kind in [FaultKind::Busy, FaultKind::Broken, FaultKind::Lost] {
            let rule = FaultRule {
                op: op.into(),
                kind,
                times: 2,
            };
            eprintln!("{platform:?}: {op} meets {kind:?} twice");
            let ran = whole_study(platform, Some(rule)).await;
            paid_exactly_once(&ran, platform).await;
        }
    }
}

#[tokio::test]
async fn prolific_faults_at_every_step_pay_nobody_twice() {
    faults_at_every_step(Platform::Prolific).await;
}

#[tokio::test]
async fn mturk_faults_at_every_step_pay_nobody_twice() {
    faults_at_every_step(Platform::Mturk).await;
}

/// A worker whose lease on a call ran out, and whose call another worker took over, can
/// neither mark it sent, keep a step's id (a Prolific bonus's, before its pay) nor put it off:
/// it stops before anything more reaches the platform. The worker that holds it can.
#[tokio::test]
async fn a_worker_that_lost_its_call_changes_nothing_of_it() {
    use store::platform::{calls, ledger};
    let ran = drafted(Platform::Prolific, None).await;
    let pool = &ran.env.state.pool;
    let p = store::platform::publication(pool, ran.study)
        .await
        .unwrap()
        .unwrap();
    let sync = ledger::Intent {
        call: domain::platform::plan::Call::Sync,
        amount_cents: 0,
    };
    let ids = ledger::write(pool, &p, &[sync], (None, &ran.clock), false)
        .await
        .unwrap();
    let lease = (Duration::from_secs(60), &ran.clock);
    let ids = &ids;
    let claim = |worker: &'static str| async move {
        store::lease::claim::<ledger::PlatformKind>(pool, ids, worker, lease)
            .await
            .unwrap()
            .unwrap()
    };
    let a = claim("a").await;
    calls::mark_sent(pool, &a).await.unwrap();
    ran.clock.advance(Duration::from_secs(61));
    let b = claim("b").await;
    let lost = |r: store::error::Result<()>| {
        assert!(matches!(r, Err(store::error::Error::LeaseLost(_))), "{r:?}")
    };
    lost(calls::mark_sent(pool, &a).await);
    lost(calls::set_ref(pool, &a, "bulk-of-a").await);
    lost(calls::put_off(pool, &a, "a passing fault", 1_000).await);
    let row = |rows: Vec<ledger::LedgerRow>| rows.into_iter().next().unwrap();
    let before = row(ledger::rows(pool, ran.study).await.unwrap());
    assert_eq!((before.remote_ref.clone(), before.tries), (None, 1));
    assert_eq!(before.answer_json, None);
    calls::set_ref(pool, &b, "bulk-of-b").await.unwrap();
    let after = row(ledger::rows(pool, ran.study).await.unwrap());
    assert_eq!(after.remote_ref.as_deref(), Some("bulk-of-b"));
}

/// `clues-lab platform <args>` against the test's database and stand-ins (a child process).
fn platform_command(ran: &Ran, creds: &std::path::Path, args: &[&str]) -> std::process::Child {
    let url = ran
        .env
        .state
        .pool
        .connect_options()
        .database_url
        .to_string();
    std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
        .args(["--database", &url, "platform"])
        .args(args)
        .args(["--credentials", creds.to_str().unwrap()])
        .env("RUST_LOG", "error")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The accounts pointed at the stand-ins, as a credentials file.
fn credentials_file(ran: &Ran, dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("credentials");
    let a = &ran.stands.accounts;
    let p = a.prolific.as_ref().unwrap();
    let m = a.mturk.as_ref().unwrap();
    let text = format!(
        "PROLIFIC_TOKEN={}\nPROLIFIC_API_URL={}\nMTURK_ACCESS_KEY_ID={}\nMTURK_SECRET_ACCESS_KEY={}\nMTURK_SANDBOX=1\nMTURK_ENDPOINT_URL={}\n",
        p.token.expose(), p.api, m.access_key.expose(), m.secret_key.expose(), m.endpoint
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `args` and kills it (-9) after each of `after_ms` in turn; then the calls are run to
/// their end here (on the test's clock, which passes any wait at once). A Prolific bonus whose
/// pay a kill left unknown is never sent again by itself: it is refused for the researcher to
/// check, who finds it unpaid on the platform (the stand-in's record) and sends it again.
async fn killed_then_finished(ran: &Ran, creds: &std::path::Path, args: &[&str], after_ms: &[u64]) {
    for ms in after_ms {
        let mut child = platform_command(ran, creds, args);
        tokio::time::sleep(Duration::from_millis(*ms)).await;
        let _ = child.kill();
        tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .unwrap();
    }
    ran.drain().await;
    let pool = &ran.env.state.pool;
    let paid = ran.stands.paid(ran.platform).await;
    for r in store::platform::ledger::rows(pool, ran.study)
        .await
        .unwrap()
    {
        if r.state != ActionState::Refused {
            continue;
        }
        assert_eq!(r.action, Action::Bonus, "{r:?}");
        assert!(
            r.error
                .as_deref()
                .unwrap_or_default()
                .contains("check it on Prolific"),
            "{r:?}"
        );
        let target = r.target.clone().unwrap();
        assert!(
            !paid
                .iter()
                .any(|p| p.kind == "bonus" && p.submission == target),
            "{r:?}"
        );
        eprintln!("bonus {target}: left unknown by a kill, found unpaid, sent again");
        store::platform::ledger::retry(pool, ran.study, r.id, &ran.clock)
            .await
            .unwrap();
    }
    ran.drain().await;
}

/// The command line killed at any moment of publishing and of paying, then run again: one
/// publication on the platform, and every worker paid exactly once.
async fn killed_at_any_moment(platform: Platform) {
    let mut ran = drafted(platform, None).await;
    let dir = tempfile::tempdir().unwrap();
    let creds = credentials_file(&ran, dir.path());
    let study = ran.study.to_string();
    let pace = serde_json::json!({ "ms": 120 });
    ran.stands
        .call(platform, "POST", "/control/pace", Some(pace.clone()))
        .await;
    let kills: Vec<u64> = (0..7).map(|i| 200 + 260 * i).collect();
    killed_then_finished(&ran, &creds, &["publish", "--study", &study], &kills).await;
    let (_, calls, _) = ran
        .stands
        .call(platform, "GET", "/control/calls", None)
        .await;
    let made = match platform {
        Platform::Prolific => "\"create-study\"",
        Platform::Mturk => "\"CreateHIT\"",
    };
    eprintln!(
        "{platform:?}: {} creations sent under kills",
        calls.matches(made).count()
    );
    let list = match platform {
        Platform::Prolific => ran.stands.running.prolific_world.lock().studies.len(),
        Platform::Mturk => ran.stands.running.mturk_world.lock().hits.len(),
    };
    assert_eq!(
        list, 1,
        "one publication on the platform, whatever was killed"
    );
    ran.stands
        .call(
            platform,
            "POST",
            "/control/pace",
            Some(serde_json::json!({ "ms": 0 })),
        )
        .await;
    ran.work_and_decide().await;
    ran.budget_for_pay().await;
    ran.stands
        .call(platform, "POST", "/control/pace", Some(pace))
        .await;
    killed_then_finished(&ran, &creds, &["pay", "--study", &study], &kills).await;
    paid_exactly_once(&ran, platform).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prolific_killed_at_any_moment_pays_once() {
    killed_at_any_moment(Platform::Prolific).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mturk_killed_at_any_moment_pays_once() {
    killed_at_any_moment(Platform::Mturk).await;
}
