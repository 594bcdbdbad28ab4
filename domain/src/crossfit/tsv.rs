//! CrossFit's file layout: `<task>_<k>_<seed>_{train,dev,test}.tsv` with one `input<TAB>output`
//! example per line (several gold outputs further tab-separated). Every bad line is reported.

use super::sampler::TsvLine;

/// What a CrossFit file name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileName {
    pub task: String,
    pub k: u32,
    pub seed: u32,
    /// `train`, `dev` or `test`.
    pub split: String,
}

/// Splits `<task>_<k>_<seed>_<split>.tsv`: the task is the name without its last three `_`
/// parts (task names may hold `_` themselves).
pub fn parse_file_name(name: &str) -> Result<FileName, String> {
    let stem = name
        .strip_suffix(".tsv")
        .ok_or_else(|| format!("{name}: a CrossFit file ends in .tsv"))?;
    let parts: Vec<&str> = stem.rsplitn(4, '_').collect();
    let [split, seed, k, task] = parts[..] else {
        return Err(format!(
            "{name}: expected <task>_<k>_<seed>_<train|dev|test>.tsv"
        ));
    };
    if !matches!(split, "train" | "dev" | "test") {
        return Err(format!(
            "{name}: the last part must be train, dev or test, not {split:?}"
        ));
    }
    let num = |what: &str, s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("{name}: the {what} must be a number, not {s:?}"))
    };
    if task.is_empty() {
        return Err(format!("{name}: no task name before the k"));
    }
    Ok(FileName {
        task: task.to_string(),
        k: num("k", k)?,
        seed: num("seed", seed)?,
        split: split.to_string(),
    })
}

/// Reads a TSV file's text: every non-empty line must hold a tab, a non-blank input and a
/// non-blank first output. Returns all lines, or every problem as `file:line: message`.
pub fn parse_tsv(file: &str, text: &str) -> Result<Vec<TsvLine>, Vec<String>> {
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.is_empty() && i + 1 == text.split('\n').count() {
            continue; // the final newline
        }
        let at = format!("{file}:{}", i + 1);
        match line.split_once('\t') {
            None => errors.push(format!("{at}: no tab between input and output")),
            Some((input, _)) if input.trim().is_empty() => {
                errors.push(format!("{at}: empty input"))
            }
            Some((_, output)) if output.split('\t').next().unwrap_or("").trim().is_empty() => {
                errors.push(format!("{at}: empty output"))
            }
            Some((input, output)) => lines.push(TsvLine {
                input: input.to_string(),
                output: output.to_string(),
            }),
        }
    }
    if errors.is_empty() {
        Ok(lines)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(
            parse_file_name("glue-sst2_16_100_train.tsv").unwrap(),
            FileName {
                task: "glue-sst2".into(),
                k: 16,
                seed: 100,
                split: "train".into()
            }
        );
        // Underscores inside the task name stay in it.
        assert_eq!(
            parse_file_name("ade_corpus_v2-dosage_32_13_dev.tsv")
                .unwrap()
                .task,
            "ade_corpus_v2-dosage"
        );
        assert!(parse_file_name("sst_16_100_valid.tsv")
            .unwrap_err()
            .contains("train, dev or test"));
        assert!(parse_file_name("sst_x_100_test.tsv")
            .unwrap_err()
            .contains("k must be a number"));
        assert!(parse_file_name("sst_16_test.tsv").is_err());
        assert!(parse_file_name("sst_16_100_test.csv").is_err());
    }

    #[test]
    fn lines_with_several_golds() {
        let lines = parse_tsv("f.tsv", "what is 2+2?\t4\tfour\r\nsay hi\thi\n").unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].outputs(), vec!["4", "four"]);
        // CrossFit strips the whole line: the last gold loses its trailing whitespace.
        let line = TsvLine {
            input: "x".into(),
            output: " positive \t negative \r".into(),
        };
        assert_eq!(line.outputs(), vec![" positive ", " negative"]);
        assert_eq!(lines[1].input, "say hi");
    }

    #[test]
    fn every_bad_line_is_named() {
        let errs = parse_tsv("f.tsv", "ok\tyes\nno tab here\n\tout\nin\t\n").unwrap_err();
        assert_eq!(
            errs,
            vec![
                "f.tsv:2: no tab between input and output",
                "f.tsv:3: empty input",
                "f.tsv:4: empty output",
            ]
        );
        // A blank line in the middle is a line without a tab too.
        assert!(parse_tsv("g.tsv", "a\tb\n\nc\td\n").unwrap_err()[0].starts_with("g.tsv:2:"));
    }
}
