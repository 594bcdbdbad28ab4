//! `serve`: the web app on a socket, with the demo study loaded on first start, until Ctrl-C or
//! SIGTERM (requests in flight are finished first).

use super::args::ServeArgs;
use crate::{demo, listen, router};
use app::ssr::assets::OUTPUT_NAME;
use app::ssr::limits::{Limiter, Limits};
use app::ssr::state::AppState;
use leptos::config::LeptosOptions;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use store::db::cli as db;
use store::error::{Error, Result};

/// The machines page's door to the model track, in a build that has it.
fn door() -> Option<Arc<dyn store::machine::JobDoor>> {
    #[cfg(feature = "models")]
    return Some(Arc::new(learners::queue::Door));
    #[cfg(not(feature = "models"))]
    None
}

pub(super) async fn serve(database: &str, args: ServeArgs) -> Result<()> {
    let addr = match args.addr {
        Some(addr) => addr,
        None => match std::env::var("LEPTOS_SITE_ADDR") {
            Ok(a) => a
                .parse()
                .map_err(|e| Error::Invalid(format!("LEPTOS_SITE_ADDR {a:?}: {e}")))?,
            Err(_) => SocketAddr::from(([127, 0, 0, 1], 3000)),
        },
    };
    // Before the database opens its files: the descriptors the connections may not take.
    let budget = listen::budget();
    let pool = db::connect_serving(database).await?;
    if !args.no_demo {
        // One instance at a time loads what is missing of the demo; the others find it there.
        let lock = store::db::StartupLock::take(database)
            .await
            .map_err(|e| Error::Invalid(e.to_string()))?;
        if let Some(imported) = demo::ensure_demo(&pool).await? {
            eprint!("loaded the demo study:\n{}", imported.report());
        }
        drop(lock);
    }
    let root = std::path::Path::new(&args.site_root);
    let pkg = root.join("pkg").join(format!("{OUTPUT_NAME}.js"));
    if !pkg.exists() && !root.join("hash.txt").exists() {
        tracing::warn!(
            "neither {} nor a hash.txt beside pkg/: pages will render but not hydrate (build with .ci/build)",
            pkg.display()
        );
    }
    let leptos_options = LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_root(args.site_root.as_str())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build();
    let defaults = Limits::default();
    let limits = Limits {
        joins_per_client: (args.new_workers_per_address, defaults.joins_per_client.1),
        login_per_client: (args.logins_per_address, defaults.login_per_client.1),
        ..defaults
    };
    let pool_handle = pool.clone();
    let accounts = platforms::accounts::Accounts::load(args.platform_credentials.as_deref())
        .map_err(Error::Invalid)?;
    platform_calls(&pool, &accounts);
    let state = AppState {
        platforms: Arc::new(app::ssr::platforms::Platforms::new(accounts)),
        secure_cookies: args.secure_cookies,
        trust_proxy: args.trust_proxy,
        limiter: Arc::new(Limiter::new(limits)),
        frame_ancestors: Arc::from(args.frame_ancestors),
        door: door(),
        ..AppState::new(pool, leptos_options)
    };
    // Builds of the report nobody has asked for in a while are let go.
    state
        .reports
        .clone()
        .sweep_periodically(state.pool.clone(), std::time::Duration::from_secs(10));
    let app = router::app(state);
    crate::memory::trim_periodically(std::time::Duration::from_secs(5));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::io(format!("cannot listen on {addr}"), e))?;
    // The address actually bound (port 0 picks a free one; tests read this line).
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("cannot read the bound address", e))?;
    println!("listening on http://{addr}");
    if args.trust_proxy && !args.secure_cookies {
        tracing::info!(
            "behind a proxy: cookies are Secure (and crowd sessions work in MTurk's frame) only \
             where the proxy sends X-Forwarded-Proto: https (nginx: proxy_set_header \
             X-Forwarded-Proto $scheme; Caddy sends it by itself)"
        );
    }
    let held = listen::Limits {
        header_timeout: Duration::from_secs(args.header_timeout),
        // A request body may pause 3 header time-outs (30 s by default: a slow phone upload
        // pauses for far less).
        body_timeout: Duration::from_secs(3 * args.header_timeout),
        per_address: (!args.trust_proxy && args.connections_per_address > 0)
            .then_some(args.connections_per_address),
        total: match args.max_connections {
            0 => budget,
            n => n.min(budget),
        },
    };
    listen::serve(listener, app, held, stop_signal()).await;
    // Every request in flight has been answered; let SQLite checkpoint and close cleanly.
    pool_handle.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Sends the crowd platforms' calls of the accounts given, from a lane of its own beside the
/// requests (several servers share the queue under leases); on Ctrl-C or SIGTERM the call in
/// hand goes back to the queue.
fn platform_calls(pool: &sqlx::AnyPool, accounts: &platforms::accounts::Accounts) {
    use store::lease::lanes::{self, KindLane, Lane, Pace};
    let sites = platforms::Site::all(accounts);
    for site in &sites {
        let mode = if site.sandbox() { "sandbox" } else { "live" };
        tracing::info!(
            "{} account ({mode}) given: its calls are sent from here",
            site.platform().name()
        );
    }
    if sites.is_empty() {
        return;
    }
    let (pool, rates) = (pool.clone(), accounts.fees);
    let pace = Pace {
        poll: Duration::from_secs(1),
        exit_when_idle: false,
    };
    tokio::spawn(async move {
        let me = store::lease::worker_name();
        let Ok(mut stop) = store::lease::stop::Stop::new() else {
            tracing::error!("the crowd platforms' calls cannot listen for signals: none is sent");
            return;
        };
        // A failure of the database or of a lane is logged and the lane starts again.
        loop {
            let runner = platforms::run::PlatformRunner {
                sites: sites.clone(),
                only: None,
                rates,
            };
            let lease = Duration::from_secs(60);
            let clock = store::lease::Clock::System;
            let lanes: Vec<Box<dyn Lane>> = vec![KindLane::new(&pool, runner, lease, clock)];
            match lanes::serve(lanes, &mut stop, pace, &me).await {
                Ok(_) => return,
                Err(e) => tracing::error!("the crowd platforms' calls: {e}; going on in 5 s"),
            }
            if stop
                .or(tokio::time::sleep(Duration::from_secs(5)))
                .await
                .is_err()
            {
                return;
            }
        }
    });
}

/// Ctrl-C or SIGTERM (what `kill`, systemd and container runtimes send): stop taking new
/// connections and finish the requests in flight.
async fn stop_signal() {
    let terminate = async {
        #[cfg(unix)]
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: finishing the requests in flight");
}
