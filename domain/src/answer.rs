//! What a worker submits for one item, and the server's check of it against the task and the
//! context: labels from the task's set, spans that match the text at their code-point offsets.

use super::s1::Scoring;
use super::spans::{on_grapheme_boundaries, slice_cp};
use super::task::{required, Context, Family, Gold, TaskSpec};
use serde::{Deserialize, Serialize};

/// One answer span as the worker made it: offsets and lengths in code points of the context.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SpanAnswer {
    pub text: String,
    pub offset: usize,
    pub length: usize,
}

/// The points of the confidence scale in the paper's words (CLUES sec. 4.1), 1 = strongly
/// disagree, 3 = undecided, 5 = strongly agree with
/// "I am confident in my answer".
pub const CONFIDENCE_LEVELS: [(u8, &str); 5] = [
    (1, "Strongly disagree"),
    (2, "Disagree"),
    (3, "Undecided"),
    (4, "Agree"),
    (5, "Strongly agree"),
];

/// Longest free-text answer, in characters.
pub const MAX_TEXT: usize = 2000;

/// Most spans one answer may hold.
pub const MAX_SPANS: usize = 50;

/// Read through [`FlatAnswer`] (the same JSON: the `kind` tag beside the variant's fields).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "FlatAnswer")]
pub enum Answer {
    /// Classification: one of the task's labels, with the confidence scale.
    Label { label: String, confidence: u8 },
    /// Span tasks: one or more spans of the context.
    Spans { spans: Vec<SpanAnswer> },
    /// Span tasks: the explicit choice that the text holds no answer.
    NoAnswer,
    /// The worker skipped the item: not an answer, so it scores 0 (see `Answer::score`).
    Skip { confidence: Option<u8> },
    /// Text-to-text tasks: a free-text answer (stored trimmed).
    Text { text: String },
}

/// An [`Answer`] as read, as `task::FlatContext` reads a context: its tag and every variant's
/// fields, each optional, read in one pass (buffered, reading an answer was 12 KB of the
/// worker's bundle before wasm-opt).
#[derive(Deserialize)]
struct FlatAnswer {
    kind: AnswerKind,
    label: Option<String>,
    confidence: Option<u8>,
    spans: Option<Vec<SpanAnswer>>,
    text: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum AnswerKind {
    Label,
    Spans,
    NoAnswer,
    Skip,
    Text,
}

impl TryFrom<FlatAnswer> for Answer {
    type Error = String;
    fn try_from(f: FlatAnswer) -> Result<Self, String> {
        Ok(match f.kind {
            AnswerKind::Label => Answer::Label {
                label: required(f.label, "label")?,
                confidence: required(f.confidence, "confidence")?,
            },
            AnswerKind::Spans => Answer::Spans {
                spans: required(f.spans, "spans")?,
            },
            AnswerKind::NoAnswer => Answer::NoAnswer,
            AnswerKind::Skip => Answer::Skip {
                confidence: f.confidence,
            },
            AnswerKind::Text => Answer::Text {
                text: required(f.text, "text")?,
            },
        })
    }
}

impl Answer {
    /// This answer's score on an item (S1, or a text-to-text task's item metric). A skip is not
    /// an answer: it scores 0 under both scorings for every family, also where "no answer"
    /// would be right (an empty NER or SQuAD v2 gold).
    pub fn score(&self, spec: &TaskSpec, gold: &Gold, scoring: Scoring) -> f64 {
        match self {
            Answer::Skip { .. } => 0.0,
            _ => spec.score(gold, &spec.to_official(&self.strings()), scoring),
        }
    }

    /// The answer as the internal set of strings (empty = no answer) for S1.
    pub fn strings(&self) -> Vec<String> {
        match self {
            Answer::Label { label, .. } => vec![label.clone()],
            Answer::Spans { spans } => spans.iter().map(|s| s.text.clone()).collect(),
            Answer::NoAnswer | Answer::Skip { .. } => Vec::new(),
            Answer::Text { text } => vec![text.trim().to_string()],
        }
    }
    pub fn confidence(&self) -> Option<u8> {
        match self {
            Answer::Label { confidence, .. } => Some(*confidence),
            Answer::Skip { confidence } => *confidence,
            _ => None,
        }
    }
    /// The stored span list: labels with no offset, spans with theirs.
    pub fn spans(&self) -> Vec<(String, Option<usize>, usize)> {
        match self {
            Answer::Label { label, .. } => vec![(label.clone(), None, label.chars().count())],
            Answer::Text { text } => {
                let t = text.trim();
                vec![(t.to_string(), None, t.chars().count())]
            }
            Answer::Spans { spans } => spans
                .iter()
                .map(|s| (s.text.clone(), Some(s.offset), s.length))
                .collect(),
            _ => Vec::new(),
        }
    }
}

fn check_confidence(c: u8) -> Result<(), String> {
    if (1..=5).contains(&c) {
        Ok(())
    } else {
        Err(format!("the confidence scale runs from 1 to 5, not {c}"))
    }
}

/// Checks an answer for an item of `spec` with `context`. Every problem is a sentence for
/// the worker; nothing is corrected silently.
pub fn check_answer(spec: &TaskSpec, context: &Context, answer: &Answer) -> Result<(), String> {
    let classification = spec.family == Family::Classification;
    let text_task = spec.family == Family::TextToText;
    match answer {
        Answer::Text { text } => {
            if !text_task {
                return Err("this task does not take a free-text answer".into());
            }
            let n = text.trim().chars().count();
            if n == 0 {
                return Err("write an answer, or skip the item".into());
            }
            if n > MAX_TEXT {
                return Err(format!("an answer may have at most {MAX_TEXT} characters"));
            }
            Ok(())
        }
        Answer::Skip { confidence } => confidence.map_or(Ok(()), check_confidence),
        _ if text_task => Err("this task asks for a free-text answer".into()),
        Answer::Label { label, confidence } => {
            if !classification {
                return Err("this task asks for spans of the text, not a label".into());
            }
            if !spec.labels.iter().any(|l| &l.name == label) {
                return Err(format!("{label:?} is not one of this task's labels"));
            }
            check_confidence(*confidence)
        }
        Answer::Spans { spans } => {
            if classification {
                return Err("this task asks for a label, not spans".into());
            }
            if spans.is_empty() {
                return Err(
                    "an answer needs at least one span; to say there is none, choose \"No answer\""
                        .into(),
                );
            }
            if spans.len() > MAX_SPANS {
                return Err(format!("at most {MAX_SPANS} spans per answer"));
            }
            let text = context.primary();
            for (i, s) in spans.iter().enumerate() {
                let n = i + 1;
                if s.length == 0 || s.text.is_empty() {
                    return Err(format!("span {n} is empty"));
                }
                if s.text.chars().count() != s.length {
                    return Err(format!(
                        "span {n} ({:?}) has {} code points, not the length {} sent with it",
                        s.text,
                        s.text.chars().count(),
                        s.length
                    ));
                }
                match slice_cp(text, s.offset, s.length) {
                    Some(found) if found == s.text => {}
                    Some(found) => {
                        return Err(format!(
                            "span {n} ({:?}) does not match the text at offset {} (length {}), which reads {found:?}",
                            s.text, s.offset, s.length
                        ))
                    }
                    None => {
                        return Err(format!(
                            "span {n} ({:?}) at offset {} with length {} runs past the end of the text",
                            s.text, s.offset, s.length
                        ))
                    }
                }
                if !on_grapheme_boundaries(text, s.offset, s.length) {
                    return Err(format!(
                        "span {n} ({:?}) cuts a character in two (a letter from its accent, part of an emoji or of a line break); select whole characters",
                        s.text
                    ));
                }
                if spans[..i]
                    .iter()
                    .any(|o| o.offset == s.offset && o.length == s.length)
                {
                    return Err(format!("span {n} ({:?}) is listed twice", s.text));
                }
            }
            Ok(())
        }
        Answer::NoAnswer => {
            if classification {
                Err("choose a label, or skip the item".into())
            } else {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{Label, NoAnswer, QuestionType};

    fn spec(family: Family) -> TaskSpec {
        TaskSpec {
            name: "t".into(),
            family,
            description: String::new(),
            labels: if family == Family::Classification {
                vec![Label {
                    name: "positive".into(),
                    definition: String::new(),
                    example: String::new(),
                }]
            } else {
                Vec::new()
            },
            question_types: vec![QuestionType {
                key: "q".into(),
                question: String::new(),
            }],
            no_answer: NoAnswer::EmptyList,
            metric: None,
        }
    }

    fn ctx(t: &str) -> Context {
        Context::Single { text: t.into() }
    }

    fn span(text: &str, offset: usize) -> SpanAnswer {
        SpanAnswer {
            text: text.into(),
            offset,
            length: text.chars().count(),
        }
    }

    /// The one-pass readers (`FlatAnswer`, `task::FlatContext`) take the JSON that the tagged
    /// enums write, and refuse what serde's tagged reading refused.
    #[test]
    fn answers_and_contexts_read_back_as_written() {
        let answers = [
            Answer::Label {
                label: "positive".into(),
                confidence: 4,
            },
            Answer::Spans {
                spans: vec![span("Ang Rita", 3)],
            },
            Answer::NoAnswer,
            Answer::Skip { confidence: None },
            Answer::Skip {
                confidence: Some(2),
            },
            Answer::Text { text: "a".into() },
        ];
        for a in answers {
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<Answer>(&json).unwrap(), a, "{json}");
        }
        let contexts = [
            Context::Single { text: "t".into() },
            Context::Pair {
                premise: "p".into(),
                hypothesis: "h".into(),
            },
        ];
        for c in contexts {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<Context>(&json).unwrap(), c, "{json}");
        }
        // Fields of another kind are ignored; a null optional field is absent.
        let read = |j: &str| serde_json::from_str::<Answer>(j).map_err(|e| e.to_string());
        assert_eq!(
            read(r#"{"kind":"no_answer","label":"x"}"#),
            Ok(Answer::NoAnswer)
        );
        assert_eq!(
            read(r#"{"kind":"skip","confidence":null}"#),
            Ok(Answer::Skip { confidence: None })
        );
        for (bad, says) in [
            (
                r#"{"kind":"label","label":"x"}"#,
                "missing field `confidence`",
            ),
            (r#"{"kind":"spans"}"#, "missing field `spans`"),
            (r#"{"kind":"guess","text":"x"}"#, "unknown variant `guess`"),
            (r#"{"label":"x","confidence":3}"#, "missing field `kind`"),
            (r#"{"kind":"label","label":"x","confidence":6000}"#, "6000"),
        ] {
            let err = read(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        let err = serde_json::from_str::<Context>(r#"{"kind":"pair","premise":"p"}"#).unwrap_err();
        assert!(
            err.to_string().contains("missing field `hypothesis`"),
            "{err}"
        );
    }

    #[test]
    fn spans_must_match_the_text_in_code_points() {
        let s = spec(Family::ReadingComprehension);
        let c = ctx("Go 🏔️ to\r\nJosé");
        // 'José' starts at code point 10: G o _ 🏔 FE0F _ t o \r \n
        let ok = Answer::Spans {
            spans: vec![span("José", 10), span("to", 6)],
        };
        assert_eq!(check_answer(&s, &c, &ok), Ok(()));
        // Half a character: the mountain without its variation selector, the CR of a CRLF.
        for cut in [span("🏔", 3), span("to\r", 6), span("\nJosé", 9)] {
            let err = check_answer(&s, &c, &Answer::Spans { spans: vec![cut] }).unwrap_err();
            assert!(err.contains("cuts a character in two"), "{err}");
        }
        let shifted = Answer::Spans {
            spans: vec![span("José", 9)],
        };
        assert!(check_answer(&s, &c, &shifted)
            .unwrap_err()
            .contains("does not match the text at offset 9"));
        let past = Answer::Spans {
            spans: vec![span("José", 11)],
        };
        assert!(check_answer(&s, &c, &past)
            .unwrap_err()
            .contains("runs past the end"));
        let bad_len = Answer::Spans {
            spans: vec![SpanAnswer {
                text: "José".into(),
                offset: 10,
                length: 5,
            }],
        };
        assert!(check_answer(&s, &c, &bad_len)
            .unwrap_err()
            .contains("not the length 5"));
        let twice = Answer::Spans {
            spans: vec![span("to", 6), span("to", 6)],
        };
        assert!(check_answer(&s, &c, &twice).unwrap_err().contains("twice"));
        let none = Answer::Spans { spans: vec![] };
        assert!(check_answer(&s, &c, &none)
            .unwrap_err()
            .contains("No answer"));
        assert_eq!(check_answer(&s, &c, &Answer::NoAnswer), Ok(()));
    }

    #[test]
    fn labels_come_from_the_task_with_a_confidence() {
        let s = spec(Family::Classification);
        let c = ctx("fine");
        let ok = Answer::Label {
            label: "positive".into(),
            confidence: 4,
        };
        assert_eq!(check_answer(&s, &c, &ok), Ok(()));
        assert_eq!(ok.strings(), vec!["positive".to_string()]);
        let unknown = Answer::Label {
            label: "neutral".into(),
            confidence: 4,
        };
        assert!(check_answer(&s, &c, &unknown).is_err());
        let conf = Answer::Label {
            label: "positive".into(),
            confidence: 6,
        };
        assert!(check_answer(&s, &c, &conf).unwrap_err().contains("1 to 5"));
        assert!(check_answer(&s, &c, &Answer::NoAnswer).is_err());
        assert!(check_answer(&s, &c, &Answer::Skip { confidence: None }).is_ok());
        assert!(Answer::Skip { confidence: None }.strings().is_empty());
        // A skip scores 0 even where "no answer" is right; the explicit choice scores 1.
        let empty = Gold {
            official: vec![],
            spans: vec![],
        };
        let rc = spec(Family::ReadingComprehension);
        for scoring in [Scoring::Official, Scoring::AnyOf] {
            assert_eq!(
                Answer::Skip { confidence: None }.score(&rc, &empty, scoring),
                0.0
            );
            assert_eq!(Answer::NoAnswer.score(&rc, &empty, scoring), 1.0);
        }
        // The paper's scale: its middle point is "Undecided".
        let words: Vec<&str> = CONFIDENCE_LEVELS.iter().map(|l| l.1).collect();
        assert_eq!(
            words,
            [
                "Strongly disagree",
                "Disagree",
                "Undecided",
                "Agree",
                "Strongly agree"
            ]
        );
        let spans = Answer::Spans {
            spans: vec![span("fine", 0)],
        };
        assert!(check_answer(&s, &c, &spans).is_err());
    }
}
