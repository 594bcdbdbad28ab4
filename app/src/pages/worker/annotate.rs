//! A submitted answer shown again, as the worker gave it (a label with its confidence, spans,
//! a text, no answer or a skip); the forms are in `answer_forms` and `span_form`.

use super::span_form::SpanTable;
use domain::answer::{Answer, CONFIDENCE_LEVELS};
use leptos::either::EitherOf4;
use leptos::prelude::*;

fn confidence_name(c: u8) -> &'static str {
    CONFIDENCE_LEVELS
        .iter()
        .find(|(v, _)| *v == c)
        .map_or("", |(_, n)| n)
}

/// A submitted answer as the worker sees it again (offsets in code points, as stored).
pub(crate) fn answer_view(a: &Answer) -> impl IntoView {
    match a {
        Answer::Label { label, confidence } => EitherOf4::A(view! {
            <p class="your-answer">
                {label.clone()}
                <span class="conf">
                    {format!(" (confidence: {})", confidence_name(*confidence))}
                </span>
            </p>
        }),
        Answer::Spans { spans } => {
            EitherOf4::B(view! { <SpanTable spans=spans.clone() on_delete=None /> })
        }
        Answer::NoAnswer => EitherOf4::C(view! { <p class="your-answer">"No answer"</p> }),
        Answer::Skip { .. } => EitherOf4::C(view! { <p class="your-answer">"Skipped"</p> }),
        Answer::Text { text } => {
            EitherOf4::D(view! { <p class="your-answer text-answer">{text.trim().to_string()}</p> })
        }
    }
}
