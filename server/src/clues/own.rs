//! A researcher's own task in the CLUES layout: `<prefix>_test.jsonl` and
//! `<prefix>_train_<k>_<split>.jsonl` beside a `task.json` that says what the files cannot
//! (name, family, description, labels with their Help); the same checks and report as CLUES.

use super::files::SourceFile;
use super::load::{load_with_spec, read_task_dir, TaskData};
use super::spec::clues_task;
use domain::task::{Family, Label, NoAnswer, QuestionType, TaskSpec};
use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;
use store::error::{Error, Result};

/// `task.json`, as a researcher writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    /// The stored task's name (letters, digits, `-`, `_`, `.`).
    name: String,
    /// `classification`, `sequence_labelling` or `reading_comprehension`.
    family: String,
    /// What workers read before the first item.
    description: String,
    /// Classification only: every label with a definition and an example (the Help).
    #[serde(default)]
    labels: Vec<Label>,
    /// The questions the rows ask (NER: one per entity type, e.g. `{"key": "person",
    /// "question": "List all the people names in the context"}`); none: any question.
    #[serde(default)]
    questions: Vec<QuestionType>,
    /// How a row without an answer is written: `empty_list` (`[]`) or `empty_string`
    /// (`[""]`); by default `empty_string` for sequence labelling, else `empty_list`.
    no_answer: Option<String>,
    /// The files' name prefix; by default the one of the folder's single `*_test.jsonl`.
    prefix: Option<String>,
}

fn invalid(dir: &Path, message: impl Into<String>) -> Error {
    Error::data(dir.join("task.json").display().to_string(), None, message)
}

/// The task's spec from `task.json`, every field checked.
fn spec_of(dir: &Path, file: TaskFile) -> Result<(TaskSpec, Option<String>)> {
    let bad = |m: String| invalid(dir, m);
    let name = file.name.trim().to_string();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(bad(format!(
            "name {name:?}: 1 to 64 letters, digits, '-', '_' or '.'"
        )));
    }
    if clues_task(&name).is_some() {
        return Err(bad(format!(
            "name {name:?} is an official CLUES task; import those with `import clues`"
        )));
    }
    let family = match Family::parse(file.family.trim()) {
        Some(f) if f != Family::TextToText => f,
        _ => {
            return Err(bad(format!(
                "family {:?}: expected classification, sequence_labelling or reading_comprehension (text-to-text tasks come from `import crossfit`)",
                file.family
            )))
        }
    };
    if file.description.trim().is_empty() {
        return Err(bad("description: workers need one; it is empty".into()));
    }
    let mut seen = HashSet::new();
    for l in &file.labels {
        if l.name.trim().is_empty() || l.definition.trim().is_empty() || l.example.trim().is_empty()
        {
            return Err(bad(format!(
                "label {:?}: a name, a definition and an example are all needed (the worker's Help)",
                l.name
            )));
        }
        if !seen.insert(l.name.as_str()) {
            return Err(bad(format!("label {:?} is listed twice", l.name)));
        }
    }
    match (family, file.labels.len()) {
        (Family::Classification, n) if n < 2 => {
            return Err(bad(format!(
                "a classification task needs at least 2 labels; it has {n}"
            )))
        }
        (Family::Classification, _) | (_, 0) => {}
        (_, _) => {
            return Err(bad(format!(
                "labels are for classification tasks, not {}",
                family.as_str()
            )))
        }
    }
    let mut keys = HashSet::new();
    for q in &file.questions {
        if q.key.trim().is_empty() || !keys.insert(q.key.as_str()) {
            return Err(bad(format!(
                "question {:?}: each needs a key of its own",
                q.question
            )));
        }
    }
    let no_answer = match file.no_answer.as_deref() {
        None if family == Family::SequenceLabelling => NoAnswer::EmptyString,
        None => NoAnswer::EmptyList,
        Some(s) => NoAnswer::parse(s).ok_or_else(|| {
            bad(format!(
                "no_answer {s:?}: expected empty_list or empty_string"
            ))
        })?,
    };
    let question_types = if file.questions.is_empty() {
        vec![QuestionType {
            key: "question".into(),
            question: String::new(),
        }]
    } else {
        file.questions
    };
    let spec = TaskSpec {
        name,
        family,
        description: file.description.trim().to_string(),
        labels: file.labels,
        question_types,
        no_answer,
        metric: None,
    };
    Ok((spec, file.prefix))
}

/// The prefix of the folder's files: the one `<prefix>_test.jsonl`.
fn prefix_of(dir: &Path, files: &[SourceFile]) -> Result<String> {
    let tests: Vec<&str> = files
        .iter()
        .filter_map(|f| f.name.strip_suffix("_test.jsonl"))
        .collect();
    match tests.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(Error::data(
            dir.display().to_string(),
            None,
            "no <prefix>_test.jsonl file",
        )),
        many => Err(invalid(
            dir,
            format!(
                "several test files ({}); say which with \"prefix\"",
                many.join(", ")
            ),
        )),
    }
}

/// Reads and checks an own task folder (nothing is stored).
pub fn load_own_task(dir: &Path) -> Result<TaskData> {
    if !dir.is_dir() {
        return Err(Error::data(
            dir.display().to_string(),
            None,
            "no such directory",
        ));
    }
    let path = dir.join("task.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        invalid(
            dir,
            format!("cannot read it ({e}); a task folder needs a task.json"),
        )
    })?;
    let file: TaskFile = serde_json::from_str(&text).map_err(|e| invalid(dir, e.to_string()))?;
    let (spec, prefix) = spec_of(dir, file)?;
    let files = read_task_dir(dir)?;
    let prefix = match prefix {
        Some(p) => p,
        None => prefix_of(dir, &files)?,
    };
    load_with_spec(spec, &prefix, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(task_json: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("task.json"), task_json).unwrap();
        for (name, body) in files {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        dir
    }

    const TICKETS: &str = r#"{"name": "Tickets", "family": "classification",
        "description": "Decide what a support ticket asks for.",
        "labels": [
          {"name": "bug", "definition": "Something is broken.", "example": "The app crashes on start."},
          {"name": "feature", "definition": "Something new is wanted.", "example": "Please add a dark mode."}
        ]}"#;

    fn row(id: u32, text: &str, label: &str) -> String {
        format!(
            r#"{{"id": {id}, "context": "{text}", "question": "bug or feature?", "answer": ["{label}"]}}"#
        )
    }

    /// The error of a folder that must be refused.
    fn refusal(dir: &Path) -> String {
        match load_own_task(dir) {
            Ok(_) => panic!("{} was accepted", dir.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_own_classification_task_loads_with_its_help_and_checks() {
        let test = [row(1, "It crashes", "bug"), row(2, "Add export", "feature")].join("\n");
        let train = [row(3, "Freezes", "bug"), row(4, "More colours", "feature")].join("\n");
        let dir = folder(
            TICKETS,
            &[
                ("tickets_test.jsonl", &test),
                ("tickets_train_2_1.jsonl", &train),
            ],
        );
        let task = load_own_task(dir.path()).unwrap();
        assert_eq!(task.spec.name, "Tickets");
        assert_eq!(task.spec.family, Family::Classification);
        assert_eq!(task.spec.labels[0].definition, "Something is broken.");
        assert_eq!(task.files.len(), 2);
        assert!(
            task.notes.is_empty(),
            "{:?}",
            task.notes.iter().map(|n| &n.detail).collect::<Vec<_>>()
        );
    }

    #[test]
    fn bad_task_files_are_refused_with_the_reason() {
        let test = row(1, "It crashes", "bug");
        let cases = [
            (r#"{"name": "T"}"#, "missing field"),
            (
                &TICKETS.replace("\"classification\"", "\"text_to_text\""),
                "family",
            ),
            (
                &TICKETS.replace("\"Tickets\"", "\"SST-2\""),
                "official CLUES task",
            ),
            (
                &TICKETS.replace("\"Tickets\"", "\"a b\""),
                "letters, digits",
            ),
            (
                &TICKETS.replace("Something is broken.", ""),
                "definition and an example",
            ),
            (&TICKETS.replace("\"feature\"", "\"bug\""), "listed twice"),
            (
                &TICKETS.replace("Decide what a support ticket asks for.", " "),
                "description",
            ),
            (
                &TICKETS.replace("\"classification\"", "\"reading_comprehension\""),
                "labels are for classification",
            ),
            (
                &TICKETS.replace(
                    "\"name\": \"Tickets\",",
                    "\"name\": \"Tickets\", \"colour\": 1,",
                ),
                "unknown field",
            ),
        ];
        for (json, expected) in cases {
            let dir = folder(json, &[("tickets_test.jsonl", &test)]);
            let e = refusal(dir.path());
            assert!(
                e.contains(expected) && e.contains("task.json"),
                "{expected}: {e}"
            );
        }
        let no_json = tempfile::tempdir().unwrap();
        assert!(refusal(no_json.path()).contains("needs a task.json"));
        // A label the task does not have is a quality note with its file and line, as in
        // the official data; a row that is not JSON is an error naming them.
        let dir = folder(
            TICKETS,
            &[("tickets_test.jsonl", &row(1, "Hm", "question"))],
        );
        let task = load_own_task(dir.path()).ok().unwrap();
        let note = &task.notes[0];
        assert_eq!(
            (note.kind, note.line),
            ("unknown_label", Some(1)),
            "{}",
            note.detail
        );
        let dir = folder(TICKETS, &[("tickets_test.jsonl", "{not json")]);
        let e = refusal(dir.path());
        assert!(e.contains("tickets_test.jsonl:1:"), "{e}");
        let dir = folder(TICKETS, &[("a_test.jsonl", &test), ("b_test.jsonl", &test)]);
        assert!(refusal(dir.path()).contains("say which with \"prefix\""));
    }
}
