//! In-context learning, pure: the prompt a language model gets (the task description, the k
//! training shots with their answers, then the test item) and how its reply is read as spans.

use crate::task::{Context, Example, Family, TaskSpec};
use serde::{Deserialize, Serialize};

/// How an answer is written in a prompt when it is empty, and what a reply may say for it.
pub const NO_ANSWER: &str = "no answer";
/// Several spans in one answer are written with this between them.
pub const SEPARATOR: &str = " | ";

/// The item's text and question as the prompt shows them, up to "Answer:".
fn item_block(e: &Example) -> String {
    let text = match &e.context {
        Context::Single { text } => format!("Context: {}", text.trim()),
        Context::Pair {
            premise,
            hypothesis,
        } => format!(
            "Sentence 1: {}\nSentence 2: {}",
            premise.trim(),
            hypothesis.trim()
        ),
    };
    format!("{text}\nQuestion: {}\nAnswer:", e.question.trim())
}

/// A shot's gold answer as the prompt writes it: its spans joined, or "no answer".
fn answer_text(spec: &TaskSpec, e: &Example) -> String {
    let answer = spec.from_official(&e.gold.official);
    // Reading comprehension lists one answer per annotator: the first stands for them.
    let answer = if spec.family == Family::ReadingComprehension {
        answer.into_iter().take(1).collect()
    } else {
        answer
    };
    if answer.is_empty() {
        NO_ANSWER.to_string()
    } else {
        answer
            .iter()
            .map(|a| a.replace('\n', " "))
            .collect::<Vec<_>>()
            .join(SEPARATOR)
    }
}

/// The prompt for one test item: the task's description and how to answer, each shot with
/// its answer, then the item with "Answer:" left open (the reply ends at a line break).
pub fn prompt(spec: &TaskSpec, shots: &[Example], item: &Example) -> String {
    let how = match spec.family {
        Family::Classification => {
            format!("Answer with one of: {}.", spec.label_names().join(", "))
        }
        _ => format!(
            "Answer with text copied exactly from the context; separate several answers with \"{}\"; answer \"{NO_ANSWER}\" when there is none.",
            SEPARATOR.trim()
        ),
    };
    let mut out = format!("{}\n{how}\n\n", spec.description.trim());
    for s in shots {
        out.push_str(&format!("{} {}\n\n", item_block(s), answer_text(spec, s)));
    }
    out.push_str(&item_block(item));
    out
}

/// How one part of a reply became (or did not become) part of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// It occurs in the context exactly as written.
    Exact,
    /// It occurs in the context with other capitals: the context's own text is the answer.
    CaseFolded,
    /// It names one of the task's labels.
    Label,
    /// It is (or holds) one of the item's listed entities.
    Entity,
    /// It says there is no answer (or is empty).
    NoAnswer,
    /// Nothing of the item matches it: it is left out of the answer.
    Unmatched,
}

/// One part of a reply and what it was read as.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    pub said: String,
    pub how: How,
    /// The answer string it became (none for "no answer" and for an unmatched part).
    pub answer: Option<String>,
}

/// A reply read as an answer (internal encoding: empty for "no answer").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    pub answer: Vec<String>,
    pub parts: Vec<Part>,
}

/// The first line of a reply without surrounding blanks, quotes and a final full stop.
fn first_line(reply: &str) -> &str {
    let quotes = |c: char| c == '"' || c == '\'' || c == '`';
    let line = reply.trim_start().lines().next().unwrap_or("").trim();
    let line = line.trim_matches(quotes).trim();
    let line = line.strip_suffix('.').unwrap_or(line).trim();
    line.trim_matches(quotes).trim()
}

fn says_no_answer(part: &str) -> bool {
    let p = part.to_lowercase();
    p.is_empty() || ["no answer", "none", "n/a", "no entity", "unanswerable"].contains(&p.as_str())
}

/// `needle` in `text` ignoring case: the text's own slice, where found.
fn find_folded<'t>(text: &'t str, needle: &str) -> Option<&'t str> {
    let n = needle.chars().count();
    let folded = needle.to_lowercase();
    let starts: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    (n > 0)
        .then(|| {
            starts.iter().enumerate().find_map(|(i, &b)| {
                let end = if i + n < starts.len() {
                    starts[i + n]
                } else if i + n == starts.len() {
                    text.len()
                } else {
                    return None;
                };
                (text[b..end].to_lowercase() == folded).then(|| &text[b..end])
            })
        })
        .flatten()
}

/// Reads a model's reply to `item` as an answer: a label task takes the label the reply names
/// first; an item that lists its entities takes the listed entity the reply is (or holds,
/// the longest); any other item takes each part (split at "|") that occurs in its context,
/// exactly or with other capitals. "No answer", "none" or an empty reply is no answer.
pub fn read_reply(spec: &TaskSpec, item: &Example, reply: &str) -> Reading {
    let line = first_line(reply);
    if says_no_answer(line) {
        return Reading {
            answer: Vec::new(),
            parts: vec![part(line, How::NoAnswer, None)],
        };
    }
    if spec.family == Family::Classification && !spec.labels.is_empty() {
        let lower = line.to_lowercase();
        let named = spec
            .label_names()
            .into_iter()
            .filter_map(|l| lower.find(&l.to_lowercase()).map(|at| (at, l)))
            .min();
        return match named {
            Some((_, label)) => reading(vec![part(line, How::Label, Some(label))]),
            None => reading(vec![part(line, How::Unmatched, None)]),
        };
    }
    let entities = item.listed_entities();
    if !entities.is_empty() {
        let lower = line.to_lowercase();
        let hit = entities
            .iter()
            .find(|e| e.to_lowercase() == lower)
            .or_else(|| {
                entities
                    .iter()
                    .filter(|e| lower.contains(&e.to_lowercase()))
                    .max_by_key(|e| e.chars().count())
            });
        let how = if hit.is_some() {
            How::Entity
        } else {
            How::Unmatched
        };
        return reading(vec![part(line, how, hit.map(|e| e.to_string()))]);
    }
    let text = item.context.primary();
    let parts = line
        .split('|')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            if says_no_answer(p) {
                part(p, How::NoAnswer, None)
            } else if text.contains(p) {
                part(p, How::Exact, Some(p.to_string()))
            } else if let Some(own) = find_folded(text, p) {
                part(p, How::CaseFolded, Some(own.to_string()))
            } else {
                part(p, How::Unmatched, None)
            }
        })
        .collect();
    reading(parts)
}

fn part(said: &str, how: How, answer: Option<String>) -> Part {
    Part {
        said: said.to_string(),
        how,
        answer,
    }
}

/// The answer of the parts: each answer string once, in order.
fn reading(parts: Vec<Part>) -> Reading {
    let mut answer: Vec<String> = Vec::new();
    for a in parts.iter().filter_map(|p| p.answer.clone()) {
        if !answer.contains(&a) {
            answer.push(a);
        }
    }
    Reading { answer, parts }
}

#[cfg(test)]
mod tests;
