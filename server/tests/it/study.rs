//! The crowd protocol through HTTP, without a socket: study links with crowd ids, exactly N
//! places per scenario under concurrent arrivals, one scenario per worker and task, training
//! golds revealed and locked, idempotent resends, refusals that change nothing, and no test
//! gold in anything a worker can fetch.
use crate::common;

use app::ssr::state::AppState;
use axum::http::StatusCode;
use common::client::*;
use domain::study::StudyConfig;
use serde_json::{json, Value};
use store::{catalog, study};

#[tokio::test]
async fn a_crowd_link_signs_the_worker_in_and_resumes_the_same_place() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0, 2], 3).await;
    let cookie = arrive(s, id, "5f0a1b2c3d4e5f6a7b8c9d0e").await;
    let first = parse(&state_of(s, id, &cookie).await);
    // Arriving again (a new session) finds the same worker and the same place.
    let again = arrive(s, id, "5f0a1b2c3d4e5f6a7b8c9d0e").await;
    assert_ne!(again, cookie);
    let second = parse(&state_of(s, id, &again).await);
    assert_eq!(first, second);
    assert_eq!(places(s, id).await.len(), 1);
    let crowd: String = sqlx::query_scalar("SELECT crowd_json FROM assignments")
        .fetch_one(&s.pool)
        .await
        .unwrap();
    assert!(
        crowd.contains("\"session\":\"x5f0a1b2c3d4e5f6a7b8c9d0e\""),
        "{crowd}"
    );
    // MTurk ids work too; a malformed id is refused.
    let r = join_link(
        s,
        &format!("/join/{id}?workerId=A1B2C3&assignmentId=3XY&hitId=H1"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = get(s, &format!("/join/{id}?PROLIFIC_PID=bad%20id"), None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(places(s, id).await.len(), 2);
    // Without any id or session, the page says how to enter.
    let r = state_of(s, id, "clues_session=nonsense").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_fourth_worker_goes_elsewhere_or_is_refused_and_nobody_changes_scenario() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[2, 4], 3).await;
    let mut cookies = Vec::new();
    for i in 0..6 {
        let c = arrive(s, id, &format!("w{i}")).await;
        parse(&state_of(s, id, &c).await);
        cookies.push(c);
    }
    let ks: Vec<i64> = places(s, id).await.into_iter().map(|(k, _)| k).collect();
    assert_eq!(ks.iter().filter(|&&k| k == 2).count(), 3);
    assert_eq!(ks.iter().filter(|&&k| k == 4).count(), 3);
    // The seventh finds both scenarios full, is told so by the study link, and gets no account.
    let before = common::snapshot(&s.pool).await;
    let r = join_link(
        s,
        &format!("/join/{id}?PROLIFIC_PID=w6&STUDY_ID=s1&SESSION_ID=xw6"),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(
        r.body.contains("All places in this study are taken") && r.body.contains("role=\"alert\""),
        "{}",
        r.body
    );
    assert!(r.cookie.is_none());
    assert_eq!(common::snapshot(&s.pool).await, before);

    // A second study of the same task: its workers must be new to the task. The study link
    // says so, and takes nothing; the session alone takes no place there either.
    let other = new_study(s, "demo-SST-2", &[0], 3).await;
    let before = common::snapshot(&s.pool).await;
    let r = join_link(
        s,
        &format!("/join/{other}?PROLIFIC_PID=w0&STUDY_ID=s1&SESSION_ID=xw0"),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(r.body.contains("already took part in the"), "{}", r.body);
    assert_eq!(
        state_of(s, other, &cookies[0]).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(common::snapshot(&s.pool).await, before);
    // A new worker may take that study; a worker of another task's study may too.
    let fresh = arrive(s, other, "w7").await;
    parse(&state_of(s, other, &fresh).await);
    let mnli = new_study(s, "demo-MNLI", &[0], 3).await;
    let w0 = arrive(s, mnli, "w0").await;
    parse(&state_of(s, mnli, &w0).await);
    // Staff do not take places.
    let rita = login(s, "rita", "rita-password").await;
    assert_eq!(state_of(s, id, &rita).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn an_abandoned_place_is_released_to_a_new_worker_and_its_work_kept() {
    let e = env().await;
    let s = &e.state;
    let config = StudyConfig {
        scenarios: vec![0],
        annotators: 1,
        item_timeout_secs: Some(60),
        open: true,
        ..StudyConfig::default()
    };
    let id = study::create(&s.pool, None, "demo-SST-2", "timeouts", config)
        .await
        .unwrap();
    let a = arrive(s, id, "slow").await;
    let st = parse(&state_of(s, id, &a).await);
    let pos = st["step"]["Item"]["position"].as_i64().unwrap();
    parse(
        &post_json(
            s,
            "submit_answer",
            &submit_body(id, pos, "c1", label("positive")),
            Some(&a),
        )
        .await,
    );
    // Within the time-out the place is held: a new worker is turned away at the link.
    let r = join_link(s, &format!("/join/{id}?PROLIFIC_PID=quick")).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    // Ten minutes without activity later, the next arrival gets the place.
    sqlx::query("UPDATE assignments SET last_activity = last_activity - 600000")
        .execute(&s.pool)
        .await
        .unwrap();
    let c = arrive(s, id, "next").await;
    parse(&state_of(s, id, &c).await);
    assert_eq!(
        places(s, id).await,
        vec![(0, "abandoned".to_string()), (0, "active".to_string())]
    );
    let st = parse(&state_of(s, id, &a).await);
    assert_eq!(st["step"], json!("Abandoned"));
    let kept: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
         WHERE a.status = 'abandoned' AND i.submitted_at IS NOT NULL",
    )
    .fetch_one(&s.pool)
    .await
    .unwrap();
    assert_eq!(kept, 1);
    let r = post_json(
        s,
        "submit_answer",
        &submit_body(id, pos + 1, "c2", label("positive")),
        Some(&a),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(r.body.contains("released"), "{}", r.body);
}

/// Every JSON response and page a worker receives, to search for golds afterwards.
struct Seen {
    bodies: Vec<(String, String)>,
}

impl Seen {
    fn add(&mut self, what: impl Into<String>, r: &Resp) {
        self.bodies.push((what.into(), r.body.clone()));
    }
}

/// A k-shot worker's whole study: training with reveals and locks, then the test set.
/// Returns what the worker saw.
async fn run_worker(
    s: &AppState,
    id: domain::ids::StudyId,
    pid: &str,
    answer_for: impl Fn(&Value) -> Value,
) -> Seen {
    let mut seen = Seen { bodies: Vec::new() };
    let cookie = arrive(s, id, pid).await;
    let page = get(s, &format!("/study/{id}"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    seen.add("page", &page);
    let mut n = 0;
    // The step the last acknowledgement (or continue) said comes next: the page shows it
    // without asking again, so it must be what a reload shows.
    let mut said_next: Option<Value> = None;
    loop {
        n += 1;
        assert!(n < 100, "the study does not end");
        let r = state_of(s, id, &cookie).await;
        let st = parse(&r);
        if let Some(next) = said_next.take() {
            assert_eq!(
                st["step"], next,
                "the step carried by the answer is the page's next step"
            );
        }
        let phase = st["step"]["Item"]["phase"]
            .as_str()
            .unwrap_or("end")
            .to_string();
        seen.add(format!("state {phase}"), &r);
        let item = match &st["step"] {
            Value::Object(o) if o.contains_key("Item") => o["Item"].clone(),
            Value::Object(o) if o.contains_key("Done") => {
                assert_eq!(o["Done"]["code"], "DONE-1234");
                let page = get(s, &format!("/study/{id}"), Some(&cookie)).await;
                seen.add("final page", &page);
                assert!(page.body.contains("DONE-1234"));
                return seen;
            }
            other => panic!("unexpected step {other}"),
        };
        let pos = item["position"].as_i64().unwrap();
        assert!(item["reveal"].is_null(), "a fresh item carries no reveal");
        // The page a reload would show, at every item.
        let page = get(s, &format!("/study/{id}"), Some(&cookie)).await;
        seen.add(format!("page {phase} {pos}"), &page);
        let answer = answer_for(&item);
        let client_id = format!("{pid}-{pos}");
        let r = post_json(
            s,
            "submit_answer",
            &submit_body(id, pos, &client_id, answer.clone()),
            Some(&cookie),
        )
        .await;
        seen.add(format!("ack {phase} {pos}"), &r);
        let ack = parse(&r);
        // A resend of the same submission is acknowledged the same way and stored once.
        let r2 = post_json(
            s,
            "submit_answer",
            &submit_body(id, pos, &client_id, answer),
            Some(&cookie),
        )
        .await;
        assert_eq!(parse(&r2), ack);
        if item["phase"] == "training" {
            let reveal = &ack["reveal"];
            assert!(
                reveal["gold"].is_array(),
                "training reveals the gold at once: {ack}"
            );
            // The leak check below looks for golds in exactly this form: make sure it would
            // find the revealed training golds.
            for span in reveal["gold_spans"].as_array().unwrap() {
                if let Some(off) = span["offset"].as_u64() {
                    assert!(r
                        .body
                        .contains(&span_needle(span["text"].as_str().unwrap(), off)));
                }
            }
            // A reload shows the same item with its reveal until the worker moves on.
            let again = parse(&state_of(s, id, &cookie).await);
            assert_eq!(again["step"]["Item"]["reveal"], *reveal);
            // Changing the revealed answer is refused, through a direct request too.
            let before = common::snapshot(&s.pool).await;
            let r = post_json(
                s,
                "submit_answer",
                &submit_body(id, pos, "another-id", label("negative")),
                Some(&cookie),
            )
            .await;
            assert_eq!(r.status, StatusCode::CONFLICT);
            assert!(r.body.contains("locked"), "{}", r.body);
            assert_eq!(common::snapshot(&s.pool).await, before);
            assert!(ack["next"].is_null(), "the gold is shown first: {ack}");
            let r = form(
                s,
                "continue_study",
                &format!("study_id={id}&position={pos}"),
                Some(&cookie),
            )
            .await;
            seen.add(format!("continue {pos}"), &r);
            said_next = Some(parse(&r));
        } else {
            assert!(
                ack["reveal"].is_null(),
                "test items are never revealed: {ack}"
            );
            assert!(
                !ack["next"].is_null(),
                "a test item's ack carries the next step"
            );
            said_next = Some(ack["next"].clone());
        }
    }
}

/// A gold span as it would appear in a JSON body.
fn span_needle(text: &str, offset: u64) -> String {
    format!("\"text\":{},\"offset\":{offset}", json!(text))
}

async fn gold_free(s: &AppState, task: &str, seen: &Seen) {
    let (task_id, _, _) = catalog::load_spec(&s.pool, task).await.unwrap();
    let golds: Vec<_> = catalog::test_examples(&s.pool, task_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.id, e.gold))
        .collect();
    for (what, body) in &seen.bodies {
        for (id, gold) in &golds {
            for span in &gold.spans {
                if let Some(off) = span.offset {
                    let needle = span_needle(&span.text, off as u64);
                    let escaped = needle.replace('"', "\\\"");
                    assert!(
                        !body.contains(&needle) && !body.contains(&escaped),
                        "test gold of {id} in {what}"
                    );
                }
            }
            let official = serde_json::to_string(&gold.official).unwrap();
            if gold.official.len() > 1 || gold.official.iter().any(|g| g.contains(' ')) {
                assert!(
                    !body.contains(&official),
                    "test gold of {id} in {what}: {official}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_k_shot_classification_worker_trains_with_revealed_locked_golds_then_tests() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[2], 3).await;
    let seen = run_worker(s, id, "sst-worker", |item| {
        if item["phase"] == "training" && item["index"] == 1 {
            json!({"kind": "skip", "confidence": null})
        } else {
            label("positive")
        }
    })
    .await;
    // Reveals appear only in the acknowledgements of training submissions; nothing else a
    // worker receives mentions a gold at all.
    let with_gold: Vec<&str> = seen
        .bodies
        .iter()
        .filter(|(_, b)| b.contains("gold"))
        .map(|(w, _)| w.as_str())
        .collect();
    assert_eq!(with_gold, ["ack training 0", "ack training 1"]);
    gold_free(s, "demo-SST-2", &seen).await;
    // (phase, skipped, confidence, shown_at, s1)
    type ItemRow = (String, i64, Option<i64>, Option<i64>, f64);
    let rows: Vec<ItemRow> = sqlx::query_as(
        "SELECT phase, skipped, confidence, shown_at, s1 FROM assignment_items ORDER BY position",
    )
    .fetch_all(&s.pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2 + 4);
    assert_eq!(rows[0].1, 1, "the first item was skipped");
    assert_eq!(rows[0].4, 0.0, "a skip scores as no answer");
    assert!(rows.iter().all(|r| r.3.is_some()));
    assert_eq!(rows[1].2, Some(4));
    // Demo SST-2 test: two of four items are positive.
    let test_s1: f64 = rows[2..].iter().map(|r| r.4).sum();
    assert_eq!(test_s1, 2.0);
}

#[tokio::test]
async fn span_workers_never_receive_test_golds_and_offsets_are_checked() {
    let e = env().await;
    let s = &e.state;
    for task in ["demo-SQuAD-v2", "demo-CoNLL2003", "demo-ReCoRD"] {
        let id = new_study(s, task, &[0, 2], 3).await;
        for pid in ["zero", "two"] {
            // Answer with the first word of the context, found by the worker's own means.
            let seen = run_worker(s, id, &format!("{pid}-{}", task.len()), |item| {
                let text = item["context"]["text"].as_str().unwrap();
                let word: String = text.chars().take_while(|c| !c.is_whitespace()).collect();
                json!({"kind": "spans", "spans": [{"text": word, "offset": 0, "length": word.chars().count()}]})
            })
            .await;
            gold_free(s, task, &seen).await;
        }
    }
}

#[tokio::test]
async fn refused_submissions_change_nothing() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SQuAD-v2", &[0], 3).await;
    let w = arrive(s, id, "span-worker").await;
    let st = parse(&state_of(s, id, &w).await);
    let item = &st["step"]["Item"];
    let pos = item["position"].as_i64().unwrap();
    let text = item["context"]["text"].as_str().unwrap().to_string();
    let before = common::snapshot(&s.pool).await;
    let bad =
        |spans: Value| submit_body(id, pos, "c-bad", json!({"kind": "spans", "spans": spans}));
    let word: String = text.chars().skip(1).take(4).collect();
    let cases = [
        // Wrong offset: the text one code point later.
        (
            bad(json!([{"text": word, "offset": 2, "length": 4}])),
            StatusCode::BAD_REQUEST,
            "does not match the text at offset 2",
        ),
        (
            bad(json!([{"text": "zzzz", "offset": 100000, "length": 4}])),
            StatusCode::BAD_REQUEST,
            "runs past the end",
        ),
        (bad(json!([])), StatusCode::BAD_REQUEST, "No answer"),
        (
            submit_body(id, pos, "c-bad", label("positive")),
            StatusCode::BAD_REQUEST,
            "not a label",
        ),
        // Not the current item.
        (
            submit_body(id, pos + 1, "c-bad", json!({"kind": "no_answer"})),
            StatusCode::CONFLICT,
            "not your current item",
        ),
        (
            submit_body(id, 9999, "c-bad", json!({"kind": "no_answer"})),
            StatusCode::NOT_FOUND,
            "no item 9999",
        ),
        (
            submit_body(id, pos, "", json!({"kind": "no_answer"})),
            StatusCode::BAD_REQUEST,
            "client id",
        ),
    ];
    for (body, status, msg) in cases {
        let r = post_json(s, "submit_answer", &body, Some(&w)).await;
        assert_eq!(r.status, status, "{body} -> {}", r.body);
        assert!(r.body.contains(msg), "{body} -> {}", r.body);
    }
    // Malformed JSON is refused by the server function layer.
    let r = call_fn(
        s,
        "submit_answer",
        "application/json",
        "{\"study_id\": 1, ".into(),
        Some(&w),
    )
    .await;
    assert!(
        r.status.is_client_error() || r.status.is_server_error(),
        "{}",
        r.status
    );
    // Another worker cannot reach this worker's item: they have no place here.
    let other_study = new_study(s, "demo-SST-2", &[0], 3).await;
    let o = arrive(s, other_study, "someone-else").await;
    let before_other = common::snapshot(&s.pool).await;
    // Another worker cannot reach this worker's item (they have no place here); staff cannot
    // submit; nobody signed in cannot either.
    let rita = login(s, "rita", "rita-password").await;
    let refusals = [
        (Some(&o), StatusCode::NOT_FOUND, "no place in this study"),
        (Some(&rita), StatusCode::FORBIDDEN, "researcher"),
        (None, StatusCode::UNAUTHORIZED, "NotSignedIn"),
    ];
    for (cookie, status, msg) in refusals {
        let body = submit_body(id, pos, "c-x", json!({"kind": "no_answer"}));
        let r = post_json(s, "submit_answer", &body, cookie.map(|c| c.as_str())).await;
        assert_eq!(r.status, status, "{}", r.body);
        assert!(r.body.contains(msg), "{}", r.body);
    }
    // Continuing past an item that was not submitted is refused.
    let r = form(
        s,
        "continue_study",
        &format!("study_id={id}&position={pos}"),
        Some(&w),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let after = common::snapshot(&s.pool).await;
    // Only the other worker's arrival (user, session, place) and the researcher's login differ.
    assert_eq!(
        after,
        before_other
            .iter()
            .map(|(t, v)| {
                if t == "sessions" {
                    (t.clone(), (v.parse::<i64>().unwrap() + 1).to_string())
                } else {
                    (t.clone(), v.clone())
                }
            })
            .collect::<Vec<_>>()
    );
    let items_before = before
        .iter()
        .find(|(t, _)| t == "assignment_items rows")
        .unwrap();
    let items_after = before_other
        .iter()
        .find(|(t, _)| t == "assignment_items rows")
        .unwrap();
    assert!(
        items_after.1.starts_with(&items_before.1),
        "this worker's items are unchanged"
    );
}

#[tokio::test]
async fn only_admins_configure_and_started_studies_keep_what_workers_saw() {
    let e = env().await;
    let s = &e.state;
    let ada = login(s, "ada", "ada-password").await;
    let rita = login(s, "rita", "rita-password").await;
    let config = json!({
        "scenarios": [0, 2, 4], "annotators": 3, "training_split": 1, "hourly_rate_cents": 1200,
        "filter_margin": 0.2, "item_timeout_secs": null, "open": true, "completion_code": ""
    });
    let create = json!({"task": "demo-CoNLL2003", "name": "NER pilot", "config": config});
    assert_eq!(
        post_json(s, "create_study", &create, Some(&rita))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let bad = json!({"task": "demo-CoNLL2003", "name": "NER pilot", "config": {
        "scenarios": [0, 10], "annotators": 0, "training_split": 1, "hourly_rate_cents": 1200,
        "filter_margin": 0.2, "item_timeout_secs": null, "open": true, "completion_code": ""}});
    let r = post_json(s, "create_study", &bad, Some(&ada)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.body.contains("no 10-shot training set") && r.body.contains("at least one annotator"),
        "{}",
        r.body
    );
    // Every field is checked on the server, each refusal naming the field and its range,
    // and nothing is stored.
    let before = common::snapshot(&s.pool).await;
    let out_of_range = json!({"task": "demo-CoNLL2003", "name": "NER pilot", "config": {
        "scenarios": [0, 2], "annotators": 2000000, "training_split": 1, "hourly_rate_cents": 500000,
        "filter_margin": 7.0, "item_timeout_secs": 30, "open": true, "completion_code": "my code <b>"}});
    let r = post_json(s, "create_study", &out_of_range, Some(&ada)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    for named in [
        "Annotators per scenario: 2000000 is not allowed; it must be a whole number from 1 to 1000000",
        "Hourly rate: 5000 is not allowed; it must be from 0 to 1000 USD",
        "Training filter margin: 7 is not allowed; it must be from 0 to 1",
        "Time-out: 30 is not allowed; it must be a whole number from 60 to 604800 seconds",
        "Completion code: \\\"my code <b>\\\" is not allowed",
    ] {
        assert!(r.body.contains(named), "{named} in {}", r.body);
    }
    assert_eq!(common::snapshot(&s.pool).await, before, "nothing stored");
    let id = domain::ids::StudyId(
        parse(&post_json(s, "create_study", &create, Some(&ada)).await)
            .as_i64()
            .unwrap(),
    );
    // A completion code was generated.
    let listed = parse(&form(s, "list_studies", "", Some(&rita)).await);
    let code = listed[0]["config"]["completion_code"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(code.len(), 8);
    // Before anyone starts, everything may change.
    let mut changed = listed[0]["config"].clone();
    changed["scenarios"] = json!([0, 2]);
    let upd = json!({"id": id, "name": "NER pilot 2", "config": changed});
    parse(&post_json(s, "update_study", &upd, Some(&ada)).await);
    // A worker starts; then the scenarios and split are frozen, the pay is not.
    let w = arrive(s, id, "first").await;
    parse(&state_of(s, id, &w).await);
    let mut frozen = changed.clone();
    assert_eq!(
        frozen["shot_group"],
        json!([[2, 1], [4, 1]]),
        "the chain of split 1"
    );
    frozen["training_split"] = json!(2);
    frozen["shot_group"] = json!([[2, 2], [4, 2]]);
    let before = common::snapshot(&s.pool).await;
    let r = post_json(
        s,
        "update_study",
        &json!({"id": id, "name": "x", "config": frozen}),
        Some(&ada),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(
        r.body.contains("the training files can no longer change"),
        "{}",
        r.body
    );
    assert_eq!(common::snapshot(&s.pool).await, before);
    let mut pay = changed.clone();
    pay["hourly_rate_cents"] = json!(1500);
    parse(
        &post_json(
            s,
            "update_study",
            &json!({"id": id, "name": "NER pilot 2", "config": pay}),
            Some(&ada),
        )
        .await,
    );
    let overview = parse(&form(s, "study_admin", &format!("id={id}"), Some(&rita)).await);
    assert_eq!(overview["summary"]["config"]["hourly_rate_cents"], 1500);
    assert_eq!(overview["workers"].as_array().unwrap().len(), 1);
    // The place remembers the configuration it started under.
    let (started_under, now_in_force): (i64, i64) = sqlx::query_as(
        "SELECT a.config_id, s.config_id FROM assignments a JOIN studies s ON s.id = a.study_id",
    )
    .fetch_one(&s.pool)
    .await
    .unwrap();
    assert!(started_under < now_in_force);
    // Workers cannot read the overview.
    assert_eq!(
        form(s, "study_admin", &format!("id={id}"), Some(&w))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_same_submission_sent_ten_times_at_once_is_acknowledged_ten_times_and_stored_once() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 1).await;
    let cookie = arrive(s, id, "impatient").await;
    for round in 0..3 {
        let st = parse(&state_of(s, id, &cookie).await);
        let pos = st["step"]["Item"]["position"].as_i64().unwrap();
        let body = submit_body(id, pos, &format!("twice-{round}"), label("positive"));
        let sends: Vec<_> = (0..10)
            .map(|_| {
                let (s, body, cookie) = (s.clone(), body.clone(), cookie.clone());
                tokio::spawn(
                    async move { post_json(&s, "submit_answer", &body, Some(&cookie)).await },
                )
            })
            .collect();
        let mut acks = Vec::new();
        for send in sends {
            let r = send.await.unwrap();
            assert_eq!(r.status, StatusCode::OK, "round {round}: {}", r.body);
            acks.push(r.body);
        }
        assert!(acks.iter().all(|a| *a == acks[0]), "{acks:?}");
        let stored: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM assignment_items WHERE client_id = $1 AND submitted_at IS NOT NULL",
        )
        .bind(format!("twice-{round}"))
        .fetch_one(&s.pool)
        .await
        .unwrap();
        assert_eq!(stored, 1);
    }
}

#[tokio::test]
async fn crowd_parameters_and_client_ids_are_ids_and_exports_carry_no_formulas() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 2).await;
    let before = common::snapshot(&s.pool).await;
    // A spreadsheet formula (or 64 KB) in any crowd parameter is refused, naming it.
    let long = "x".repeat(65_000);
    for (query, param) in [
        (
            "PROLIFIC_PID=w1&STUDY_ID=%3DHYPERLINK(%22http%3A%2F%2Fx%22)",
            "STUDY_ID",
        ),
        ("PROLIFIC_PID=w1&SESSION_ID=@SUM(A1)", "SESSION_ID"),
        (&*format!("PROLIFIC_PID=w1&SESSION_ID={long}"), "SESSION_ID"),
        ("workerId=A1&assignmentId=-2%2B3", "assignmentId"),
        ("workerId=A1&hitId=%2B1%2B1", "hitId"),
    ] {
        let r = get(s, &format!("/join/{id}?{query}"), None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.body);
        assert!(
            r.body
                .contains(&format!("the {param} in the link is not valid")),
            "{}",
            r.body
        );
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    // A client id must be an id too.
    let cookie = arrive(s, id, "formula-worker").await;
    let pos = parse(&state_of(s, id, &cookie).await)["step"]["Item"]["position"]
        .as_i64()
        .unwrap();
    let before = common::snapshot(&s.pool).await;
    let r = post_json(
        s,
        "submit_answer",
        &submit_body(id, pos, "=1+1", label("positive")),
        Some(&cookie),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.body.contains("client id"), "{}", r.body);
    assert_eq!(common::snapshot(&s.pool).await, before);
    // What staff write themselves is neutralised in the CSV: a study named like a formula.
    sqlx::query("UPDATE studies SET name = '=cmd|'' /C calc''!A0' WHERE id = $1")
        .bind(id)
        .execute(&s.pool)
        .await
        .unwrap();
    let rita = login(s, "rita", "rita-password").await;
    let csv = get(
        s,
        &format!("/export/annotations.csv?studies={id}"),
        Some(&rita),
    )
    .await;
    assert_eq!(csv.status, StatusCode::OK);
    let row = csv.body.lines().nth(1).unwrap();
    assert!(row.contains(",'=cmd|' /C calc'!A0,"), "{row}");
    assert!(!csv.body.contains(",=cmd"), "{}", csv.body);
}

/// A finished Prolific worker who comes back with the same session and another STUDY_ID, or
/// with no SESSION_ID, finds their place as it was; each visit is recorded beside the ids (once
/// per link), and the pay sheet lists them. Nothing changes for the work.
#[tokio::test]
async fn a_finished_workers_later_visits_are_recorded_with_the_ids() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let cookie = arrive(s, id, "p-back").await;
    skip_to_the_end(s, id, &cookie).await;
    let visits = [
        format!("/join/{id}?PROLIFIC_PID=p-back&STUDY_ID=s2&SESSION_ID=xp-back"),
        format!("/join/{id}?PROLIFIC_PID=p-back&STUDY_ID=s1"),
        format!("/join/{id}?PROLIFIC_PID=p-back"),
        format!("/join/{id}?PROLIFIC_PID=p-back&STUDY_ID=s2&SESSION_ID=xp-back"),
    ];
    for link in &visits {
        let page = get(s, link, None).await;
        assert_eq!(page.status, StatusCode::OK, "{link}: {}", page.body);
    }
    let crowd: String = sqlx::query_scalar(
        "SELECT a.crowd_json FROM assignments a JOIN crowd_ids c ON c.user_id = a.worker_id
         WHERE c.external_id = 'p-back'",
    )
    .fetch_one(&s.pool)
    .await
    .unwrap();
    let crowd: serde_json::Value = serde_json::from_str(&crowd).unwrap();
    assert_eq!(
        (crowd["session"].as_str(), crowd["study"].as_str()),
        (Some("xp-back"), Some("s1"))
    );
    let listed: Vec<(&str, Option<&str>, &str)> = crowd["presented"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["id"].as_str().unwrap();
            (id, p["study"].as_str(), p["outcome"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("xp-back", Some("s1"), "in_hand"),
            ("", Some("s1"), "visited"),
            ("", None, "visited"),
            ("xp-back", Some("s2"), "visited"),
        ]
    );
    // The place hands back the session it was done under.
    let again = parse(&state_of(s, id, &cookie).await);
    assert!(again["step"]["Done"]["hand_back"]["Link"]["url"]
        .as_str()
        .unwrap()
        .contains("cc=DONE-1234"));
    let rita = login(s, "rita", "rita-password").await;
    let pay = get(s, &format!("/export/pay.csv?studies={id}"), Some(&rita)).await;
    let line = pay.body.lines().find(|l| l.contains(",p-back,")).unwrap();
    assert!(
        line.contains("xp-back: handed back with this work ("),
        "{line}"
    );
    assert!(
        line.contains("xp-back with study s2: came back after the work had ended"),
        "{line}"
    );
    assert!(
        line.contains("a link without an id with study s1: came back"),
        "{line}"
    );
}

#[tokio::test]
async fn the_end_page_hands_workers_back_to_their_platform() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    // Prolific: the completion URL with the code.
    let cookie = arrive(s, id, "prolific-finisher").await;
    let done = skip_to_the_end(s, id, &cookie).await;
    assert_eq!(
        done["Done"]["hand_back"],
        json!({"Link": {"platform": "Prolific", "url": "https://app.prolific.com/submissions/complete?cc=DONE-1234"}})
    );
    let page = get(s, &format!("/study/{id}"), Some(&cookie)).await;
    assert!(
        page.body
            .contains("href=\"https://app.prolific.com/submissions/complete?cc=DONE-1234\""),
        "{}",
        page.body
    );
    // MTurk: a form posted to the host the HIT came from (sandbox here).
    let r = join_link(
        s,
        &format!("/join/{id}?workerId=A9&assignmentId=3AB&hitId=H1&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let mturk = r.cookie.unwrap();
    let done = skip_to_the_end(s, id, &mturk).await;
    assert_eq!(
        done["Done"]["hand_back"],
        json!({"MturkSubmit": {"action": "https://workersandbox.mturk.com/mturk/externalSubmit", "assignment_id": "3AB", "code": "DONE-1234"}})
    );
    // The same worker accepts a second HIT of the study (a new assignment, live this time): the
    // start page tells them they took part already and to return it, and nothing is handed back
    // for it; Start (posted anyway) says the same and opens no session.
    let second = format!(
        "/join/{id}?workerId=A9&assignmentId=3XY&hitId=H2&turkSubmitTo=https%3A%2F%2Fwww.mturk.com"
    );
    let page = get(s, &second, None).await;
    assert_eq!(page.status, StatusCode::CONFLICT, "{}", page.body);
    let told = [
        "already taken part in this study and finished it",
        "return the HIT on MTurk",
        "3XY",
    ]
    .iter()
    .all(|words| page.body.contains(words));
    assert!(told && !page.body.contains("<form"), "{}", page.body);
    let posted = join_post(s, &second).await;
    assert_eq!(posted.status, StatusCode::CONFLICT, "{}", posted.body);
    assert!(posted.cookie.is_none());
    // The place still hands back the assignment it was done under.
    let again = parse(&state_of(s, id, &mturk).await);
    assert_eq!(
        again["step"]["Done"]["hand_back"]["MturkSubmit"]["assignment_id"],
        "3AB"
    );
    let crowd: String = sqlx::query_scalar(
        "SELECT a.crowd_json FROM assignments a JOIN crowd_ids c ON c.user_id = a.worker_id
         WHERE c.external_id = 'A9'",
    )
    .fetch_one(&s.pool)
    .await
    .unwrap();
    let crowd: serde_json::Value = serde_json::from_str(&crowd).unwrap();
    assert_eq!(
        (crowd["assignment"].as_str(), crowd["study"].as_str()),
        (Some("3AB"), Some("H1"))
    );
    let outcomes: Vec<(&str, &str)> = crowd["presented"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [("3AB", "in_hand"), ("3XY", "told_to_return")]);
    // The pay sheet and the bundle's assignments list both, with what became of each.
    let rita = login(s, "rita", "rita-password").await;
    let pay = get(s, &format!("/export/pay.csv?studies={id}"), Some(&rita)).await;
    let line = pay.body.lines().find(|l| l.contains(",A9,")).unwrap();
    assert_eq!(pay.body.lines().filter(|l| l.contains(",A9,")).count(), 1);
    assert!(line.contains("3AB: handed back with this work ("), "{line}");
    assert!(line.contains("3XY: told to return it"), "{line}");
    // A worker who had not finished and comes back through a second HIT goes on under it: the
    // end page hands back the new one, and the first is listed as replaced.
    let first = join_link(
        s,
        &format!("/join/{id}?workerId=B7&assignmentId=4AA&hitId=H1"),
    )
    .await;
    let b7 = first.cookie.unwrap();
    let r = join_link(
        s,
        &format!("/join/{id}?workerId=B7&assignmentId=4BB&hitId=H2"),
    )
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let done = skip_to_the_end(s, id, &b7).await;
    assert_eq!(
        done["Done"]["hand_back"]["MturkSubmit"]["assignment_id"],
        "4BB"
    );
    let pay = get(s, &format!("/export/pay.csv?studies={id}"), Some(&rita)).await;
    let line = pay.body.lines().find(|l| l.contains(",B7,")).unwrap();
    assert!(line.contains("4AA: replaced by a later one"), "{line}");
    assert!(line.contains("4BB: handed back with this work"), "{line}");
    // A form may not be sent anywhere else.
    let before = common::snapshot(&s.pool).await;
    let r = get(
        s,
        &format!("/join/{id}?workerId=A8&assignmentId=3AC&turkSubmitTo=https%3A%2F%2Fevil.example"),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("turkSubmitTo must be one of"), "{}", r.body);
    assert_eq!(common::snapshot(&s.pool).await, before);
    // The three places are taken (B7 holds the third); a fourth arrival is told to return the
    // study.
    let r = join_link(s, &format!("/join/{id}?PROLIFIC_PID=fourth")).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(
        r.body.contains("return the study on your crowd platform"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn links_to_missing_or_closed_studies_create_nothing_and_expired_sessions_go() {
    let e = env().await;
    let s = &e.state;
    let before = common::snapshot(&s.pool).await;
    let r = get(s, "/join/999?PROLIFIC_PID=nobody", None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert!(r.cookie.is_none());
    assert_eq!(common::snapshot(&s.pool).await, before);
    // A closed study: a new crowd id gets the refusal and nothing is created ...
    let config = StudyConfig {
        scenarios: vec![0],
        annotators: 2,
        open: true,
        ..StudyConfig::default()
    };
    let id = study::create(&s.pool, None, "demo-SST-2", "closing", config.clone())
        .await
        .unwrap();
    let early = arrive(s, id, "early-bird").await;
    parse(&state_of(s, id, &early).await);
    let closed = StudyConfig {
        open: false,
        ..study::load(&s.pool, id).await.unwrap().config
    };
    study::update(&s.pool, None, id, "closing", closed)
        .await
        .unwrap();
    let before = common::snapshot(&s.pool).await;
    let r = get(s, &format!("/join/{id}?PROLIFIC_PID=latecomer"), None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.body.contains("This study is not open."), "{}", r.body);
    assert_eq!(common::snapshot(&s.pool).await, before);
    // ... while a worker who started comes back to their place.
    let back = arrive(s, id, "early-bird").await;
    assert!(parse(&state_of(s, id, &back).await)["step"]["Item"].is_object());
    // Expired sessions are deleted when the next one opens.
    sqlx::query("UPDATE sessions SET expires_at = 0 WHERE token_hash IN (SELECT token_hash FROM sessions LIMIT 1)")
        .execute(&s.pool)
        .await
        .unwrap();
    let expired: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE expires_at = 0")
        .fetch_one(&s.pool)
        .await
        .unwrap();
    assert_eq!(expired, 1);
    login(s, "rita", "rita-password").await;
    let expired: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE expires_at <= 0")
        .fetch_one(&s.pool)
        .await
        .unwrap();
    assert_eq!(expired, 0);
}

#[tokio::test]
async fn reading_the_state_again_writes_nothing_and_an_answer_is_one_commit() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let cookie = arrive(s, id, "reader").await;
    let first = parse(&state_of(s, id, &cookie).await);
    let pos = first["step"]["Item"]["position"].as_i64().unwrap();
    // The first showing recorded shown_at; reading again (a reload) changes nothing.
    let before = common::snapshot(&s.pool).await;
    for _ in 0..3 {
        assert_eq!(parse(&state_of(s, id, &cookie).await), first);
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    let activity = |s: &app::ssr::state::AppState| {
        let pool = s.pool.clone();
        async move {
            sqlx::query_as::<_, (i64, i64)>(
                "SELECT a.last_activity, i.submitted_at FROM assignments a
                 JOIN assignment_items i ON i.assignment_id = a.id WHERE i.position = $1",
            )
            .bind(pos)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let ack = parse(
        &post_json(
            s,
            "submit_answer",
            &submit_body(id, pos, "one-commit", label("positive")),
            Some(&cookie),
        )
        .await,
    );
    // The answer and the activity were written together, with the next item's first showing.
    let (last, submitted) = activity(s).await;
    assert_eq!(last, submitted);
    let next = ack["next"]["Item"]["position"]
        .as_i64()
        .expect("the next item");
    assert_eq!(next, pos + 1);
    let shown: Option<i64> = sqlx::query_scalar(
        "SELECT shown_at FROM assignment_items WHERE position = $1 AND assignment_id =
            (SELECT assignment_id FROM assignment_items WHERE client_id = 'one-commit')",
    )
    .bind(next)
    .fetch_one(&s.pool)
    .await
    .unwrap();
    assert_eq!(shown, Some(submitted));
    // A reload now shows that item and writes nothing.
    let before = common::snapshot(&s.pool).await;
    assert_eq!(parse(&state_of(s, id, &cookie).await)["step"], ack["next"]);
    assert_eq!(common::snapshot(&s.pool).await, before);
}

/// Each place's training items as (example id) in the order shown, and the place's seed.
async fn training_orders(s: &AppState, study: domain::ids::StudyId) -> Vec<(i64, Vec<i64>)> {
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT a.order_seed, a.id, i.example_id FROM assignment_items i
         JOIN assignments a ON a.id = i.assignment_id
         WHERE a.study_id = $1 AND i.phase = 'training' ORDER BY a.id, i.position",
    )
    .bind(study)
    .fetch_all(&s.pool)
    .await
    .unwrap();
    let mut out: Vec<(i64, i64, Vec<i64>)> = Vec::new();
    for (seed, place, example) in rows {
        match out.last_mut() {
            Some(last) if last.1 == place => last.2.push(example),
            _ => out.push((seed, place, vec![example])),
        }
    }
    out.into_iter().map(|(seed, _, e)| (seed, e)).collect()
}

#[tokio::test]
async fn a_shuffling_study_shows_each_worker_the_training_examples_in_their_own_recorded_order() {
    let e = env().await;
    let s = &e.state;
    let file: Vec<i64> = sqlx::query_scalar(
        "SELECT e.id FROM examples e JOIN data_files f ON f.id = e.file_id JOIN tasks t ON t.id = f.task_id
         WHERE t.name = 'demo-SST-2' AND f.kind = 'train' AND f.k = 4 AND f.split = 1 ORDER BY e.line_no",
    )
    .fetch_all(&s.pool)
    .await
    .unwrap();
    assert_eq!(file.len(), 4);
    let config = |shuffle_training: bool| StudyConfig {
        scenarios: vec![4],
        annotators: 6,
        open: true,
        shuffle_training,
        ..StudyConfig::default()
    };
    let plain = study::create(&s.pool, None, "demo-SST-2", "file order", config(false))
        .await
        .unwrap();
    let shuffled = study::create(&s.pool, None, "demo-SST-2", "own order", config(true))
        .await
        .unwrap();
    for i in 0..6 {
        arrive(s, plain, &format!("p{i}")).await;
        arrive(s, shuffled, &format!("s{i}")).await;
    }
    // Without shuffling, everyone sees the file's order.
    let plain = training_orders(s, plain).await;
    assert_eq!(plain.len(), 6);
    assert!(plain.iter().all(|(_, order)| order == &file));
    // Shuffled: the same examples, each place in the order its recorded seed gives.
    let orders = training_orders(s, shuffled).await;
    assert_eq!(orders.len(), 6);
    for (seed, order) in &orders {
        let want: Vec<i64> = domain::study::training_order(*seed as u64, 4)
            .into_iter()
            .map(|i| file[i])
            .collect();
        assert_eq!(order, &want);
    }
    // Six draws of 24 orders: all the same would happen once in 8 million runs.
    assert!(orders.iter().any(|(_, o)| o != &orders[0].1));
}

#[tokio::test]
async fn screening_items_come_first_for_every_scenario_without_feedback_and_score_apart() {
    let e = env().await;
    let s = &e.state;
    let config = |screening| StudyConfig {
        scenarios: vec![0, 2],
        annotators: 1,
        open: true,
        completion_code: "DONE-1234".into(),
        screening,
        ..StudyConfig::default()
    };
    // A file that shares items with a training set (4_1 holds 2_1), or none, is refused.
    let before = common::snapshot(&s.pool).await;
    for (file, says) in [
        (
            (2, 1),
            "the screening items (2_1) share items with the 2-shot training set (2_1)",
        ),
        (
            (4, 1),
            "the screening items (4_1) share items with the 2-shot training set (2_1)",
        ),
        (
            (8, 1),
            "the task has no training file 8_1 for the screening items",
        ),
    ] {
        let err = study::create(&s.pool, None, "demo-SST-2", "x", config(Some(file)))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
    }
    assert_eq!(common::snapshot(&s.pool).await, before);
    let id = study::create(
        &s.pool,
        None,
        "demo-SST-2",
        "screened",
        config(Some((2, 2))),
    )
    .await
    .unwrap();
    // The intro names the screening items; the first item is screening item 1 of 2.
    let cookie = arrive(s, id, "first").await;
    let st = parse(&state_of(s, id, &cookie).await);
    assert_eq!(st["screening_items"], 2);
    let item = &st["step"]["Item"];
    assert_eq!(
        (
            item["phase"].as_str(),
            item["index"].as_i64(),
            item["of"].as_i64()
        ),
        (Some("screening"), Some(1), Some(2))
    );
    // Both scenarios' workers answer the two screening items first, without feedback (the
    // run checks that no reveal comes), then train (k=2) and test.
    let always_positive = |_: &Value| label("positive");
    let mut runs = Vec::new();
    for pid in ["first", "second"] {
        runs.push(run_worker(s, id, pid, always_positive).await);
    }
    for seen in &runs {
        let phases: Vec<&str> = seen
            .bodies
            .iter()
            .filter_map(|(what, _)| what.strip_prefix("state "))
            .collect();
        assert_eq!(phases[..2], ["screening", "screening"], "{phases:?}");
        assert!(!phases[2..].contains(&"screening"), "{phases:?}");
    }
    let ks: Vec<i64> = places(s, id).await.into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        ks.iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        [0, 2].into()
    );
    // 2_2's golds are negative, positive: "positive" scores 0.5 on screening, apart from the
    // test S1 (4 test items, 2 positive: 0.5) and training S1.
    let r = store::report::load(&s.pool, &[id]).await.unwrap().report();
    for a in &r.annotators {
        assert_eq!(a.screening_s1, Some(0.5), "{}", a.worker);
        assert_eq!(a.test_done, 4);
    }
    assert!(r.all.main.iter().all(|c| c.screening.unwrap().mean == 0.5));
    // Once workers started, the screening file can no longer change.
    let err = study::update(&s.pool, None, id, "screened", config(None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("the screening items"), "{err}");
}
