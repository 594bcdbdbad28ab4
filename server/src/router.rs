//! The axum router: Leptos pages, server functions, and the static site (`/pkg/...`).
//! Built without a socket so tests can drive it with `tower::ServiceExt::oneshot`.

use app::ssr::state::AppState;
use app::{shell, App};
use axum::Router;
use leptos_axum::{generate_route_list, LeptosRoutes};

pub fn app(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let options = state.leptos_options.clone();
    Router::new()
        .route("/join/{study}", axum::routing::get(crate::join::join))
        .route("/export/{file}", axum::routing::get(crate::export::export))
        .route(
            "/import/predictions",
            axum::routing::post(crate::model::upload::upload),
        )
        .leptos_routes(&state, routes, move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .with_state(state)
}
