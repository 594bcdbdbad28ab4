//! Many workers arriving at the same moment for one scenario get exactly its N places. In its
//! own test binary: it runs on a multi-threaded runtime, apart from the other router tests.
mod common;

use axum::http::StatusCode;
use common::client::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_simultaneous_arrivals_fill_exactly_three_places() {
    let e = env().await;
    let s = e.state.clone();
    let id = new_study(&s, "demo-SST-2", &[2], 3).await;
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let cookie = arrive(&s, id, &format!("crowd{i:02}")).await;
                state_of(&s, id, &cookie).await.status
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    let ok = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::CONFLICT)
        .count();
    assert_eq!((ok, refused), (3, 17), "{statuses:?}");
    assert_eq!(places(&s, id).await.len(), 3);
}
