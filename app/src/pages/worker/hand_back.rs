//! The way back to the crowd platform at the end of a study (or after declining consent):
//! Prolific's completion link, MTurk's `externalSubmit` form, taken by itself after a moment.

use domain::crowd::HandBack;
use leptos::either::EitherOf3;
use leptos::prelude::*;

/// Seconds the end page shows the completion code before it hands the worker back by itself.
const HAND_BACK_SECONDS: u64 = 3;

/// After `HAND_BACK_SECONDS` (in the browser only), `then`.
fn after_a_moment(then: impl FnOnce() + 'static) {
    let then = std::cell::Cell::new(Some(then));
    Effect::new(move |_| {
        if let Some(f) = then.take() {
            set_timeout(f, std::time::Duration::from_secs(HAND_BACK_SECONDS));
        }
    });
}

/// The way back to the crowd platform, taken by itself after a moment when `auto` (as Prolific
/// asks and MTurk's ExternalQuestion expects): Prolific's completion URL with the code, MTurk's
/// `externalSubmit` form. The link and the button stay, in case the browser does not go; with
/// `auto` false (a debriefing to read first) they are all there is.
/// `with_code`: the way back carries a completion code (not so after declining consent).
pub(super) fn hand_back_view(h: Option<HandBack>, auto: bool, with_code: bool) -> impl IntoView {
    use web_sys::wasm_bindgen::JsCast;
    let soon = format!("in {HAND_BACK_SECONDS} seconds");
    let code = if with_code {
        " with your completion code"
    } else {
        ""
    };
    let short = if with_code { " with your code" } else { "" };
    match h {
        Some(HandBack::Link { platform, url }) => {
            let target = url.clone();
            if auto {
                after_a_moment(move || {
                    if let Some(w) = web_sys::window() {
                        let _ = w.location().assign(&target);
                    }
                });
            }
            EitherOf3::A(view! {
                {auto
                    .then(|| {
                        view! {
                            <p class="hand-back" role="status">
                                {format!("Taking you back to {platform}{short} {soon}.")}
                            </p>
                        }
                    })}
                <p>
                    <a class="return-link" href=url>
                        {format!("Return to {platform}{code} now")}
                    </a>
                </p>
            })
        }
        Some(HandBack::MturkSubmit {
            action,
            assignment_id,
            code,
        }) => {
            if auto {
                after_a_moment(|| {
                    let form = web_sys::window()
                        .and_then(|w| w.document())
                        .and_then(|d| d.query_selector("form.mturk-submit").ok().flatten())
                        .and_then(|f| f.dyn_into::<web_sys::HtmlFormElement>().ok());
                    if let Some(form) = form {
                        let _ = form.submit();
                    }
                });
            }
            EitherOf3::B(view! {
                {auto
                    .then(|| {
                        view! {
                            <p class="hand-back" role="status">
                                {format!("Submitting the HIT on MTurk for you {soon}.")}
                            </p>
                        }
                    })}
                <form class="hand-back mturk-submit" method="post" action=action>
                    <input type="hidden" name="assignmentId" value=assignment_id />
                    <input type="hidden" name="completion_code" value=code />
                    <button type="submit">"Submit the HIT on MTurk now"</button>
                </form>
            })
        }
        None => EitherOf3::C(()),
    }
}
