//! The six CLUES tasks: their directories and file prefixes, and the task descriptions and
//! label Help that workers see (the official files carry data only).

use domain::task::{Family, Label, NoAnswer, QuestionType, TaskSpec};

/// A task directory of the official CLUES data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CluesTask {
    /// Directory name, which is also the task's name.
    pub dir: &'static str,
    /// File prefix: `<prefix>_test.jsonl`, `<prefix>_train_<k>_<split>.jsonl`.
    pub prefix: &'static str,
    pub family: Family,
}

pub const CLUES_TASKS: [CluesTask; 6] = [
    CluesTask {
        dir: "SST-2",
        prefix: "sst",
        family: Family::Classification,
    },
    CluesTask {
        dir: "MNLI",
        prefix: "mnli",
        family: Family::Classification,
    },
    CluesTask {
        dir: "CoNLL2003",
        prefix: "conll",
        family: Family::SequenceLabelling,
    },
    CluesTask {
        dir: "WikiANN_EN",
        prefix: "wikiann",
        family: Family::SequenceLabelling,
    },
    CluesTask {
        dir: "SQuAD-v2",
        prefix: "squad-v2",
        family: Family::ReadingComprehension,
    },
    CluesTask {
        dir: "ReCoRD",
        prefix: "record",
        family: Family::ReadingComprehension,
    },
];

pub fn clues_task(dir: &str) -> Option<CluesTask> {
    CLUES_TASKS.into_iter().find(|t| t.dir == dir)
}

fn label(name: &str, definition: &str, example: &str) -> Label {
    Label {
        name: name.into(),
        definition: definition.into(),
        example: example.into(),
    }
}

fn qtype(key: &str, question: &str) -> QuestionType {
    QuestionType {
        key: key.into(),
        question: question.into(),
    }
}

const NER_DESCRIPTION: &str = "Read the sentence and list every name of the kind the question asks for, \
    exactly as it is written in the sentence: select it and add it as an answer. A sentence can hold \
    several names, or none: then choose \"no answer\".";

fn ner_questions() -> Vec<QuestionType> {
    vec![
        qtype("person", "List all the people names in the context"),
        qtype("organization", "List all the organizations in the context"),
        qtype("location", "List all the locations in the context"),
    ]
}

/// The spec of a CLUES task, under the given name (demo tasks get a prefixed name).
pub fn spec(task: CluesTask, name: &str) -> TaskSpec {
    let (description, labels, question_types, no_answer) = match task.dir {
        "SST-2" => (
            "Read a short piece of a movie review and decide whether it speaks of the movie positively or negatively.",
            vec![
                label("positive", "The text shows a favourable opinion of the movie.", "\"a gorgeous, witty, seductive movie.\""),
                label("negative", "The text shows an unfavourable opinion of the movie.", "\"the plot is nothing but boilerplate clichés from start to finish.\""),
            ],
            vec![qtype("sentiment", "positive or negative?")],
            NoAnswer::EmptyList,
        ),
        "MNLI" => (
            "Read two sentences. Decide whether Sentence 2 is surely true when Sentence 1 is true (entailment), \
             surely false (contradiction), or may be either (neutral).",
            vec![
                label("entailment", "If Sentence 1 is true, Sentence 2 must be true too.", "1: \"A man is playing a guitar on stage.\" 2: \"A man is playing an instrument.\""),
                label("contradiction", "If Sentence 1 is true, Sentence 2 cannot be true.", "1: \"The shop is closed on Sundays.\" 2: \"The shop opens every day of the week.\""),
                label("neutral", "Sentence 1 does not tell whether Sentence 2 is true or false.", "1: \"She bought a new car.\" 2: \"Her new car is red.\""),
            ],
            // The official files spell the question this way; it is kept as written.
            vec![qtype("inference", "entailment, contraction, or neutral?")],
            NoAnswer::EmptyList,
        ),
        "CoNLL2003" | "WikiANN_EN" => (NER_DESCRIPTION, vec![], ner_questions(), NoAnswer::EmptyString),
        "SQuAD-v2" => (
            "Read the passage and answer the question by selecting the shortest part of the passage that answers it. \
             Some questions cannot be answered from the passage: then choose \"no answer\".",
            vec![],
            vec![qtype("question", "")],
            NoAnswer::EmptyList,
        ),
        "ReCoRD" => (
            "Read the news passage, then the statement below it, in which one entity is replaced by @placeholder. \
             Select the entity of the passage that the placeholder stands for.",
            vec![],
            vec![qtype("cloze", "")],
            NoAnswer::EmptyList,
        ),
        other => unreachable!("no spec for CLUES task {other}"),
    };
    TaskSpec {
        name: name.to_string(),
        family: task.family,
        description: description.to_string(),
        labels,
        question_types,
        no_answer,
        metric: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_has_a_spec_matching_its_family() {
        for t in CLUES_TASKS {
            let s = spec(t, t.dir);
            assert_eq!(s.family, t.family);
            assert_eq!(
                s.labels.is_empty(),
                t.family != Family::Classification,
                "{}",
                t.dir
            );
            assert!(!s.question_types.is_empty());
            let ner = t.family == Family::SequenceLabelling;
            assert_eq!(s.no_answer == NoAnswer::EmptyString, ner);
        }
        assert!(clues_task("SST-2").is_some() && clues_task("sst").is_none());
    }
}
