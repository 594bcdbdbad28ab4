//! The worker's study page: task description, the current item, the revealed gold after a
//! training submission, the completion code. Moves on only after the server saved an answer.

use super::annotate::{answer_view, LabelForm, SpanForm, TextForm};
use super::browser::random_id;
use super::{context_view, error_view};
use crate::api::study::{
    continue_study, study_state, submit_answer, Completion, Phase, Reveal, WorkerItem, WorkerStep,
    WorkerStudy,
};
use crate::domain::answer::Answer;
use crate::domain::crowd::HandBack;
use crate::domain::task::{Family, Label};
use crate::error::AppError;
use leptos::prelude::*;

#[component]
pub fn WorkerStudyPage() -> impl IntoView {
    let id = super::id_param();
    let version = RwSignal::new(0u32);
    let state = Resource::new(move || (id(), version.get()), |(id, _)| study_state(id));
    let reload = Callback::new(move |_: ()| version.update(|v| *v += 1));
    view! {
        <Transition fallback=|| view! { <p>"Loading your study…"</p> }>
            {move || Suspend::new(async move {
                match state.await {
                    Ok(ws) => view! { <WorkerView ws reload/> }.into_any(),
                    Err(AppError::NotSignedIn) => view! {
                        <p class="error" role="alert">
                            "Please open this study through the link on your crowd platform (it signs you in), or sign in with a worker account first."
                        </p>
                    }.into_any(),
                    Err(e) => error_view(e),
                }
            })}
        </Transition>
    }
}

fn instructions(family: Family) -> &'static str {
    match family {
        Family::TextToText => {
            "Read the text and write the answer in the box, then press Submit. If you cannot \
             answer, press Skip."
        }
        Family::Classification => {
            "Read the text and choose the answer to the question. Each option has a Help with a \
             definition and an example. Then say how confident you are, and press Submit. If you \
             cannot decide, press Skip."
        }
        _ => {
            "Select the answer in the text with the mouse and add it with the \"Add as answer\" \
             button, the right-click menu item \"Answer\", or the A key. Keyboard only: focus the \
             text (Tab), move by word with the arrow keys, hold Shift to extend the selection, \
             press A or Enter to add. Add as many answers as the question asks for; if the text \
             has none, press \"No answer in this text\"."
        }
    }
}

#[component]
fn WorkerView(ws: WorkerStudy, reload: Callback<()>) -> impl IntoView {
    let WorkerStudy {
        study_id,
        study_name,
        description,
        family,
        labels,
        k,
        training_items,
        test_items,
        step,
    } = ws;
    let scenario = if k == 0 {
        format!("Zero-shot: {test_items} test items")
    } else {
        format!(
            "{k}-shot: {training_items} training examples with the correct answers shown after each, then {test_items} test items"
        )
    };
    let body = match step {
        WorkerStep::Item(item) => view! {
            <ItemView study_id item family labels reload/>
        }
        .into_any(),
        WorkerStep::Done(c) => done_view(c),
        WorkerStep::Abandoned => view! {
            <p class="error" role="alert">
                "Your place in this study was released after a long time without activity. The answers you gave are kept. Please return the study on your crowd platform (Prolific: \"Return submission\"; MTurk: \"Return HIT\"). Thank you."
            </p>
        }
        .into_any(),
    };
    view! {
        <section class="study" data-k=k>
            <h1 class="study-name">{study_name}</h1>
            <p class="scenario">{scenario}</p>
            <div class="study-layout">
                <div class="work">{body}</div>
                <aside class="instructions">
                    <h2>"The task"</h2>
                    <p class="description">{description}</p>
                    <h2>"How to answer"</h2>
                    <p>{instructions(family)}</p>
                </aside>
            </div>
        </section>
    }
}

fn minutes(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as i64;
    format!("{} min {:02} s", s / 60, s % 60)
}

/// The way back to the crowd platform: Prolific's link with the code, MTurk's submit form.
fn hand_back_view(h: Option<HandBack>) -> AnyView {
    match h {
        Some(HandBack::Link { platform, url }) => view! {
            <p class="hand-back"><a class="return-link" href=url>{format!("Return to {platform} with your completion code")}</a></p>
        }
        .into_any(),
        Some(HandBack::MturkSubmit { action, assignment_id, code }) => view! {
            <form class="hand-back mturk-submit" method="post" action=action>
                <input type="hidden" name="assignmentId" value=assignment_id/>
                <input type="hidden" name="completion_code" value=code/>
                <button type="submit">"Submit the HIT on MTurk"</button>
            </form>
        }
        .into_any(),
        None => ().into_any(),
    }
}

fn done_view(c: Completion) -> AnyView {
    view! {
        <section class="done" role="status">
            <h2>"Thank you, you are done."</h2>
            <p>"Your completion code:"</p>
            <p class="completion-code">{c.code}</p>
            {hand_back_view(c.hand_back)}
            <ul class="summary">
                {(c.training_items > 0).then(|| view! {
                    <li>{format!("Training: {} examples, S1 {:.2}", c.training_items, c.training_s1.unwrap_or(0.0))}</li>
                })}
                <li>{format!("Test: {} items, {} skipped", c.test_items, c.skipped)}</li>
                <li class="time">{format!("Time on items: {}; from start to finish: {}", minutes(c.seconds_on_items), minutes(c.seconds_elapsed))}</li>
            </ul>
        </section>
    }
    .into_any()
}

/// Sending one answer: the same answer keeps its client id, so a retry after a network
/// failure is stored once. Calls `done` only once the server acknowledged.
#[derive(Clone, Copy)]
pub(crate) struct Sender {
    pub pending: RwSignal<bool>,
    pub failure: RwSignal<Option<AppError>>,
    last: StoredValue<Option<(Answer, String)>>,
    study_id: i64,
    position: i64,
    done: Callback<()>,
}

impl Sender {
    fn new(study_id: i64, position: i64, done: Callback<()>) -> Self {
        Sender {
            pending: RwSignal::new(false),
            failure: RwSignal::new(None),
            last: StoredValue::new(None),
            study_id,
            position,
            done,
        }
    }

    pub fn send(self, answer: Answer) {
        if self.pending.get_untracked() {
            return;
        }
        let client_id = match self.last.get_value() {
            Some((a, id)) if a == answer => id,
            _ => random_id(),
        };
        self.last
            .set_value(Some((answer.clone(), client_id.clone())));
        self.pending.set(true);
        self.failure.set(None);
        leptos::task::spawn_local(async move {
            let r = submit_answer(self.study_id, self.position, client_id, answer).await;
            self.pending.set(false);
            match r {
                Ok(_) => self.done.run(()),
                Err(e) => self.failure.set(Some(e)),
            }
        });
    }

    fn retry(self) {
        if let Some((answer, _)) = self.last.get_value() {
            self.send(answer);
        }
    }

    /// "Saving…", or what went wrong with a Retry where the network failed.
    pub fn status_view(self) -> impl IntoView {
        move || {
            if self.pending.get() {
                return view! { <p class="saving" role="status">"Saving…"</p> }.into_any();
            }
            match self.failure.get() {
                None => ().into_any(),
                Some(AppError::Request(_)) => view! {
                    <div class="retry" role="alert">
                        <p>"Your answer is not saved yet: the server could not be reached. Nothing is lost; try again."</p>
                        <button class="retry-button" on:click=move |_| self.retry()>"Retry"</button>
                    </div>
                }
                .into_any(),
                Some(e) => error_view(e),
            }
        }
    }
}

#[component]
fn ItemView(
    study_id: i64,
    item: WorkerItem,
    family: Family,
    labels: Vec<Label>,
    reload: Callback<()>,
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
    let phase_name = match phase {
        Phase::Training => "Training example",
        Phase::Test => "Test item",
    };
    let sender = Sender::new(study_id, position, reload);
    let answer = match reveal {
        Some(r) => view! {
            <div>{context_view(&context)}</div>
            {reveal_view(study_id, position, r, reload)}
        }
        .into_any(),
        None if family == Family::Classification => view! {
            <div>{context_view(&context)}</div>
            <LabelForm labels sender/>
        }
        .into_any(),
        None if family == Family::TextToText => view! {
            <div>{context_view(&context)}</div>
            <TextForm sender/>
        }
        .into_any(),
        None => view! {
            <SpanForm text=context.primary().to_string() sender/>
        }
        .into_any(),
    };
    view! {
        <article class="item" data-phase=phase.as_str() data-position=position>
            <p class="progress">{format!("{phase_name} {index} of {of}")}</p>
            <p class="question">{question}</p>
            {answer}
        </article>
    }
}

fn reveal_view(study_id: i64, position: i64, r: Reveal, reload: Callback<()>) -> AnyView {
    let moving = RwSignal::new(false);
    let failure = RwSignal::new(None::<AppError>);
    let go_on = move |_| {
        moving.set(true);
        leptos::task::spawn_local(async move {
            match continue_study(study_id, position).await {
                Ok(()) => reload.run(()),
                Err(e) => {
                    moving.set(false);
                    failure.set(Some(e));
                }
            }
        });
    };
    let correct = if r.gold.is_empty() {
        view! { <p class="no-answer-text">"No answer: the text does not contain one."</p> }
            .into_any()
    } else {
        view! {
            <ul>{r.gold.iter().map(|g| view! { <li class="correct-answer">{g.clone()}</li> }).collect_view()}</ul>
        }
        .into_any()
    };
    view! {
        <div class="reveal" role="status">
            <p class="result">{format!("Score (S1) of your answer: {:.2}", r.s1)}</p>
            <div class="yours"><h3>"Your answer"</h3>{answer_view(&r.yours)}</div>
            <div class="correct"><h3>"Correct answer"</h3>{correct}</div>
            <p class="locked">"Your answer is saved and can no longer be changed."</p>
            <button class="continue" autofocus on:click=go_on disabled=move || moving.get()>"Continue"</button>
            {move || failure.get().map(error_view)}
        </div>
    }
    .into_any()
}
