//! `icl --concurrency`: against a scripted completions server whose replies come back out of
//! order (each after a delay of its own), the calls are stored in the test set's order; a
//! server error mid-run leaves a prefix of the items stored, and the same command goes on
//! from there to the answers a run with one call at a time gives.
use crate::common;

use common::scripted_llm::{reply_to, scripted};
use std::sync::atomic::Ordering;

/// The stored calls of the only run: (example, prompt, reply), in the order they were stored
/// where the database keeps one (SQLite's rowid), else by example.
async fn stored(pool: &sqlx::AnyPool, sqlite: bool) -> Vec<(i64, String, String)> {
    let order = if sqlite { "rowid" } else { "example_id" };
    sqlx::query_as(&format!(
        "SELECT example_id, prompt, reply FROM machine_calls ORDER BY {order}"
    ))
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn replies_are_stored_in_the_items_order_and_a_cut_off_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::db_url(&dir.path().join("icl.db"));
    let sqlite = url.starts_with("sqlite:");
    let pool = store::db::cli::connect(&url).await.unwrap();
    server::demo::ensure_demo(&pool).await.unwrap();
    let items: Vec<i64> = sqlx::query_scalar(
        "SELECT e.id FROM examples e JOIN data_files f ON f.id = e.file_id
         JOIN tasks t ON t.id = f.task_id WHERE t.name = 'demo-CoNLL2003' AND f.kind = 'test'
         ORDER BY e.line_no",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(items.len() > 8, "{}", items.len());
    let icl = |endpoint: &str, more: &[&str]| {
        let task = ["--task", "demo-CoNLL2003", "--k", "2", "--split", "1"];
        let args = [
            &["icl", "--endpoint", endpoint, "--model", "scripted"][..],
            &task,
            more,
        ];
        common::clues(&url, &args.concat())
    };

    // The sixth request fails while others are in flight: what is stored is the items before
    // one not answered, in order, and the run is marked failed.
    let (endpoint, fail_at) = scripted();
    fail_at.store(6, Ordering::SeqCst);
    let (ok, text) = icl(&endpoint, &["--concurrency", "4"]);
    assert!(!ok && text.contains("answered 500"), "{text}");
    let cut = stored(&pool, sqlite).await;
    // The sixth request to arrive fails. With 4 in flight, requests may arrive a little out of
    // order, so the failed item is one of the items up to the 9th; the items before it are
    // stored, never it or any after it.
    assert!(
        !cut.is_empty() && cut.len() < 6 + 3 && cut.len() < items.len(),
        "{} stored",
        cut.len()
    );
    let ids: Vec<i64> = cut.iter().map(|c| c.0).collect();
    assert_eq!(
        ids,
        items[..cut.len()],
        "a prefix of the test set, in order"
    );

    // The same command goes on from the first item not stored, to every item, in order.
    fail_at.store(0, Ordering::SeqCst);
    let (ok, text) = icl(&endpoint, &["--concurrency", "8"]);
    assert!(
        ok && text.contains(&format!("going on after {}", cut.len())),
        "{text}"
    );
    let all = stored(&pool, sqlite).await;
    assert_eq!(all.iter().map(|c| c.0).collect::<Vec<_>>(), items);
    assert_eq!(
        all[..cut.len()],
        cut[..],
        "the calls stored before are kept"
    );
    for (_, prompt, reply) in &all {
        assert_eq!(reply, reply_to(prompt));
    }
    // One call at a time gives the same answers and S1.
    let one: Vec<(String, f64)> = {
        let (ok, text) = icl(&endpoint, &["--system", "one at a time"]);
        assert!(ok, "{text}");
        sqlx::query_as(
            "SELECT s.name, r.s1 FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
             WHERE r.status = 'done' ORDER BY s.name",
        )
        .fetch_all(&pool)
        .await
        .unwrap()
    };
    assert_eq!(one.len(), 2, "{one:?}");
    assert_eq!(one[0].1, one[1].1, "{one:?}");
}
