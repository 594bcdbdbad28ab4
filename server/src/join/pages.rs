//! The worker's plain pages of a study link: the start page (one small script that keeps Start
//! from dropping the preloaded bundle) and an MTurk preview (the task and one example item).

use domain::crowd::{how_to_answer, RECORDED};
use domain::study_pages::form::escape;
use domain::task::{Context, Family};
use domain::wire::tasks::ItemPreview;
use store::study::Study;

/// Holds Start until the preloaded bundle has arrived (at most 10 s), then posts the form: a
/// navigation would cancel the preloads in flight and fetch them again from the start. It sits
/// in the head, before the stylesheet, so it catches a press made while the page still loads.
/// A page brought back by Back or Forward is loaded anew, so it says whether the worker has a
/// place. It adds `script=1` to the form: without script the form posts without it, and the
/// server takes no place for a browser that could not answer (`join::started_by_script`).
const START_SCRIPT: &str = r#"<script>
addEventListener('pageshow',function(e){if(e.persisted)location.reload()});
document.addEventListener('submit',function(e){
var form=e.target;if(!form.classList.contains('start'))return;
e.preventDefault();if(form.dataset.sent)return;form.dataset.sent='1';
var flag=document.createElement('input');flag.type='hidden';flag.name='script';flag.value='1';form.appendChild(flag);
var button=form.querySelector('button');if(button){button.disabled=true;button.textContent='Starting\u2026'}
var go=function(){form.submit()},p=window.performance;
if(!p||!p.getEntriesByName||!window.Promise)return go();
var waits=[].map.call(document.querySelectorAll('link[rel=modulepreload],link[rel=preload]'),function(l){
return new Promise(function(done){(function check(){if(p.getEntriesByName(l.href).length)done();else setTimeout(check,50)})()})});
Promise.race([Promise.all(waits),new Promise(function(r){setTimeout(r,10000)})]).then(go);
},true);
</script>"#;

/// The head of the worker's plain pages (start and preview): no bundle of their own, so they
/// show at once on any phone. `early` goes before the stylesheet.
fn plain_head(title: &str, css: &str, early: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="icon" href="data:,">{early}<link rel="stylesheet" href="{css}"></head>"#,
        title = escape(title),
    )
}

/// The start page: plain HTML with one small script (see `START_SCRIPT`); `preload` holds the
/// links that fetch the study page's bundle meanwhile. A worker who holds a place already is
/// told that Start continues where they left off. Every start page says what the study page
/// records (`crowd::RECORDED`), consent page or not, and that it needs JavaScript.
/// `nonce` is the response's script nonce (`domain::crowd::script_policy`).
pub(super) fn start_html(
    study: &str,
    action: &str,
    css: &str,
    preload: &str,
    returning: bool,
    nonce: &str,
) -> String {
    let script = START_SCRIPT.replacen("<script>", &format!("<script nonce=\"{nonce}\">"), 1);
    let (text, button) = if returning {
        (
            "Continue where you left off: your answers so far are saved, and you go on with the \
             item you were on.",
            "Continue",
        )
    } else {
        (
            "You are about to start this study. Depending on your group, you first answer a few \
             practice items, each followed by its correct answer, and then the test items. Your \
             time is recorded, and you are paid by the hour.",
            "Start",
        )
    };
    format!(
        r#"{head}
<body><main class="start-page">
<h1>{study}</h1>
<p class="start-text">{text}</p>
<p class="recorded">{recorded}</p>
<noscript><p class="error" role="alert">This study's page needs JavaScript, which is turned off in this browser: turn it on and reload this page. Start takes no place without it.</p></noscript>
<form class="start" method="post" action="{action}"><button type="submit" class="primary">{button}</button></form>
</main></body></html>"#,
        head = plain_head(
            &format!("Start: {study}"),
            css,
            &format!("{script}{preload}")
        ),
        study = escape(study),
        action = escape(action),
        recorded = escape(RECORDED),
    )
}

/// An MTurk preview: the task's description, how to answer, one item as the worker will see
/// it (without its answer), and the request to accept the HIT. No form, no script.
pub(super) fn preview_html(s: &Study, example: &Option<ItemPreview>, css: &str) -> String {
    let family = s.spec.family;
    let item = match example {
        Some(e) => {
            let context = match &e.context {
                Context::Single { text } => format!(
                    r#"<div class="context">{}</div>"#,
                    escape(&domain::selection::display_text(text))
                ),
                Context::Pair {
                    premise,
                    hypothesis,
                } => format!(
                    r#"<div class="context pair"><p><span class="part">Sentence 1: </span>{}</p><p><span class="part">Sentence 2: </span>{}</p></div>"#,
                    escape(premise),
                    escape(hypothesis)
                ),
            };
            let controls = match family {
                Family::Classification => {
                    let options: String = s
                        .spec
                        .labels
                        .iter()
                        .map(|l| {
                            format!(
                                "<li><strong>{}</strong>: {}</li>",
                                escape(&l.name),
                                escape(&l.definition)
                            )
                        })
                        .collect();
                    format!(
                        r#"<p>You choose one of these answers, say how confident you are (from "Strongly disagree" to "Strongly agree"), and press Submit (or Skip):</p><ul class="preview-options">{options}</ul>"#
                    )
                }
                Family::TextToText => {
                    "<p>You write the answer in a box and press Submit (or Skip).</p>".into()
                }
                _ => "<p>You select each answer in the text and add it; your answers are listed with their position, and \"No answer in this text\" says there is none.</p>".into(),
            };
            format!(
                r#"<h2>An example item</h2>
<div class="preview-item"><p class="question">{question}</p>{context}{controls}</div>"#,
                question = escape(&e.question),
            )
        }
        None => String::new(),
    };
    format!(
        r#"{head}
<body><main class="start-page preview">
<h1>{study}</h1>
<p class="preview-note" role="status"><strong>This is a preview.</strong> Accept the HIT on MTurk to begin; nothing is recorded until you do.</p>
<h2>The task</h2>
<p class="description">{description}</p>
<h2>How to answer</h2>
<p>{how}</p>
{item}
</main></body></html>"#,
        head = plain_head(&format!("Preview: {}", s.name), css, ""),
        study = escape(&s.name),
        description = escape(&s.spec.description),
        how = escape(how_to_answer(family)),
    )
}

/// A study link's refusal as a page of its own (a new worker at a full study): the study's name
/// and the reason, read out as an alert.
pub(crate) fn refusal_html(study: &str, reason: &str, css: &str) -> String {
    format!(
        r#"{head}
<body><main class="start-page">
<h1>{study}</h1>
<p class="error" role="alert">{reason}</p>
</main></body></html>"#,
        head = plain_head(study, css, ""),
        study = escape(study),
        reason = escape(reason),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_page_escapes_the_study_name_and_link() {
        let page = start_html(
            "<b>\"x\"</b>",
            "/join/1?PROLIFIC_PID=a&STUDY_ID=b",
            "/pkg/a.css",
            "",
            false,
            "n0nce",
        );
        assert!(page.contains("&lt;b&gt;&quot;x&quot;&lt;/b&gt;"));
        assert!(page.contains(r#"action="/join/1?PROLIFIC_PID=a&amp;STUDY_ID=b""#));
        // One script, the start button's; the form posts without it.
        assert_eq!(page.matches("<script").count(), 1);
        assert!(page.contains(r#"<script nonce="n0nce">"#));
        assert!(page.contains("You are about to start") && page.contains(">Start</button>"));
        // What is recorded, and the script's mark on the form (a Start without it takes no
        // place).
        assert!(page.contains("this page records for each item only counts and times"));
        assert!(page.contains("flag.name='script';flag.value='1'"));
        assert!(page.contains("<noscript>"));
        let back = start_html("S", "/join/1", "/pkg/a.css", "", true, "n0nce");
        assert!(
            back.contains("Continue where you left off") && back.contains(">Continue</button>")
        );
        assert!(back.contains("this page records for each item only counts and times"));
        assert!(!back.contains("You are about to start"));
    }
}
