//! The analysis plan and synthetic workers on both backends: a study's plan is frozen with its
//! hash when its first worker arrives (and only then), cannot change afterwards, and reaches
//! the report and the bundle, where its hash can be checked; `load fill`'s synthetic workers
//! are in no report or export unless asked for, and one that includes them says so.

use crate::common;

use axum::http::StatusCode;
use common::client::{arrive, env, get, login, new_study};
use domain::analysis_plan::{declare, AnalysisChoices, AnalysisPlan};
use domain::ids::StudyId;
use sha2::{Digest, Sha256};

async fn stored_plan(pool: &sqlx::AnyPool, study: StudyId) -> Option<(String, String, i64)> {
    sqlx::query_as("SELECT plan_json, sha256, frozen_at FROM analysis_plans WHERE study_id = $1")
        .bind(study)
        .fetch_optional(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_plan_is_frozen_when_the_first_worker_arrives() {
    let env = env().await;
    let pool = &env.state.pool;
    let id = new_study(&env.state, "demo-SST-2", &[0, 2, 4], 2).await;
    assert_eq!(
        stored_plan(pool, id).await,
        None,
        "no plan before any worker"
    );
    let before = store::auth::now_ms();
    arrive(&env.state, id, "first").await;
    let (json, sha, at) = stored_plan(pool, id)
        .await
        .expect("frozen at the first arrival");
    assert!(at >= before);
    // The exact text hashed, and what the study declared.
    assert_eq!(sha, hex(&Sha256::digest(json.as_bytes())));
    assert_eq!(sha, AnalysisPlan::sha256(&json));
    let study = store::study::load(pool, id).await.unwrap();
    let tests: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignment_items WHERE phase = 'test' AND assignment_id =
            (SELECT MIN(id) FROM assignments WHERE study_id = $1)",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .unwrap();
    let want = declare("demo-SST-2", &study.config, tests as usize);
    assert_eq!(json, want.canonical_json());
    assert_eq!(want.primary.as_deref(), Some("k=4 vs k=0"));
    // A second arrival leaves it as it was.
    arrive(&env.state, id, "second").await;
    assert_eq!(
        stored_plan(pool, id).await,
        Some((json.clone(), sha.clone(), at))
    );
    // Its level and primary comparison can no longer change.
    let changed = domain::study::StudyConfig {
        analysis: AnalysisChoices {
            alpha: 0.01,
            primary: Some((2, 0)),
        },
        ..study.config.clone()
    };
    let err = store::study::update(pool, None, id, "test study", changed)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("the analysis plan"), "{err}");
    // The report applies it and shows it with its hash.
    let r = store::report::load(pool, &[id]).await.unwrap().report();
    let plan = &r.plans[0];
    let frozen = plan.frozen.as_ref().unwrap();
    assert_eq!(
        (frozen.sha256.as_str(), frozen.json.as_str()),
        (sha.as_str(), json.as_str())
    );
    assert!(
        r.notes.iter().all(|n| !n.contains("exploratory")),
        "{:?}",
        r.notes
    );
    // The bundle holds the plan's exact text beside its hash.
    let cookie = login(&env.state, "rita", "rita-password").await;
    let bundle = get(
        &env.state,
        &format!("/export/bundle.tar?studies={id}"),
        Some(&cookie),
    )
    .await;
    assert_eq!(bundle.status, StatusCode::OK);
    let member = tar_member(bundle.body.as_bytes(), "analysis_plans.json");
    let plans: serde_json::Value = serde_json::from_str(&member).unwrap();
    let text = plans[0]["plan_json"].as_str().unwrap();
    assert_eq!(plans[0]["sha256"], sha.as_str());
    assert_eq!(hex(&Sha256::digest(text.as_bytes())), sha);
}

#[tokio::test]
async fn a_study_whose_data_began_before_plans_is_exploratory() {
    let env = env().await;
    let pool = &env.state.pool;
    let id = new_study(&env.state, "demo-SST-2", &[0, 2], 2).await;
    arrive(&env.state, id, "early").await;
    // As a database from before plans were frozen: the worker is there, the plan is not.
    sqlx::query("DELETE FROM analysis_plans")
        .execute(pool)
        .await
        .unwrap();
    let r = store::report::load(pool, &[id]).await.unwrap().report();
    assert!(r.plans[0].frozen.is_none());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("before an analysis plan was frozen")),
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn synthetic_workers_enter_no_report_unless_asked_for() {
    let env = env().await;
    let pool = &env.state.pool;
    let id = new_study(&env.state, "demo-SST-2", &[0], 3).await;
    let (workers, _) = store::study::fill(pool, id, 40, "s").await.unwrap();
    assert!(workers > 0);
    let marked: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM assignments WHERE synthetic = 1")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(marked as u64, workers);
    let plain = store::report::load(pool, &[id]).await.unwrap().report();
    assert!(plain.annotators.is_empty() && plain.all.main.is_empty());
    assert!(plain
        .notes
        .iter()
        .any(|n| n.contains("left out of every table")));
    let scope = store::report::Scope {
        studies: vec![id],
        synthetic: true,
    };
    let with = store::report::load_scope(pool, &scope)
        .await
        .unwrap()
        .report();
    assert_eq!(with.annotators.len() as u64, workers);
    assert_eq!(with.synthetic_workers as u64, workers);
    assert!(with
        .notes
        .iter()
        .any(|n| n.contains("includes") && n.contains("synthetic")));
    // The exports follow: none of their rows without asking, all of them, marked, with it.
    let cookie = login(&env.state, "rita", "rita-password").await;
    let csv = |q: &str| {
        let path = format!("/export/annotations.csv?studies={id}{q}");
        let state = env.state.clone();
        let cookie = cookie.clone();
        async move { get(&state, &path, Some(&cookie)).await.body }
    };
    let without = csv("").await;
    assert_eq!(without.lines().count(), 1, "{without}");
    let header = server::load::authenticity::cells(without.lines().next().unwrap());
    let at = header.iter().position(|c| c == "synthetic").unwrap();
    let asked = csv("&synthetic=1").await;
    assert!(asked.lines().count() > 1);
    assert!(asked
        .lines()
        .skip(1)
        .all(|l| server::load::authenticity::cells(l)[at] == "true"));
    let md = get(
        &env.state,
        &format!("/export/scores.md?studies={id}&synthetic=1"),
        Some(&cookie),
    )
    .await;
    assert!(md.body.contains("synthetic workers"), "{}", md.body);
    // A second study of the same database, and this one again, get workers of their own (the
    // names were the tag's only, and a second fill failed on users.name).
    let other = new_study(&env.state, "demo-SQuAD-v2", &[0], 3).await;
    let (more, _) = store::study::fill(pool, other, 8, "s").await.unwrap();
    let (again, _) = store::study::fill(pool, id, 8, "s").await.unwrap();
    assert!(more > 0 && again > 0);
    let marked: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM assignments WHERE synthetic = 1")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(marked as u64, workers + more + again);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One member of a tar archive (`<folder>/<name>`), as text.
fn tar_member(archive: &[u8], name: &str) -> String {
    let mut pos = 0;
    while pos + 512 <= archive.len() {
        let header = &archive[pos..pos + 512];
        if header.iter().all(|b| *b == 0) {
            break;
        }
        let path = String::from_utf8_lossy(&header[..100])
            .trim_end_matches('\0')
            .to_string();
        let size_text = String::from_utf8_lossy(&header[124..136]);
        let size =
            usize::from_str_radix(size_text.trim_matches(|c: char| c == '\0' || c == ' '), 8)
                .unwrap();
        let start = pos + 512;
        if path.ends_with(&format!("/{name}")) {
            return String::from_utf8(archive[start..start + size].to_vec()).unwrap();
        }
        pos = start + size.div_ceil(512) * 512;
    }
    panic!("no {name} in the archive");
}
