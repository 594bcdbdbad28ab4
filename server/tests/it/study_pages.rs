//! A study's own pages through HTTP (issue 30): consent accepted (its hash kept) or declined
//! (the place freed, nothing kept but the refusal), questionnaires checked on the server and
//! answered once, attention checks among the test items (locked, never scored), the
//! debriefing, and all of it in the exports; a study without them behaves as before.
use crate::common;

use axum::http::StatusCode;
use common::client::*;
use domain::study::StudyConfig;
use domain::study_pages::StudyPages;
use serde_json::{json, Value};
use store::db::cli as db;
use store::study;

fn pages() -> StudyPages {
    serde_json::from_value(json!({
        "consent": {
            "text": "# Taking part\n\nYou will label sentences. You may stop at any time.",
            "contact": "Dr. Ada Researcher, ada@uni.example",
            "no_consent_code": "NOCONSENT"
        },
        "questionnaire": {
            "before": [
                {"id": "english", "text": "Is English your first language?", "kind": "single_choice", "options": ["yes", "no"], "required": true},
                {"id": "age", "text": "Your age", "kind": "number", "min": 18, "max": 99, "integer": true}
            ],
            "after": [
                {"id": "difficulty", "text": "How hard was it?", "kind": "likert", "points": 5, "required": true},
                {"id": "feedback", "text": "Anything to tell us?", "kind": "short_text"}
            ]
        },
        "attention_checks": [
            {"after": 0, "text": "This is a check: please answer positive.", "question": "positive or negative?", "answer": ["positive"]},
            {"after": 4, "text": "This is a check: please answer negative.", "question": "positive or negative?", "answer": ["negative"]}
        ],
        "attention_max_failures": 0,
        "debriefing": "Thank you. The study compares people with **models**."
    }))
    .unwrap()
}

async fn study_with_pages(s: &app::ssr::state::AppState) -> domain::ids::StudyId {
    let config = StudyConfig {
        scenarios: vec![2],
        annotators: 3,
        open: true,
        completion_code: "DONE-1234".into(),
        pages: pages(),
        ..StudyConfig::default()
    };
    study::create(&s.pool, None, "demo-SST-2", "pages", config)
        .await
        .unwrap()
}

async fn consent(
    s: &app::ssr::state::AppState,
    id: impl std::fmt::Display,
    cookie: &str,
    accept: bool,
) -> Resp {
    form(
        s,
        "give_consent",
        &format!("study_id={id}&accept={accept}"),
        Some(cookie),
    )
    .await
}

/// Posts a questionnaire as the page does: the form's fields. `replies` is written as a JSON
/// object for reading: a string or number is one field, an array one field per element.
async fn answer(
    s: &app::ssr::state::AppState,
    id: impl Copy + serde::Serialize,
    cookie: &str,
    stage: &str,
    replies: Value,
) -> Resp {
    let mut fields = Vec::new();
    for (k, v) in replies.as_object().expect("replies as an object") {
        let values = match v {
            Value::Array(xs) => xs.clone(),
            one => vec![one.clone()],
        };
        for x in values {
            let text = x.as_str().map_or_else(|| x.to_string(), str::to_string);
            fields.push(json!([format!("q-{k}"), text]));
        }
    }
    post_fields(s, id, cookie, stage, Value::Array(fields)).await
}

/// Posts any `fields` value (a hostile client's too).
async fn post_fields(
    s: &app::ssr::state::AppState,
    id: impl Copy + serde::Serialize,
    cookie: &str,
    stage: &str,
    fields: Value,
) -> Resp {
    post_json(
        s,
        "answer_questionnaire",
        &json!({"study_id": id, "stage": stage, "fields": fields}),
        Some(cookie),
    )
    .await
}

/// Submits a label answer to position `pos` of the worker's place.
async fn send_label(
    s: &app::ssr::state::AppState,
    id: domain::ids::StudyId,
    cookie: &str,
    pos: i64,
    client: &str,
    l: &str,
) -> Resp {
    post_json(
        s,
        "submit_answer",
        &submit_body(id, pos, client, label(l)),
        Some(cookie),
    )
    .await
}

async fn count(s: &app::ssr::state::AppState, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&s.pool).await.unwrap()
}

#[tokio::test]
async fn declining_consent_frees_the_place_and_keeps_only_the_refusal() {
    let e = env().await;
    let s = &e.state;
    let id = study_with_pages(s).await;
    let cookie = arrive(s, id, "decliner01").await;
    let st = parse(&state_of(s, id, &cookie).await);
    let page = &st["step"]["Consent"];
    assert!(
        page["html"]
            .as_str()
            .unwrap()
            .contains("<h1>Taking part</h1>"),
        "{st}"
    );
    assert_eq!(page["contact"], "Dr. Ada Researcher, ada@uni.example");
    // Nothing can be answered before consent.
    let early = send_label(s, id, &cookie, 0, "c0", "positive").await;
    assert_eq!(early.status, StatusCode::CONFLICT, "{}", early.body);
    assert!(early.body.contains("consent page first"), "{}", early.body);
    let early = answer(s, id, &cookie, "before", json!({"english": "yes"})).await;
    assert_eq!(early.status, StatusCode::CONFLICT, "{}", early.body);
    assert_eq!(places(s, id).await.len(), 1);
    let r = parse(&consent(s, id, &cookie, false).await);
    let d = &r["Declined"];
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("nothing was recorded"),
        "{r}"
    );
    assert_eq!(
        d["hand_back"]["Link"]["url"],
        "https://app.prolific.com/submissions/complete?cc=NOCONSENT"
    );
    // The place is free, the account and its items gone; the refusal names no one.
    assert!(places(s, id).await.is_empty());
    assert_eq!(
        count(
            s,
            "SELECT COUNT(*) FROM users WHERE name = 'prolific:decliner01'"
        )
        .await,
        0
    );
    assert_eq!(count(s, "SELECT COUNT(*) FROM assignment_items").await, 0);
    let (hash, platform): (String, String) =
        sqlx::query_as("SELECT consent_hash, platform FROM consent_refusals")
            .fetch_one(&s.pool)
            .await
            .unwrap();
    assert_eq!(hash, pages().consent.unwrap().hash());
    assert_eq!(platform, "prolific");
    assert_eq!(
        state_of(s, id, &cookie).await.status,
        StatusCode::UNAUTHORIZED
    );
    // MTurk has no way back by link: the page tells the worker to return the HIT.
    let r = join_link(
        s,
        &format!("/join/{id}?workerId=A1DECLINE&assignmentId=3XY&hitId=H1"),
    )
    .await;
    let turk = r.cookie.unwrap();
    let d = parse(&consent(s, id, &turk, false).await);
    assert!(
        d["Declined"]["message"]
            .as_str()
            .unwrap()
            .contains("Return"),
        "{d}"
    );
    assert!(d["Declined"]["hand_back"].is_null());
    assert_eq!(count(s, "SELECT COUNT(*) FROM consent_refusals").await, 2);
}

#[tokio::test]
async fn a_worker_goes_through_consent_questions_checks_and_debriefing() {
    let e = env().await;
    let s = &e.state;
    let id = study_with_pages(s).await;
    let cookie = arrive(s, id, "taker0001").await;
    let step = parse(&consent(s, id, &cookie, true).await);
    // Accepting twice changes nothing; declining after accepting is refused.
    assert_eq!(parse(&consent(s, id, &cookie, true).await), step);
    let late = consent(s, id, &cookie, false).await;
    assert_eq!(late.status, StatusCode::CONFLICT);
    assert!(late.body.contains("ada@uni.example"), "{}", late.body);
    let hash: Option<String> = sqlx::query_scalar("SELECT consent_hash FROM assignments")
        .fetch_one(&s.pool)
        .await
        .unwrap();
    assert_eq!(hash, Some(pages().consent.unwrap().hash()));
    assert_eq!(step["Questionnaire"]["stage"], "before");
    // Answers are checked on the server, every problem named.
    let bad = answer(
        s,
        id,
        &cookie,
        "before",
        json!({"age": 17, "colour": "red"}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    for part in [
        "no question \\\"q-colour\\\"",
        "please answer",
        "from 18 to 99",
    ] {
        assert!(bad.body.contains(part), "{part}: {}", bad.body);
    }
    let replies = json!({"english": "no", "age": 33});
    let first = parse(&answer(s, id, &cookie, "before", replies.clone()).await);
    assert_eq!(first["Item"]["phase"], "training");
    // The same answers again are acknowledged; other answers are refused (locked).
    assert_eq!(
        parse(&answer(s, id, &cookie, "before", replies).await),
        first
    );
    let other = answer(s, id, &cookie, "before", json!({"english": "yes"})).await;
    assert_eq!(other.status, StatusCode::CONFLICT, "{}", other.body);
    // Training: two items with their golds revealed.
    for _ in 0..2 {
        let st = parse(&state_of(s, id, &cookie).await);
        let pos = st["step"]["Item"]["position"].as_i64().unwrap();
        parse(&send_label(s, id, &cookie, pos, &format!("t{pos}"), "positive").await);
        parse(
            &form(
                s,
                "continue_study",
                &format!("study_id={id}&position={pos}"),
                Some(&cookie),
            )
            .await,
        );
    }
    // The test phase opens with the first check: a test item like the others, 1 of 6.
    let st = parse(&state_of(s, id, &cookie).await);
    assert_eq!(st["test_items"], 6, "4 test items and 2 checks");
    let check = &st["step"]["Item"];
    assert_eq!(
        (
            check["phase"].as_str(),
            check["index"].as_i64(),
            check["of"].as_i64()
        ),
        (Some("test"), Some(1), Some(6))
    );
    assert_eq!(
        check["context"]["text"],
        "This is a check: please answer positive."
    );
    let check_pos = check["position"].as_i64().unwrap();
    assert_eq!(check_pos, 6, "after the place's 6 items");
    let body = submit_body(id, check_pos, "check-1", label("positive"));
    let ack = parse(&post_json(s, "submit_answer", &body, Some(&cookie)).await);
    assert!(ack["reveal"].is_null(), "a check reveals nothing");
    assert_eq!(ack["next"]["Item"]["index"], 2);
    // A resend is acknowledged again; another answer to it is locked.
    assert_eq!(
        parse(&post_json(s, "submit_answer", &body, Some(&cookie)).await),
        ack
    );
    let again = send_label(s, id, &cookie, check_pos, "check-x", "negative").await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    // The second check is not due yet; a position beyond the checks does not exist.
    let early = send_label(s, id, &cookie, check_pos + 1, "c2", "negative").await;
    assert_eq!(early.status, StatusCode::CONFLICT, "{}", early.body);
    let none = send_label(s, id, &cookie, check_pos + 2, "c3", "negative").await;
    assert_eq!(none.status, StatusCode::NOT_FOUND, "{}", none.body);
    // The four test items, then the last check, answered wrongly.
    let mut next = ack["next"].clone();
    for _ in 0..4 {
        let pos = next["Item"]["position"].as_i64().unwrap();
        assert!(pos < 6, "{next}");
        next = parse(&send_label(s, id, &cookie, pos, &format!("x{pos}"), "negative").await)
            ["next"]
            .clone();
    }
    assert_eq!(
        (
            next["Item"]["position"].as_i64(),
            next["Item"]["index"].as_i64()
        ),
        (Some(7), Some(6))
    );
    let after = parse(&send_label(s, id, &cookie, 7, "check-2", "positive").await)["next"].clone();
    // The test set is done (the place is finished); the questions after it come last.
    assert_eq!(after["Questionnaire"]["stage"], "after", "{after}");
    assert_eq!(places(s, id).await, vec![(2, "finished".to_string())]);
    let done = parse(
        &answer(
            s,
            id,
            &cookie,
            "after",
            json!({"difficulty": 2, "feedback": "  clear  "}),
        )
        .await,
    );
    let c = &done["Done"];
    assert!(
        c["debriefing_html"]
            .as_str()
            .unwrap()
            .contains("<strong>models</strong>"),
        "{done}"
    );
    assert_eq!(c["test_items"], 6);
    let passed: Vec<(i64, Option<i64>)> =
        sqlx::query_as("SELECT check_index, passed FROM attention_answers ORDER BY check_index")
            .fetch_all(&s.pool)
            .await
            .unwrap();
    assert_eq!(passed, vec![(0, Some(1)), (1, Some(0))]);
    let stored: String =
        sqlx::query_scalar("SELECT answers_json FROM questionnaire_answers WHERE stage = 'after'")
            .fetch_one(&s.pool)
            .await
            .unwrap();
    assert_eq!(stored, r#"{"difficulty":2.0,"feedback":"clear"}"#);

    // The researcher's exports and report.
    let rita = login(s, "rita", "rita-password").await;
    let export = |file: &'static str| {
        let rita = rita.clone();
        async move {
            let r = get(s, &format!("/export/{file}?studies={id}"), Some(&rita)).await;
            assert_eq!(r.status, StatusCode::OK, "{file}: {}", r.body);
            r.body
        }
    };
    let csv = export("questionnaires.csv").await;
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "study_id,assignment_id,worker,k,stage,question,kind,answer,number,submitted_at,seconds"
    );
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(
        lines[1].contains(",prolific:taker0001,2,before,english,single_choice,no,,"),
        "{csv}"
    );
    assert!(lines[2].contains(",before,age,number,33,33.0,"), "{csv}");
    assert!(
        lines[3].contains(",after,difficulty,likert,2,2.0,"),
        "{csv}"
    );
    assert!(
        lines[4].contains(",after,feedback,short_text,clear,,"),
        "{csv}"
    );
    let jsonl = export("questionnaires.jsonl").await;
    let first: Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(first["answers"], json!({"english": "no", "age": 33.0}));
    let checks = export("attention.csv").await;
    assert!(
        checks.contains(",1,0,positive,positive,false,true,"),
        "{checks}"
    );
    assert!(
        checks.contains(",2,4,negative,positive,false,false,"),
        "{checks}"
    );
    let consents = export("consent.csv").await;
    assert!(
        consents.contains(&format!(
            ",accepted,1,prolific:taker0001,prolific,{}",
            pages().consent.unwrap().hash()
        )),
        "{consents}"
    );
    let scores: Value = serde_json::from_str(&export("scores.json").await).unwrap();
    let a = &scores["annotators"][0];
    assert_eq!(
        (
            a["test_done"].as_u64(),
            a["attention_answered"].as_u64(),
            a["attention_passed"].as_u64()
        ),
        (Some(4), Some(2), Some(1))
    );
    assert_eq!(
        (a["failed_attention"].as_bool(), a["flagged"].as_bool()),
        (Some(true), Some(true))
    );
    let q = &scores["questionnaires"][0];
    assert_eq!(q["workers"], 1);
    assert_eq!(q["questions"][0]["counts"], json!([["yes", 0], ["no", 1]]));
    let md = export("scores.md").await;
    assert!(
        md.contains("Attention checks") && md.contains("| 1/2 | yes |"),
        "{md}"
    );
    assert!(md.contains("english | 1/1 | yes: 0; no: 1"), "{md}");
    let bundle = export("bundle.tar").await;
    for member in [
        "consent.csv",
        "questionnaires.csv",
        "attention.csv",
        "consent_sha256",
    ] {
        assert!(bundle.contains(member), "{member} in the bundle");
    }
}

#[tokio::test]
async fn a_study_without_pages_exports_no_page_files_in_its_bundle() {
    let e = env().await;
    let s = &e.state;
    let id = new_study(s, "demo-SST-2", &[0], 3).await;
    let cookie = arrive(s, id, "plain0001").await;
    let end = skip_to_the_end(s, id, &cookie).await;
    assert_eq!(end["Done"]["debriefing_html"], "");
    let rita = login(s, "rita", "rita-password").await;
    let bundle = get(s, &format!("/export/bundle.tar?studies={id}"), Some(&rita)).await;
    assert!(!bundle.body.contains("questionnaires.csv") && !bundle.body.contains("consent_sha256"));
    let config: String = sqlx::query_scalar("SELECT config_json FROM study_configs")
        .fetch_one(&s.pool)
        .await
        .unwrap();
    assert!(!config.contains("pages"), "{config}");
}

/// The demo's pages folder, as a researcher would use it beside a study made on the command
/// line: every file is read, checked against the task and kept in the configuration.
#[tokio::test]
async fn the_command_line_reads_a_pages_folder_and_names_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::db_url(&tmp.path().join("cli.db"));
    let pool = db::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let demo_pages = concat!(env!("CARGO_MANIFEST_DIR"), "/demo/pages");
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args([
                "--database",
                &url,
                "study",
                "create",
                "--task",
                "demo-SST-2",
            ])
            .args(args)
            .output()
            .unwrap()
    };
    let ok = cli(&[
        "--name",
        "with pages",
        "--scenarios",
        "0,2",
        "--pages",
        demo_pages,
        "--contact",
        "Dr. Ada, ada@uni.example",
        "--no-consent-code",
        "NOCONSENT",
        "--attention-max-failures",
        "0",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let json: String =
        sqlx::query_scalar("SELECT config_json FROM study_configs ORDER BY id DESC LIMIT 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    let config: StudyConfig = serde_json::from_str(&json).unwrap();
    let p = &config.pages;
    assert_eq!(
        p.consent.as_ref().unwrap().contact,
        "Dr. Ada, ada@uni.example"
    );
    assert!(p
        .consent
        .as_ref()
        .unwrap()
        .text
        .starts_with("# Taking part"));
    assert_eq!(
        (p.questionnaire.before.len(), p.questionnaire.after.len()),
        (3, 2)
    );
    assert_eq!(p.attention_checks[0].answer, vec!["positive"]);
    assert_eq!(p.attention_max_failures, Some(0));
    assert!(p.debriefing.starts_with("Thank you"));
    // Without a contact the consent page is refused; a broken file is named with its line.
    let err = |out: std::process::Output| {
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = err(cli(&[
        "--name",
        "x",
        "--scenarios",
        "0",
        "--pages",
        demo_pages,
    ]));
    assert!(e.contains("needs the researcher's contact"), "{e}");
    let bad = tmp.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(
        bad.join("attention.json"),
        "[{\"after\": 1,\n \"txt\": \"x\"}]",
    )
    .unwrap();
    let e = err(cli(&["--name", "x", "--pages", bad.to_str().unwrap()]));
    assert!(e.contains("attention.json:2") && e.contains("txt"), "{e}");
    std::fs::write(
        bad.join("attention.json"),
        r#"[{"after": 9, "text": "Choose neutral.", "question": "q", "answer": ["neutral"]}]"#,
    )
    .unwrap();
    let e = err(cli(&[
        "--name",
        "x",
        "--scenarios",
        "0",
        "--pages",
        bad.to_str().unwrap(),
    ]));
    assert!(
        e.contains("after 9 test items, but the test set has 4") && e.contains("one of the labels"),
        "{e}"
    );
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = err(cli(&["--name", "x", "--pages", empty.to_str().unwrap()]));
    assert!(e.contains("holds none of"), "{e}");
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM studies WHERE name = 'x'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(count, 0, "nothing made of a refused folder");
}

/// What a hostile or confused client sends to the pages' endpoints gets a 4xx that names the
/// problem, a short one however much it sends, and changes nothing.
#[tokio::test]
async fn bad_requests_to_the_pages_get_4xx_and_change_nothing() {
    let e = env().await;
    let s = &e.state;
    let id = study_with_pages(s).await;
    let plain = new_study(s, "demo-SST-2", &[0], 3).await;
    let cookie = arrive(s, id, "hostile01").await;
    parse(&consent(s, id, &cookie, true).await);
    let many: Vec<Value> = (0..5000).map(|i| json!([format!("q-x{i}"), "x"])).collect();
    let r = post_fields(s, id, &cookie, "before", Value::Array(many)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.body.len() < 2000 && r.body.contains("more problems"),
        "{}",
        r.body.len()
    );
    for (stage, fields) in [
        ("before", json!([["q-english", "yes"], ["q-english", "no"]])),
        ("before", json!([["q-english", "maybe"]])),
        ("before", json!([["q-english", "yes"], ["q-age", "1e308"]])),
        ("before", json!([["q-english", "yes"], ["q-age", "thirty"]])),
        ("before", json!([["english", "yes"]])),
        ("before", json!({"english": "yes"})),
        ("before", json!([["q-english"]])),
        ("during", json!([])),
    ] {
        let r = post_fields(s, id, &cookie, stage, fields.clone()).await;
        assert!(
            r.status.is_client_error(),
            "{stage} {fields}: {} {}",
            r.status,
            r.body
        );
    }
    // Another site's form cannot decline (or accept) for the worker.
    let other_site = axum::http::Request::post("/api/give_consent")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-site", "cross-site")
        .header("cookie", &cookie)
        .body(axum::body::Body::from(format!(
            "study_id={id}&accept=false"
        )))
        .unwrap();
    assert_eq!(send(s, other_site).await.status, StatusCode::FORBIDDEN);
    assert_eq!(places(s, id).await.len(), 1);
    // A study without a consent page or questionnaires has nothing to answer.
    let other = arrive(s, plain, "hostile02").await;
    let r = consent(s, plain, &other, true).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = answer(s, plain, &other, "after", json!({})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    // No place in the study, or not a worker at all.
    let r = consent(s, id, &other, false).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let rita = login(s, "rita", "rita-password").await;
    assert_eq!(
        consent(s, id, &rita, true).await.status,
        StatusCode::FORBIDDEN
    );
    // Nothing was stored but the one consent.
    assert_eq!(
        count(s, "SELECT COUNT(*) FROM questionnaire_answers").await,
        1,
        "the first showing only"
    );
    assert_eq!(
        count(
            s,
            "SELECT COUNT(*) FROM questionnaire_answers WHERE submitted_at IS NOT NULL"
        )
        .await,
        0
    );
    assert_eq!(count(s, "SELECT COUNT(*) FROM consent_refusals").await, 0);
    assert_eq!(places(s, id).await.len(), 1);
}

/// The same worker's requests at once (a double tap, two tabs): never a 5xx, and the outcome is
/// one of the two, whole.
#[tokio::test]
async fn consent_and_answers_sent_twice_at_once_end_whole() {
    let e = env().await;
    let s = &e.state;
    let id = study_with_pages(s).await;
    let a = arrive(s, id, "twice0001").await;
    let (x, y) = tokio::join!(consent(s, id, &a, false), consent(s, id, &a, false));
    for r in [&x, &y] {
        assert!(!r.status.is_server_error(), "{} {}", r.status, r.body);
    }
    assert!(x.status.is_success() || y.status.is_success());
    assert_eq!(count(s, "SELECT COUNT(*) FROM consent_refusals").await, 1);
    let b = arrive(s, id, "twice0002").await;
    let (x, y) = tokio::join!(consent(s, id, &b, true), consent(s, id, &b, false));
    for r in [&x, &y] {
        assert!(!r.status.is_server_error(), "{} {}", r.status, r.body);
    }
    let kept = places(s, id).await.len();
    assert!(
        (x.status.is_success() && kept == 1) || (y.status.is_success() && kept == 0),
        "{} {} with {kept} places",
        x.status,
        y.status
    );
    let c = arrive(s, id, "twice0003").await;
    parse(&consent(s, id, &c, true).await);
    let replies = json!({"english": "no"});
    let (x, y) = tokio::join!(
        answer(s, id, &c, "before", replies.clone()),
        answer(s, id, &c, "before", replies.clone())
    );
    assert_eq!(parse(&x), parse(&y), "both sends get the next step");
    assert_eq!(
        count(
            s,
            "SELECT COUNT(*) FROM questionnaire_answers WHERE submitted_at IS NOT NULL"
        )
        .await,
        1
    );
}

#[tokio::test]
async fn someone_who_leaves_at_the_consent_page_is_in_no_export_and_holds_the_place_ten_minutes() {
    let e = env().await;
    let s = &e.state;
    let id = study_with_pages(s).await;
    let agreed = arrive(s, id, "agreer01").await;
    parse(&consent(s, id, &agreed, true).await);
    // Someone joins, sees the consent page and closes the tab.
    let leaver = arrive(s, id, "leaver01").await;
    assert!(parse(&state_of(s, id, &leaver).await)["step"]["Consent"].is_object());
    let rita = login(s, "rita", "rita-password").await;
    for file in ["annotations.csv", "annotations.jsonl", "pay.csv"] {
        let r = get(s, &format!("/export/{file}?studies={id}"), Some(&rita)).await;
        assert_eq!(r.status, StatusCode::OK, "{file}: {}", r.body);
        assert!(!r.body.contains("leaver01"), "{file}: {}", r.body);
        if file.starts_with("annotations") {
            assert!(r.body.contains("prolific:agreer01"), "{file}: {}", r.body);
        }
    }
    // Nor in the study's table of workers; the place itself counts as held.
    let overview = study::admin_view(&s.pool, id).await.unwrap();
    assert_eq!(overview.workers.len(), 1);
    assert_eq!(overview.progress[0].active, 2);
    // Eleven minutes on, the next arrival finds that place freed, with nothing of it kept.
    sqlx::query(
        "UPDATE assignments SET last_activity = last_activity - 660000 WHERE worker_id =
         (SELECT id FROM users WHERE name = 'prolific:leaver01')",
    )
    .execute(&s.pool)
    .await
    .unwrap();
    arrive(s, id, "next01").await;
    let left = "SELECT COUNT(*) FROM assignments a JOIN users u ON u.id = a.worker_id
                WHERE u.name = 'prolific:leaver01'";
    assert_eq!(count(s, left).await, 0);
    assert_eq!(places(s, id).await.len(), 2);
    assert_eq!(
        count(s, "SELECT COUNT(*) FROM assignment_items WHERE assignment_id NOT IN (SELECT id FROM assignments)").await,
        0
    );
    // Nor of the worker: no account, no platform id, no session (they never consented).
    for sql in [
        "SELECT COUNT(*) FROM users WHERE name = 'prolific:leaver01'",
        "SELECT COUNT(*) FROM crowd_ids WHERE external_id = 'leaver01'",
    ] {
        assert_eq!(count(s, sql).await, 0, "{sql}");
    }
    assert_eq!(
        state_of(s, id, &leaver).await.status,
        StatusCode::UNAUTHORIZED
    );
}
