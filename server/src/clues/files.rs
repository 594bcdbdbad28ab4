//! A CLUES file once read: which file it is (the test set, or training file k of a split),
//! its bytes' hash and its rows. What `load` produces and `checks` inspects.

use domain::task::Example;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    Test,
    Train { k: u32, split: u32 },
}

/// A file's name and bytes, from disk or from the embedded demo.
pub struct SourceFile {
    pub name: String,
    /// How errors name the file (a path on disk, or `demo/<dir>/<name>`).
    pub label: String,
    pub bytes: Vec<u8>,
}

pub struct LoadedRow {
    /// 1-based line number in the file.
    pub line: usize,
    pub example: Example,
    pub content_key: String,
}

pub struct LoadedFile {
    pub name: String,
    pub label: String,
    pub kind: FileKind,
    pub sha256: String,
    pub rows: Vec<LoadedRow>,
}

/// `<prefix>_test.jsonl` or `<prefix>_train_<k>_<split>.jsonl`.
pub fn classify_file(prefix: &str, name: &str) -> Option<FileKind> {
    let stem = name
        .strip_suffix(".jsonl")?
        .strip_prefix(prefix)?
        .strip_prefix('_')?;
    if stem == "test" {
        return Some(FileKind::Test);
    }
    let (k, split) = stem.strip_prefix("train_")?.split_once('_')?;
    let parse = |s: &str| {
        s.parse::<u32>()
            .ok()
            .filter(|n| *n > 0 && !s.starts_with('0'))
    };
    Some(FileKind::Train {
        k: parse(k)?,
        split: parse(split)?,
    })
}
