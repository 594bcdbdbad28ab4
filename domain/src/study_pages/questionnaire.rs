//! Questionnaires before training and after the test: the question kinds a researcher defines,
//! the server's check of a worker's answers, and the per-scenario summary of the report.

use crate::s1::{spread, Spread};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// When a questionnaire is shown: before the training step (or the test, zero-shot), or after
/// the test set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Before,
    After,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Before => "before",
            Stage::After => "after",
        }
    }

    pub fn parse(s: &str) -> Option<Stage> {
        match s {
            "before" => Some(Stage::Before),
            "after" => Some(Stage::After),
            _ => None,
        }
    }
}

/// The kinds of question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One of `options` (radio buttons).
    SingleChoice,
    /// Any of `options` (check boxes); "required" asks for at least one.
    MultipleChoice,
    /// A point 1..=`points` of a scale from `low` to `high`.
    Likert,
    /// A line of text of at most `max_chars` characters.
    ShortText,
    /// A number from `min` to `max`, a whole one when `integer`.
    Number,
}

/// One question, as `questionnaire.json` and the admin form write it. Fields that do not
/// belong to its kind are refused by `validate`, unknown fields by the parser.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// A short name (a-z, 0-9, _), unique across the study's questionnaires: the column of the
    /// exports.
    pub id: String,
    pub text: String,
    pub kind: Kind,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub integer: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u32>,
}

/// The default and the largest Likert scale.
pub const LIKERT_POINTS: u8 = 5;
const LIKERT_MAX: u8 = 11;
/// The default and the largest length of a short text answer.
pub const TEXT_CHARS: u32 = 500;
const TEXT_MAX: u32 = 5000;
/// Questions per questionnaire, and characters of a question or an option.
const QUESTIONS_MAX: usize = 50;
const WORDS_MAX: usize = 1000;

impl Question {
    pub fn likert_points(&self) -> u8 {
        self.points.unwrap_or(LIKERT_POINTS)
    }

    pub fn text_chars(&self) -> u32 {
        self.max_chars.unwrap_or(TEXT_CHARS)
    }

    /// Every problem of this question's definition, each naming the question.
    fn problems(&self) -> Vec<String> {
        let mut errs = Vec::new();
        let name = &self.id;
        let valid_id = !self.id.is_empty()
            && self.id.len() <= 40
            && self
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid_id {
            errs.push(format!(
                "question id {name:?} must be 1 to 40 characters a-z, 0-9 and _"
            ));
        }
        let text = self.text.trim();
        if text.is_empty() || text.chars().count() > WORDS_MAX {
            errs.push(format!(
                "question {name}: the text must be 1 to {WORDS_MAX} characters"
            ));
        }
        let misplaced = self.misplaced();
        if !misplaced.is_empty() {
            errs.push(format!(
                "question {name}: {} do not belong to a {} question",
                misplaced.join(", "),
                kind_name(self.kind)
            ));
        }
        errs.extend(self.kind_problems());
        errs
    }

    /// The fields given that this question's kind does not read.
    fn misplaced(&self) -> Vec<&'static str> {
        let choice = matches!(self.kind, Kind::SingleChoice | Kind::MultipleChoice);
        let mut misplaced = Vec::new();
        if !choice && !self.options.is_empty() {
            misplaced.push("options");
        }
        if self.kind != Kind::Likert {
            for (set, field) in [
                (self.points.is_some(), "points"),
                (self.low.is_some(), "low"),
                (self.high.is_some(), "high"),
            ] {
                if set {
                    misplaced.push(field);
                }
            }
        }
        if self.kind != Kind::Number {
            for (set, field) in [
                (self.min.is_some(), "min"),
                (self.max.is_some(), "max"),
                (self.integer, "integer"),
            ] {
                if set {
                    misplaced.push(field);
                }
            }
        }
        if self.kind != Kind::ShortText && self.max_chars.is_some() {
            misplaced.push("max_chars");
        }
        misplaced
    }

    /// The problems of the fields this question's kind reads.
    fn kind_problems(&self) -> Vec<String> {
        let mut errs = Vec::new();
        let name = &self.id;
        match self.kind {
            Kind::SingleChoice | Kind::MultipleChoice => {
                if self.options.len() < 2 {
                    errs.push(format!("question {name}: give at least two options"));
                }
                let mut seen = std::collections::BTreeSet::new();
                for o in &self.options {
                    if o.trim().is_empty() || o.chars().count() > WORDS_MAX || o.trim() != o {
                        errs.push(format!(
                            "question {name}: option {o:?} must be 1 to {WORDS_MAX} characters without spaces around it"
                        ));
                    } else if !seen.insert(o) {
                        errs.push(format!("question {name}: option {o:?} is listed twice"));
                    }
                }
            }
            Kind::Likert => {
                if !(2..=LIKERT_MAX).contains(&self.likert_points()) {
                    errs.push(format!(
                        "question {name}: a scale has 2 to {LIKERT_MAX} points"
                    ));
                }
            }
            Kind::ShortText => {
                if !(1..=TEXT_MAX).contains(&self.text_chars()) {
                    errs.push(format!(
                        "question {name}: max_chars must be 1 to {TEXT_MAX}"
                    ));
                }
            }
            Kind::Number => match (self.min, self.max) {
                (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() && lo < hi => {
                    if self.integer && (lo.fract() != 0.0 || hi.fract() != 0.0) {
                        errs.push(format!(
                            "question {name}: a whole-number question needs whole min and max"
                        ));
                    }
                }
                _ => errs.push(format!(
                    "question {name}: a number question needs min and max, min below max"
                )),
            },
        }
        errs
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::SingleChoice => "single_choice",
        Kind::MultipleChoice => "multiple_choice",
        Kind::Likert => "likert",
        Kind::ShortText => "short_text",
        Kind::Number => "number",
    }
}

/// A study's two questionnaires; the format of `questionnaire.json` and of the admin form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Questionnaires {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<Question>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Question>,
}

impl Questionnaires {
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }

    pub fn of(&self, stage: Stage) -> &[Question] {
        match stage {
            Stage::Before => &self.before,
            Stage::After => &self.after,
        }
    }

    /// Every problem of the definitions; ids must be unique across both questionnaires.
    pub fn problems(&self) -> Vec<String> {
        let mut errs = Vec::new();
        let mut ids = std::collections::BTreeSet::new();
        for stage in [Stage::Before, Stage::After] {
            let qs = self.of(stage);
            if qs.len() > QUESTIONS_MAX {
                errs.push(format!(
                    "the questionnaire {} has {} questions; at most {QUESTIONS_MAX}",
                    stage.as_str(),
                    qs.len()
                ));
            }
            for q in qs {
                errs.extend(q.problems());
                if !ids.insert(q.id.as_str()) {
                    errs.push(format!("question id {:?} is used twice", q.id));
                }
            }
        }
        errs
    }
}

/// A worker's answer to one question: a choice or a text (`Text`), the choices of a multiple
/// choice (`Choices`), a point of a scale or a number (`Number`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reply {
    Number(f64),
    Text(String),
    Choices(Vec<String>),
}

/// A worker's answers to one questionnaire, by question id; a question left out is unanswered.
pub type Replies = BTreeMap<String, Reply>;

/// Checks a worker's answers against the questions and returns them as stored: texts trimmed,
/// empty answers left out. Every problem is reported, each naming its question.
pub fn check_replies(questions: &[Question], replies: &Replies) -> Result<Replies, Vec<String>> {
    let mut errs = Vec::new();
    for id in replies.keys() {
        if !questions.iter().any(|q| &q.id == id) {
            errs.push(format!("there is no question {id:?} here"));
        }
    }
    let mut kept = Replies::new();
    for q in questions {
        let reply = match replies.get(&q.id) {
            Some(Reply::Text(t)) if t.trim().is_empty() => None,
            Some(Reply::Choices(c)) if c.is_empty() => None,
            other => other,
        };
        let Some(reply) = reply else {
            if q.required {
                errs.push(format!("please answer \"{}\"", q.text.trim()));
            }
            continue;
        };
        match check_one(q, reply) {
            Ok(r) => {
                kept.insert(q.id.clone(), r);
            }
            Err(e) => errs.push(format!("\"{}\": {e}", q.text.trim())),
        }
    }
    if errs.is_empty() {
        Ok(kept)
    } else {
        Err(capped(errs))
    }
}

/// At most `PROBLEMS_SHOWN` problems and how many more: a hostile client's thousand unknown
/// questions get a short answer.
pub fn capped(mut errs: Vec<String>) -> Vec<String> {
    if errs.len() > PROBLEMS_SHOWN {
        let more = errs.len() - PROBLEMS_SHOWN;
        errs.truncate(PROBLEMS_SHOWN);
        errs.push(format!("and {more} more problems"));
    }
    errs
}

/// The problems of a worker's answers named at most.
const PROBLEMS_SHOWN: usize = 10;

fn check_one(q: &Question, reply: &Reply) -> Result<Reply, String> {
    match (q.kind, reply) {
        (Kind::SingleChoice, Reply::Text(t)) if q.options.contains(t) => Ok(reply.clone()),
        (Kind::SingleChoice, _) => Err(format!("choose one of {}", q.options.join(", "))),
        (Kind::MultipleChoice, Reply::Choices(cs)) => {
            let mut seen = std::collections::BTreeSet::new();
            for c in cs {
                if !q.options.contains(c) {
                    return Err(format!("{c:?} is not one of the options"));
                }
                if !seen.insert(c) {
                    return Err(format!("{c:?} is chosen twice"));
                }
            }
            Ok(reply.clone())
        }
        (Kind::MultipleChoice, _) => Err("choose from the options".into()),
        (Kind::Likert, Reply::Number(x))
            if x.fract() == 0.0 && *x >= 1.0 && *x <= f64::from(q.likert_points()) =>
        {
            Ok(reply.clone())
        }
        (Kind::Likert, _) => Err(format!("choose a point from 1 to {}", q.likert_points())),
        (Kind::Number, Reply::Number(x)) => {
            let (lo, hi) = (q.min.unwrap_or(f64::MIN), q.max.unwrap_or(f64::MAX));
            if !x.is_finite() || *x < lo || *x > hi {
                Err(format!("give a number from {lo} to {hi}"))
            } else if q.integer && x.fract() != 0.0 {
                Err("give a whole number".into())
            } else {
                Ok(reply.clone())
            }
        }
        (Kind::Number, _) => Err("give a number".into()),
        (Kind::ShortText, Reply::Text(t)) => {
            let t = t.trim();
            if t.chars().count() > q.text_chars() as usize {
                Err(format!("at most {} characters", q.text_chars()))
            } else {
                Ok(Reply::Text(t.to_string()))
            }
        }
        (Kind::ShortText, _) => Err("write a text".into()),
    }
}

/// A reply as one cell of a table: the choice or text, the choices joined by `|`, the number.
pub fn reply_text(r: &Reply) -> String {
    match r {
        Reply::Text(t) => t.clone(),
        Reply::Choices(cs) => cs.join("|"),
        Reply::Number(x) => x.to_string(),
    }
}

/// What the report says of one question over a group of workers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuestionSummary {
    pub stage: Stage,
    pub id: String,
    pub text: String,
    pub kind: Kind,
    /// Workers who answered it.
    pub answered: usize,
    /// Choice questions: how often each option was chosen, in the options' order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<(String, usize)>,
    /// Likert and number questions: mean and standard deviation (population, as the
    /// report's other spreads) of the answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

/// The summary of each question over the workers' replies (texts are counted; they are read in
/// the exports).
pub fn summarize(
    stage: Stage,
    questions: &[Question],
    replies: &[&Replies],
) -> Vec<QuestionSummary> {
    questions
        .iter()
        .map(|q| {
            let given: Vec<&Reply> = replies.iter().filter_map(|r| r.get(&q.id)).collect();
            let counts = match q.kind {
                Kind::SingleChoice | Kind::MultipleChoice => q
                    .options
                    .iter()
                    .map(|o| {
                        let n = given
                            .iter()
                            .filter(|r| match r {
                                Reply::Text(t) => t == o,
                                Reply::Choices(cs) => cs.contains(o),
                                Reply::Number(_) => false,
                            })
                            .count();
                        (o.clone(), n)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let numbers: Vec<f64> = given
                .iter()
                .filter_map(|r| match r {
                    Reply::Number(x) => Some(*x),
                    _ => None,
                })
                .collect();
            let spread = if matches!(q.kind, Kind::Likert | Kind::Number) {
                spread(&numbers)
            } else {
                None
            };
            QuestionSummary {
                stage,
                id: q.id.clone(),
                text: q.text.clone(),
                kind: q.kind,
                answered: given.len(),
                counts,
                spread,
            }
        })
        .collect()
}
