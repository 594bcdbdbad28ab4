//! The worker's view of a study's own pages: the consent text with Accept and Decline (each
//! confirmed before it is sent: both are final), the
//! questionnaires (the server's native form fields, so they work by keyboard, on phones and
//! with screen readers, posted back as they are), and the page after declining.

use super::browser::focus_first;
use super::sender::page_ready;
use crate::api::study::{answer_questionnaire, give_consent};
use crate::error::AppError;
use crate::pages::error_line;
use crate::wire::study::{ConsentPage, Declined, QuestionnairePage, WorkerStep};
use domain::ids::StudyId;
use domain::study_pages::Stage;
use leptos::either::Either;
use leptos::prelude::*;

/// Runs a request of the page's step and moves on to the step it answers; while it runs the
/// buttons are disabled, and a failure is shown under them.
#[derive(Clone, Copy)]
struct Step {
    busy: RwSignal<bool>,
    failure: RwSignal<Option<AppError>>,
    ready: Signal<bool>,
    go: Callback<WorkerStep>,
}

impl Step {
    fn new(go: Callback<WorkerStep>) -> Self {
        Step {
            busy: RwSignal::new(false),
            failure: RwSignal::new(None),
            ready: page_ready(),
            go,
        }
    }

    fn disabled(self) -> impl Fn() -> bool + Copy {
        move || self.busy.get() || !self.ready.get()
    }

    fn run<F>(self, request: F)
    where
        F: std::future::Future<Output = Result<WorkerStep, AppError>> + 'static,
    {
        self.busy.set(true);
        self.failure.set(None);
        leptos::task::spawn_local(async move {
            match request.await {
                Ok(next) => self.go.run(next),
                Err(e) => {
                    self.busy.set(false);
                    self.failure.set(Some(e));
                }
            }
        });
    }

    fn failure_view(self) -> impl IntoView {
        move || self.failure.get().map(error_line)
    }
}

pub(super) fn consent_view(
    study_id: StudyId,
    page: ConsentPage,
    go: Callback<WorkerStep>,
) -> impl IntoView {
    let step = Step::new(go);
    let answer = move |accept: bool| step.run(give_consent(study_id, accept));
    // The choice made, waiting for its confirmation (`None`: none yet). Focus follows: to the
    // confirmation, and back to the choice on Go back.
    let chosen = RwSignal::new(None::<bool>);
    Effect::new(move |first: Option<()>| {
        let now = chosen.get();
        if first.is_some() {
            focus_first(match now {
                Some(_) => ".consent button.confirm",
                None => ".consent button.accept",
            });
        }
    });
    let choice = move || match chosen.get() {
        None => Either::Left(view! {
            <div class="buttons">
                <button
                    class="accept"
                    on:click=move |_| chosen.set(Some(true))
                    disabled=step.disabled()
                >
                    "I agree to take part"
                </button>
                <button
                    class="decline"
                    on:click=move |_| chosen.set(Some(false))
                    disabled=step.disabled()
                >
                    "I do not agree"
                </button>
            </div>
        }),
        Some(accept) => Either::Right(view! {
            <div class="confirm-choice" role="group" aria-label="Confirm your choice">
                <p>
                    {if accept {
                        "You agree to take part: your work is kept as the text above says."
                    } else {
                        "You do not agree: you leave the study, and nothing of your work is kept."
                    }} " This choice is final."
                </p>
                <div class="buttons">
                    <button
                        class="confirm"
                        on:click=move |_| answer(accept)
                        disabled=step.disabled()
                    >
                        {if accept { "Yes, I agree" } else { "Yes, I do not agree" }}
                    </button>
                    <button
                        class="back"
                        on:click=move |_| chosen.set(None)
                        disabled=step.disabled()
                    >
                        "Go back"
                    </button>
                </div>
            </div>
        }),
    };
    view! {
        <section class="consent">
            <h2 class="step-heading" tabindex="-1">
                "Consent to take part"
            </h2>
            <div class="consent-text" inner_html=page.html></div>
            <p class="contact">"Questions about this study: " {page.contact}</p>
            <p class="recorded">{domain::crowd::RECORDED}</p>
            <p>"Please read the text above. Nothing of your work is kept unless you agree."</p>
            {choice}
            {step.failure_view()}
        </section>
    }
}

pub(super) fn declined_view(d: Declined) -> impl IntoView {
    view! {
        <section class="declined">
            <h2 class="step-heading" tabindex="-1">
                "You did not consent"
            </h2>
            <p role="status">{d.message}</p>
            {super::hand_back::hand_back_view(d.hand_back, true, false)}
        </section>
    }
}

/// The form's fields as the browser would post them (name, value), in order.
fn form_fields(form: &web_sys::HtmlFormElement) -> Vec<(String, String)> {
    use web_sys::js_sys;
    let Ok(data) = web_sys::FormData::new_with_form(form) else {
        return Vec::new();
    };
    let Ok(Some(entries)) = js_sys::try_iter(&data) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|pair| {
            let pair = js_sys::Array::from(&pair);
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// A questionnaire: its fields come as HTML from the server (native controls, so the browser
/// asks for required answers and Enter submits), and are posted back as they are.
#[component]
pub(super) fn QuestionnaireView(
    study_id: StudyId,
    page: QuestionnairePage,
    go: Callback<WorkerStep>,
) -> impl IntoView {
    use web_sys::wasm_bindgen::JsCast;
    let QuestionnairePage { stage, html } = page;
    let step = Step::new(go);
    let heading = match stage {
        Stage::Before => "Before you start: a few questions",
        Stage::After => "Last step: a few questions",
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlFormElement>().ok());
        if let Some(form) = form {
            step.run(answer_questionnaire(study_id, stage, form_fields(&form)));
        }
    };
    view! {
        <form class="questionnaire" data-stage=stage.as_str() on:submit=submit>
            <h2 class="step-heading" tabindex="-1">
                {heading}
            </h2>
            <p class="hint">"Questions marked * need an answer."</p>
            <div class="questions" inner_html=html></div>
            <div class="buttons">
                <button class="submit" type="submit" disabled=step.disabled()>
                    "Continue"
                </button>
            </div>
            {step.failure_view()}
        </form>
    }
}
