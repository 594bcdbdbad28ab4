//! The `score` command through the real binary: gold answers as predictions give 1.0 for every
//! CLUES task (without a database, and against the imported task), and errors name the id.
use crate::common;

use std::path::Path;
use std::process::Command;

const TEST_FILES: [(&str, &str); 6] = [
    ("SST-2", "sst_test.jsonl"),
    ("MNLI", "mnli_test.jsonl"),
    ("CoNLL2003", "conll_test.jsonl"),
    ("WikiANN_EN", "wikiann_test.jsonl"),
    ("SQuAD-v2", "squad-v2_test.jsonl"),
    ("ReCoRD", "record_test.jsonl"),
];

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_clues-lab"))
}

/// Predictions equal to the gold answers, in the official encoding, in reverse order.
fn gold_as_predictions(test_file: &Path, out: &Path) {
    let text = std::fs::read_to_string(test_file).unwrap();
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).unwrap();
            let answer: Vec<String> = row["answer"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    a.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| a["text"].as_str().unwrap().to_string())
                })
                .collect();
            serde_json::json!({ "id": row["id"], "answer": answer }).to_string()
        })
        .collect();
    lines.reverse();
    std::fs::write(out, lines.join("\n") + "\n").unwrap();
}

/// `clues-lab score --gold <gold> <preds>`.
fn score_gold(gold: &Path, preds: &Path) -> Command {
    let mut cmd = bin();
    cmd.arg("score").arg("--gold").arg(gold).arg(preds);
    cmd
}

/// Runs a command that must succeed; returns its stdout.
fn run_ok(cmd: &mut Command, what: &str) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn last_number(stdout: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(stdout);
    let last = text.lines().last().expect("some output");
    last.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn gold_predictions_score_one_for_every_task() {
    let Some(dir) = common::clues_data("gold_predictions_score_one_for_every_task") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = common::db_url(&tmp.path().join("t.db"));
    run_ok(
        bin().args(["--database", &db, "import", "clues"]).arg(&dir),
        "import",
    );
    for (task, file) in TEST_FILES {
        let gold = dir.join(task).join(file);
        let preds = tmp.path().join(format!("{task}.jsonl"));
        gold_as_predictions(&gold, &preds);
        let by_file = run_ok(&mut score_gold(&gold, &preds), task);
        assert_eq!(last_number(&by_file), 1.0, "{task} --gold");
        let by_task = run_ok(
            bin()
                .args(["--database", &db, "score", "--task", task])
                .arg(&preds),
            task,
        );
        assert_eq!(last_number(&by_task), 1.0, "{task} --task");
    }
}

#[test]
fn empty_predictions_for_ner_score_the_share_of_empty_golds_only_with_the_official_encoding() {
    let Some(dir) = common::clues_data("empty_predictions_for_ner") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let gold = dir.join("CoNLL2003/conll_test.jsonl");
    let text = std::fs::read_to_string(&gold).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let none = rows
        .iter()
        .filter(|r| r["answer"] == serde_json::json!([""]))
        .count() as f64;
    for (answer, expected) in [
        (serde_json::json!([""]), none / rows.len() as f64),
        (serde_json::json!([]), 0.0),
    ] {
        let preds = tmp.path().join("p.jsonl");
        let body: Vec<String> = rows
            .iter()
            .map(|r| serde_json::json!({"id": r["id"], "answer": answer}).to_string())
            .collect();
        std::fs::write(&preds, body.join("\n")).unwrap();
        let stdout = run_ok(&mut score_gold(&gold, &preds), "score");
        assert!((last_number(&stdout) - expected).abs() < 1e-6, "{answer}");
    }
}

#[test]
fn score_errors_name_the_file_and_the_id() {
    let tmp = tempfile::tempdir().unwrap();
    let gold = tmp.path().join("g.jsonl");
    std::fs::write(
        &gold,
        "{\"id\": \"a\", \"answer\": [\"x\"]}\n{\"id\": \"b\", \"answer\": [\"\"]}\n",
    )
    .unwrap();
    let preds = tmp.path().join("p.jsonl");
    std::fs::write(&preds, "{\"id\": \"a\", \"answer\": [\"x\"]}\n").unwrap();
    let out = score_gold(&gold, &preds).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no prediction for 1 test item(s): \"b\""),
        "{err}"
    );
    let missing = tmp.path().join("missing.jsonl");
    let out = bin()
        .arg("score")
        .arg("--gold")
        .arg(&missing)
        .arg(&preds)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.jsonl"));
    let absent = common::db_url(&tmp.path().join("absent.db"));
    let out = bin()
        .args(["--database", &absent, "score", "--task", "SST-2"])
        .arg(&preds)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not exist yet"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!tmp.path().join("absent.db").exists());
    let out = bin().args(["score", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("--gold"));
}

#[test]
fn user_add_refuses_duplicates_and_bad_roles() {
    let tmp = tempfile::tempdir().unwrap();
    let db = common::db_url(&tmp.path().join("u.db"));
    let add = |name: &str, role: &str| {
        bin()
            .args(["--database", &db, "user", "add", name, "--role", role])
            .env("CLUES_PASSWORD", "long-enough-pw")
            .output()
            .unwrap()
    };
    assert!(add("ada", "researcher").status.success());
    let again = add("ada", "admin");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("a user named \"ada\" already exists"));
    assert!(!add("bob", "boss").status.success());
    let short = bin()
        .args(["--database", &db, "user", "add", "cy", "--role", "admin"])
        .env("CLUES_PASSWORD", "short")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 8 characters"));
}

#[test]
fn scores_are_printed_in_full_and_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let gold = tmp.path().join("g.jsonl");
    // Reading comprehension: two annotators' answers; "Normans" matches one of two strings.
    std::fs::write(
        &gold,
        concat!(
            "{\"id\": \"a\", \"answer\": [{\"text\": \"the Normans\", \"answer_start\": 0}, {\"text\": \"Normans\", \"answer_start\": 4}]}\n",
            "{\"id\": \"b\", \"answer\": [{\"text\": \"x\", \"answer_start\": 0}]}\n",
            "{\"id\": \"c\", \"answer\": [{\"text\": \"y\", \"answer_start\": 0}]}\n",
        ),
    )
    .unwrap();
    let preds = tmp.path().join("p.jsonl");
    std::fs::write(
        &preds,
        "{\"id\": \"a\", \"answer\": [\"Normans\"]}\n{\"id\": \"b\", \"answer\": [\"x\"]}\n{\"id\": \"c\", \"answer\": [\"z\"]}\n",
    )
    .unwrap();
    // Official: (2/3 + 1 + 0) / 3; any-of: (1 + 1 + 0) / 3.
    let official: f64 = (2.0 / 3.0 + 1.0 + 0.0) / 3.0;
    let any_of: f64 = 2.0 / 3.0;
    let text = run_ok(&mut score_gold(&gold, &preds), "score");
    assert_eq!(last_number(&text).to_bits(), official.to_bits());
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(&format!("{any_of}")), "{text}");
    let json = run_ok(score_gold(&gold, &preds).arg("--json"), "score --json");
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        v["s1_official"].as_f64().unwrap().to_bits(),
        official.to_bits()
    );
    assert_eq!(v["s1_any_of"].as_f64().unwrap().to_bits(), any_of.to_bits());
    assert_eq!(v["items"], 3);
    assert_eq!(v["family"], "reading_comprehension");
}

#[test]
fn output_into_a_pipe_closed_early_ends_a_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let db = common::db_url(&tmp.path().join("p.db"));
    let gold = tmp.path().join("g.jsonl");
    std::fs::write(&gold, "{\"id\": \"a\", \"answer\": [\"x\"]}\n").unwrap();
    let g = gold.to_str().unwrap();
    let made = bin()
        .args(["--database", &db, "user", "add", "ada", "--role", "admin"])
        .env("CLUES_PASSWORD", "long-enough-pw")
        .output()
        .unwrap();
    assert!(made.status.success());
    // As `clues-lab … | head -0`: the reader is gone before the first line is written.
    for args in [
        &["--database", &db, "db", "query", "SELECT 1"][..],
        &["--database", &db, "study", "list"][..],
        &["score", "--gold", g, g][..],
    ] {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}
