//! Shot groups as nesting chains of training files, pure and IO-free: which `(k, split)` file
//! lies within which, a task's chains (SQuAD v2: 10_1 ⊂ 20_5 ⊂ 30_5), and their text forms.

use std::collections::{BTreeSet, HashMap, HashSet};

/// A training file by its shots and split number, e.g. `(20, 5)` for `..._train_20_5.jsonl`.
pub type ShotFile = (u32, u32);

/// The content keys of each training file of a task.
pub type ShotSets = HashMap<ShotFile, HashSet<String>>;

/// At most this many chains are listed (a task whose files nest in many ways).
const MAX_CHAINS: usize = 1000;

/// Does every item of `small` occur in `big`? A file the task lacks nests nowhere.
pub fn within(sets: &ShotSets, small: ShotFile, big: ShotFile) -> bool {
    match (sets.get(&small), sets.get(&big)) {
        (Some(s), Some(b)) => s.is_subset(b),
        _ => false,
    }
}

/// Do two files share an item? A file the task lacks shares none.
pub fn overlap(sets: &ShotSets, a: ShotFile, b: ShotFile) -> bool {
    match (sets.get(&a), sets.get(&b)) {
        (Some(x), Some(y)) => !x.is_disjoint(y),
        _ => false,
    }
}

/// Every nesting chain of the task: one file per k (every k the task has, ascending), each
/// within the next. Ordered by the splits along the chain; a file of the smallest k that
/// starts no chain gives none.
pub fn chains(sets: &ShotSets) -> Vec<Vec<ShotFile>> {
    let ks: Vec<u32> = sets
        .keys()
        .map(|f| f.0)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let files_of = |k: u32| -> Vec<ShotFile> {
        let mut v: Vec<ShotFile> = sets.keys().copied().filter(|f| f.0 == k).collect();
        v.sort_unstable();
        v
    };
    let Some(&first) = ks.first() else {
        return Vec::new();
    };
    let mut partial: Vec<Vec<ShotFile>> = files_of(first).into_iter().map(|f| vec![f]).collect();
    for &k in &ks[1..] {
        let next = files_of(k);
        partial = partial
            .into_iter()
            .flat_map(|chain| {
                let last = chain.last().copied();
                next.iter()
                    .filter(move |_| last.is_some())
                    .filter(move |&&f| last.is_some_and(|l| within(sets, l, f)))
                    .map(move |&f| {
                        let mut c = chain.clone();
                        c.push(f);
                        c
                    })
                    .collect::<Vec<_>>()
            })
            .take(MAX_CHAINS)
            .collect();
    }
    partial
}

/// The chain a split number stands for: the one whose smallest file is that split, preferring
/// the same split number all along, then the lowest splits.
pub fn chain_of_split(chains: &[Vec<ShotFile>], split: u32) -> Option<&Vec<ShotFile>> {
    let starting = || {
        chains
            .iter()
            .filter(|c| c.first().map(|f| f.1) == Some(split))
    };
    starting()
        .find(|c| c.iter().all(|f| f.1 == split))
        .or_else(|| starting().next())
}

/// The pairs of consecutive files (by k) that do not nest.
pub fn not_nested(sets: &ShotSets, files: &[ShotFile]) -> Vec<(ShotFile, ShotFile)> {
    let mut sorted = files.to_vec();
    sorted.sort_unstable();
    sorted
        .windows(2)
        .filter(|w| !within(sets, w[0], w[1]))
        .map(|w| (w[0], w[1]))
        .collect()
}

/// `10_1` for the 10-shot file of split 1.
pub fn file_name(f: ShotFile) -> String {
    format!("{}_{}", f.0, f.1)
}

/// The files' names joined by `sep`.
pub fn names(files: &[ShotFile], sep: &str) -> String {
    files
        .iter()
        .map(|&f| file_name(f))
        .collect::<Vec<_>>()
        .join(sep)
}

/// `10_1 ⊂ 20_5 ⊂ 30_5`.
pub fn chain_text(files: &[ShotFile]) -> String {
    names(files, " ⊂ ")
}

/// A study's training files as text: `10_1 ⊂ 20_5 ⊂ 30_5` when `nested`, else
/// `10_1, 20_1, 30_1 (not nested)`; `none (zero-shot only)` without any.
pub fn group_text(files: &[ShotFile], nested: bool) -> String {
    if files.is_empty() {
        "none (zero-shot only)".into()
    } else if nested {
        chain_text(files)
    } else {
        format!("{} (not nested)", names(files, ", "))
    }
}

/// `10_1,20_5,30_5`: the form value and the command-line argument.
pub fn files_value(files: &[ShotFile]) -> String {
    names(files, ",")
}

/// A machine run's shot group as a user gives it (`eval`, an eval plan's line, an upload):
/// k 0 with no split, or k above 0 with the split of the training files it learned from (1 or
/// more). A run at some k without its split has no place beside the humans of that k.
pub fn run_group(k: u32, split: Option<u32>) -> Result<(u32, u32), String> {
    match (k, split) {
        (0, None | Some(0)) => Ok((0, 0)),
        (0, Some(s)) => Err(format!(
            "split {s} without k: a run without shots has no split (give its k with the split)"
        )),
        (k, None | Some(0)) => Err(format!(
            "k={k} needs its split: the training file of {k} shots the model learned from (1 or more)"
        )),
        (k, Some(s)) => Ok((k, s)),
    }
}

/// Reads `10_1,20_5,30_5` (commas or spaces between files; `10:1` also accepted), sorted by
/// k; each k once.
pub fn parse_files(s: &str) -> Result<Vec<ShotFile>, String> {
    let mut out: Vec<ShotFile> = Vec::new();
    for part in s.split([',', ' ']).map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("{part:?} is not a training file: write k_split, e.g. 20_5");
        let (k, split) = part.split_once(['_', ':']).ok_or_else(bad)?;
        let (k, split): (u32, u32) = (
            k.parse().map_err(|_| bad())?,
            split.parse().map_err(|_| bad())?,
        );
        if k == 0 || split == 0 {
            return Err(bad());
        }
        if out.iter().any(|f| f.0 == k) {
            return Err(format!("k={k} is given two training files"));
        }
        out.push((k, split));
    }
    out.sort_unstable();
    Ok(out)
}

/// At most one training file, e.g. `10_5` (the screening file); empty text is none.
pub fn parse_one(s: &str) -> Result<Option<ShotFile>, String> {
    let files = parse_files(s)?;
    match files[..] {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        _ => Err(format!("{:?} names more than one training file", s.trim())),
    }
}

/// The choices of a study form: each nesting chain, then each split number used for every k
/// where that is not a chain (marked not nested). `(value, label)` with `files_value` values.
pub fn group_options(files: &[ShotFile], chains: &[Vec<ShotFile>]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = chains
        .iter()
        .map(|c| (files_value(c), format!("{} (nested)", chain_text(c))))
        .collect();
    let splits: BTreeSet<u32> = files.iter().map(|f| f.1).collect();
    for split in splits {
        let mut same: Vec<ShotFile> = files.iter().copied().filter(|f| f.1 == split).collect();
        same.sort_unstable();
        if !chains.contains(&same) {
            out.push((
                files_value(&same),
                format!(
                    "split {split} for every k: {} (not nested)",
                    names(&same, ", ")
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_runs_group_names_its_split_with_any_k() {
        assert_eq!(run_group(0, None), Ok((0, 0)));
        assert_eq!(run_group(0, Some(0)), Ok((0, 0)));
        assert_eq!(run_group(10, Some(3)), Ok((10, 3)));
        assert!(run_group(10, None)
            .unwrap_err()
            .contains("k=10 needs its split"));
        assert!(run_group(10, Some(0)).is_err());
        assert!(run_group(0, Some(2)).unwrap_err().contains("without k"));
    }
    use super::*;

    fn sets(files: &[(ShotFile, &[&str])]) -> ShotSets {
        files
            .iter()
            .map(|(f, keys)| (*f, keys.iter().map(|k| k.to_string()).collect()))
            .collect()
    }

    /// SQuAD v2's shape: nested across split numbers (10_1 ⊂ 20_2 ⊂ 30_2, 10_2 ⊂ 20_1 ⊂ 30_1).
    fn crossed() -> ShotSets {
        sets(&[
            ((1, 1), &["a"]),
            ((1, 2), &["b"]),
            ((2, 1), &["b", "c"]),
            ((2, 2), &["a", "d"]),
            ((3, 1), &["b", "c", "e"]),
            ((3, 2), &["a", "d", "f"]),
        ])
    }

    #[test]
    fn chains_follow_the_contents_not_the_split_numbers() {
        let s = crossed();
        let c = chains(&s);
        assert_eq!(
            c,
            vec![vec![(1, 1), (2, 2), (3, 2)], vec![(1, 2), (2, 1), (3, 1)]]
        );
        assert_eq!(chain_of_split(&c, 1), Some(&c[0]));
        assert_eq!(chain_of_split(&c, 3), None);
        assert_eq!(chain_text(&c[0]), "1_1 ⊂ 2_2 ⊂ 3_2");
        assert_eq!(
            not_nested(&s, &[(3, 1), (1, 1), (2, 1)]),
            vec![((1, 1), (2, 1))]
        );
        assert!(not_nested(&s, &c[1]).is_empty());
        assert!(!within(&s, (1, 1), (9, 9)));
    }

    #[test]
    fn unnested_files_give_no_chain_and_same_split_is_preferred() {
        let none = sets(&[((1, 1), &["a"]), ((2, 1), &["b", "c"])]);
        assert!(chains(&none).is_empty());
        // 1_1 lies within both 2_1 and 2_2: two chains; split 1 means the same-split one.
        let both = sets(&[
            ((1, 1), &["a"]),
            ((2, 1), &["a", "b"]),
            ((2, 2), &["a", "c"]),
        ]);
        let c = chains(&both);
        assert_eq!(c.len(), 2);
        assert_eq!(chain_of_split(&c, 1), Some(&vec![(1, 1), (2, 1)]));
        assert!(chains(&ShotSets::new()).is_empty());
    }

    #[test]
    fn form_options_list_chains_then_unnested_splits() {
        let s = crossed();
        let files: Vec<ShotFile> = s.keys().copied().collect();
        let opts = group_options(&files, &chains(&s));
        let values: Vec<&str> = opts.iter().map(|o| o.0.as_str()).collect();
        assert_eq!(
            values,
            ["1_1,2_2,3_2", "1_2,2_1,3_1", "1_1,2_1,3_1", "1_2,2_2,3_2"]
        );
        assert_eq!(opts[0].1, "1_1 ⊂ 2_2 ⊂ 3_2 (nested)");
        assert_eq!(opts[2].1, "split 1 for every k: 1_1, 2_1, 3_1 (not nested)");
        // Same-split chains are listed once, as chains.
        let plain = sets(&[((1, 1), &["a"]), ((2, 1), &["a", "b"])]);
        let files: Vec<ShotFile> = plain.keys().copied().collect();
        assert_eq!(group_options(&files, &chains(&plain)).len(), 1);
    }

    #[test]
    fn files_parse_and_print() {
        assert_eq!(
            parse_files("30_5, 10_1 20:5"),
            Ok(vec![(10, 1), (20, 5), (30, 5)])
        );
        assert_eq!(files_value(&[(10, 1), (20, 5)]), "10_1,20_5");
        assert_eq!(parse_files(""), Ok(vec![]));
        assert!(parse_files("10_1,10_2")
            .unwrap_err()
            .contains("two training files"));
        assert!(parse_files("ten_1").unwrap_err().contains("write k_split"));
        assert!(parse_files("10_0").is_err());
        assert_eq!(parse_one(" "), Ok(None));
        assert_eq!(parse_one("10_5"), Ok(Some((10, 5))));
        assert!(parse_one("10_5,20_5")
            .unwrap_err()
            .contains("names more than one training file"));
        let s = sets(&[
            ((10, 1), &["a", "b"]),
            ((10, 2), &["c"]),
            ((20, 1), &["b", "d"]),
        ]);
        assert!(overlap(&s, (10, 1), (20, 1)) && !overlap(&s, (10, 2), (20, 1)));
        assert!(!overlap(&s, (10, 1), (30, 1)));
    }
}
