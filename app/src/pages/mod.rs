//! The pages, in two trees: `staff` (catalogue, studies, dashboard, CrossFit, models; with the
//! router) and `worker` (the crowd worker's study page, alone in the worker's bundle, without
//! a router). Every page renders on the server and hydrates in the browser; the HTML shell
//! around them is `ssr::shell`.
mod staff;
mod worker;

use domain::ids::StudyId;
use domain::task::Context;
use leptos::either::Either;
use leptos::prelude::*;
use leptos_router::components::Router;

/// Whether the page is interactive (set once the bundle has hydrated it): forms stay disabled
/// until then.
#[derive(Clone, Copy)]
pub(crate) struct Hydrated(pub ReadSignal<bool>);

/// The page's path without a router: the request's on the server, the address bar's in the
/// browser.
fn page_path() -> Option<String> {
    #[cfg(feature = "ssr")]
    return use_context::<http::request::Parts>().map(|p| p.uri.path().to_string());
    #[cfg(not(feature = "ssr"))]
    return web_sys::window().and_then(|w| w.location().pathname().ok());
}

/// Whether this render is of a worker's study page (`/study/...`; the staff bundle asks, the
/// worker's renders nothing else).
fn is_study_page() -> bool {
    page_path().is_some_and(|p| p.starts_with("/study/"))
}

/// The study id of a `/study/{id}` path (0 when it is not a number: the server then answers
/// "no such study"); read without a router, as the study page has none.
pub(crate) fn study_id_of_page() -> StudyId {
    page_path()
        .as_deref()
        .and_then(domain::crowd::study_page_id)
        .unwrap_or(StudyId(0))
}

/// The root the server renders, and the staff bundle hydrates: the worker's study page on a
/// `/study/...` path, the routed staff pages elsewhere.
#[component]
pub fn App() -> impl IntoView {
    let hydrated = provide_page_context();
    if is_study_page() {
        Either::Left(study_page(hydrated))
    } else {
        Either::Right(view! {
            <Router>
                <header class="top">{home()} <staff::StaffNav /></header>
                <main data-hydrated=move || hydrated.get().to_string()>{staff::routes()}</main>
            </Router>
        })
    }
}

/// The root the worker's bundle hydrates (`/study/...` pages): the study page alone, as `App`
/// renders it there, without a router. Nothing of the staff pages is reachable from it, so
/// the bundle's link-time optimisation leaves them out: with the router and its type-erased
/// route views, they are most of the staff bundle.
#[component]
pub fn WorkerApp() -> impl IntoView {
    let hydrated = provide_page_context();
    study_page(hydrated)
}

/// What every page provides: whether it has hydrated (an effect, so only in the browser: the
/// page's `data-hydrated` attribute tells tests, and people, that it is interactive).
fn provide_page_context() -> RwSignal<bool> {
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    provide_context(Hydrated(hydrated.read_only()));
    hydrated
}

/// The header's link home: a full load, as the worker's bundle has no home page to route to.
fn home() -> impl IntoView {
    view! {
        <a href="/" rel="external">
            "CLUES lab"
        </a>
        <span class="tagline">"few-shot studies of humans and machines on the same test sets"</span>
    }
}

/// The worker's study page: one page without a router, on the server and in the browser alike.
fn study_page(hydrated: RwSignal<bool>) -> impl IntoView {
    view! {
        <header class="top">{home()}</header>
        <main data-hydrated=move || hydrated.get().to_string()>
            <worker::study::WorkerStudyPage />
        </main>
    }
}

/// An item's text as workers (and the previewer) see it: line breaks as displayed, MNLI
/// as Sentence 1 / Sentence 2.
pub(crate) fn context_view(context: &Context) -> impl IntoView {
    match context {
        Context::Single { text } => Either::Left(
            view! { <div class="context">{domain::selection::display_text(text)}</div> },
        ),
        Context::Pair {
            premise,
            hypothesis,
        } => Either::Right(view! {
            <div class="context pair">
                <p>
                    <span class="part">"Sentence 1: "</span>
                    {premise.clone()}
                </p>
                <p>
                    <span class="part">"Sentence 2: "</span>
                    {hypothesis.clone()}
                </p>
            </div>
        }),
    }
}

/// An error from a server function as a message for people. The worker's page uses this typed
/// view rather than an `<ErrorBoundary>` (as the staff pages do): the boundary's code for every
/// way of hydrating would grow the worker's bundle, which never needs it.
pub(crate) fn error_line(e: crate::error::AppError) -> impl IntoView {
    view! {
        <p class="error" role="alert">
            {e.to_string()}
        </p>
    }
}
