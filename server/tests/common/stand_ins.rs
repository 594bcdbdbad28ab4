//! A study run on the loopback stand-ins of Prolific and MTurk: the stand-ins started, the
//! accounts pointed at them, workers arriving through the stand-ins' links and working at a
//! pace of the test's clock, the calls run to their end on that clock, and what the stand-ins
//! paid.

use super::client::{form, join_link, parse, post_json, state_of, submit_body};
use app::ssr::state::AppState;
use domain::ids::StudyId;
use domain::platform::Platform;
use platforms::accounts::Accounts;
use platforms::run::PlatformRunner;
use platforms::standin::{self, FaultRule, Keys, Paid, Running};
use platforms::Site;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;
use store::lease::lanes::{KindLane, Lane, Turn};
use store::lease::stop::Stop;
use store::lease::Clock;

pub const TOKEN: &str = "prolific-token-5ecret";
pub const ACCESS: &str = "AKIDTESTKEY";
pub const SECRET: &str = "mturk-secret-5ecret";
pub const HOOK_SECRET: &str = "hook-5ecret";
pub const ORIGIN: &str = "https://lab.example";

/// Both stand-ins, and accounts pointed at them.
pub struct Stands {
    pub running: Running,
    pub accounts: Accounts,
}

impl Stands {
    pub async fn start(sandbox: bool) -> Stands {
        let keys = Keys {
            prolific_token: TOKEN.into(),
            mturk_access_key: ACCESS.into(),
            mturk_secret_key: SECRET.into(),
        };
        let any = "127.0.0.1:0".parse().unwrap();
        let running = standin::start(&keys, (any, any)).await.unwrap();
        let settings: HashMap<String, String> = [
            ("PROLIFIC_TOKEN", TOKEN.to_string()),
            ("PROLIFIC_API_URL", format!("http://{}", running.prolific)),
            ("PROLIFIC_HOOK_SECRET", HOOK_SECRET.to_string()),
            ("MTURK_ACCESS_KEY_ID", ACCESS.to_string()),
            ("MTURK_SECRET_ACCESS_KEY", SECRET.to_string()),
            ("MTURK_SANDBOX", if sandbox { "1" } else { "0" }.to_string()),
            ("MTURK_ENDPOINT_URL", format!("http://{}", running.mturk)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Stands {
            running,
            accounts: Accounts::from_settings(&settings).unwrap(),
        }
    }

    pub fn base(&self, platform: Platform) -> String {
        match platform {
            Platform::Prolific => format!("http://{}", self.running.prolific),
            Platform::Mturk => format!("http://{}", self.running.mturk),
        }
    }

    /// A call to a stand-in's own side (workers, control), redirects not followed.
    pub async fn call(
        &self,
        platform: Platform,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, String, Option<String>) {
        let url = format!("{}{path}", self.base(platform));
        let method = method.to_string();
        tokio::task::spawn_blocking(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .max_redirects(0)
                .http_status_as_error(false)
                .build()
                .into();
            let res = match (method.as_str(), body) {
                ("GET", _) => agent.get(&url).call(),
                (_, Some(b)) => agent.post(&url).send_json(&b),
                (_, None) => agent.post(&url).send_empty(),
            };
            let mut res = res.unwrap();
            let location = res
                .headers()
                .get("location")
                .map(|v| v.to_str().unwrap().to_string());
            let status = res.status().as_u16();
            (
                status,
                res.body_mut().read_to_string().unwrap_or_default(),
                location,
            )
        })
        .await
        .unwrap()
    }

    pub async fn fault(&self, platform: Platform, rule: &FaultRule) {
        let (status, body, _) = self
            .call(platform, "POST", "/control/fault", Some(json!(rule)))
            .await;
        assert_eq!(status, 204, "{body}");
    }

    /// What the stand-in paid.
    pub async fn paid(&self, platform: Platform) -> Vec<Paid> {
        let (_, body, _) = self.call(platform, "GET", "/control/paid", None).await;
        serde_json::from_str(&body).unwrap()
    }

    /// A worker takes a place through the stand-in's link: the study link they were sent to
    /// (on our site), and the platform's id of their submission or assignment.
    pub async fn take(
        &self,
        platform: Platform,
        remote: &str,
        worker: &str,
    ) -> Option<(String, String)> {
        let path = match platform {
            Platform::Prolific => format!("/take/{remote}?pid={worker}"),
            Platform::Mturk => format!("/work/{remote}?workerId={worker}"),
        };
        let (status, _, location) = self.call(platform, "GET", &path, None).await;
        if status != 303 {
            return None;
        }
        let link = location.unwrap();
        let id_key = match platform {
            Platform::Prolific => "SESSION_ID=",
            Platform::Mturk => "assignmentId=",
        };
        let id = link
            .split(id_key)
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap()
            .to_string();
        Some((link.strip_prefix(ORIGIN).unwrap().to_string(), id))
    }

    /// The worker hands the finished work in on the platform (the end page's hand-back).
    pub async fn hand_in(&self, platform: Platform, worker: &str, remote_id: &str, code: &str) {
        let (status, body, _) = match platform {
            Platform::Prolific => {
                let path = format!("/submissions/complete?cc={code}&pid={worker}");
                self.call(platform, "GET", &path, None).await
            }
            Platform::Mturk => {
                let url = format!("{}/mturk/externalSubmit", self.base(platform));
                let form = [
                    ("assignmentId", remote_id.to_string()),
                    ("code", code.to_string()),
                ];
                tokio::task::spawn_blocking(move || {
                    let mut r = ureq::post(&url).send_form(form).unwrap();
                    (
                        r.status().as_u16(),
                        r.body_mut().read_to_string().unwrap(),
                        None,
                    )
                })
                .await
                .unwrap()
            }
        };
        assert_eq!(status, 200, "{body}");
    }

    /// A worker gives the place back on the platform.
    pub async fn give_back(&self, platform: Platform, remote_id: &str) {
        let (status, body, _) = self
            .call(
                platform,
                "POST",
                &format!("/control/return/{remote_id}"),
                None,
            )
            .await;
        assert_eq!(status, 204, "{body}");
    }
}

/// A worker who came through `link` works through the study, `seconds_each` of the study
/// clock per item (skipping each: the answers do not matter here).
pub async fn work(state: &AppState, study: StudyId, link: &str, seconds_each: u64) -> String {
    let r = join_link(state, link).await;
    assert_eq!(r.status.as_u16(), 303, "{}", r.body);
    let cookie = r.cookie.expect("a crowd session");
    loop {
        let st = parse(&state_of(state, study, &cookie).await);
        let Some(pos) = st["step"]["Item"]["position"].as_i64() else {
            assert!(st["step"].get("Done").is_some(), "{st}");
            return cookie;
        };
        state.clock.advance(Duration::from_secs(seconds_each));
        if !st["step"]["Item"]["reveal"].is_null() {
            let body = format!("study_id={study}&position={pos}");
            parse(&form(state, "continue_study", &body, Some(&cookie)).await);
            continue;
        }
        let skip = json!({"kind": "skip", "confidence": null});
        let body = submit_body(study, pos, &format!("skip-{pos}"), skip);
        parse(&post_json(state, "submit_answer", &body, Some(&cookie)).await);
    }
}

/// Runs every platform call on `clock` until none is left: a call put off after a passing
/// fault is tried again once the clock has moved past its wait. Each try's words.
pub async fn drain(state: &AppState, accounts: &Accounts, clock: &Clock) -> Vec<Turn> {
    let runner = PlatformRunner {
        sites: Site::all(accounts),
        only: None,
        rates: accounts.fees,
    };
    let mut lane = KindLane::new(&state.pool, runner, Duration::from_secs(60), clock.clone());
    let mut stop = Stop::new().unwrap();
    let mut turns = Vec::new();
    for _ in 0..2000 {
        let turn = lane.turn(&mut stop).await.unwrap();
        match turn {
            Turn::Nothing { open: false } => return turns,
            Turn::Nothing { open: true } => clock.advance(Duration::from_secs(600)),
            Turn::Settled | Turn::Again => {}
            Turn::Stopped(_) | Turn::Unfit { .. } => panic!("the lane ended: {turn:?}"),
        }
        turns.push(turn);
    }
    panic!("the platform calls never settled");
}
