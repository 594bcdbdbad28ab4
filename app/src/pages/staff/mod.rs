//! The staff pages (researchers and admins), routed: the task catalogue, studies, the
//! dashboard, CrossFit and the machines page. Not in the worker's bundle.

mod config_fields;
mod crossfit;
mod dashboard;
mod home;
mod live_workers;
mod machines;
mod page_fields;
mod platform;
mod platform_decide;
mod platform_forms;
mod queue;
mod queue_form;
mod studies;
mod study_page;
mod task;
mod upload;

use domain::ids::StudyId;
use leptos::prelude::*;
use leptos_router::components::{Route, Routes, A};
use leptos_router::path;
// The worker's page and the dashboard are sent whole (their content in the HTML, not streamed
// in by script): they show before the bundle arrives or without JavaScript.
use leptos_router::SsrMode;

/// The staff pages' navigation.
#[component]
pub(super) fn StaffNav() -> impl IntoView {
    view! {
        <nav class="staff-nav" aria-label="Staff pages">
            <A href="/">"Home"</A>
            <A href="/studies">"Studies"</A>
            <A href="/dashboard">"Dashboard"</A>
            <A href="/crossfit">"CrossFit"</A>
            <A href="/machines">"Machines"</A>
        </nav>
    }
}

/// Every page's route (the staff bundle and the server). The study page is listed so that the
/// server knows to send it whole (`SsrMode::Async`); it is rendered without the router.
pub(super) fn routes() -> impl IntoView {
    view! {
        <Routes fallback=|| view! { <p class="error">"No such page."</p> }>
            <Route path=path!("/") view=home::Home />
            <Route path=path!("/tasks/:name") view=task::TaskPage />
            // Sent whole too: the report in the first paint, not a "Loading" line that script
            // replaces (on a phone, the page's largest paint came seconds later).
            <Route path=path!("/dashboard") view=dashboard::DashboardPage ssr=SsrMode::Async />
            <Route path=path!("/crossfit") view=crossfit::CrossfitPage />
            <Route path=path!("/machines") view=machines::MachinesPage />
            <Route path=path!("/studies") view=studies::StudiesPage />
            <Route path=path!("/studies/:id") view=study_page::StudyAdminPage />
            <Route path=path!("/studies/:id/platform") view=platform::PlatformPage />
            <Route
                path=path!("/study/:id")
                view=super::worker::study::WorkerStudyPage
                ssr=SsrMode::Async
            />
        </Routes>
    }
}

/// This site's origin as the browser reached it (`https://lab.example`), for the links a
/// researcher copies to a crowd platform: on the server from the request's `Host` (HTTPS as
/// the cookies see it), in the browser from its location.
pub(crate) fn site_origin() -> String {
    #[cfg(feature = "ssr")]
    {
        let (Some(parts), Ok(state)) = (
            use_context::<http::request::Parts>(),
            crate::ssr::state::app_state(),
        ) else {
            return String::new();
        };
        let host = parts
            .headers
            .get(http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        let scheme = if state.secure_cookie_for(&parts.headers) {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{host}")
    }
    #[cfg(not(feature = "ssr"))]
    {
        web_sys::window()
            .and_then(|w| w.location().origin().ok())
            .unwrap_or_default()
    }
}

/// The study id of the route parameter `:id` (0 when absent or not a number: the server then
/// answers "no such study").
pub(crate) fn id_param() -> impl Fn() -> StudyId + Copy + Send + Sync + 'static {
    let params = leptos_router::hooks::use_params_map();
    move || {
        params
            .read()
            .get("id")
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(StudyId(0), StudyId)
    }
}

/// Seconds as a person reads them: "40 s", "12 min", "3.5 h".
pub(crate) fn duration(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// An action's outcome: what it did (`saved`), or its error.
pub(crate) fn outcome<T>(
    r: Result<T, crate::error::AppError>,
    saved: impl FnOnce(T) -> String,
) -> impl IntoView {
    match r {
        Ok(v) => leptos::either::Either::Left(view! {
            <p class="saved" role="status">
                {saved(v)}
            </p>
        }),
        Err(e) => leptos::either::Either::Right(crate::pages::error_line(e)),
    }
}

/// The fallback of the staff pages' `<ErrorBoundary>`s: each error their data or action ended
/// in, as an alert (the same markup as `error_line`).
pub(crate) fn alerts(errors: ArcRwSignal<Errors>) -> impl IntoView {
    move || {
        errors
            .read()
            .iter()
            .map(|(_, e)| {
                view! {
                    <p class="error" role="alert">
                        {e.to_string()}
                    </p>
                }
            })
            .collect_view()
    }
}
