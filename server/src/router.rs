//! The axum router: Leptos pages, server functions, and the static site (`/pkg/...`).
//! Built without a socket so tests can drive it with `tower::ServiceExt::oneshot`.

use app::ssr::assets::WorkerBundle;
use app::ssr::state::AppState;
use app::{shell, App};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use domain::crowd::{is_worker_page, study_page_id};
use domain::platform::frame_policy;
use leptos_axum::{generate_route_list, AxumRouteListing, LeptosRoutes};
use std::sync::OnceLock;
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

/// The predictions upload (`upload`), in a build with the model track.
#[cfg(feature = "models")]
use crate::upload::upload as predictions_upload;

/// The predictions upload's answer in a build without the model track: to researchers and
/// admins (as the upload), a refusal saying so.
#[cfg(not(feature = "models"))]
async fn predictions_upload(
    _: app::ssr::request::Ctx<app::ssr::request::Staff>,
) -> app::error::AppError {
    app::error::AppError::Refused(format!(
        "importing predictions: {}",
        domain::wire::queue::WITHOUT_MODELS
    ))
}

/// Headers on every response: no MIME sniffing, no referrer (study links carry crowd ids,
/// which must not leak to the sites a page links to), and none of the browser's powerful
/// features (camera, microphone, location, …), which no page here uses.
fn security_headers(router: Router) -> Router {
    let headers = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (
            header::HeaderName::from_static("permissions-policy"),
            "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
        ),
    ];
    headers.into_iter().fold(router, |r, (name, value)| {
        r.layer(SetResponseHeaderLayer::if_not_present(
            name,
            HeaderValue::from_static(value),
        ))
    })
}

/// Who may show a response in a frame: the worker's pages MTurk's sites and the configured
/// origins, every other response nobody (`domain::platform::frame_policy`). `X-Frame-Options`
/// cannot name a site, so only the pages no one may frame carry it (for old browsers). Served
/// over HTTPS (as configured, or as a trusted proxy says), browsers are told to keep to HTTPS
/// (`Strict-Transport-Security`).
async fn site_headers(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let https = state.secure_cookie_for(req.headers());
    let mut res = next.run(req).await;
    if https {
        res.headers_mut().insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    let headers = res.headers_mut();
    // A page's own policy (which scripts may run) gets who may frame it added.
    let frames = frame_policy(&path, &state.frame_ancestors);
    let policy = match headers
        .get(header::CONTENT_SECURITY_POLICY)
        .and_then(|v| v.to_str().ok())
    {
        Some(own) => format!("{own}; {frames}"),
        None => frames,
    };
    if let Ok(value) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    if !is_worker_page(&path) {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    res
}

/// A study page's worker bundle by its study's family (`app::ssr::assets::WorkerBundle`), for
/// the page's shell to name: the span form's code only where items are answered with spans.
/// A study that cannot be read gets none, so the span bundle, which hydrates every study page
/// (the page itself says what is wrong).
async fn worker_bundle(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if let Some(id) = study_page_id(req.uri().path()) {
        match store::study::family(&state.pool, id).await {
            Ok(family) => {
                req.extensions_mut()
                    .insert(WorkerBundle::for_form(family.answer_form()));
            }
            Err(store::Error::NotFound(_)) => {}
            Err(e) => tracing::warn!("the family of study {id}, for its page's bundle: {e}"),
        }
    }
    next.run(req).await
}

/// A request whose target is not a path (`GET .`, `GET example.com:80`, `OPTIONS *`) is answered
/// 400 before it reaches a handler: the pages' fallback assumes a path and would panic.
async fn request_target(req: Request, next: Next) -> Response {
    if req.uri().path().starts_with('/') {
        next.run(req).await
    } else {
        (
            axum::http::StatusCode::BAD_REQUEST,
            "The request target must be a path that starts with /.",
        )
            .into_response()
    }
}

/// How long browsers keep a response: content-hashed files under `/pkg/` for good (a new build
/// has new names), everything else checked again on each use. Files under `/pkg/` are sent
/// brotli- or gzip-compressed or plain by the request's `Accept-Encoding`, so a shared cache
/// must keep them apart (`Vary`).
async fn cache_control(req: Request, next: Next) -> Response {
    let immutable = app::ssr::assets::is_hashed(req.uri().path());
    let static_file = req.uri().path().starts_with("/pkg/");
    let mut res = next.run(req).await;
    if static_file {
        let varies = res
            .headers()
            .get_all(header::VARY)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.to_ascii_lowercase().contains("accept-encoding"));
        if !varies {
            res.headers_mut()
                .append(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
    }
    if res.status().is_success() && !res.headers().contains_key(header::CACHE_CONTROL) {
        let value = if immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        res.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    }
    res
}

/// The pages' routes, listed once per process. Listing them renders the app with resource
/// loading switched off, and Leptos keeps that switch in one process-wide flag: a page
/// rendered on another thread meanwhile would wait for its data forever. Routers built after
/// the first (the tests build one per request) reuse the list and never touch the flag.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

pub fn app(state: AppState) -> Router {
    let routes = route_list();
    let options = state.leptos_options.clone();
    let site = axum::middleware::from_fn_with_state(state.clone(), site_headers);
    let gate = axum::middleware::from_fn_with_state(state.clone(), crate::gate::gate);
    let bundle = axum::middleware::from_fn_with_state(state.clone(), worker_bundle);
    let router = Router::new()
        .route(
            "/join/{study}",
            axum::routing::get(crate::join::start_page).post(crate::join::join),
        )
        .route(
            "/hooks/prolific",
            axum::routing::post(crate::hooks::prolific),
        )
        .route(
            "/export/{file}",
            axum::routing::get(crate::download::export),
        )
        // The machines page's earlier address, for bookmarks.
        .route(
            "/models",
            axum::routing::get(|| async { axum::response::Redirect::permanent("/machines") }),
        )
        .route(
            "/import/predictions",
            axum::routing::post(predictions_upload),
        )
        .leptos_routes(&state, routes, move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .with_state(state)
        .layer(axum::middleware::from_fn(cache_control))
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
    security_headers(router.layer(bundle).layer(gate).layer(site))
        .layer(axum::middleware::from_fn(request_target))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_response(DefaultOnResponse::new().level(Level::DEBUG)),
        )
}
