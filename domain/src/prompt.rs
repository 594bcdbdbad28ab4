//! Prompt-based fine-tuning's templates and verbalisers (the CLUES paper's PT, as LM-BFF does
//! it): how a label task's item becomes one text with a mask, and which word stands for each label.

use super::task::{Context, Example, Family, TaskSpec};
use serde::{Deserialize, Serialize};

/// Where the mask goes in a template.
pub const MASK: &str = "{mask}";

/// A template and a verbaliser: what a run is trained and scored with (stored with it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// Text with `{mask}` once and any of `{text}` (a single context), `{premise}` and
    /// `{hypothesis}` (a pair) and `{question}`.
    pub template: String,
    /// Each label of the task with the one word that stands for it, in the task's label order.
    pub verbaliser: Vec<(String, String)>,
}

fn same_labels(spec: &TaskSpec, want: &[&str]) -> bool {
    let mut have = spec.label_names();
    have.sort();
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    have == want
}

/// The task's prompt when none is given: LM-BFF's manual ones for sentiment ("<text> It was
/// {mask}." with great / terrible) and for inference ("<premise> ? {mask} , <hypothesis>"
/// with Yes / Maybe / No); for any other label task the text, the question and the mask, each
/// label standing for itself. `None` for tasks without labels.
pub fn default_prompt(spec: &TaskSpec, pair: bool) -> Option<Prompt> {
    if spec.family != Family::Classification || spec.labels.is_empty() {
        return None;
    }
    let words = |m: &[(&str, &str)]| -> Vec<(String, String)> {
        spec.label_names()
            .into_iter()
            .map(|l| {
                let w = m.iter().find(|(k, _)| *k == l).map_or(l.as_str(), |p| p.1);
                (l.clone(), w.to_string())
            })
            .collect()
    };
    let (template, verbaliser) = if !pair && same_labels(spec, &["positive", "negative"]) {
        (
            "{text} It was {mask}.",
            words(&[("positive", "great"), ("negative", "terrible")]),
        )
    } else if pair && same_labels(spec, &["entailment", "contradiction", "neutral"]) {
        (
            "{premise} ? {mask} , {hypothesis}",
            words(&[
                ("entailment", "Yes"),
                ("neutral", "Maybe"),
                ("contradiction", "No"),
            ]),
        )
    } else if pair {
        ("{premise} {hypothesis} {question} {mask}", words(&[]))
    } else {
        ("{text} {question} {mask}", words(&[]))
    };
    Some(Prompt {
        template: template.into(),
        verbaliser,
    })
}

/// Reads `label=word,label=word`: every label of the task once, one word each (no spaces),
/// no word twice.
pub fn parse_verbaliser(spec: &TaskSpec, text: &str) -> Result<Vec<(String, String)>, String> {
    let mut given: Vec<(String, String)> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((label, word)) = part.split_once('=') else {
            return Err(format!("{part:?} is not label=word"));
        };
        let (label, word) = (label.trim(), word.trim());
        if !spec.label_names().iter().any(|l| l == label) {
            return Err(format!(
                "{label:?} is not a label of {} ({})",
                spec.name,
                spec.label_names().join(", ")
            ));
        }
        if word.is_empty() || word.contains(char::is_whitespace) {
            return Err(format!(
                "the word for {label:?} must be one word, not {word:?}"
            ));
        }
        if given.iter().any(|(l, _)| l == label) {
            return Err(format!("{label:?} is given twice"));
        }
        if given.iter().any(|(_, w)| w == word) {
            return Err(format!("{word:?} stands for two labels"));
        }
        given.push((label.to_string(), word.to_string()));
    }
    spec.label_names()
        .into_iter()
        .map(|l| match given.iter().find(|(g, _)| *g == l) {
            Some(p) => Ok(p.clone()),
            None => Err(format!("the verbaliser has no word for the label {l:?}")),
        })
        .collect()
}

/// Checks a template: `{mask}` exactly once, and only the placeholders of the task's context.
pub fn check_template(template: &str, pair: bool) -> Result<(), String> {
    if template.matches(MASK).count() != 1 {
        return Err(format!(
            "the template must hold {MASK} exactly once: {template:?}"
        ));
    }
    let allowed: &[&str] = if pair {
        &["{premise}", "{hypothesis}", "{question}", MASK]
    } else {
        &["{text}", "{question}", MASK]
    };
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else {
            return Err(format!("an unclosed {{ in the template {template:?}"));
        };
        let name = &rest[i..i + j + 1];
        if !allowed.contains(&name) {
            return Err(format!(
                "{name} is not a placeholder of this task's template (use {})",
                allowed.join(", ")
            ));
        }
        rest = &rest[i + j + 1..];
    }
    Ok(())
}

/// An item's text before and after the mask, with the placeholders filled in (context texts
/// trimmed).
pub fn render(template: &str, item: &Example) -> (String, String) {
    let mut text = template.replace("{question}", item.question.trim());
    match &item.context {
        Context::Single { text: t } => text = text.replace("{text}", t.trim()),
        Context::Pair {
            premise,
            hypothesis,
        } => {
            text = text
                .replace("{premise}", premise.trim())
                .replace("{hypothesis}", hypothesis.trim());
        }
    }
    let (before, after) = text.split_once(MASK).unwrap_or((text.as_str(), ""));
    (before.to_string(), after.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Gold;

    fn item(context: Context) -> Example {
        Example {
            id: "1".into(),
            context,
            question: "positive or negative? ".into(),
            question_type: None,
            gold: Gold {
                official: vec!["positive".into()],
                spans: vec![],
            },
            extra: serde_json::Value::Null,
        }
    }

    #[test]
    fn lm_bff_prompts_for_sentiment_and_inference_and_a_plain_one_otherwise() {
        let sst = TaskSpec::plain("SST-2", Family::Classification, &["positive", "negative"]);
        let p = default_prompt(&sst, false).unwrap();
        assert_eq!(p.template, "{text} It was {mask}.");
        assert_eq!(
            p.verbaliser,
            [
                ("positive".into(), "great".into()),
                ("negative".into(), "terrible".into())
            ]
        );
        let one = item(Context::Single {
            text: " a fine film ".into(),
        });
        assert_eq!(
            render(&p.template, &one),
            ("a fine film It was ".into(), ".".into())
        );
        let nli = TaskSpec::plain(
            "MNLI",
            Family::Classification,
            &["entailment", "contradiction", "neutral"],
        );
        let p = default_prompt(&nli, true).unwrap();
        let words: Vec<&str> = p.verbaliser.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(words, ["Yes", "No", "Maybe"]);
        let two = item(Context::Pair {
            premise: "It rains.".into(),
            hypothesis: "It is wet.".into(),
        });
        assert_eq!(
            render(&p.template, &two),
            ("It rains. ? ".into(), " , It is wet.".into())
        );
        let other = TaskSpec::plain("topic", Family::Classification, &["sport", "art"]);
        let p = default_prompt(&other, false).unwrap();
        assert_eq!(p.template, "{text} {question} {mask}");
        assert_eq!(p.verbaliser[1], ("art".into(), "art".into()));
        let ner = TaskSpec::plain("CoNLL", Family::SequenceLabelling, &[]);
        assert_eq!(default_prompt(&ner, false), None);
    }

    #[test]
    fn verbalisers_and_templates_are_refused_in_words() {
        let sst = TaskSpec::plain("SST-2", Family::Classification, &["positive", "negative"]);
        assert_eq!(
            parse_verbaliser(&sst, "negative=bad, positive=good").unwrap(),
            [
                ("positive".into(), "good".into()),
                ("negative".into(), "bad".into())
            ]
        );
        for (text, says) in [
            ("positive=good", "no word for the label \"negative\""),
            ("positive=good,neutral=meh", "\"neutral\" is not a label"),
            ("positive=very good,negative=bad", "must be one word"),
            ("positive=good,negative=good", "stands for two labels"),
            ("positive=good,positive=fine", "given twice"),
            ("positive", "is not label=word"),
        ] {
            let e = parse_verbaliser(&sst, text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        assert!(check_template("{text} It was {mask}.", false).is_ok());
        for (t, pair, says) in [
            ("{text} It was.", false, "exactly once"),
            ("{mask} {mask}", false, "exactly once"),
            ("{premise} {mask}", false, "{premise} is not a placeholder"),
            ("{text} {mask}", true, "{text} is not a placeholder"),
            ("{text {mask}", false, "is not a placeholder"),
        ] {
            let e = check_template(t, pair).unwrap_err();
            assert!(e.contains(says), "{t}: {e}");
        }
    }
}
