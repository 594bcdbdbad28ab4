//! Many workers arriving at the same moment for one scenario get exactly its N places. In its
//! own test binary: it runs on a multi-threaded runtime, apart from the other router tests.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
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
                // A late arrival is refused at the study link (a new id at a full study) or,
                // when it raced past that check, by the study page.
                let link = format!("/join/{id}?PROLIFIC_PID=crowd{i:02}");
                let r = join_link(&s, &link).await;
                match r.cookie {
                    Some(cookie) => state_of(&s, id, &cookie).await.status,
                    None => r.status,
                }
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
