//! The annotation rows read in pages (`store::annotations::pages`) are the same rows in the same
//! order whatever the page size (pages of several assignments, of one, and runs of positions),
//! and whether read through the pool or on a heavy thread's connection of its own.
use crate::common;

use common::client::*;
use domain::study::StudyConfig;
use futures_util::TryStreamExt;
use store::annotations::pages::{own_connection, rows, through_pool, Scope, PAGE_ROWS};
use store::annotations::AnnotationRow;
use store::heavy::Kind;
use store::report;

#[tokio::test]
async fn annotation_rows_are_the_same_whatever_the_page_size() {
    let env = env().await;
    let pool = &env.state.pool;
    let mut ids = Vec::new();
    for (task, rows) in [("demo-SQuAD-v2", 60), ("demo-SST-2", 45)] {
        let config = StudyConfig {
            scenarios: vec![0],
            open: true,
            ..StudyConfig::default()
        };
        let id = store::study::create(pool, None, task, "paged", config)
            .await
            .unwrap();
        store::study::fill(pool, id, rows, "p").await.unwrap();
        ids.push(id);
    }
    let studies = report::studies_in(pool, &ids).await.unwrap();
    let read = |page: i64, synthetic: bool| {
        rows(pool, Scope::of(&studies, synthetic), page, Kind::Rows)
            .try_collect::<Vec<AnnotationRow>>()
    };
    let pooled = |page: i64| {
        through_pool(pool.clone(), Scope::of(&studies, true), page)
            .try_collect::<Vec<AnnotationRow>>()
    };
    // A SQLite file and PostgreSQL are read on a connection of their own; an in-memory database
    // (where a new connection would open another, empty one) through its pool.
    assert!(own_connection(pool).is_some());
    let memory = store::db::cli::memory().await.unwrap();
    assert_eq!(own_connection(&memory), None);
    let whole = read(PAGE_ROWS, true).await.unwrap();
    let stored: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
         WHERE a.study_id IN ($1, $2)",
    )
    .bind(ids[0])
    .bind(ids[1])
    .fetch_one(pool)
    .await
    .unwrap();
    assert!(stored >= 105, "{stored} rows");
    assert_eq!(whole.len() as i64, stored);
    let keys: Vec<_> = whole
        .iter()
        .map(|r| (r.study_id, r.assignment_id, r.position))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "ordered: {keys:?}");
    assert!(whole.iter().all(|r| r.synthetic));
    // Smaller than an assignment (runs of positions), about one, and several per page.
    for page in [1, 4, 7, 30, 64] {
        assert_eq!(
            read(page, true).await.unwrap(),
            whole,
            "pages of {page} rows"
        );
        assert_eq!(pooled(page).await.unwrap(), whole, "pooled, {page} rows");
    }
    // Without the synthetic workers of `load fill`, nothing.
    assert_eq!(read(PAGE_ROWS, false).await.unwrap(), vec![]);
    // A read that fails after the assignments are listed is an error, not a shorter file: the
    // reading thread hands its error on.
    sqlx::query("ALTER TABLE data_files RENAME TO data_files_gone")
        .execute(pool)
        .await
        .unwrap();
    let failed = read(PAGE_ROWS, true).await.unwrap_err().to_string();
    assert!(failed.contains("data_files"), "{failed}");
}
