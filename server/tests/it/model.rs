//! The model track end to end: a small ONNX span model written by the project's own ONNX
//! writer (deterministic weights) and a word-level tokenizer.json, run through ONNX Runtime;
//! tokenization, windows, span decoding (no answer, several spans, question spans), offsets
//! and S1 checked against the test's own brute-force computation; errors; the database path,
//! imported predictions, the baseline on the demo tasks and the report's machine rows.
use crate::common;

use domain::s1::{s1_item, Scoring};
use domain::task::{Context, Example, Family, Gold, TaskSpec};
use learners::eval::{predict, ModelDir};
use learners::jobs::{self, SystemKind, Target};
use learners::onnx::{model, node, tensor_f32, value_info, Dim, FLOAT, INT64};
use learners::runtime::Device;
use server::demo;
use std::path::Path;
use store::db::cli as db;

const SPECIAL: [&str; 4] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"];
/// The vocabulary after the special tokens; ids 4, 5, ...
const WORDS: [&str; 14] = [
    "alpha", "beta", "gamma", "delta", "omega", "Zoë", "met", "in", "the", "city", "🙂", "or", "?",
    "x",
];

/// Deterministic weights: (start, end) logit of each word; [CLS] 1 + 1 (the null score is 2).
fn weight(token: &str) -> (f32, f32) {
    match token {
        "[CLS]" => (1.0, 1.0),
        "alpha" => (4.0, 4.0),
        "beta" => (3.0, -1.0),
        "gamma" => (-1.0, 3.5),
        "delta" => (0.5, 0.75),
        "Zoë" => (2.5, 0.25),
        "🙂" => (-1.0, 1.5),
        "omega" => (1.5, 1.25),
        _ => (-1.0, -1.0),
    }
}

fn vocab() -> Vec<&'static str> {
    SPECIAL.iter().chain(WORDS.iter()).copied().collect()
}

/// A word-level tokenizer: whitespace split, no lower-casing; `extra` adds ids the model lacks.
fn tokenizer_json(extra: usize) -> String {
    let mut v: Vec<String> = vocab().iter().map(|s| s.to_string()).collect();
    v.extend((0..extra).map(|i| format!("extra{i}")));
    let v: Vec<&str> = v.iter().map(String::as_str).collect();
    common::tiny_bert::word_tokenizer(&v, SPECIAL.len(), "[UNK]", serde_json::Value::Null)
        .to_string()
}

/// The span model: logits = table[input_ids] * attention_mask, one table for starts, one for ends.
fn onnx_model(start_name: &str, end_name: &str) -> Vec<u8> {
    let v = vocab();
    let starts: Vec<f32> = v.iter().map(|t| weight(t).0).collect();
    let ends: Vec<f32> = v.iter().map(|t| weight(t).1).collect();
    let n = v.len() as i64;
    let bs = [Dim::Named("batch"), Dim::Named("sequence")];
    model(
        "tiny-span",
        &[
            node(
                "Cast",
                &["attention_mask"],
                &["mask"],
                "cast",
                &[("to", FLOAT)],
            ),
            node(
                "Gather",
                &["start_table", "input_ids"],
                &["s_raw"],
                "gs",
                &[],
            ),
            node("Gather", &["end_table", "input_ids"], &["e_raw"], "ge", &[]),
            node("Mul", &["s_raw", "mask"], &[start_name], "ms", &[]),
            node("Mul", &["e_raw", "mask"], &[end_name], "me", &[]),
        ],
        &[
            tensor_f32("start_table", &[n], &starts),
            tensor_f32("end_table", &[n], &ends),
        ],
        &[
            value_info("input_ids", INT64, &bs),
            value_info("attention_mask", INT64, &bs),
        ],
        &[
            value_info(start_name, FLOAT, &bs),
            value_info(end_name, FLOAT, &bs),
        ],
        13,
    )
}

fn model_dir(
    root: &Path,
    name: &str,
    onnx: &[u8],
    tokenizer: &str,
    decoding: &str,
) -> std::path::PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("model.onnx"), onnx).unwrap();
    std::fs::write(d.join("tokenizer.json"), tokenizer).unwrap();
    if !decoding.is_empty() {
        std::fs::write(d.join("decoding.json"), decoding).unwrap();
    }
    d
}

fn spec(family: Family, labels: &[&str]) -> TaskSpec {
    TaskSpec::plain("t", family, labels)
}

fn example(id: &str, question: &str, context: &str, gold: &[&str]) -> Example {
    Example {
        id: id.into(),
        context: Context::Single {
            text: context.into(),
        },
        question: question.into(),
        question_type: None,
        gold: Gold {
            official: gold.iter().map(|s| s.to_string()).collect(),
            spans: vec![],
        },
        extra: serde_json::Value::Null,
    }
}

/// The test's own model track: words by whitespace with code point offsets, every window
/// `[CLS] q [SEP] ctx[a..a+room] [SEP]`, every span of at most `max_len` words scored
/// start + end, kept above the lowest [CLS] score, best first without overlaps. (Spans of
/// the context only: whole words here, so every span is on word boundaries.)
fn expected(
    question: &str,
    context: &str,
    max_len: usize,
    max_spans: usize,
    room: Option<(usize, usize)>,
) -> Vec<(String, usize, usize, String)> {
    let words = |text: &str| -> Vec<(usize, usize, String)> {
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_whitespace() {
                i += 1;
                continue;
            }
            let s = i;
            while i < chars.len() && !chars[i].is_whitespace() {
                i += 1;
            }
            out.push((s, i, chars[s..i].iter().collect::<String>()));
        }
        out
    };
    let w = |t: &str| {
        if vocab().contains(&t) {
            weight(t)
        } else {
            weight("[UNK]")
        }
    };
    let c = words(context);
    let windows: Vec<(usize, usize)> = match room {
        None => vec![(0, c.len())],
        Some((room, step)) => {
            let mut v = Vec::new();
            let mut a = 0;
            loop {
                let b = (a + room).min(c.len());
                v.push((a, b));
                if b >= c.len() {
                    break v;
                }
                a += step;
            }
        }
    };
    let null = w("[CLS]").0 + w("[CLS]").1;
    let mut cands: Vec<(f32, String, usize, usize)> = Vec::new();
    let mut add = |seg: &str, toks: &[(usize, usize, String)]| {
        for i in 0..toks.len() {
            for j in i..toks.len().min(i + max_len) {
                let score = w(&toks[i].2).0 + w(&toks[j].2).1;
                let key = (seg.to_string(), toks[i].0, toks[j].1);
                if score > null && !cands.iter().any(|c| (c.1.clone(), c.2, c.3) == key) {
                    cands.push((score, key.0, key.1, key.2));
                }
            }
        }
    };
    for (a, b) in windows {
        add("context", &c[a..b]);
    }
    // Best first; ties: question before context, then text order.
    cands.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then((x.1 != "question", x.2, x.3).cmp(&(y.1 != "question", y.2, y.3)))
    });
    let mut out: Vec<(String, usize, usize, String)> = Vec::new();
    for (_, seg, s, e) in cands {
        if out.len() == max_spans {
            break;
        }
        let text: String = if seg == "question" { question } else { context }
            .chars()
            .skip(s)
            .take(e - s)
            .collect();
        if out.iter().any(|o| o.0 == seg && s < o.1 + o.2 && o.1 < e)
            || out.iter().any(|o| o.3 == text)
        {
            continue;
        }
        out.push((seg, s, e - s, text));
    }
    out.sort_by_key(|a| (a.0 != "question", a.1));
    out
}

fn got(spans: &[learners::decode::PredSpan]) -> Vec<(String, usize, usize, String)> {
    spans
        .iter()
        .map(|p| {
            let seg = serde_json::to_value(p.source)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string();
            (seg, p.offset, p.length, p.text.clone())
        })
        .collect()
}

#[test]
fn a_generated_model_decodes_as_the_test_computes() {
    let tmp = tempfile::tempdir().unwrap();
    let dec = r#"{"max_answer_tokens": 3, "max_spans": 3}"#;
    let dir = model_dir(
        tmp.path(),
        "tiny",
        &onnx_model("start_logits", "end_logits"),
        &tokenizer_json(0),
        dec,
    );
    let m = ModelDir::open(&dir).unwrap();
    let ner = spec(Family::SequenceLabelling, &[]);
    let items = vec![
        // several spans, accents and an emoji (code point offsets), an unknown word
        example(
            "a",
            "which ?",
            "Zoë met alpha in the city 🙂 beta gamma x",
            &["alpha", "beta gamma"],
        ),
        // no answer: nothing beats the [CLS] score
        example("b", "which ?", "the city x met", &[""]),
        // a span longer than max_answer_tokens is not taken
        example("c", "which ?", "beta x x gamma delta omega", &["omega"]),
        example("d", "which ?", "", &[""]),
    ];
    let p = predict(&m, &ner, &items, Device::Auto, &mut |_, _| {}).unwrap();
    assert!(p.provider.contains("CPU"), "{}", p.provider);
    let mut own_s1 = Vec::new();
    for (item, spans) in items.iter().zip(&p.spans) {
        let want = expected(&item.question, item.context.primary(), 3, 3, None);
        assert_eq!(got(spans), want, "item {}", item.id);
        for (seg, off, len, text) in &want {
            assert_eq!(seg, "context");
            assert_eq!(
                &item
                    .context
                    .primary()
                    .chars()
                    .skip(*off)
                    .take(*len)
                    .collect::<String>(),
                text
            );
        }
        let texts: Vec<String> = want.iter().map(|w| w.3.clone()).collect();
        let official = if texts.is_empty() {
            vec![String::new()]
        } else {
            texts
        };
        own_s1.push(s1_item(&official, &item.gold.official));
    }
    // The spot values the test expects by hand.
    assert_eq!(
        got(&p.spans[0])
            .iter()
            .map(|g| g.3.as_str())
            .collect::<Vec<_>>(),
        vec!["Zoë", "alpha", "beta gamma"]
    );
    assert_eq!((got(&p.spans[0])[2].1, got(&p.spans[0])[2].2), (28, 10));
    assert!(p.spans[1].is_empty() && p.spans[3].is_empty());
    // S1 through the platform's scorer equals the test's own.
    for ((item, spans), own) in items.iter().zip(&p.spans).zip(&own_s1) {
        let texts: Vec<String> = spans.iter().map(|s| s.text.clone()).collect();
        let s = ner.score(&item.gold, &ner.to_official(&texts), Scoring::Official);
        assert!((s - own).abs() < 1e-12, "{} {s} {own}", item.id);
    }
    // Item c: "beta x x gamma" (4 words, 6.5) is too long; "omega" and "x x gamma" (tied
    // with "x gamma" and "gamma", taken first in text order) remain: S1 2/3.
    assert_eq!(
        got(&p.spans[2])
            .iter()
            .map(|g| g.3.as_str())
            .collect::<Vec<_>>(),
        vec!["x x gamma", "omega"]
    );
    assert!(
        (own_s1[0] - 0.8).abs() < 1e-12
            && own_s1[1] == 1.0
            && (own_s1[2] - 2.0 / 3.0).abs() < 1e-12
            && own_s1[3] == 1.0,
        "{own_s1:?}"
    );

    // Classification: exactly one label, the label word of the question with the best start +
    // end score, however well spans of the context or several labels together score.
    let cls = spec(Family::Classification, &["alpha", "omega"]);
    let items = vec![
        example("e", "alpha or omega ?", "the city x", &["alpha"]),
        example("f", "omega or alpha ?", "alpha alpha Zoë", &["omega"]),
    ];
    let p = predict(&m, &cls, &items, Device::Cpu, &mut |_, _| {}).unwrap();
    assert_eq!(
        got(&p.spans[0]),
        vec![("question".to_string(), 0, 5, "alpha".to_string())]
    );
    assert_eq!(
        got(&p.spans[1]),
        vec![("question".to_string(), 9, 5, "alpha".to_string())]
    );
    // A label that loses to the other is still answered when it is the best one left.
    let only = spec(Family::Classification, &["omega", "gamma"]);
    let items = vec![example("h", "omega or gamma ?", "alpha alpha", &["omega"])];
    let p = predict(&m, &only, &items, Device::Cpu, &mut |_, _| {}).unwrap();
    assert_eq!(
        got(&p.spans[0]),
        vec![("question".to_string(), 0, 5, "omega".to_string())]
    );

    // A long context in windows of 12 positions (room 12 - 2 - 3 = 7 words, a window every 3).
    let dec = r#"{"max_answer_tokens": 2, "max_spans": 5, "max_seq_len": 12, "doc_stride": 3, "max_question_tokens": 4}"#;
    let dir = model_dir(
        tmp.path(),
        "windows",
        &onnx_model("start_logits", "end_logits"),
        &tokenizer_json(0),
        dec,
    );
    let m = ModelDir::open(&dir).unwrap();
    let long = "x x alpha x x x x beta gamma x x x x x delta omega x x Zoë x";
    let items = vec![example(
        "g",
        "which ?",
        long,
        &["alpha", "beta gamma", "Zoë"],
    )];
    let p = predict(&m, &ner, &items, Device::Cpu, &mut |_, _| {}).unwrap();
    assert!(p.features > 3, "{}", p.features);
    assert_eq!(
        got(&p.spans[0]),
        expected("which ?", long, 2, 5, Some((7, 3)))
    );
}

#[test]
fn broken_models_and_mismatched_tokenizers_are_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let ner = spec(Family::SequenceLabelling, &[]);
    let items = vec![example("a", "which ?", "alpha", &["alpha"])];
    let good = onnx_model("start_logits", "end_logits");
    let no_cls = tokenizer_json(0).replace("[CLS]", "[BOS]");
    // (folder, model bytes, tokenizer, decoding.json, what the error must say)
    type Case<'a> = (&'a str, &'a [u8], String, &'a str, &'a [&'a str]);
    let cases: [Case; 5] = [
        (
            "broken",
            b"not a model at all",
            tokenizer_json(0),
            "",
            &["is not a model ONNX Runtime can load"],
        ),
        (
            "renamed",
            &onnx_model("start_logits", "stop_logits"),
            tokenizer_json(0),
            "",
            &["no output named \"end_logits\"", "stop_logits"],
        ),
        (
            "bigger",
            &good,
            tokenizer_json(50),
            "",
            &["tokenizer does not match the model", "68 tokens"],
        ),
        (
            "nocls",
            &good,
            no_cls,
            "",
            &["neither [CLS]/[SEP] nor <s>/</s>"],
        ),
        (
            "bad",
            &good,
            tokenizer_json(0),
            r#"{"max_spans": 0, "stride": 3}"#,
            &["decoding.json", "stride"],
        ),
    ];
    for (name, bytes, tokenizer, decoding, says) in cases {
        let dir = model_dir(tmp.path(), name, bytes, &tokenizer, decoding);
        let e = ModelDir::open(&dir)
            .and_then(|m| predict(&m, &ner, &items, Device::Cpu, &mut |_, _| {}))
            .err()
            .unwrap_or_else(|| panic!("{name} was accepted"))
            .to_string();
        assert!(says.iter().all(|s| e.contains(s)), "{name}: {e}");
    }
    let dir = tmp.path().join("bad");
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    let e = ModelDir::open(&dir).unwrap_err().to_string();
    assert!(e.contains("missing tokenizer.json"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn evaluations_imports_and_the_baseline_land_in_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let pool = db::connect(&common::db_url(&tmp.path().join("m.db")))
        .await
        .unwrap();
    demo::ensure_demo(&pool).await.unwrap();
    let dir = model_dir(
        tmp.path(),
        "tiny",
        &onnx_model("start_logits", "end_logits"),
        &tokenizer_json(0),
        "",
    );
    let m = ModelDir::open(&dir).unwrap();
    let target = |system: &str, kind, k, split, replace| Target {
        system: system.into(),
        kind,
        task: "demo-SQuAD-v2".into(),
        k,
        split,
        replace,
    };
    let evaluate = |m: ModelDir, system: &'static str| {
        let pool = pool.clone();
        async move {
            let t = target(system, SystemKind::Onnx, 0, 0, false);
            jobs::evaluate(&pool, &m, t, Device::Auto, false).await
        }
    };
    let s = evaluate(m.clone(), "tiny").await.unwrap();
    assert!(s.provider.contains("CPU"));
    // Every demo SQuAD word is unknown to the tiny model: it answers "no answer" everywhere.
    let (_, spec, _) = store::catalog::load_spec(&pool, "demo-SQuAD-v2")
        .await
        .unwrap();
    let tid: domain::ids::TaskId =
        sqlx::query_scalar("SELECT id FROM tasks WHERE name = 'demo-SQuAD-v2'")
            .fetch_one(&pool)
            .await
            .unwrap();
    let test = store::catalog::test_examples(&pool, tid).await.unwrap();
    let own: f64 = test
        .iter()
        .map(|e| s1_item::<String, String>(&[], &e.gold.official))
        .sum::<f64>()
        / test.len() as f64;
    assert!((s.s1 - own).abs() < 1e-12, "{} {own}", s.s1);
    // A second evaluation of the same target is refused and changes nothing.
    let before = common::snapshot(&pool).await;
    let e = evaluate(m, "tiny").await.unwrap_err();
    assert!(
        e.to_string().contains("already has a finished evaluation"),
        "{e}"
    );
    // So is a broken model, before anything is stored.
    let broken = model_dir(tmp.path(), "broken", b"garbage", &tokenizer_json(0), "");
    let e = evaluate(ModelDir::open(&broken).unwrap(), "broken")
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("is not a model ONNX Runtime can load"),
        "{e}"
    );
    assert_eq!(before, common::snapshot(&pool).await);

    // Imported predictions: a JSON object of id -> spans; the gold itself scores 1.
    let gold: serde_json::Map<String, serde_json::Value> = test
        .iter()
        .map(|e| {
            (
                e.id.clone(),
                serde_json::json!(spec
                    .from_official(&e.gold.official)
                    .first()
                    .cloned()
                    .map(|s| vec![s])
                    .unwrap_or_default()),
            )
        })
        .collect();
    let import = |text: String, split: u32| {
        let pool = pool.clone();
        async move {
            let t = target("LLM in-context", SystemKind::Imported, 4, split, false);
            jobs::import(&pool, "llm.json", &text, t).await
        }
    };
    let s = import(serde_json::Value::Object(gold.clone()).to_string(), 1)
        .await
        .unwrap();
    assert_eq!(s.s1_any_of, 1.0);
    let mut short = gold.clone();
    let gone = short.keys().next().unwrap().clone();
    short.remove(&gone);
    let before = common::snapshot(&pool).await;
    for (text, says) in [
        (
            serde_json::Value::Object(short).to_string(),
            "no prediction for 1 test item",
        ),
        (
            "{\"id\": \"nope\", \"answer\": []}\n".to_string(),
            "llm.json:1: unknown id \"nope\"",
        ),
    ] {
        let e = import(text, 2).await.unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
    assert_eq!(before, common::snapshot(&pool).await);

    // The baseline: a head per shot group of the demo task, reproducible.
    let baseline =
        |groups: Option<Vec<(u32, u32)>>, replace: bool, export: Option<std::path::PathBuf>| {
            let pool = pool.clone();
            async move {
                jobs::run_baseline(
                    &pool,
                    "demo-SQuAD-v2",
                    groups,
                    replace,
                    export,
                    Device::Auto,
                    false,
                )
                .await
            }
        };
    let runs = baseline(None, false, None).await.unwrap();
    assert_eq!(
        runs.iter()
            .map(|r| (r.target.k, r.target.split))
            .collect::<Vec<_>>(),
        vec![(2, 1), (2, 2), (4, 1), (4, 2)]
    );
    let preds = |pool: sqlx::AnyPool| async move {
        sqlx::query_scalar::<_, String>(
            "SELECT p.answer_json FROM machine_predictions p JOIN machine_runs r ON r.id = p.run_id
             JOIN machine_systems s ON s.id = r.system_id WHERE s.kind = 'baseline' AND r.status = 'done' ORDER BY r.k, r.split, p.example_id",
        )
        .fetch_all(&pool)
        .await
        .unwrap()
    };
    let first = preds(pool.clone()).await;
    // Again without --replace: refused before any run is opened.
    let before = common::snapshot(&pool).await;
    let e = baseline(None, false, None).await.unwrap_err();
    assert!(
        e.to_string().contains("already has a finished evaluation"),
        "{e}"
    );
    assert_eq!(before, common::snapshot(&pool).await);
    let exported = tempfile::tempdir().unwrap();
    let again = baseline(
        Some(vec![(2, 1), (2, 2), (4, 1), (4, 2)]),
        true,
        Some(exported.path().to_path_buf()),
    )
    .await
    .unwrap();
    assert_eq!(first, preds(pool.clone()).await);
    // Each exported head (with the no-answer threshold its shots chose, in decoding.json),
    // run by ONNX Runtime as any model, gives the baseline's answers.
    let (task_id, spec, _) = store::catalog::load_spec(&pool, "demo-SQuAD-v2")
        .await
        .unwrap();
    let test: Vec<Example> = store::catalog::examples_of(&pool, task_id, None)
        .await
        .unwrap()
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    for (n, (k, split)) in [(2, 1), (2, 2), (4, 1), (4, 2)].into_iter().enumerate() {
        let dir =
            ModelDir::open(&exported.path().join(format!("demo-SQuAD-v2-k{k}-s{split}"))).unwrap();
        let p = predict(&dir, &spec, &test, Device::Cpu, &mut |_, _| {}).unwrap();
        let ours: Vec<String> = p
            .spans
            .iter()
            .map(|s| {
                let texts: Vec<String> = s.iter().map(|x| x.text.clone()).collect();
                serde_json::to_string(&spec.to_official(&texts)).unwrap()
            })
            .collect();
        let theirs = &first[n * test.len()..(n + 1) * test.len()];
        assert_eq!(ours, theirs, "k {k} split {split}");
        // The run's stored settings name the threshold its head used, as the export does.
        let threshold = |json: &str| {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            let d = v.get("decoding").unwrap_or(&v);
            d["null_threshold"].as_f64().unwrap()
        };
        let exported = std::fs::read_to_string(dir.dir.join("decoding.json")).unwrap();
        let stored: String = sqlx::query_scalar(
            "SELECT r.settings_json FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
             WHERE s.kind = 'baseline' AND r.status = 'done' AND r.k = $1 AND r.split = $2",
        )
        .bind(k as i64)
        .bind(split as i64)
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(
            threshold(&stored),
            threshold(&exported),
            "k {k} split {split}"
        );
    }
    assert_eq!(
        runs.iter().map(|r| r.s1).collect::<Vec<_>>(),
        again.iter().map(|r| r.s1).collect::<Vec<_>>()
    );

    // The report: machine cells over splits beside the (empty) human rows, and curve lines.
    let loaded = store::report::load(&pool, &[]).await.unwrap();
    let r = loaded.report();
    let cell = r
        .machines
        .iter()
        .find(|c| c.system == learners::baseline::SYSTEM && c.k == 2)
        .unwrap();
    let own_mean = (runs[0].s1 + runs[1].s1) / 2.0;
    assert_eq!(cell.splits, vec![1, 2]);
    assert!(
        (cell.official.mean - own_mean).abs() < 1e-12
            && (cell.official.std_pop - (runs[0].s1 - runs[1].s1).abs() / 2.0).abs() < 1e-12
    );
    let md = domain::report::draw::layout::markdown(&r);
    assert!(
        md.contains("Humans and machines")
            && md.contains("LLM in-context")
            && md.contains("| 0 | tiny |"),
        "{md}"
    );
    let csv = domain::report::draw::scores_csv::scores_csv(&r);
    assert!(
        csv.contains(
            "machine,machine:tiny,,official,demo-SQuAD-v2,reading_comprehension,0,splits 0,1,"
        ),
        "{csv}"
    );
    let svg =
        domain::report::draw::chart::task_curve(&r, "demo-SQuAD-v2", domain::report::Which::All);
    assert!(
        svg.contains(&format!("data-name=\"{}\"", learners::baseline::SYSTEM)),
        "{svg}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn researchers_upload_predictions_over_http_and_others_are_refused() {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use common::client::{arrive, env, login, send};
    let env = env().await;
    let state = &env.state;
    let tid: domain::ids::TaskId =
        sqlx::query_scalar("SELECT id FROM tasks WHERE name = 'demo-SST-2'")
            .fetch_one(&state.pool)
            .await
            .unwrap();
    let test = store::catalog::test_examples(&state.pool, tid)
        .await
        .unwrap();
    let body: String = test
        .iter()
        .map(|e| {
            format!(
                "{}\n",
                serde_json::json!({"id": e.id, "answer": ["positive"]})
            )
        })
        .collect();
    let own = test
        .iter()
        .map(|e| s1_item(&["positive"], &e.gold.official))
        .sum::<f64>()
        / test.len() as f64;
    let post = |cookie: Option<String>, query: &str, body: String| {
        let mut req = Request::post(format!("/import/predictions?{query}"));
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        send(state, req.body(Body::from(body)).unwrap())
    };
    let q = "task=demo-SST-2&system=always%20positive&k=2&split=1&name=pos.jsonl";
    let r = post(None, q, body.clone()).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let worker = arrive(state, domain::ids::StudyId(1), "uploader").await;
    let r = post(Some(worker), q, body.clone()).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let rita = login(state, "rita", "rita-password").await;
    let before = common::snapshot(&state.pool).await;
    let r = post(Some(rita.clone()), "task=demo-SST-2", body.clone()).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("system="), "{}", r.body);
    let bad = body.replacen("\"answer\"", "\"answr\"", 1);
    let r = post(Some(rita.clone()), q, bad).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("pos.jsonl:1"), "{}", r.body);
    assert_eq!(before, common::snapshot(&state.pool).await);
    let r = post(Some(rita.clone()), q, body.clone()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body
            .starts_with("always positive on demo-SST-2 (k=2, split=1)"),
        "{}",
        r.body
    );
    let stored: f64 = sqlx::query_scalar("SELECT s1 FROM machine_runs WHERE status = 'done'")
        .fetch_one(&state.pool)
        .await
        .unwrap();
    assert!((stored - own).abs() < 1e-12);
    // The same target again is refused (409) unless replaced.
    let r = post(Some(rita.clone()), q, body.clone()).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    let r = post(
        Some(rita.clone()),
        &format!("{q}&replace=true"),
        body.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // As a browser's form sends it: the file in a multipart field named `file`, whose file
    // name names it in errors; a form without that field, or a malformed query, is a 400.
    let multipart = |field: &str, file: &str| {
        let boundary = "XyZ";
        let form = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"form.jsonl\"\r\nContent-Type: application/x-ndjson\r\n\r\n{file}\r\n--{boundary}--\r\n"
        );
        Request::post(format!(
            "/import/predictions?task=demo-SST-2&system=always%20positive&k=2&split=1&replace={}",
            field == "file"
        ))
        .header("cookie", rita.clone())
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(form))
        .unwrap()
    };
    let r = send(state, multipart("file", &body)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let bad = body.replacen("\"answer\"", "\"answr\"", 1);
    let r = send(state, multipart("file", &bad)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("form.jsonl:1"), "{}", r.body);
    let r = send(state, multipart("other", &body)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("no field named file"), "{}", r.body);
    // A k without its split: the run would have no place beside the humans of its k.
    let r = post(
        Some(rita.clone()),
        "task=demo-SST-2&system=x&k=2",
        body.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("k=2 needs its split"), "{}", r.body);
    let r = post(Some(rita.clone()), "task=demo-SST-2&system=x&k=two", body).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("k: must be a number"), "{}", r.body);
    // A file over the server's body limit (2 MB) is 413, sent whole or in a form; nothing changes.
    let before = common::snapshot(&state.pool).await;
    let big = "x".repeat(3 << 20);
    let r = send(state, multipart("file", &big)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert!(r.body.contains("over the server's limit"), "{}", r.body);
    let r = post(Some(rita.clone()), q, big).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(before, common::snapshot(&state.pool).await);
}
