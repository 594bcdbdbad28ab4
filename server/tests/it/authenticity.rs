//! Issue 40 over the API: the page's signals stored with the answer, exported, refused when
//! inconsistent (nothing stored) and optional; the levels in the report and the pay sheet; and
//! honest and assisted sessions on a real server, flagged at the rates the rules promise.
use crate::common;

use axum::http::StatusCode;
use common::client::{
    arrive, env, get, label, login, new_study, parse, post_json, skip_to_the_end, state_of,
    submit_body,
};
use common::spawned::Spawned;
use serde_json::{json, Value};

fn signals(away_ms: u64, copy_chars: u32) -> Value {
    json!({"away_count": u32::from(away_ms > 0), "away_ms": away_ms, "copy_count": u32::from(copy_chars > 0),
        "copy_chars": copy_chars, "copy_from_item": u32::from(copy_chars > 0), "paste_count": 0,
        "paste_chars": 0, "first_input_ms": 900, "active_ms": 8_000, "wall_ms": 8_000 + away_ms})
}

/// A folder holding an SST-2-shaped task in the CLUES layout: `n` test reviews of 25 words
/// (`review <i>: ...`, id `i`, alternately positive and negative) and a training file (the
/// demo's test set is too small for a session's share of assisted items to show).
fn write_reviews(root: &std::path::Path, n: usize) -> std::path::PathBuf {
    let data = root.join("data");
    std::fs::create_dir_all(data.join("SST-2")).unwrap();
    let line = |i: usize| {
        let label = ["positive", "negative"][i % 2];
        let words = ["a", "film", "that", "moves", "slowly", "but", "stays"]
            .iter()
            .cycle();
        let text: Vec<&str> = words.take(24).copied().collect();
        let context = format!("review {i}: {}", text.join(" "));
        json!({"id": i, "context": context, "question": "positive or negative?", "answer": [label]})
            .to_string()
            + "\n"
    };
    let file = |name: &str, ids: std::ops::Range<usize>| {
        std::fs::write(
            data.join("SST-2").join(name),
            ids.map(line).collect::<String>(),
        )
        .unwrap()
    };
    file("sst_test.jsonl", 0..n);
    file("sst_train_10_1.jsonl", 100..110);
    data
}

/// The CSV cells of `column` in the lines of `csv`.
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines().map(server::load::authenticity::cells);
    let header = lines.next().unwrap();
    let at = header.iter().position(|h| h == name).unwrap();
    lines.map(|l| l[at].clone()).collect()
}

#[tokio::test]
async fn signals_are_stored_with_the_answer_exported_and_read_into_a_level() {
    let env = env().await;
    let s = &env.state;
    let study = new_study(s, "demo-SST-2", &[0], 3).await;
    let w = arrive(s, study, "w-assisted").await;
    let st = parse(&state_of(s, study, &w).await);
    let pos = st["step"]["Item"]["position"].as_i64().unwrap();
    // Inconsistent signals: a clear 4xx naming them, and the item stays open.
    let mut body = submit_body(study, pos, "c0", label("positive"));
    body["signals"] = json!({"away_count": 1, "away_ms": 60_000, "copy_count": 0, "copy_chars": 0,
        "copy_from_item": 0, "paste_count": 0, "paste_chars": 0, "first_input_ms": null,
        "active_ms": 1_000, "wall_ms": 2_000});
    let r = post_json(s, "submit_answer", &body, Some(&w)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(
        r.body.contains("signals are not consistent: the time away"),
        "{}",
        r.body
    );
    let again = parse(&state_of(s, study, &w).await);
    assert_eq!(again["step"]["Item"]["position"].as_i64(), Some(pos));
    // Three items taken elsewhere (a sentence copied, 25 s away), then skips.
    let mut pos = pos;
    for n in 0..3 {
        let mut body = submit_body(study, pos, &format!("c{n}"), label("positive"));
        body["signals"] = signals(25_000, 120);
        let ack = parse(&post_json(s, "submit_answer", &body, Some(&w)).await);
        pos = ack["next"]["Item"]["position"].as_i64().unwrap();
    }
    skip_to_the_end(s, study, &w).await;
    // An honest worker with a glance away, and one whose page sent no signals.
    for (pid, away) in [("w-honest", Some(3_000)), ("w-plain", None)] {
        let w = arrive(s, study, pid).await;
        let st = parse(&state_of(s, study, &w).await);
        let pos = st["step"]["Item"]["position"].as_i64().unwrap();
        let mut body = submit_body(study, pos, "h0", label("negative"));
        if let Some(away) = away {
            body["signals"] = signals(away, 0);
        }
        parse(&post_json(s, "submit_answer", &body, Some(&w)).await);
        skip_to_the_end(s, study, &w).await;
    }
    let rita = login(s, "rita", "rita-password").await;
    let csv = get(
        s,
        &format!("/export/annotations.csv?studies={study}"),
        Some(&rita),
    )
    .await;
    assert_eq!(csv.status, StatusCode::OK);
    let away = column(&csv.body, "away_ms");
    assert_eq!(
        away.iter().filter(|a| **a == "25000").count(),
        3,
        "{}",
        csv.body
    );
    assert_eq!(away.iter().filter(|a| **a == "3000").count(), 1);
    assert_eq!(
        column(&csv.body, "copy_from_item")
            .iter()
            .filter(|c| **c == "1")
            .count(),
        3
    );
    let jsonl = get(
        s,
        &format!("/export/annotations.jsonl?studies={study}"),
        Some(&rita),
    )
    .await;
    let rows: Vec<Value> = jsonl
        .body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let copied: Vec<&Value> = rows.iter().filter(|r| r["copy_chars"] == 120).collect();
    assert_eq!(copied.len(), 3);
    assert!(copied
        .iter()
        .all(|r| r["worker"].as_str().unwrap().contains("w-assisted")));
    // The pay sheet shows the level beside the pay; nobody's pay changes.
    let pay = get(s, &format!("/export/pay.csv?studies={study}"), Some(&rita)).await;
    let ids = column(&pay.body, "crowd_worker_id");
    let levels = column(&pay.body, "authenticity");
    let level = |pid: &str| levels[ids.iter().position(|i| i == pid).unwrap()].as_str();
    assert_eq!(level("w-assisted"), "low", "{}", pay.body);
    assert_ne!(level("w-honest"), "low");
    assert_ne!(level("w-plain"), "low");
    let md = get(
        s,
        &format!("/export/scores.md?studies={study}"),
        Some(&rita),
    )
    .await;
    assert!(md
        .body
        .contains("Human test S1 (official scoring), without the annotators of low authenticity"));
    assert!(md.body.contains("low authenticity (authentic view)"));
    assert!(md.body.contains("no page signals were recorded"));
}

/// 40 honest and 40 assisted sessions over HTTP on a spawned server (the benchmark's code,
/// `clues-lab load authenticity`, at a tenth of its size; the sessions are seeded).
#[tokio::test(flavor = "multi_thread")]
async fn simulated_sessions_over_the_api_are_flagged_at_the_promised_rates() {
    use domain::people::Role;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("authenticity.db");
    let data = write_reviews(dir.path(), 30);
    let url = common::db_url(&db);
    let pool = store::db::cli::connect(&url).await.unwrap();
    let (ok, out) = common::clues(&url, &["import", "clues", data.to_str().unwrap()]);
    assert!(ok, "{out}");
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let config = domain::study::StudyConfig {
        scenarios: vec![0],
        annotators: 1_000,
        open: true,
        ..Default::default()
    };
    let study = store::study::create(&pool, None, "SST-2", "sessions", config)
        .await
        .unwrap();
    pool.close().await;
    let server = Spawned::start(&db, &["--new-workers-per-address", "1000000"]);
    let base = server.base.clone();
    let rates = tokio::task::spawn_blocking(move || {
        let c = server::load::client::Client::new(&base);
        let cookie = c.login("rita", "rita-password").unwrap();
        server::load::authenticity::run(&base, study.0, (40, 40), 4, "t-", &cookie).unwrap()
    })
    .await
    .unwrap();
    assert!(rates.errors.is_empty(), "{:?}", rates.errors);
    assert_eq!((rates.honest.0, rates.assisted.0), (40, 40));
    assert!(rates.honest.1 <= 1, "{rates:?}");
    assert!(rates.assisted.1 >= 38, "{rates:?}");
    server.kill9();
}

/// A worker who repeats a system's answers, its errors too, while the others read for
/// themselves: the machine-agreement signal, which with one assisted-looking item lowers the
/// level to low (the same item alone gives mixed).
#[tokio::test]
async fn a_worker_who_repeats_a_systems_errors_is_found_by_machine_agreement() {
    use domain::people::Role;
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("agree.db"));
    let pool = store::db::cli::connect(&url).await.unwrap();
    let data = write_reviews(dir.path(), 30);
    let (ok, out) = common::clues(&url, &["import", "clues", data.to_str().unwrap()]);
    assert!(ok, "{out}");
    common::add_users(&pool, &[("rita", Role::Researcher)]).await;
    let s = &common::app_state(pool);
    let study = new_study(s, "SST-2", &[0], 10).await;
    let gold = |i: usize| ["positive", "negative"][i % 2];
    // The system: wrong on every third review.
    let system = |i: usize| {
        if i.is_multiple_of(3) {
            gold(i + 1)
        } else {
            gold(i)
        }
    };
    let rita = login(s, "rita", "rita-password").await;
    let lines: String = (0..30)
        .map(|i| format!("{}\n", json!({"id": i.to_string(), "answer": [system(i)]})))
        .collect();
    let req = axum::http::Request::post("/import/predictions?task=SST-2&system=llm&k=0&split=0")
        .header("cookie", rita.clone())
        .body(axum::body::Body::from(lines))
        .unwrap();
    let r = common::client::send(s, req).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Three honest readers (each wrong once, on an item of their own), then the copier.
    let answer_all = |pid: &'static str, pick: Box<dyn Fn(usize) -> &'static str>| async move {
        let w = arrive(s, study, pid).await;
        let mut st = parse(&state_of(s, study, &w).await)["step"].clone();
        let mut n = 0;
        while let Some(pos) = st["Item"]["position"].as_i64() {
            let context = st["Item"]["context"]["text"].as_str().unwrap().to_string();
            let i: usize = context["review ".len()..]
                .split(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let mut body = submit_body(study, pos, &format!("{pid}-{pos}"), label(pick(i)));
            body["signals"] = if pid == "copier" && n == 0 {
                signals(25_000, 300)
            } else {
                signals(0, 0)
            };
            n += 1;
            st = parse(&post_json(s, "submit_answer", &body, Some(&w)).await)["next"].clone();
        }
    };
    for (pid, wrong) in [("reader-1", 1), ("reader-2", 2), ("reader-3", 4)] {
        answer_all(
            pid,
            Box::new(move |i| if i == wrong { gold(i + 1) } else { gold(i) }),
        )
        .await;
    }
    answer_all("copier", Box::new(system)).await;
    let pay = get(s, &format!("/export/pay.csv?studies={study}"), Some(&rita)).await;
    let ids = column(&pay.body, "crowd_worker_id");
    let (levels, why) = (
        column(&pay.body, "authenticity"),
        column(&pay.body, "authenticity_reasons"),
    );
    let of = |pid: &str| ids.iter().position(|i| i == pid).unwrap();
    assert_eq!(levels[of("copier")], "low", "{}", pay.body);
    assert!(
        why[of("copier")].contains("agrees with a system"),
        "{}",
        pay.body
    );
    assert!(why[of("copier")].contains("1 of 30 items look assisted"));
    for pid in ["reader-1", "reader-2", "reader-3"] {
        assert_eq!(levels[of(pid)], "high", "{}", pay.body);
    }
    let json = get(
        s,
        &format!("/export/scores.json?studies={study}"),
        Some(&rita),
    )
    .await;
    let report: Value = serde_json::from_str(&json.body).unwrap();
    let copier = report["annotators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["worker"].as_str().unwrap().ends_with("copier"))
        .unwrap();
    let m = &copier["authenticity"]["machine"];
    assert_eq!(
        (
            m["system"].as_str(),
            m["with_system"].as_f64(),
            m["system_wrong"].as_u64(),
            m["same_wrong"].as_u64()
        ),
        (Some("llm k=0 split=0"), Some(1.0), Some(10), Some(10))
    );
}
