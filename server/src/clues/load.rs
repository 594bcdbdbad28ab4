//! Reading a CLUES-layout directory into memory: file names -> shot groups, lines -> examples,
//! with every row's quality notes. All of it is read and checked before anything is stored.

use super::checks::{self, Note, ShotSummary};
use super::files::{classify_file, FileKind, LoadedFile, LoadedRow, SourceFile};
use super::parse::{content_key, parse_row};
use super::spec::{clues_task, spec, CluesTask, CLUES_TASKS};
use domain::task::TaskSpec;
use sha2::{Digest, Sha256};
use std::path::Path;
use store::error::{Error, Result};

/// One task read completely, ready to store.
pub struct TaskData {
    pub spec: TaskSpec,
    pub files: Vec<LoadedFile>,
    pub notes: Vec<Note>,
    pub shots: ShotSummary,
}

impl TaskData {
    pub fn test_file(&self) -> Option<&LoadedFile> {
        self.files.iter().find(|f| f.kind == FileKind::Test)
    }
}

fn parse_file(
    spec: &TaskSpec,
    prefix: &str,
    file: SourceFile,
    notes: &mut Vec<Note>,
) -> Result<LoadedFile> {
    let kind = classify_file(prefix, &file.name).ok_or_else(|| {
        Error::data(
            &file.label,
            None,
            format!("unrecognised file name: expected {prefix}_test.jsonl or {prefix}_train_<k>_<split>.jsonl"),
        )
    })?;
    let sha256 = hex::encode(Sha256::digest(&file.bytes));
    let text = std::str::from_utf8(&file.bytes)
        .map_err(|e| Error::data(&file.label, None, format!("not valid UTF-8: {e}")))?;
    let lines: Vec<&str> = text.split('\n').collect();
    // A final newline leaves one empty piece; any other blank line is an error.
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let mut rows = Vec::with_capacity(last);
    for (i, raw) in lines[..last].iter().enumerate() {
        let line = i + 1;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            return Err(Error::data(
                &file.label,
                Some(line),
                "blank line inside the file",
            ));
        }
        let (example, row_notes) =
            parse_row(spec, raw).map_err(|m| Error::data(&file.label, Some(line), m))?;
        notes.extend(
            row_notes
                .into_iter()
                .map(|(kind, detail)| Note::at(&file.name, line, kind, detail)),
        );
        let content_key = content_key(&example.context, &example.question, &example.gold.official);
        rows.push(LoadedRow {
            line,
            example,
            content_key,
        });
    }
    if rows.is_empty() {
        return Err(Error::data(&file.label, None, "the file holds no rows"));
    }
    Ok(LoadedFile {
        name: file.name,
        label: file.label,
        kind,
        sha256,
        rows,
    })
}

/// Parses and checks all files of one CLUES task. `name` is the stored task name.
pub fn load_task(task: CluesTask, name: &str, files: Vec<SourceFile>) -> Result<TaskData> {
    load_with_spec(spec(task, name), task.prefix, files)
}

/// Parses and checks all files of a task described by `spec`, named `<prefix>_...jsonl`.
pub fn load_with_spec(spec: TaskSpec, prefix: &str, files: Vec<SourceFile>) -> Result<TaskData> {
    let mut notes = Vec::new();
    let mut loaded = files
        .into_iter()
        .map(|f| parse_file(&spec, prefix, f, &mut notes))
        .collect::<Result<Vec<_>>>()?;
    loaded.sort_by_key(|f| f.kind);
    if !loaded.iter().any(|f| f.kind == FileKind::Test) {
        return Err(Error::data(
            &spec.name,
            None,
            format!("no test file {prefix}_test.jsonl"),
        ));
    }
    let shots = checks::check_task(&spec, &loaded, &mut notes);
    Ok(TaskData {
        spec,
        files: loaded,
        notes,
        shots,
    })
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    let ctx = || format!("cannot read directory {}", dir.display());
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(ctx(), e))?
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(ctx(), e))?;
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

/// The `.jsonl` files of a task directory.
pub fn read_task_dir(dir: &Path) -> Result<Vec<SourceFile>> {
    let mut out = Vec::new();
    for entry in read_dir_sorted(dir)? {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".jsonl") {
            continue;
        }
        let path = entry.path();
        let bytes = std::fs::read(&path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        out.push(SourceFile {
            name,
            label: path.display().to_string(),
            bytes,
        });
    }
    Ok(out)
}

/// Reads a CLUES data root (its subdirectories are task directories) or a single task
/// directory. Unknown subdirectories are an error; loose files such as LICENSE are skipped.
pub fn load_clues_dir(root: &Path) -> Result<Vec<TaskData>> {
    if !root.is_dir() {
        return Err(Error::data(
            root.display().to_string(),
            None,
            "no such directory",
        ));
    }
    let own_name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(task) = clues_task(&own_name) {
        return Ok(vec![load_task(task, task.dir, read_task_dir(root)?)?]);
    }
    let mut out = Vec::new();
    for entry in read_dir_sorted(root)? {
        if !entry.path().is_dir() {
            continue;
        }
        let dir = entry.file_name().to_string_lossy().into_owned();
        let task = clues_task(&dir).ok_or_else(|| {
            let known: Vec<&str> = CLUES_TASKS.iter().map(|t| t.dir).collect();
            Error::data(
                entry.path().display().to_string(),
                None,
                format!(
                    "unknown task directory {dir:?}; expected one of {}",
                    known.join(", ")
                ),
            )
        })?;
        out.push(load_task(task, task.dir, read_task_dir(&entry.path())?)?);
    }
    if out.is_empty() {
        return Err(Error::data(
            root.display().to_string(),
            None,
            "no CLUES task directories found",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(classify_file("sst", "sst_test.jsonl"), Some(FileKind::Test));
        assert_eq!(
            classify_file("squad-v2", "squad-v2_train_20_3.jsonl"),
            Some(FileKind::Train { k: 20, split: 3 })
        );
        assert_eq!(classify_file("sst", "sst_train_10.jsonl"), None);
        assert_eq!(classify_file("sst", "sst_train_0_1.jsonl"), None);
        assert_eq!(classify_file("sst", "mnli_test.jsonl"), None);
        assert_eq!(classify_file("sst", "sst_test.json"), None);
    }

    fn file(name: &str, body: &str) -> SourceFile {
        SourceFile {
            name: name.into(),
            label: format!("mem/{name}"),
            bytes: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn errors_name_file_and_line() {
        let t = clues_task("SST-2").unwrap();
        let good = r#"{"answer": ["positive"], "question": "positive or negative?", "id": 1, "context": "fine"}"#;
        let err = load_task(
            t,
            "SST-2",
            vec![file("sst_test.jsonl", &format!("{good}\n{{oops\n"))],
        )
        .err()
        .unwrap();
        assert!(
            err.to_string()
                .starts_with("mem/sst_test.jsonl:2: malformed JSON"),
            "{err}"
        );
        let err = load_task(
            t,
            "SST-2",
            vec![file("sst_test.jsonl", &format!("{good}\n\n{good}\n"))],
        )
        .err()
        .unwrap();
        assert_eq!(
            err.to_string(),
            "mem/sst_test.jsonl:2: blank line inside the file"
        );
        let err = load_task(t, "SST-2", vec![file("sst_train_10_1.jsonl", good)])
            .err()
            .unwrap();
        assert!(err.to_string().contains("no test file"), "{err}");
        let err = load_task(t, "SST-2", vec![file("sst_dev.jsonl", good)])
            .err()
            .unwrap();
        assert!(err.to_string().contains("unrecognised file name"), "{err}");
        // CRLF line ends and a missing final newline are fine.
        let ok = load_task(
            t,
            "SST-2",
            vec![file("sst_test.jsonl", &format!("{good}\r\n{good}"))],
        )
        .unwrap();
        assert_eq!(ok.files[0].rows.len(), 2);
    }
}
