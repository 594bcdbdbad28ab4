//! The axum router: Leptos pages, server functions, and the static site (`/pkg/...`).
//! Built without a socket so tests can drive it with `tower::ServiceExt::oneshot`.

use app::ssr::state::AppState;
use app::{shell, App};
use axum::http::{header, HeaderValue};
use axum::Router;
use leptos_axum::{generate_route_list, LeptosRoutes};
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

/// Headers on every response: no MIME sniffing, no framing by other sites, no referrer (study
/// links carry crowd ids, which must not leak to the sites a page links to).
fn security_headers(router: Router) -> Router {
    let headers = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CONTENT_SECURITY_POLICY, "frame-ancestors 'none'"),
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    headers.into_iter().fold(router, |r, (name, value)| {
        r.layer(SetResponseHeaderLayer::if_not_present(
            name,
            HeaderValue::from_static(value),
        ))
    })
}

pub fn app(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let options = state.leptos_options.clone();
    let router = Router::new()
        .route(
            "/join/{study}",
            axum::routing::get(crate::join::start_page).post(crate::join::join),
        )
        .route("/export/{file}", axum::routing::get(crate::export::export))
        .route(
            "/import/predictions",
            axum::routing::post(crate::model::upload::upload),
        )
        .leptos_routes(&state, routes, move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .with_state(state)
        // Pages, server-function answers and exports are compressed on the fly (fastest level:
        // the CPU matters more than the last bytes); static files are served from their `.br`
        // and `.gz` siblings made by .ci/build, which this layer leaves as they are.
        .layer(
            CompressionLayer::new()
                .br(true)
                .gzip(true)
                .quality(CompressionLevel::Fastest),
        );
    // Each request gets a span (method, path); answers are logged at DEBUG
    // (`RUST_LOG=tower_http=debug`), server errors (5xx) at ERROR.
    security_headers(router).layer(
        TraceLayer::new_for_http()
            .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
            .on_response(DefaultOnResponse::new().level(Level::DEBUG)),
    )
}
