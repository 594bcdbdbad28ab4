//! The study link crowd platforms send workers to: `/join/{study}?PROLIFIC_PID=..` (or MTurk's
//! `workerId`/`assignmentId`). `GET` shows a start page and changes nothing (link previews and
//! prefetchers take no place); its `POST` signs the worker in, takes a place, and goes on.

use app::error::AppError;
use app::ssr::assets::WorkerBundle;
use app::ssr::auth::worker_session_cookie;
use app::ssr::request::{Ctx, Params, Visitor};
use app::ssr::state::AppState;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, RawQuery};
use axum::http::{header, Extensions, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use domain::ids::{StudyId, UserId};
use domain::people::Role;
use domain::platform::{took_part_message, LinkQuery};
use domain::study::Refusal;
use std::net::SocketAddr;
use store::auth::{self, User};
use store::study::{self, CrowdInfo, Presence, Study};

pub(crate) mod pages;
use pages::{preview_html, refusal_html, start_html};

/// What a link leads to before anything is written: the study (404 when missing), the crowd
/// worker it names (400 when malformed), and whether that worker may enter (a closed study
/// lets back only those who started; 409 for the rest).
async fn check_link(
    state: &AppState,
    study_id: StudyId,
    q: &LinkQuery,
) -> Result<(Study, Option<(CrowdInfo, Option<UserId>)>), AppError> {
    let crowd = q.crowd_info().map_err(AppError::Invalid)?;
    let s = study::load(&state.pool, study_id).await?;
    let crowd = match crowd {
        Some(c) => {
            let (platform, worker) = c.identity().map_err(AppError::Invalid)?;
            let known = auth::known_crowd_worker(&state.pool, platform, worker).await?;
            if !s.config.open && known.is_none() {
                return Err(AppError::Refused(Refusal::Closed.to_string()));
            }
            Some((c, known))
        }
        None => None,
    };
    Ok((s, crowd))
}

/// `GET /join/{study}`: the start page, with a Start button that posts the same link (Continue
/// for a worker who already holds a place); an MTurk preview shows the task instead. A worker
/// who finished (or whose place was released) and comes with an assignment or session id the
/// work was not done under is told to return it, and that is recorded (the only write of a
/// GET: `study::present`). Without a crowd id, a signed-in worker gets the page too; anyone
/// else goes to the study page.
pub async fn start_page(
    c: Ctx<Visitor>,
    Path(study_id): Path<StudyId>,
    Params(q): Params<LinkQuery>,
    RawQuery(raw): RawQuery,
) -> Response {
    let state = &c.state;
    let css = app::ssr::assets::stylesheet(&state.leptos_options);
    if q.is_preview() {
        return match preview(state, study_id).await {
            Ok((s, example)) => plain_page(preview_html(&s, &example, &css), None),
            Err(e) => e.into_response(),
        };
    }
    let (s, crowd) = match check_link(state, study_id, &q).await {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    // In another site's frame a session needs a Secure, partitioned cookie: without HTTPS as
    // the server sees it, Start would take a place the frame can never use.
    if let Some(fix) = frame_without_https(state, &c.headers) {
        let page = refusal_html(&s.name, &frame_refusal(fix), &css);
        return (StatusCode::SERVICE_UNAVAILABLE, plain_page(page, None)).into_response();
    }
    let worker = match &crowd {
        Some((_, known)) => *known,
        None => match signed_in_worker(&c) {
            Some(u) => Some(u.id),
            None => return Redirect::to(&format!("/study/{study_id}")).into_response(),
        },
    };
    // A crowd session at a link without its crowd ids was not sent here.
    if let (None, Some(w)) = (&crowd, worker) {
        match auth::is_crowd_account(&state.pool, w).await {
            Ok(true) => {
                let page = refusal_html(&s.name, NOT_SENT_HERE, &css);
                return (StatusCode::CONFLICT, plain_page(page, None)).into_response();
            }
            Ok(false) => {}
            Err(e) => return AppError::from(e).into_response(),
        }
    }
    let presence = match (worker, &crowd) {
        (Some(w), Some((info, _))) => {
            study::present(&state.writer, &s, w, info, state.now_ms()).await
        }
        (Some(w), None) => study::has_place(&state.pool, study_id, w)
            .await
            .map(|has| has.then_some(Presence::Continue)),
        (None, _) => Ok(None),
    };
    let returning = match presence {
        Ok(Some(Presence::Ended { finished })) => {
            let info = crowd.as_ref().map(|(i, _)| i);
            return took_part(&s.name, info, finished, &css);
        }
        Ok(Some(Presence::Continue)) => true,
        Ok(None) => false,
        Err(e) => return AppError::from(e).into_response(),
    };
    let action = match raw.filter(|r| !r.is_empty()) {
        Some(r) => format!("/join/{study_id}?{r}"),
        None => format!("/join/{study_id}"),
    };
    // While the worker reads this page, the browser fetches the study page's bundle.
    let bundle = WorkerBundle::for_form(s.spec.family.answer_form());
    let preload = match app::ssr::assets::worker_bundle(&state.leptos_options, bundle) {
        Some((js, wasm)) => format!(
            r#"<link rel="modulepreload" href="{js}"><link rel="preload" href="{wasm}" as="fetch" type="application/wasm" crossorigin>"#
        ),
        None => String::new(),
    };
    let nonce = app::ssr::assets::fresh_nonce();
    let page = start_html(&s.name, &action, &css, &preload, returning, &nonce);
    plain_page(page, Some(&nonce))
}

/// The page of a worker who already took part and comes with another assignment or session:
/// return it (409: nothing is done for it).
fn took_part(study: &str, crowd: Option<&CrowdInfo>, finished: bool, css: &str) -> Response {
    let id = crowd.and_then(|c| c.presented_id()).unwrap_or_default();
    let message = took_part_message(crowd.and_then(|c| c.platform), finished, id);
    let page = refusal_html(study, &message, css);
    (StatusCode::CONFLICT, plain_page(page, None)).into_response()
}

/// The study of a preview and the item its page shows as an example: the first test item
/// (its answer is not shown, and every worker sees it anyway).
async fn preview(
    state: &AppState,
    study_id: StudyId,
) -> Result<(Study, Option<domain::wire::tasks::ItemPreview>), AppError> {
    let s = study::load(&state.pool, study_id).await?;
    let example = match store::catalog::preview_item(&state.pool, &s.spec.name, 0).await {
        Ok(item) => Some(item),
        Err(store::Error::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    Ok((s, example))
}

/// `POST /join/{study}`: signs the crowd worker in (no password step), takes a place, and
/// sends the browser to the study page, which shows the step or the refusal. Refused when
/// posted from another site (login CSRF), when posted without the start page's script (the
/// study page cannot be answered without JavaScript: nothing is taken), when one address brings
/// too many new workers, when a crowd session comes without its study link, and (with a page
/// that says so, and no account made) when a new worker finds the study full or a worker who
/// took part comes with a new assignment or session.
pub async fn join(
    c: Ctx<Visitor>,
    Path(study_id): Path<StudyId>,
    Params(q): Params<LinkQuery>,
    extensions: Extensions,
    body: Bytes,
) -> Response {
    if let Err(e) = c.same_site("a study link") {
        return e.into_response();
    }
    if q.is_preview() {
        return AppError::Refused(PREVIEW_REFUSAL.into()).into_response();
    }
    let state = &c.state;
    let css = app::ssr::assets::stylesheet(&state.leptos_options);
    if !started_by_script(&body) {
        let name = match study::load(&state.pool, study_id).await {
            Ok(s) => s.name,
            Err(e) => return AppError::from(e).into_response(),
        };
        let page = refusal_html(&name, NO_SCRIPT_REFUSAL, &css);
        return (StatusCode::BAD_REQUEST, plain_page(page, None)).into_response();
    }
    let peer = extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let headers = &c.headers;
    let now = state.now_ms();
    let result: Result<Joined, AppError> = async {
        let pool = &state.pool;
        let (s, crowd) = check_link(state, study_id, &q).await?;
        match &crowd {
            Some((c, None)) => {
                state.limiter.new_worker(state.client(headers, peer))?;
                new_worker(state, s, c, now).await
            }
            Some((c, Some(_))) => {
                let (platform, worker) = c.identity().map_err(AppError::Invalid)?;
                let user = auth::crowd_worker(pool, platform, worker).await?;
                match study::enter(&state.writer, &s, user.id, Some(c), now).await {
                    Ok((_, Presence::Ended { finished })) => {
                        return Ok(Joined::TookPart(s.name, c.clone(), finished))
                    }
                    Ok((_, Presence::Continue)) => {}
                    // Another scenario of the task, a full or closed study: said at once.
                    Err(store::Error::Refused(reason)) => {
                        return Ok(Joined::Refused(s.name, reason))
                    }
                    Err(e) => return Err(e.into()),
                }
                let token = auth::open_session(pool, user.id).await?;
                Ok(Joined::Worker(Some(token)))
            }
            None => match signed_in_worker(&c) {
                Some(user) => {
                    // A crowd session takes a place only through a link that names it.
                    if auth::is_crowd_account(pool, user.id).await? {
                        return Ok(Joined::Refused(s.name, NOT_SENT_HERE.into()));
                    }
                    match study::enter(&state.writer, &s, user.id, None, now).await {
                        Ok(_) => Ok(Joined::Worker(None)),
                        Err(store::Error::Refused(reason)) => Ok(Joined::Refused(s.name, reason)),
                        Err(e) => Err(e.into()),
                    }
                }
                None => Ok(Joined::Nobody),
            },
        }
    }
    .await;
    let target = format!("/study/{study_id}");
    match result {
        Ok(Joined::Worker(Some(token))) => (
            [(
                header::SET_COOKIE,
                worker_session_cookie(&token, state.secure_cookie_for(headers)),
            )],
            Redirect::to(&target),
        )
            .into_response(),
        Ok(Joined::Worker(None) | Joined::Nobody) => Redirect::to(&target).into_response(),
        Ok(Joined::Refused(name, reason)) => {
            let page = refusal_html(&name, &reason, &css);
            (StatusCode::CONFLICT, plain_page(page, None)).into_response()
        }
        Ok(Joined::TookPart(name, crowd, finished)) => {
            took_part(&name, Some(&crowd), finished, &css)
        }
        Err(e) => e.into_response(),
    }
}

/// A new crowd id takes a place. At a full study it is told so at once, before any write; the
/// account is made only with a place (a refusal leaves nothing behind).
async fn new_worker(
    state: &AppState,
    s: Study,
    c: &CrowdInfo,
    now: i64,
) -> Result<Joined, AppError> {
    if !study::has_free_place(&state.pool, &s, now).await? {
        return Ok(Joined::Refused(s.name, Refusal::Full.to_string()));
    }
    match study::enter_new(&state.writer, &s, c, now).await {
        Ok((_, token)) => {
            on_arrival(state, s.id, c);
            Ok(Joined::Worker(Some(token)))
        }
        Err(store::Error::Refused(reason)) => Ok(Joined::Refused(s.name, reason)),
        Err(e) => Err(e.into()),
    }
}

/// A new worker of a study published on their platform is put on the task's list there (the
/// platform then offers them no other scenario of the task), beside the answer: the worker
/// never waits for it, and a sync does it too where this is lost.
fn on_arrival(state: &AppState, study: StudyId, crowd: &CrowdInfo) {
    let (pool, clock, crowd) = (state.pool.clone(), state.clock.clone(), crowd.clone());
    tokio::spawn(async move {
        if let Err(e) = platforms::flow::on_arrival(&pool, study, &crowd, &clock).await {
            tracing::warn!("study {study}: the arrival was not put on the platform's list: {e}");
        }
    });
}

/// Whether the Start form was sent by the start page's script (`script=1`, which the script
/// adds as it sends the form): a browser without JavaScript could take a place it cannot work
/// in.
fn started_by_script(body: &[u8]) -> bool {
    body.split(|&b| b == b'&').any(|field| field == b"script=1")
}

/// How a post of a study link ended: a worker signed in (with a new session's token for a crowd
/// worker), nobody (the study page says what to do), a new crowd id turned away (the study's
/// name and why, no account made), or a worker who took part told to return what they came
/// with (the study's name, the link's ids, whether they had finished).
enum Joined {
    Worker(Option<String>),
    Nobody,
    Refused(String, String),
    TookPart(String, CrowdInfo, bool),
}

/// One of the link's plain pages with its script policy: the inline script that carries
/// `nonce` runs, nothing else does (`None`: no script at all).
fn plain_page(html: String, nonce: Option<&str>) -> Response {
    let mut res = Html(html).into_response();
    if let Ok(value) = HeaderValue::from_str(&domain::crowd::script_policy(nonce)) {
        res.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
    res
}

/// Why a page in another site's frame (`Sec-Fetch-Dest: iframe`, `Sec-Fetch-Site: cross-site`)
/// would lose its session: the server does not see HTTPS, so the crowd cookie cannot be
/// `SameSite=None; Secure; Partitioned`. Names what the operator must configure (logged once).
fn frame_without_https(state: &AppState, headers: &axum::http::HeaderMap) -> Option<&'static str> {
    let says = |name: &str, value: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case(value))
    };
    if !(says("sec-fetch-dest", "iframe") && says("sec-fetch-site", "cross-site"))
        || state.secure_cookie_for(headers)
    {
        return None;
    }
    let fix = match (headers.contains_key("x-forwarded-for"), state.trust_proxy) {
        (true, true) => {
            "the proxy in front of clues-lab does not send X-Forwarded-Proto: https \
             (nginx: proxy_set_header X-Forwarded-Proto $scheme;)"
        }
        (true, false) => {
            "clues-lab runs behind a proxy without --trust-proxy (start it with --trust-proxy, \
             and have the proxy send X-Forwarded-Proto: https)"
        }
        (false, _) => {
            "clues-lab is not served over HTTPS (put it behind a TLS proxy and start it with \
             --trust-proxy, or give --secure-cookies where TLS ends in front of it)"
        }
    };
    static LOGGED: std::sync::Once = std::sync::Once::new();
    LOGGED.call_once(|| {
        tracing::error!("a crowd platform frames the study link, but {fix}: framed workers cannot keep a session (see docs/src/field-guide.md)");
    });
    Some(fix)
}

/// What the framed worker (or the researcher piloting the HIT) reads instead of Start.
fn frame_refusal(fix: &str) -> String {
    format!(
        "This study cannot run inside this frame yet: the server does not know that it is \
         reached over HTTPS, so your browser would not keep your session here. Nothing was \
         recorded; please tell the researcher. For the researcher: {fix}."
    )
}

/// The request's signed-in user if a worker.
fn signed_in_worker(c: &Ctx<Visitor>) -> Option<&User> {
    c.who.0.as_ref().filter(|u| u.role == Role::Worker)
}

/// What a preview's Start would say: nothing is taken before the HIT is accepted.
const PREVIEW_REFUSAL: &str =
    "This is a preview of the HIT: accept it on MTurk to begin; nothing was recorded.";

/// What a Start sent without the page's script is told.
const NO_SCRIPT_REFUSAL: &str = "This study's page needs JavaScript, which is turned off in this browser: turn it on, open the study link again and press Start. Nothing was recorded, and no place was taken.";

/// What a crowd session is told at a study link that does not name it.
const NOT_SENT_HERE: &str = "You were not sent to this study by your crowd platform: open it through the link the platform gives you for it. Nothing was recorded.";
