//! The page's signals over the API: stored with the answer, exported, refused when inconsistent
//! (nothing stored), read against the server's clock, named when absent; the levels in the
//! report and the pay sheet; and every strategy's sessions on a real server, rated as the rules
//! promise (issues 40 and 54).
use crate::common;

use app::ssr::state::AppState;
use axum::http::StatusCode;
use common::client::{
    arrive, env, get, label, login, new_study, parse, post_json, skip_to_the_end, state_of,
    submit_body,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;
use store::clock::Clock;

fn signals(away_ms: u64, copy_chars: u32) -> Value {
    json!({"away_count": u32::from(away_ms > 0), "away_ms": away_ms, "copy_count": u32::from(copy_chars > 0),
        "copy_chars": copy_chars, "copy_from_item": u32::from(copy_chars > 0), "paste_count": 0,
        "paste_chars": 0, "first_input_ms": 900, "active_ms": 8_000, "wall_ms": 8_000 + away_ms,
        "hidden_ms": away_ms, "away_after_copy_ms": if copy_chars > 0 { away_ms } else { 0 },
        "since_return_ms": if away_ms > 0 { Some(6_000) } else { None }})
}

/// Sends `body` after as much time on the server's (manual) clock as its page claims (at least
/// a reader's 8 s), and a little more: the answer as a page in a browser sends it.
async fn after_its_time(s: &AppState, body: &Value, cookie: &str) -> common::client::Resp {
    let wall = body["signals"]["wall_ms"].as_u64().unwrap_or(0).max(8_000);
    s.clock.advance(Duration::from_millis(wall + 150));
    post_json(s, "submit_answer", body, Some(cookie)).await
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

/// Each crowd worker's level and reasons from the study's pay sheet, as the researcher reads it.
async fn pay_levels(
    s: &AppState,
    study: domain::ids::StudyId,
    cookie: &str,
) -> HashMap<String, (String, String)> {
    let pay = get(s, &format!("/export/pay.csv?studies={study}"), Some(cookie)).await;
    assert_eq!(pay.status, StatusCode::OK, "{}", pay.body);
    let ids = column(&pay.body, "crowd_worker_id");
    let levels = column(&pay.body, "authenticity");
    let why = column(&pay.body, "authenticity_reasons");
    ids.into_iter().zip(levels.into_iter().zip(why)).collect()
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
    let mut env = env().await;
    env.state.clock = Clock::manual(store::auth::now_ms());
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
        let ack = parse(&after_its_time(s, &body, &w).await);
        pos = ack["next"]["Item"]["position"].as_i64().unwrap();
    }
    skip_to_the_end(s, study, &w).await;
    // An honest worker with a glance away, and one whose page sent no signals.
    for (pid, away) in [("w-honest", Some(3_000)), ("w-plain", None)] {
        let w = arrive(s, study, pid).await;
        let st = parse(&state_of(s, study, &w).await);
        let pos = st["step"]["Item"]["position"].as_i64().unwrap();
        let mut body = submit_body(study, pos, "h0", label("negative"));
        match away {
            Some(away) => body["signals"] = signals(away, 0),
            None => drop(body.as_object_mut().unwrap().remove("signals")),
        }
        parse(&after_its_time(s, &body, &w).await);
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
    // The new columns: time hidden, away after a copy, and the server's interval, which each
    // page's record fits (the answer without a record has none).
    assert_eq!(
        column(&csv.body, "away_after_copy_ms")
            .iter()
            .filter(|c| **c == "25000")
            .count(),
        3
    );
    let fits = column(&csv.body, "fits_server_clock");
    assert!(fits.iter().all(|f| f == "true" || f.is_empty()), "{fits:?}");
    assert_eq!(fits.iter().filter(|f| f.is_empty()).count(), 1);
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
    let levels = pay_levels(s, study, &rita).await;
    let level = |pid: &str| levels[pid].0.as_str();
    assert_eq!(level("w-assisted"), "low", "{levels:?}");
    assert_eq!(level("w-honest"), "high", "{levels:?}");
    // One answer of many without the page's record is no signal.
    assert_eq!(level("w-plain"), "high", "{levels:?}");
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
    assert!(md.body.contains("The server is the clock"));
}

/// The scripts of issue 54 over the API: clean records claiming 6-40 s on answers posted
/// milliseconds after each showing, and answers without any record at a human pace. Each is
/// named for what it is, and rated low; the honest worker beside them stays high.
#[tokio::test]
async fn scripts_are_read_against_the_servers_clock_and_named_without_the_pages_record() {
    let mut env = env().await;
    env.state.clock = Clock::manual(store::auth::now_ms());
    let s = &env.state;
    let study = new_study(s, "demo-SST-2", &[0], 3).await;
    let run = |pid: &'static str, send: fn(&mut Value) -> u64| async move {
        let w = arrive(s, study, pid).await;
        let mut st = parse(&state_of(s, study, &w).await)["step"].clone();
        let mut n = 0;
        while let Some(pos) = st["Item"]["position"].as_i64() {
            let mut body = submit_body(study, pos, &format!("{pid}-{n}"), label("positive"));
            let wait = send(&mut body);
            s.clock.advance(Duration::from_millis(wait));
            st = parse(&post_json(s, "submit_answer", &body, Some(&w)).await)["next"].clone();
            n += 1;
        }
    };
    // A forging script: 12 s of clean reading claimed, the answer 80 ms after the showing.
    run("forger", |b| {
        b["signals"] = signals(0, 0);
        b["signals"]["wall_ms"] = json!(12_000);
        b["signals"]["active_ms"] = json!(12_000);
        80
    })
    .await;
    // A script without the page: no record, 20 s an item.
    run("no-page", |b| {
        b.as_object_mut().unwrap().remove("signals");
        20_000
    })
    .await;
    // The page of an honest reader: 14 s of reading, the answer 200 ms later on the server.
    run("reader", |b| {
        b["signals"] = signals(0, 0);
        b["signals"]["wall_ms"] = json!(14_000);
        b["signals"]["active_ms"] = json!(14_000);
        14_200
    })
    .await;
    let rita = login(s, "rita", "rita-password").await;
    let levels = pay_levels(s, study, &rita).await;
    let (forger, no_page) = (&levels["forger"], &levels["no-page"]);
    assert_eq!(forger.0, "low", "{levels:?}");
    assert!(forger.1.contains("inconsistent with the server's clock"));
    assert!(forger.1.contains("faster than reading the item"));
    assert_eq!(no_page.0, "low", "{levels:?}");
    assert!(no_page.1.starts_with("answers not sent by the study page"));
    assert_eq!(levels["reader"].0, "high", "{levels:?}");
    // Each answer is marked in the export: the forger's do not fit the server's clock.
    let csv = get(
        s,
        &format!("/export/annotations.csv?studies={study}"),
        Some(&rita),
    )
    .await;
    let workers = column(&csv.body, "worker");
    let fits = column(&csv.body, "fits_server_clock");
    for (w, f) in workers.iter().zip(&fits) {
        let expected = match w.rsplit(':').next().unwrap() {
            "forger" => "false",
            "no-page" => "",
            _ => "true",
        };
        assert_eq!(f, expected, "{w}");
    }
}

/// A study of `reviews` SST-2 reviews for the load client's sessions, with `rita` to read it;
/// the pool and the study (the directory holds the database).
async fn sessions_study(
    dir: &std::path::Path,
    reviews: usize,
) -> (sqlx::AnyPool, domain::ids::StudyId) {
    use domain::people::Role;
    let data = write_reviews(dir, reviews);
    let url = common::db_url(&dir.join("authenticity.db"));
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
    (pool, study)
}

/// `sessions` sessions of each of `strategies`, in that order, over HTTP (the benchmark's code).
async fn sessions_over_the_api(
    pool: sqlx::AnyPool,
    study: domain::ids::StudyId,
    sessions: usize,
    strategies: Vec<domain::authenticity::simulate::Strategy>,
) -> server::load::authenticity::Rates {
    let opts = server::load::authenticity::Options {
        study,
        strategies: strategies.into_iter().map(|s| (s, sessions)).collect(),
        user: "rita".into(),
        password: "rita-password".into(),
    };
    let rates = server::load::authenticity::run(pool, opts).await.unwrap();
    server::load::authenticity::print(&rates);
    assert!(rates.errors.is_empty(), "{:?}", rates.errors);
    rates
}

/// `--strategies` names a crowd: each name with `--sessions` sessions or its own `=N`, in the
/// order given; an unknown name, a count that is not a number and a name given twice are refused.
#[test]
fn a_crowd_is_named_with_its_share_of_each_strategy() {
    use domain::authenticity::simulate::{Assisted, Honest, Strategy};
    use server::load::authenticity::strategies_named;
    let names = |s: &str| s.split(',').map(String::from).collect::<Vec<_>>();
    assert_eq!(
        strategies_named(&names("machine-copying=12,honest-typical"), 28),
        Ok(vec![
            (Strategy::Assisted(Assisted::MachineCopying), 12),
            (Strategy::Honest(Honest::Typical), 28)
        ])
    );
    assert_eq!(strategies_named(&[], 3).unwrap().len(), Strategy::ALL.len());
    for (bad, says) in [
        ("honest-typical=many", "whole number"),
        ("honest-tipical", "no strategy \"honest-tipical\""),
        ("honest-typical=2,honest-typical=3", "named twice"),
    ] {
        let err = strategies_named(&names(bad), 1).unwrap_err();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// Every strategy's sessions over HTTP against the router on a loopback socket with a simulated
/// clock (the benchmark's code, `clues-lab load authenticity`, at a small size; the sessions
/// are seeded): honest ones high, each detectable assisted strategy low.
#[tokio::test(flavor = "multi_thread")]
async fn every_strategy_over_the_api_is_rated_as_the_rules_promise() {
    let dir = tempfile::tempdir().unwrap();
    let (pool, study) = sessions_study(dir.path(), 30).await;
    let all = domain::authenticity::simulate::Strategy::ALL.to_vec();
    let rates = sessions_over_the_api(pool, study, 12, all).await;
    assert_eq!(rates.no_machine, None);
    let honest_low: usize = rates
        .rows
        .iter()
        .filter(|r| r.strategy.is_honest())
        .map(|r| r.low)
        .sum();
    assert!(honest_low <= 1, "{rates:?}");
    for row in &rates.rows {
        assert_eq!(row.sessions, 12, "{row:?}");
        let detectable = !row.strategy.is_honest() && row.strategy.undetectable().is_none();
        // Machine copying needs more items the system got wrong than 30 reviews give.
        let machine = row.strategy.name() == "machine-copying";
        // 11 of 12, or where the simulation states less, its share less a session of noise.
        let least = match row.strategy.below_goal(30) {
            Some((_, share)) => (share * 12.0).floor() as usize - 1,
            None => 11,
        };
        if detectable && !machine {
            assert!(row.low >= least, "{row:?}");
        }
    }
}

/// Copiers of one system who are half of a task's workers and finish first, over HTTP: the
/// reference they are compared with is the other humans' lower quartile, spread over all of
/// them, so the copiers stay low and the honest high. (With the mean of the first 20 finished,
/// the copiers were the reference, and none of them was low.)
#[tokio::test(flavor = "multi_thread")]
async fn copiers_who_are_half_the_workers_and_finish_first_are_found() {
    use domain::authenticity::simulate::{Assisted, Honest, Strategy};
    let dir = tempfile::tempdir().unwrap();
    let (pool, study) = sessions_study(dir.path(), 200).await;
    let crowd = vec![
        Strategy::Assisted(Assisted::MachineCopying),
        Strategy::Honest(Honest::Typical),
    ];
    let rates = sessions_over_the_api(pool, study, 12, crowd).await;
    assert_eq!(rates.no_machine, None);
    let (copiers, honest) = (&rates.rows[0], &rates.rows[1]);
    assert!(copiers.low >= 11, "{copiers:?}");
    assert_eq!(honest.low, 0, "{honest:?}");
}

/// A farm of paced forging scripts answering from one source, as many as the honest workers,
/// with no system run in the study: found by the wrong answers they share (on 200 items, the
/// source's 30 or so errors), the honest untouched. Each script alone sends what the page
/// sends, when the page would send it.
#[tokio::test(flavor = "multi_thread")]
async fn a_farm_of_paced_scripts_is_found_by_its_shared_errors_over_the_api() {
    use domain::authenticity::simulate::{Assisted, Honest, Strategy};
    let dir = tempfile::tempdir().unwrap();
    let (pool, study) = sessions_study(dir.path(), 200).await;
    let crowd = vec![
        Strategy::Honest(Honest::Typical),
        Strategy::Assisted(Assisted::ScriptForgedPaced),
    ];
    let rates = sessions_over_the_api(pool, study, 6, crowd).await;
    let (honest, farm) = (&rates.rows[0], &rates.rows[1]);
    assert_eq!(farm.low, 6, "{farm:?}");
    assert_eq!((honest.low, honest.mixed), (0, 0), "{honest:?}");
}

/// A worker who repeats a system's answers, its errors too, while the others read for
/// themselves: strong machine agreement, low on its own (their one assisted-looking item is
/// listed beside it).
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
    let s = &AppState {
        clock: Clock::manual(store::auth::now_ms()),
        ..common::app_state(pool)
    };
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
            st = parse(&after_its_time(s, &body, &w).await)["next"].clone();
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
    let levels = pay_levels(s, study, &rita).await;
    let copier = &levels["copier"];
    assert_eq!(copier.0, "low", "{levels:?}");
    assert!(copier.1.contains("strong machine agreement"), "{levels:?}");
    assert!(copier.1.contains("1 of 30 items look assisted"));
    for pid in ["reader-1", "reader-2", "reader-3"] {
        assert_eq!(levels[pid].0, "high", "{levels:?}");
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
