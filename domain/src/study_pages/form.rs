//! A questionnaire as the HTML of a plain form (rendered on the server, so the worker's bundle
//! carries no question model), and the form's fields read back as answers.

use super::questionnaire::{Kind, Question, Replies, Reply};

/// `text` safe in HTML text and in single- or double-quoted attribute values.
pub fn escape(text: &str) -> String {
    html_escape::encode_quoted_attribute(text).into_owned()
}

/// The form field of a question.
pub fn field_name(q: &Question) -> String {
    format!("q-{}", q.id)
}

/// The questions as fieldsets with native controls: radio buttons (single choice, scales),
/// check boxes, a text or number field; `required` where the browser can ask for it.
pub fn questions_html(questions: &[Question]) -> String {
    let mut out = String::new();
    for q in questions {
        let name = escape(&field_name(q));
        let legend = format!(
            "{}{}",
            escape(q.text.trim()),
            if q.required { " *" } else { "" }
        );
        let required = if q.required { " required" } else { "" };
        let choice = |kind: &str, value: &str, label: &str, req: &str| {
            format!(
                r#"<label class="choice"><input type="{kind}" name="{name}" value="{}"{req}> {}</label>"#,
                escape(value),
                escape(label)
            )
        };
        let input = match q.kind {
            Kind::SingleChoice => {
                let items: String = q
                    .options
                    .iter()
                    .map(|o| choice("radio", o, o, required))
                    .collect();
                format!(r#"<div class="choices">{items}</div>"#)
            }
            Kind::MultipleChoice => {
                let items: String = q
                    .options
                    .iter()
                    .map(|o| choice("checkbox", o, o, ""))
                    .collect();
                format!(r#"<div class="choices">{items}</div>"#)
            }
            Kind::Likert => {
                let n = q.likert_points();
                let items: String = (1..=n)
                    .map(|p| {
                        let end = match p {
                            1 => q.low.as_deref(),
                            _ if p == n => q.high.as_deref(),
                            _ => None,
                        };
                        let label = end.map_or(p.to_string(), |e| format!("{p} {e}"));
                        choice("radio", &p.to_string(), &label, required)
                    })
                    .collect();
                format!(r#"<div class="choices scale">{items}</div>"#)
            }
            Kind::ShortText => format!(
                r#"<input type="text" name="{name}" aria-label="{legend}" maxlength="{}"{required}>"#,
                q.text_chars()
            ),
            Kind::Number => {
                let bound = |b: Option<f64>, attr: &str| {
                    b.map_or(String::new(), |v| format!(r#" {attr}="{v}""#))
                };
                let (mode, step) = if q.integer {
                    ("numeric", "1")
                } else {
                    ("decimal", "any")
                };
                format!(
                    r#"<input type="number" name="{name}" aria-label="{legend}" inputmode="{mode}" step="{step}"{}{}{required}>"#,
                    bound(q.min, "min"),
                    bound(q.max, "max")
                )
            }
        };
        out.push_str(&format!(
            r#"<fieldset class="question" data-question="{}"><legend>{legend}</legend>{input}</fieldset>"#,
            escape(&q.id)
        ));
    }
    out
}

/// The answers a form's fields (name, value, as the browser sends them) give, checked
/// (`check_replies`): one value of a choice, a text or a number field, every checked box of a
/// multiple choice. A field of no question, or a second value for a one-value question, is a
/// problem named beside the answers' own.
pub fn replies_from_fields(
    questions: &[Question],
    fields: &[(String, String)],
) -> Result<Replies, Vec<String>> {
    let mut replies = Replies::new();
    let mut errs = Vec::new();
    for (name, value) in fields {
        let Some(q) = questions.iter().find(|q| field_name(q) == *name) else {
            errs.push(format!("there is no question {name:?} here"));
            continue;
        };
        let reply = match q.kind {
            Kind::MultipleChoice => {
                let mut chosen = match replies.remove(&q.id) {
                    Some(Reply::Choices(c)) => c,
                    _ => Vec::new(),
                };
                chosen.push(value.clone());
                Reply::Choices(chosen)
            }
            _ if replies.contains_key(&q.id) => {
                errs.push(format!("\"{}\" has one answer", q.text.trim()));
                continue;
            }
            Kind::Likert | Kind::Number => match value.trim() {
                "" => continue,
                v => v
                    .parse::<f64>()
                    .map_or_else(|_| Reply::Text(v.to_string()), Reply::Number),
            },
            Kind::SingleChoice | Kind::ShortText => Reply::Text(value.clone()),
        };
        replies.insert(q.id.clone(), reply);
    }
    match super::questionnaire::check_replies(questions, &replies) {
        Ok(kept) if errs.is_empty() => Ok(kept),
        Ok(_) => Err(super::questionnaire::capped(errs)),
        Err(more) => {
            errs.extend(more);
            Err(super::questionnaire::capped(errs))
        }
    }
}
