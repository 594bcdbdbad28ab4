//! One build of the report per scope and data version: exports and dashboards asked for
//! together share it, an answer makes the next request build again, and the dashboard shows
//! the last build at once (saying so) while the next is made.

use crate::common::client::*;
use axum::http::StatusCode;
use std::time::Duration;

async fn answer(env: &Env, study: domain::ids::StudyId, cookie: &str, n: usize) {
    let st = parse(&state_of(&env.state, study, cookie).await);
    let pos = st["step"]["Item"]["position"].as_i64().unwrap();
    let body = submit_body(study, pos, &format!("a-{n}"), label("positive"));
    parse(&post_json(&env.state, "submit_answer", &body, Some(cookie)).await);
}

/// A study of the demo's SST-2 with one answer of worker w1: the environment, the study,
/// the worker's and rita's (a researcher's) cookies.
async fn one_answer() -> (Env, domain::ids::StudyId, String, String) {
    let env = env().await;
    let study = new_study(&env.state, "demo-SST-2", &[0], 3).await;
    let worker = arrive(&env.state, study, "w1").await;
    answer(&env, study, &worker, 0).await;
    let rita = login(&env.state, "rita", "rita-password").await;
    (env, study, worker, rita)
}

/// The turn of builds, held by the caller: a build asked for meanwhile takes as long.
async fn builds_held(env: &Env) -> tokio::sync::OwnedSemaphorePermit {
    let turn = env.state.limiter.heavy_turn(store::heavy::Kind::Build);
    turn.await.unwrap()
}

fn builds(env: &Env) -> u64 {
    env.state.reports.builds()
}

#[tokio::test]
async fn exports_and_dashboards_share_one_build_per_data_version() {
    let (env, study, worker, rita) = one_answer().await;
    let scope = format!("studies={study}");

    // Every file made from the report, and the dashboard, asked for at once: one build.
    let files = [
        "scores.json",
        "scores.csv",
        "scores.md",
        "pay.csv",
        "bundle.tar",
    ];
    let before = builds(&env);
    let mut asked = Vec::new();
    for f in files {
        let (s, path, c) = (
            env.state.clone(),
            format!("/export/{f}?{scope}"),
            rita.clone(),
        );
        asked.push(tokio::spawn(async move { get(&s, &path, Some(&c)).await }));
    }
    let (s, c, q) = (env.state.clone(), rita.clone(), scope.clone());
    let page = tokio::spawn(async move { form(&s, "dashboard", &q, Some(&c)).await });
    for a in asked {
        let r = a.await.unwrap();
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let page = page.await.unwrap();
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(builds(&env), before + 1);

    // Nothing changed: asked again, nothing is built.
    let first = get(
        &env.state,
        &format!("/export/scores.json?{scope}"),
        Some(&rita),
    )
    .await;
    assert_eq!(builds(&env), before + 1);

    // An answer changes the data: the next export is built anew and has it.
    answer(&env, study, &worker, 1).await;
    let second = get(
        &env.state,
        &format!("/export/scores.json?{scope}"),
        Some(&rita),
    )
    .await;
    assert_eq!(builds(&env), before + 2);
    assert_ne!(first.body, second.body);
    let fresh = store::report::Built::of(
        &env.state.pool,
        &store::report::Scope {
            studies: vec![study],
            synthetic: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(
        second.body,
        store::export::scores_json(&fresh.report).unwrap()
    );

    // Another answer, and a build that takes long (the turn of builds held here): the
    // dashboard answers after a moment with the last build and says so, while a new build
    // waits in the background; then it shows the new one, saying nothing.
    answer(&env, study, &worker, 2).await;
    let turn = builds_held(&env).await;
    let behind = form(&env.state, "dashboard", &scope, Some(&rita)).await;
    drop(turn);
    assert_eq!(behind.status, StatusCode::OK, "{}", behind.body);
    assert!(
        behind.body.contains("a new build is under way"),
        "{}",
        behind.body
    );
    let mut current = behind;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        current = form(&env.state, "dashboard", &scope, Some(&rita)).await;
        if !current.body.contains("a new build is under way") {
            break;
        }
    }
    assert!(!current.body.contains("a new build is under way"));
    assert_eq!(builds(&env), before + 3);
    assert_eq!(env.state.reports.kept(), 1);

    // A build of a small study takes milliseconds: after an answer the dashboard waits for it
    // and shows it.
    answer(&env, study, &worker, 3).await;
    let waited = form(&env.state, "dashboard", &scope, Some(&rita)).await;
    assert!(!waited.body.contains("a new build is under way"));
    assert_eq!(builds(&env), before + 4);

    // A build still current is kept a while; an unused one is let go.
    let v = env.state.reports.versions(&env.state.pool).await;
    assert!(!env.state.reports.sweep(Duration::from_secs(300), &v));
    assert_eq!(env.state.reports.kept(), 1);
    assert!(env.state.reports.sweep(Duration::ZERO, &v));
    assert_eq!(env.state.reports.kept(), 0);
}

/// A request dropped while its build waits for the turn of builds (a reload, a closed tab):
/// the build goes on without it and is kept, and the next request takes it instead of
/// building beside it (before, the next request built while the dropped one's build, already
/// on its thread, still held its memory).
#[tokio::test]
async fn a_build_goes_on_when_its_request_is_dropped_and_the_next_request_takes_it() {
    let (env, study, _, rita) = one_answer().await;
    let path = format!("/export/scores.json?studies={study}");
    let before = builds(&env);
    let turn = builds_held(&env).await;
    let (s, p, c) = (env.state.clone(), path.clone(), rita.clone());
    let asked = tokio::spawn(async move { get(&s, &p, Some(&c)).await });
    // Long enough for the request to reach its build (milliseconds in process).
    tokio::time::sleep(Duration::from_millis(500)).await;
    asked.abort();
    assert!(
        matches!(asked.await, Err(e) if e.is_cancelled()),
        "the request waited for the turn"
    );
    drop(turn);
    for _ in 0..200 {
        if builds(&env) > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(builds(&env), before + 1, "the build went on alone");
    let r = get(&env.state, &path, Some(&rita)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(builds(&env), before + 1, "the next request took it");
}

#[tokio::test]
async fn every_table_the_report_reads_moves_the_data_version_of_its_study_only() {
    let env = env().await;
    let pool = &env.state.pool;
    let version = |scope: Vec<domain::ids::StudyId>| async move {
        store::report::version(pool, &scope).await.unwrap()
    };
    let all0 = version(vec![]).await;
    let study = new_study(&env.state, "demo-SST-2", &[0], 3).await;
    let other = new_study(&env.state, "demo-SST-2", &[0], 3).await;
    let all1 = version(vec![]).await;
    assert!(all1 > all0, "new studies");
    let (v1, o1) = (version(vec![study]).await, version(vec![other]).await);
    let worker = arrive(&env.state, study, "w1").await;
    let v2 = version(vec![study]).await;
    assert!(v2 > v1, "an arrival");
    answer(&env, study, &worker, 0).await;
    let v3 = version(vec![study]).await;
    assert!(v3 > v2, "an answer");
    assert_eq!(
        version(vec![other]).await,
        o1,
        "the other study's data did not move"
    );
    assert!(version(vec![]).await > all1, "every study's did");
    assert!(version(vec![study, other]).await >= v3.max(o1));
    // Pruning the log of changes (PostgreSQL) leaves every version as it was.
    let all = version(vec![]).await;
    store::report::prune_versions(pool).await.unwrap();
    assert_eq!(
        (version(vec![study]).await, version(vec![other]).await),
        (v3, o1)
    );
    assert_eq!(version(vec![]).await, all);
    // A session, or a running evaluation's progress, is not the report's data.
    sqlx::query("DELETE FROM sessions")
        .execute(pool)
        .await
        .unwrap();
    assert_eq!(version(vec![study]).await, v3);
    // Deleting a study moves every study's version up, never down.
    let all2 = version(vec![]).await;
    for sql in [
        "DELETE FROM study_configs WHERE study_id = $1",
        "DELETE FROM studies WHERE id = $1",
    ] {
        sqlx::query(sql).bind(other).execute(pool).await.unwrap();
    }
    assert!(version(vec![]).await > all2);
}

/// A study's kept report is not built again while another study's crowd answers: its
/// dashboard and pay sheet cost what they cost on a quiet server.
#[tokio::test]
async fn answers_to_another_study_leave_a_studys_kept_build_as_it_was() {
    let (env, study, _, rita) = one_answer().await;
    let other = new_study(&env.state, "demo-SST-2", &[0], 3).await;
    let path = format!("/export/pay.csv?studies={study}");
    assert_eq!(
        get(&env.state, &path, Some(&rita)).await.status,
        StatusCode::OK
    );
    let before = builds(&env);
    for i in 0..3 {
        let w = arrive(&env.state, other, &format!("o{i}")).await;
        answer(&env, other, &w, i).await;
        let r = get(&env.state, &path, Some(&rita)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    assert_eq!(builds(&env), before, "no build for another study's answers");
    let dashboard = form(
        &env.state,
        "dashboard",
        &format!("studies={study}"),
        Some(&rita),
    )
    .await;
    assert!(!dashboard.body.contains("a new build is under way"));
    assert_eq!(builds(&env), before);
    // Its own answer does make it build again.
    let w = arrive(&env.state, study, "w2").await;
    answer(&env, study, &w, 9).await;
    assert_eq!(
        get(&env.state, &path, Some(&rita)).await.status,
        StatusCode::OK
    );
    assert_eq!(builds(&env), before + 1);
}

/// A bundle's row files leave before its report is built: with the turn of builds held (a
/// build that takes minutes on a large study), the archive's configuration and rows arrive
/// at once, and the files made from the report follow once it is built.
#[tokio::test]
async fn a_bundles_rows_leave_before_its_report_is_built() {
    use axum::body::Body;
    use axum::http::{header, Request};
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let (env, study, _, rita) = one_answer().await;
    let has = |b: &[u8], what: &str| b.windows(what.len()).any(|w| w == what.as_bytes());
    let before = builds(&env);
    let turn = builds_held(&env).await;
    let req = Request::get(format!("/export/bundle.tar?studies={study}"))
        .header(header::COOKIE, &rita)
        .body(Body::empty())
        .unwrap();
    let app = server::router::app(env.state.clone());
    let wait = Duration::from_secs(5);
    let res = tokio::time::timeout(wait, app.oneshot(req))
        .await
        .expect("the bundle's headers within 5 s")
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let mut body = res.into_body();
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    while !has(&got, "clues-lab-bundle/annotations.csv") {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .expect("the bundle's rows within 5 s, before its report is built")
            .expect("the archive went on")
            .unwrap();
        got.extend(frame.into_data().unwrap_or_default());
    }
    assert!(has(&got, "clues-lab-bundle/config.json"));
    assert!(!has(&got, "clues-lab-bundle/scores.json"));
    assert_eq!(builds(&env), before, "the report is not built yet");
    drop(turn);
    got.extend(body.collect().await.unwrap().to_bytes());
    assert!(has(&got, "clues-lab-bundle/scores.json"));
    assert!(
        has(&got, "\"rows_match_report\": true"),
        "a quiet study's files agree"
    );
    assert_eq!(builds(&env), before + 1);
}
