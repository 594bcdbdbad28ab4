//! The unified task format: a context, a question, and an answer that is a set of spans.
//! Also the two encodings of "no answer" and the gold sets each S1 scoring uses.

use super::crossfit::metrics::{item_score, Metric};
use super::named::named_enum;
use super::s1::{s1_any_of, s1_item, Scoring};
use super::spans::{slice_cp, Span};
use serde::{Deserialize, Serialize};

named_enum! {
    pub enum Family {
        Classification = "classification",
        SequenceLabelling = "sequence_labelling",
        ReadingComprehension = "reading_comprehension",
        /// CrossFit text-to-text tasks: a free-text answer scored with the task's metric.
        TextToText = "text_to_text",
    }
}

impl Family {
    pub fn label(self) -> &'static str {
        match self {
            Family::Classification => "Sentence classification",
            Family::SequenceLabelling => "Named entity recognition",
            Family::ReadingComprehension => "Reading comprehension",
            Family::TextToText => "Text to text",
        }
    }

    /// The form a worker answers the family's items with.
    pub fn answer_form(self) -> AnswerForm {
        match self {
            Family::Classification => AnswerForm::Label,
            Family::SequenceLabelling | Family::ReadingComprehension => AnswerForm::Spans,
            Family::TextToText => AnswerForm::Text,
        }
    }
}

/// How a worker answers an item: one of the task's labels, spans selected in the text, or
/// free text. Span items need the selection code, which the other two never load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerForm {
    Label,
    Spans,
    Text,
}

named_enum! {
    /// How the official files write an item without an answer.
    pub enum NoAnswer {
        /// `[""]`: the NER files (a set holding the empty string, for the official scorer).
        EmptyString = "empty_string",
        /// `[]`: SQuAD v2 and ReCoRD.
        EmptyList = "empty_list",
    }
}

/// A label of a classification task, with the Help a worker sees.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub name: String,
    pub definition: String,
    pub example: String,
}

/// One kind of question a task asks (NER asks one per entity type).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionType {
    pub key: String,
    pub question: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub name: String,
    pub family: Family,
    pub description: String,
    pub labels: Vec<Label>,
    pub question_types: Vec<QuestionType>,
    pub no_answer: NoAnswer,
    /// Text-to-text tasks: the CrossFit metric that scores an answer.
    #[serde(default)]
    pub metric: Option<Metric>,
}

impl TaskSpec {
    /// A task with bare labels (no definition, no example), no question types and the family's
    /// usual encoding of "no answer" (`[""]` for NER, `[]` otherwise): what tests and quick
    /// experiments need.
    pub fn plain(name: &str, family: Family, labels: &[&str]) -> TaskSpec {
        TaskSpec {
            name: name.to_string(),
            family,
            description: String::new(),
            labels: labels
                .iter()
                .map(|l| Label {
                    name: l.to_string(),
                    definition: String::new(),
                    example: String::new(),
                })
                .collect(),
            question_types: Vec::new(),
            no_answer: if family == Family::SequenceLabelling {
                NoAnswer::EmptyString
            } else {
                NoAnswer::EmptyList
            },
            metric: None,
        }
    }

    /// One item's score of an official-encoding prediction. Text-to-text tasks use their
    /// metric on the item (a corpus-level metric scores items by accuracy; the report applies
    /// the metric to the whole test set); the others S1.
    pub fn score(&self, gold: &Gold, pred: &[String], scoring: Scoring) -> f64 {
        match (self.family, self.metric) {
            (Family::TextToText, Some(m)) => {
                let text = pred.first().map_or("", String::as_str);
                item_score(m, text, &gold.official)
                    .or_else(|| item_score(Metric::Accuracy, text, &gold.official))
                    .unwrap_or(0.0)
            }
            _ => gold.score(self.family, pred, scoring),
        }
    }

    /// The question type of `question`: the declared type with exactly that text, else a
    /// type whose question is empty (it accepts any question, as in reading comprehension).
    pub fn question_type_of(&self, question: &str) -> Option<&QuestionType> {
        self.question_types
            .iter()
            .find(|q| q.question == question)
            .or_else(|| self.question_types.iter().find(|q| q.question.is_empty()))
    }

    /// The label names in the task's order (empty for span tasks).
    pub fn label_names(&self) -> Vec<String> {
        self.labels.iter().map(|l| l.name.clone()).collect()
    }

    /// An internal answer (a set of span strings, empty for "no answer") in the official
    /// encoding, ready for the official scorer.
    pub fn to_official(&self, answer: &[String]) -> Vec<String> {
        if answer.is_empty() && self.no_answer == NoAnswer::EmptyString {
            vec![String::new()]
        } else {
            answer.to_vec()
        }
    }

    /// An official-encoding answer as the internal set of span strings (`[""]` -> empty).
    pub fn from_official(&self, answer: &[String]) -> Vec<String> {
        if answer.len() == 1 && answer[0].is_empty() && self.no_answer == NoAnswer::EmptyString {
            Vec::new()
        } else {
            answer.to_vec()
        }
    }
}

/// The text an item is about. MNLI keeps its premise and hypothesis apart. Read through
/// [`FlatContext`] (the same JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "FlatContext")]
pub enum Context {
    Single { text: String },
    Pair { premise: String, hypothesis: String },
}

/// A [`Context`] as read: its tag and every variant's fields, each optional. Serde reads an
/// internally tagged enum by buffering the whole object first, code the worker's bundle would
/// carry for each such type; this reads it in one pass (an unknown kind or a missing field is
/// still an error, and fields of the other kind are ignored, as before).
#[derive(Deserialize)]
struct FlatContext {
    kind: ContextKind,
    text: Option<String>,
    premise: Option<String>,
    hypothesis: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ContextKind {
    Single,
    Pair,
}

/// A field that the tag of a flattened enum (`FlatContext`, `answer::FlatAnswer`) requires.
pub(crate) fn required<T>(value: Option<T>, field: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("missing field `{field}`"))
}

impl TryFrom<FlatContext> for Context {
    type Error = String;
    fn try_from(f: FlatContext) -> Result<Self, String> {
        Ok(match f.kind {
            ContextKind::Single => Context::Single {
                text: required(f.text, "text")?,
            },
            ContextKind::Pair => Context::Pair {
                premise: required(f.premise, "premise")?,
                hypothesis: required(f.hypothesis, "hypothesis")?,
            },
        })
    }
}

impl Context {
    /// The first (or only) text; span offsets refer to it.
    pub fn primary(&self) -> &str {
        match self {
            Context::Single { text } => text,
            Context::Pair { premise, .. } => premise,
        }
    }
    pub fn second(&self) -> Option<&str> {
        match self {
            Context::Single { .. } => None,
            Context::Pair { hypothesis, .. } => Some(hypothesis),
        }
    }
    pub fn is_empty(&self) -> bool {
        match self {
            Context::Single { text } => text.trim().is_empty(),
            Context::Pair {
                premise,
                hypothesis,
            } => premise.trim().is_empty() || hypothesis.trim().is_empty(),
        }
    }
    /// Does `needle` occur in any part of the context?
    pub fn contains(&self, needle: &str) -> bool {
        self.primary().contains(needle) || self.second().is_some_and(|h| h.contains(needle))
    }
}

/// Gold answers of one item in both forms the scorer needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gold {
    /// The `answer` strings exactly as the official file has them (`[""]` for NER "none";
    /// reading comprehension: one entry per annotator, duplicates kept).
    pub official: Vec<String>,
    /// The gold spans in the internal encoding (empty = no answer), offsets in code points
    /// of the primary context where the file gives them.
    pub spans: Vec<Span>,
}

impl Gold {
    /// The alternatives for any-of scoring: for reading comprehension each annotator's answer
    /// alone, otherwise the whole set as the only alternative.
    pub fn alternatives(&self, family: Family) -> Vec<Vec<String>> {
        if family == Family::ReadingComprehension && !self.official.is_empty() {
            self.official.iter().map(|s| vec![s.clone()]).collect()
        } else {
            vec![self.official.clone()]
        }
    }

    /// S1 of an official-encoding prediction against this gold.
    pub fn score(&self, family: Family, pred: &[String], scoring: Scoring) -> f64 {
        match scoring {
            Scoring::Official => s1_item(pred, &self.official),
            Scoring::AnyOf => s1_any_of(pred, &self.alternatives(family)),
        }
    }
}

/// One item of a task in the unified format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The id as written in the source file (numbers stringified). Not unique across the
    /// SST-2 training files, whose ids restart at 1.
    pub id: String,
    pub context: Context,
    pub question: String,
    pub question_type: Option<String>,
    pub gold: Gold,
    /// Other fields of the source row kept verbatim (MNLI genre, SQuAD `is_impossible`,
    /// ReCoRD entities as code point spans with exclusive end).
    pub extra: serde_json::Value,
}

impl Example {
    /// The candidate entities the item lists (ReCoRD's `entity_spans`): code-point ranges
    /// `(start, end)` of the primary context, end exclusive, in order; empty ones left out.
    pub fn entity_spans(&self) -> Vec<(usize, usize)> {
        self.extra["entity_spans"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|e| {
                        let start = e["start"].as_u64()? as usize;
                        let end = e["end"].as_u64()? as usize;
                        (end > start).then_some((start, end))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The entity strings the item lists, one per mention, in order (spans outside the
    /// context left out).
    pub fn listed_entities(&self) -> Vec<&str> {
        let text = self.context.primary();
        self.entity_spans()
            .into_iter()
            .filter_map(|(start, end)| slice_cp(text, start, end - start))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ner() -> TaskSpec {
        TaskSpec {
            name: "CoNLL2003".into(),
            family: Family::SequenceLabelling,
            description: String::new(),
            labels: vec![],
            question_types: vec![],
            no_answer: NoAnswer::EmptyString,
            metric: None,
        }
    }

    #[test]
    fn no_answer_round_trips_through_the_official_encoding() {
        let t = ner();
        assert_eq!(t.to_official(&[]), vec![String::new()]);
        assert_eq!(t.from_official(&[String::new()]), Vec::<String>::new());
        let some = vec!["Lincoln".to_string()];
        assert_eq!(t.from_official(&t.to_official(&some)), some);
        let rc = TaskSpec {
            no_answer: NoAnswer::EmptyList,
            ..ner()
        };
        assert_eq!(rc.to_official(&[]), Vec::<String>::new());
    }

    #[test]
    fn internal_empty_scores_like_official_none() {
        let t = ner();
        let gold = Gold {
            official: vec![String::new()],
            spans: vec![],
        };
        // A human who marks "no answer" is converted to [""] and gets full credit.
        assert_eq!(
            gold.score(t.family, &t.to_official(&[]), Scoring::Official),
            1.0
        );
        // An official-format `[]` prediction against `[""]` is wrong for the official scorer.
        assert_eq!(gold.score(t.family, &[], Scoring::Official), 0.0);
    }

    #[test]
    fn question_types_match_exactly_or_fall_back_to_a_free_question() {
        let mut t = ner();
        t.question_types = vec![QuestionType {
            key: "person".into(),
            question: "List all the people names in the context".into(),
        }];
        assert_eq!(
            t.question_type_of("List all the people names in the context")
                .unwrap()
                .key,
            "person"
        );
        assert!(t
            .question_type_of("list all the people names in the context")
            .is_none());
        t.question_types.push(QuestionType {
            key: "question".into(),
            question: String::new(),
        });
        assert_eq!(t.question_type_of("Who wrote it?").unwrap().key, "question");
    }

    #[test]
    fn reading_comprehension_alternatives() {
        let g = Gold {
            official: vec!["the Normans".into(), "Normans".into()],
            spans: vec![],
        };
        let p = vec!["Normans".to_string()];
        assert_eq!(
            g.score(Family::ReadingComprehension, &p, Scoring::AnyOf),
            1.0
        );
        assert!(
            (g.score(Family::ReadingComprehension, &p, Scoring::Official) - 2.0 / 3.0).abs()
                < 1e-12
        );
        // Outside reading comprehension any-of equals official.
        assert!((g.score(Family::SequenceLabelling, &p, Scoring::AnyOf) - 2.0 / 3.0).abs() < 1e-12);
        let empty = Gold {
            official: vec![],
            spans: vec![],
        };
        assert_eq!(
            empty.score(Family::ReadingComprehension, &[], Scoring::AnyOf),
            1.0
        );
    }
}
