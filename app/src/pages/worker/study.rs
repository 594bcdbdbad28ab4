//! The worker's study page: the current item first (the task description and how to answer
//! one tap away on a phone), the revealed gold after a training submission, the completion
//! code and the hand-back to the crowd platform. Moves on only after the server saved an
//! answer, to the step its acknowledgement carries (one request per answer); focus and a live
//! region follow each step.

use super::annotate::answer_view;
use super::answer_forms::{label_form, text_form};
use super::browser::focus_first;
use super::hand_back::hand_back_view;
use super::sender::Sender;
use super::signals::Signals;
use super::span_form::span_form;
use super::study_pages::{consent_view, declined_view, QuestionnaireView};
use crate::api::study::{continue_study, study_state};
use crate::error::AppError;
use crate::pages::{context_view, error_line};
use crate::wire::study::{Completion, Reveal, SubmitAck, WorkerItem, WorkerStep, WorkerStudy};
use domain::crowd::how_to_answer;
use domain::feedback::{feedback, two_decimals};
use domain::ids::{AssignmentId, StudyId};
use domain::task::{AnswerForm, Family, Label};
use leptos::either::{Either, EitherOf3, EitherOf4, EitherOf6};
use leptos::prelude::*;

#[component]
pub fn WorkerStudyPage() -> impl IntoView {
    let id = crate::pages::study_id_of_page();
    let version = RwSignal::new(0u32);
    let state = Resource::new(move || (id, version.get()), |(id, _)| study_state(id));
    let reload = Callback::new(move |_: ()| version.update(|v| *v += 1));
    // Why the page moved by itself (an answer refused because the item was answered in
    // another tab); kept across the reload that follows.
    let notice = RwSignal::new(None::<String>);
    view! {
        <Transition fallback=|| {
            view! { <p>"Loading your study…"</p> }
        }>
            {move || Suspend::new(async move {
                match state.await {
                    Ok(ws) => EitherOf3::A(view! { <WorkerView ws reload notice /> }),
                    Err(AppError::NotSignedIn) => {
                        EitherOf3::B(
                            view! {
                                <p class="error" role="alert">
                                    "Please open this study through the link on your crowd platform (it signs you in), or sign in with a worker account first."
                                </p>
                            },
                        )
                    }
                    Err(e) => EitherOf3::C(error_line(e)),
                }
            })}
        </Transition>
    }
}

/// The keyboard help of span tasks (the text is focused with Tab).
const SPAN_KEYS: [(&str, &str); 7] = [
    ("← →", "previous / next word"),
    ("Alt + ← →", "one character"),
    ("Page Up / Page Down", "previous / next sentence"),
    ("Home / End", "start / end of the text"),
    ("Shift + any of these", "extend the selection"),
    ("A or Enter", "add the selection as an answer"),
    ("Find box", "type the answer's words, Enter selects them"),
];

/// What the live region says when the page shows `step`.
fn announcement(step: &WorkerStep) -> String {
    match step {
        WorkerStep::Item(i) => {
            format!(
                "Saved. {} {} of {}: {}",
                i.phase.item_label(),
                i.index,
                i.of,
                i.question
            )
        }
        WorkerStep::Done(c) => format!("Saved. You are done; your completion code is {}.", c.code),
        WorkerStep::Abandoned => "Your place in this study was released.".into(),
        WorkerStep::Consent(_) => "Consent to take part.".into(),
        WorkerStep::Questionnaire(_) => "Saved. A few questions.".into(),
        WorkerStep::Declined(d) => d.message.clone(),
    }
}

#[component]
fn WorkerView(
    ws: WorkerStudy,
    reload: Callback<()>,
    notice: RwSignal<Option<String>>,
) -> impl IntoView {
    let WorkerStudy {
        study_id,
        place,
        study_name,
        description,
        family,
        labels,
        k,
        screening_items,
        training_items,
        test_items,
        step,
    } = ws;
    let scenario = scenario_line(k, screening_items, training_items, test_items);
    let step = RwSignal::new(step);
    let live = RwSignal::new(String::new());
    let go = Callback::new(move |next: WorkerStep| {
        live.set(announcement(&next));
        notice.set(None);
        step.set(next);
    });
    // At the end page nothing of the place is left in the browser (a shared computer's next
    // worker finds no draft of it).
    Effect::new(move |_| {
        if matches!(*step.read(), WorkerStep::Done(_)) {
            super::draft::forget_place(study_id, place);
        }
    });
    // After a move (not on the first showing), focus goes to the new step's heading.
    Effect::new(move |first: Option<()>| {
        step.track();
        if first.is_some() {
            focus_first(".work .step-heading");
        }
    });
    let labels = StoredValue::new(labels);
    // A refused answer: say why, and show the step the worker is really at.
    let refused = Callback::new(move |reason: String| {
        notice.set(Some(format!(
            "Your answer to that item was not stored: {reason} This is where you are now."
        )));
        reload.run(());
    });
    let body = move || match step.get() {
        WorkerStep::Item(item) => EitherOf6::A(
            view! { <ItemView study_id place item family labels=labels.get_value() live go reload refused /> },
        ),
        WorkerStep::Done(c) => EitherOf6::B(done_view(c)),
        WorkerStep::Consent(page) => EitherOf6::D(consent_view(study_id, page, go)),
        WorkerStep::Questionnaire(page) => {
            EitherOf6::E(view! { <QuestionnaireView study_id page go /> })
        }
        WorkerStep::Declined(d) => EitherOf6::F(declined_view(d)),
        WorkerStep::Abandoned => EitherOf6::C(view! {
            <p class="error step-heading" role="alert" tabindex="-1">
                {format!(
                    "Your place in this study was released after a long time without activity. The answers you gave are kept. {}. Thank you.",
                    domain::platform::RETURN_ON_ANY,
                )}
            </p>
        }),
    };
    view! {
        <section class="study" data-k=k>
            <h1 class="study-name">{study_name}</h1>
            <p class="scenario">
                {scenario}
                // Phones show the item first; the instructions are below it, one tap away.
                <a class="to-instructions" href="#instructions">
                    "Instructions"
                </a>
            </p>
            {move || {
                notice
                    .get()
                    .map(|n| {
                        view! {
                            <p class="notice" role="status">
                                {n}
                            </p>
                        }
                    })
            }}
            <div class="study-layout">
                <div class="work">{body}</div>
                {instructions(description, family)}
            </div>
            <div class="sr-only live" role="status" aria-live="polite" aria-atomic="true">
                {move || live.get()}
            </div>
        </section>
    }
}

/// Beside (on a phone, below) the item: the task, how to answer, the keys of a span task, and
/// what the page records.
fn instructions(description: String, family: Family) -> impl IntoView {
    view! {
        <aside class="instructions" id="instructions">
            <h2>"The task"</h2>
            <p class="description">{description}</p>
            <h2>"How to answer"</h2>
            <p>{how_to_answer(family)}</p>
            {keyboard_help(family)}
            <h2>"What this page records"</h2>
            <p class="recorded">{domain::crowd::RECORDED}</p>
        </aside>
    }
}

/// What the worker's scenario holds, in words.
fn scenario_line(k: u32, screening_items: i64, training_items: i64, test_items: i64) -> String {
    let scenario = if k == 0 {
        format!("Zero-shot: {test_items} test items")
    } else {
        format!(
            "{k}-shot: {training_items} training examples with the correct answers shown after each, then {test_items} test items"
        )
    };
    if screening_items > 0 {
        format!("First {screening_items} screening items (no answers shown). {scenario}")
    } else {
        scenario
    }
}

/// The keys of the span form (not for label or free-text tasks); touch screens have no use for
/// it (hidden there by the stylesheet).
fn keyboard_help(family: Family) -> Option<impl IntoView> {
    (family.answer_form() == AnswerForm::Spans).then(|| {
        view! {
            <div class="keyboard-help">
                <h2>"Keyboard"</h2>
                <dl class="keys">
                    {SPAN_KEYS
                        .iter()
                        .map(|(k, what)| {
                            view! {
                                <dt>
                                    <kbd>{*k}</kbd>
                                </dt>
                                <dd>{*what}</dd>
                            }
                        })
                        .collect_view()}
                </dl>
            </div>
        }
    })
}

fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as i64;
    format!("{} min {:02} s", s / 60, s % 60)
}

fn done_view(c: Completion) -> impl IntoView {
    view! {
        <section class="done">
            <h2 class="step-heading" tabindex="-1">
                "Thank you, you are done."
            </h2>
            <p>"Your completion code:"</p>
            <p class="completion-code">{c.code}</p>
            {(!c.debriefing_html.is_empty())
                .then(|| {
                    view! {
                        <div class="debriefing">
                            <h3>"About this study"</h3>
                            <div inner_html=c.debriefing_html.clone()></div>
                        </div>
                    }
                })}
            {hand_back_view(c.hand_back, c.debriefing_html.is_empty(), true)}
            <ul class="summary">
                {(c.training_items > 0)
                    .then(|| {
                        view! {
                            <li>
                                {format!(
                                    "Training: {} examples, average score {} (1 = every answer right)",
                                    c.training_items,
                                    two_decimals(c.training_s1.unwrap_or(0.0)),
                                )}
                            </li>
                        }
                    })} <li>{format!("Test: {} items, {} skipped", c.test_items, c.skipped)}</li>
                <li class="time">
                    {format!(
                        "Time on items: {}; from start to finish: {}",
                        minutes(c.seconds_on_items),
                        minutes(c.seconds_elapsed),
                    )}
                </li>
            </ul>
        </section>
    }
}

#[component]
fn ItemView(
    study_id: StudyId,
    place: AssignmentId,
    item: WorkerItem,
    family: Family,
    labels: Vec<Label>,
    live: RwSignal<String>,
    go: Callback<WorkerStep>,
    reload: Callback<()>,
    refused: Callback<String>,
) -> impl IntoView {
    let WorkerItem {
        position,
        phase,
        index,
        of,
        context,
        question,
        reveal,
    } = item;
    let phase_name = phase.item_label();
    let revealed = RwSignal::new(reveal);
    let done = Callback::new(move |ack: SubmitAck| {
        if let Some(r) = ack.reveal {
            live.set(format!(
                "Saved. {} Press Continue.",
                feedback(&r.yours, &r.gold, r.s1).1
            ));
            revealed.set(Some(r));
        } else if let Some(next) = ack.next {
            go.run(next);
        } else {
            reload.run(());
        }
    });
    let texts = [
        Some(context.primary()),
        context.second(),
        Some(question.as_str()),
    ]
    .into_iter()
    .flatten()
    .map(str::to_string)
    .collect();
    let signals = Signals::new(texts);
    let sender = Sender::new(study_id, place, position, live, done, refused, signals);
    let context = StoredValue::new(context);
    let labels = StoredValue::new(labels);
    let answer = move || match (revealed.get(), family.answer_form()) {
        (Some(r), _) => EitherOf4::A(view! {
            <div>{context.with_value(context_view)}</div>
            {reveal_view(study_id, position, r, go)}
        }),
        (None, AnswerForm::Label) => EitherOf4::B(view! {
            <div>{context.with_value(context_view)}</div>
            {label_form(labels.get_value(), sender)}
        }),
        (None, AnswerForm::Text) => EitherOf4::C(view! {
            <div>{context.with_value(context_view)}</div>
            {text_form(sender)}
        }),
        (None, AnswerForm::Spans) => EitherOf4::D(span_form(
            context.with_value(|c| c.primary().to_string()),
            sender,
        )),
    };
    view! {
        <article class="item" data-phase=phase.as_str() data-position=position>
            <h2 class="progress step-heading" tabindex="-1">
                {format!("{phase_name} {index} of {of}")}
            </h2>
            <p class="question">{question}</p>
            {answer}
        </article>
    }
}

fn reveal_view(
    study_id: StudyId,
    position: i64,
    r: Reveal,
    go: Callback<WorkerStep>,
) -> impl IntoView {
    let moving = RwSignal::new(false);
    let failure = RwSignal::new(None::<AppError>);
    let go_on = move |_| {
        moving.set(true);
        leptos::task::spawn_local(async move {
            match continue_study(study_id, position).await {
                Ok(next) => go.run(next),
                Err(e) => {
                    moving.set(false);
                    failure.set(Some(e));
                }
            }
        });
    };
    // Keyboard users go on with Enter; the live region has read the feedback.
    Effect::new(move |_| focus_first(".reveal button.continue"));
    let correct = if r.gold.is_empty() {
        Either::Left(
            view! { <p class="no-answer-text">"No answer: the text does not contain one."</p> },
        )
    } else {
        Either::Right(view! {
            <ul>
                {r
                    .gold
                    .iter()
                    .map(|g| view! { <li class="correct-answer">{g.clone()}</li> })
                    .collect_view()}
            </ul>
        })
    };
    let (verdict, message) = feedback(&r.yours, &r.gold, r.s1);
    view! {
        <div class=format!("reveal {}", verdict.as_str())>
            <p class="result">{message}</p>
            <div class="yours">
                <h3>"Your answer"</h3>
                {answer_view(&r.yours)}
            </div>
            <div class="correct">
                <h3>"Correct answer"</h3>
                {correct}
            </div>
            <p class="locked">"Your answer is saved and can no longer be changed."</p>
            <button class="continue" on:click=go_on disabled=move || moving.get()>
                "Continue"
            </button>
            {move || failure.get().map(error_line)}
        </div>
    }
}
