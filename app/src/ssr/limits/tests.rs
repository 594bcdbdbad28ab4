//! The limits' own tests: rates per account and client, the owner's lane, the bounded queue of
//! password checks, and which client and site a request comes from.

use super::*;

fn limits() -> Limits {
    Limits {
        login_per_account: (3, Duration::from_secs(60)),
        login_per_client: (5, Duration::from_secs(60)),
        joins_per_client: (2, Duration::from_secs(60)),
        password_checks: 1,
        password_queue: 1,
        heavy_work: 1,
    }
}

#[test]
fn sign_ins_are_limited_per_account_and_per_client() {
    let g = Limiter::new(limits());
    let a: IpAddr = "10.0.0.1".parse().unwrap();
    let b: IpAddr = "10.0.0.2".parse().unwrap();
    for _ in 0..3 {
        g.login_attempt(a, "rita").unwrap();
    }
    match g.login_attempt(b, "rita") {
        Err(AppError::Throttled(secs, _)) => assert!((1..=60).contains(&secs)),
        other => panic!("expected 429, got {other:?}"),
    }
    // Another account from the same client still has the client's allowance left (5).
    g.login_attempt(a, "ada").unwrap();
    g.login_attempt(a, "bob").unwrap();
    assert!(g.login_attempt(a, "carl").is_err());
    assert!(g.new_worker(a).is_ok() && g.new_worker(a).is_ok());
    assert!(g.new_worker(a).is_err() && g.new_worker(b).is_ok());
}

#[test]
fn a_flood_on_a_name_does_not_lock_out_its_owner_at_a_known_address() {
    let g = Limiter::new(limits());
    let (owner, attacker, other): (IpAddr, IpAddr, IpAddr) = (
        "10.0.0.2".parse().unwrap(),
        "10.0.0.66".parse().unwrap(),
        "10.0.0.9".parse().unwrap(),
    );
    assert_eq!(g.login_attempt(owner, "rita").unwrap(), Lane::Anyone);
    g.signed_in(owner, "rita");
    // The flood uses up the account's allowance (3).
    let mut flood = 0;
    while g.login_attempt(attacker, "rita").is_ok() {
        flood += 1;
    }
    assert_eq!(flood, 2);
    assert!(
        g.login_attempt(other, "rita").is_err(),
        "the account is held"
    );
    // The owner's address still has its own allowance (5 per client, 1 used).
    for _ in 0..4 {
        assert_eq!(g.login_attempt(owner, "rita").unwrap(), Lane::Owner);
    }
    assert!(g.login_attempt(owner, "rita").is_err());
}

#[tokio::test]
async fn password_checks_take_turns_and_the_queue_is_bounded() {
    let g = Limiter::new(limits());
    let first = g.password_turn(Lane::Anyone).await.unwrap();
    // One may wait; the next is refused at once.
    let g2 = &g;
    let waiting = async move { g2.password_turn(Lane::Anyone).await.map(drop) };
    let refused = async {
        tokio::task::yield_now().await;
        g.password_turn(Lane::Anyone).await.map(drop)
    };
    let release = async {
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        drop(first);
    };
    let (w, r, ()) = tokio::join!(waiting, refused, release);
    assert!(w.is_ok());
    assert!(matches!(r, Err(AppError::Throttled(1, _))));
}

#[tokio::test]
async fn a_sign_in_dropped_while_it_waits_leaves_the_queue() {
    use std::future::Future;
    let g = Limiter::new(limits());
    let first = g.password_turn(Lane::Anyone).await.unwrap();
    // Clients that hang up while they wait (the queue holds one), again and again.
    for _ in 0..3 {
        let mut waiting = Box::pin(g.password_turn(Lane::Anyone));
        let poll = |cx: &mut std::task::Context<'_>| {
            std::task::Poll::Ready(waiting.as_mut().poll(cx).is_pending())
        };
        assert!(std::future::poll_fn(poll).await, "it waits its turn");
        drop(waiting);
    }
    let waiting = async { g.password_turn(Lane::Anyone).await.map(drop) };
    let release = async {
        tokio::task::yield_now().await;
        drop(first);
    };
    let (w, ()) = tokio::join!(waiting, release);
    assert!(w.is_ok(), "{w:?}");
}

#[test]
fn the_client_is_the_proxys_last_hop_only_when_trusted() {
    let mut h = HeaderMap::new();
    h.insert("x-forwarded-for", "1.2.3.4, 5.6.7.8".parse().unwrap());
    h.insert("x-forwarded-proto", "https".parse().unwrap());
    let peer: IpAddr = "127.0.0.1".parse().unwrap();
    assert_eq!(client_addr(&h, Some(peer), true).to_string(), "5.6.7.8");
    assert_eq!(client_addr(&h, Some(peer), false), peer);
    assert!(client_addr(&HeaderMap::new(), None, true).is_unspecified());
    assert!(forwarded_https(&h, true) && !forwarded_https(&h, false));
}

#[test]
fn posts_from_other_sites_are_told_apart() {
    let h = |pairs: &[(&'static str, &'static str)]| {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, v.parse().unwrap());
        }
        m
    };
    assert!(from_another_site(&h(&[("sec-fetch-site", "cross-site")])));
    assert!(from_another_site(&h(&[("sec-fetch-site", "same-site")])));
    assert!(!from_another_site(&h(&[("sec-fetch-site", "same-origin")])));
    assert!(!from_another_site(&h(&[("sec-fetch-site", "none")])));
    let ours = [
        ("host", "lab.example:3000"),
        ("origin", "https://lab.example:3000"),
    ];
    assert!(!from_another_site(&h(&ours)));
    assert!(from_another_site(&h(&[
        ("host", "lab.example"),
        ("origin", "https://evil.example")
    ])));
    assert!(from_another_site(&h(&[
        ("host", "lab.example"),
        ("origin", "null")
    ])));
    assert!(!from_another_site(&h(&[("host", "lab.example")])));
}
