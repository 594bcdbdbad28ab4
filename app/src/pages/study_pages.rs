//! The worker's view of a study's own pages: the consent text with Accept and Decline, the
//! questionnaires (native radio buttons, check boxes, scales, text and number fields, so they
//! work by keyboard, on phones and with screen readers), and the page after declining.

use super::error_line;
use super::sender::page_ready;
use crate::api::study::{answer_questionnaire, give_consent};
use crate::domain::ids::StudyId;
use crate::domain::study_pages::questionnaire::Kind;
use crate::domain::study_pages::{Question, Replies, Reply, Stage};
use crate::error::AppError;
use crate::wire::study::{ConsentPage, Declined, QuestionnairePage, WorkerStep};
use leptos::either::EitherOf4;
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
    view! {
        <section class="consent">
            <h2 class="step-heading" tabindex="-1">"Consent to take part"</h2>
            <div class="consent-text" inner_html=page.html></div>
            <p class="contact">"Questions about this study: " {page.contact}</p>
            <p>"Please read the text above. Nothing of your work is kept unless you agree."</p>
            <div class="buttons">
                <button class="accept" on:click=move |_| answer(true) disabled=step.disabled()>"I agree to take part"</button>
                <button class="decline" on:click=move |_| answer(false) disabled=step.disabled()>"I do not agree"</button>
            </div>
            {step.failure_view()}
        </section>
    }
}

pub(super) fn declined_view(d: Declined) -> impl IntoView {
    view! {
        <section class="declined">
            <h2 class="step-heading" tabindex="-1">"You did not consent"</h2>
            <p role="status">{d.message}</p>
            {super::study::hand_back_view(d.hand_back, true, false)}
        </section>
    }
}

/// What one field of the questionnaire holds, as typed (a number field keeps its text, so
/// the server can say what is wrong with it).
fn reply_of(kind: Kind, value: &str) -> Option<Reply> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    Some(match kind {
        Kind::Likert | Kind::Number => v
            .parse::<f64>()
            .map(Reply::Number)
            .unwrap_or_else(|_| Reply::Text(v.to_string())),
        _ => Reply::Text(value.to_string()),
    })
}

#[component]
pub(super) fn QuestionnaireView(
    study_id: StudyId,
    page: QuestionnairePage,
    go: Callback<WorkerStep>,
) -> impl IntoView {
    let QuestionnairePage { stage, questions } = page;
    let replies = RwSignal::new(Replies::new());
    let step = Step::new(go);
    let heading = match stage {
        Stage::Before => "Before you start: a few questions",
        Stage::After => "Last step: a few questions",
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        step.run(answer_questionnaire(
            study_id,
            stage,
            replies.get_untracked(),
        ));
    };
    view! {
        <form class="questionnaire" data-stage=stage.as_str() on:submit=submit>
            <h2 class="step-heading" tabindex="-1">{heading}</h2>
            <p class="hint">"Questions marked * need an answer."</p>
            {questions.into_iter().map(|q| question_view(q, replies)).collect_view()}
            <div class="buttons">
                <button class="submit" type="submit" disabled=step.disabled()>"Continue"</button>
            </div>
            {step.failure_view()}
        </form>
    }
}

fn question_view(q: Question, replies: RwSignal<Replies>) -> impl IntoView {
    let id = q.id.clone();
    let set = {
        let id = id.clone();
        move |reply: Option<Reply>| {
            replies.update(|r| {
                match reply {
                    Some(x) => r.insert(id.clone(), x),
                    None => r.remove(&id),
                };
            })
        }
    };
    let legend = format!("{}{}", q.text.trim(), if q.required { " *" } else { "" });
    let name = format!("q-{id}");
    let kind = q.kind;
    let input = match kind {
        Kind::SingleChoice | Kind::Likert => {
            let points: Vec<(String, String)> = if kind == Kind::Likert {
                let n = q.likert_points();
                (1..=n)
                    .map(|p| {
                        let end = match p {
                            1 => q.low.clone(),
                            _ if p == n => q.high.clone(),
                            _ => None,
                        };
                        let label = end.map_or(p.to_string(), |e| format!("{p} {e}"));
                        (p.to_string(), label)
                    })
                    .collect()
            } else {
                q.options.iter().map(|o| (o.clone(), o.clone())).collect()
            };
            EitherOf4::A(view! {
                <div class=if kind == Kind::Likert { "choices scale" } else { "choices" }>
                    {points.into_iter().map(|(value, label)| {
                        let set = set.clone();
                        let v = value.clone();
                        view! {
                            <label class="choice"><input type="radio" name=name.clone() value=value required=q.required
                                on:change=move |_| set(reply_of(kind, &v))/> " " {label}</label>
                        }
                    }).collect_view()}
                </div>
            })
        }
        Kind::MultipleChoice => EitherOf4::B(view! {
            <div class="choices">
                {q.options.iter().map(|o| {
                    let option = o.clone();
                    let id = id.clone();
                    view! {
                        <label class="choice"><input type="checkbox" name=name.clone() value=o.clone()
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                replies.update(|r| {
                                    let mut chosen = match r.remove(&id) {
                                        Some(Reply::Choices(c)) => c,
                                        _ => Vec::new(),
                                    };
                                    chosen.retain(|c| c != &option);
                                    if on {
                                        chosen.push(option.clone());
                                    }
                                    if !chosen.is_empty() {
                                        r.insert(id.clone(), Reply::Choices(chosen));
                                    }
                                });
                            }/> " " {o.clone()}</label>
                    }
                }).collect_view()}
            </div>
        }),
        Kind::ShortText => EitherOf4::C(view! {
            <input type="text" name=name.clone() aria-label=legend.clone() maxlength=q.text_chars().to_string()
                required=q.required on:input=move |ev| set(reply_of(kind, &event_target_value(&ev)))/>
        }),
        Kind::Number => EitherOf4::D(view! {
            <input type="number" name=name.clone() aria-label=legend.clone()
                inputmode=if q.integer { "numeric" } else { "decimal" }
                min=q.min.map(|m| m.to_string()) max=q.max.map(|m| m.to_string())
                step=if q.integer { "1" } else { "any" }
                required=q.required on:input=move |ev| set(reply_of(kind, &event_target_value(&ev)))/>
        }),
    };
    view! {
        <fieldset class="question" data-question=id>
            <legend>{legend}</legend>
            {input}
        </fieldset>
    }
}
