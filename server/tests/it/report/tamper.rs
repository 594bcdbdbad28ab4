//! The bundle's `analysis.R` catches a changed cell: simulated bundles (`clues-lab simulate
//! --bundles`), one copy per kind of cell with that cell of `scores.csv` changed, all in one R run.

use super::{python, r_available, stdout_of};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `studies` simulated bundles of `path` under `dir`; returns their folders.
fn bundles(dir: &Path, path: &str, studies: usize) -> Vec<PathBuf> {
    stdout_of(
        Command::new(env!("CARGO_BIN_EXE_clues-lab"))
            .args(["simulate", "--threads", "2", "--path", path, "--studies"])
            .arg(studies.to_string())
            .arg("--bundles")
            .arg(dir),
        "the clues-lab binary",
    );
    (0..studies)
        .map(|i| dir.join(format!("{path}-{i:04}")))
        .collect()
}

/// The first bundle each of whose comparisons' method contains `argv[1]` and that has a value
/// in every column of scores.csv whose name starts with one of `argv[2]` (comma-separated) in
/// some comparison row: its folder, then those columns.
const PY_PICK: &str = r#"
import csv, sys
method, prefixes = sys.argv[1], tuple(sys.argv[2].split(","))
for d in sys.argv[3:]:
    reader = csv.DictReader(open(d + "/scores.csv", newline=""))
    columns = [c for c in reader.fieldnames if c.startswith(prefixes)]
    rows = [r for r in reader if r["table"] == "comparison"]
    if rows and all(method in r["method"] for r in rows) and all(any(r[c] for r in rows) for c in columns):
        print(d)
        print(" ".join(columns))
        break
"#;

/// Copies bundle `argv[1]` to `argv[2]` with one cell changed: the first row of table `argv[3]`
/// (all annotators, official scoring) with a value in column `argv[4]`, and whose subset
/// contains `argv[5]` where given, gets 0.01 more.
pub(super) const PY_TAMPER: &str = r#"
import csv, shutil, sys
src, dst, table, column = sys.argv[1:5]
within = sys.argv[5] if len(sys.argv) > 5 else ""
shutil.copytree(src, dst)
with open(src + "/scores.csv", newline="") as f:
    rows = list(csv.reader(f))
head = rows[0]
for r in rows[1:]:
    if (r[head.index("table")] == table and r[head.index("annotators")] == "all"
            and r[head.index(column)] and within in r[head.index("subset")]):
        r[head.index(column)] = repr(float(r[head.index(column)]) + 0.01)
        break
else:
    raise SystemExit("no " + table + " cell of " + column)
with open(dst + "/scores.csv", "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
"#;

/// A bundle of `path` whose comparisons all took `method` and fill every column named with one
/// of `prefixes`, with those columns.
fn pick(
    dir: &Path,
    path: &str,
    studies: usize,
    method: &str,
    prefixes: &[&str],
) -> (PathBuf, Vec<String>) {
    let all = bundles(&dir.join(path), path, studies);
    let mut args = vec![method.to_string(), prefixes.join(",")];
    args.extend(all.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let said = python(PY_PICK, &args);
    let mut lines = said.lines();
    let folder = lines
        .next()
        .unwrap_or_else(|| panic!("no bundle of {path} takes {method}"));
    let columns = lines
        .next()
        .unwrap_or_default()
        .split(' ')
        .map(String::from)
        .collect();
    (PathBuf::from(folder), columns)
}

#[test]
fn analysis_r_names_each_kind_of_cell_changed() {
    if !r_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // A label task (the logistic cells) whose annotators answered screening items (the
    // adjusted cells), every comparison by the mixed model.
    let (mixed, extra) = pick(
        tmp.path(),
        "logistic",
        24,
        "mixed model",
        &["adjusted", "logistic_"],
    );
    assert_eq!(extra.len(), 13, "{extra:?}");
    // No annotator variance: the permutation test decides every comparison, and gives an
    // interval where it can reach α.
    let (relabel, _) = pick(
        tmp.path(),
        "annotator-zero",
        12,
        "permutation test",
        &["other_units_low"],
    );
    let mixed_cells = [
        "mean",
        "se",
        "df",
        "p",
        "p_holm",
        "other_units_low",
        "other_units_high",
        "permutation_p",
        "permutation_min_p",
        "effect",
        "items_p",
        "more_items_low",
        "more_items_high",
    ];
    let mut cells: Vec<(&Path, &str, &str)> = mixed_cells
        .into_iter()
        .chain(extra.iter().map(String::as_str))
        .map(|c| (mixed.as_path(), "comparison", c))
        .collect();
    for c in [
        "mean",
        "other_units_low",
        "other_units_high",
        "more_items_low",
        "more_items_high",
    ] {
        cells.push((mixed.as_path(), "table5", c));
    }
    for c in ["std", "tau_high", "needed", "needed_low"] {
        cells.push((mixed.as_path(), "planner", c));
    }
    for c in ["se", "df", "p", "other_units_low", "other_units_high"] {
        cells.push((relabel.as_path(), "comparison", c));
    }
    let mut dirs = vec![mixed.clone(), relabel.clone()];
    for (i, (src, table, column)) in cells.iter().enumerate() {
        let dst = tmp.path().join(format!("tampered-{i:02}"));
        let args = [
            &src.display().to_string(),
            &dst.display().to_string(),
            *table,
            *column,
        ]
        .map(|s| s.to_string());
        python(PY_TAMPER, &args.each_ref().map(String::as_str));
        dirs.push(dst);
    }
    let said = r_over_tampered(
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../store/src/analysis.R"
        )),
        &dirs,
    );
    let summary = |dir: &Path| kinds_differing(&said, dir);
    // The untouched bundles agree; each copy differs in its changed cell's kind only (a
    // column that more than one rule fills names its rule after a slash).
    assert!(
        summary(&mixed).is_empty() && summary(&relabel).is_empty(),
        "{said}"
    );
    for (dir, (_, table, column)) in dirs[2..].iter().zip(&cells) {
        let name = match *table {
            "table5" | "planner" => format!("{table} {column}"),
            _ => column.to_string(),
        };
        let kinds = summary(dir);
        assert!(
            !kinds.is_empty()
                && kinds
                    .iter()
                    .all(|k| *k == name || k.starts_with(&format!("{name}/"))),
            "{table} {column}: {kinds:?}\n{said}"
        );
    }
}

/// `analysis.R` (`script`) over bundles `dirs` among which some were changed: it exits 1; what
/// it printed.
pub(super) fn r_over_tampered(script: &Path, dirs: &[PathBuf]) -> String {
    let out = Command::new("Rscript")
        .arg(script)
        .arg("--quiet")
        .args(dirs)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// The kinds of cell that differ in bundle `dir`, from its summary in `said`: "bundle DIR: N
/// cells checked, M differ[: kinds]".
pub(super) fn kinds_differing(said: &str, dir: &Path) -> Vec<String> {
    let head = format!("bundle {}: ", dir.display());
    let line = said
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no summary of {}\n{said}", dir.display()));
    line.split_once(" differ: ")
        .map(|(_, kinds)| kinds.split(", ").map(String::from).collect())
        .unwrap_or_default()
}
