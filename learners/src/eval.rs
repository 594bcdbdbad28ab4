//! Evaluating a span-extraction model on a task's test set: model directories, model inputs
//! from task items, batches sorted by length and padded per batch, decoding of every item.

use super::decode::{decode_scored, Choice, Decoding, PredSpan};
use super::features::{features, Feature, Segment};
use super::runtime::{Batch, Device, Model, Outputs};
use super::tokenizer::Tokenizer;
use domain::task::{Example, Family, TaskSpec};
use std::path::{Path, PathBuf};
use store::error::{read_text, Error, Result};

/// A registered model: `model.onnx`, `tokenizer.json` and optional `decoding.json`.
#[derive(Clone, Debug)]
pub struct ModelDir {
    pub dir: PathBuf,
    pub model: PathBuf,
    pub tokenizer: PathBuf,
    pub decoding: Decoding,
}

impl ModelDir {
    pub fn open(dir: &Path) -> Result<ModelDir> {
        let model = dir.join("model.onnx");
        let tokenizer = dir.join("tokenizer.json");
        for (file, what) in [
            ("model.onnx", "the ONNX model"),
            ("tokenizer.json", "the tokenizer"),
        ] {
            if !dir.join(file).is_file() {
                return Err(Error::Model(format!(
                    "{}: missing {file} ({what})",
                    dir.display()
                )));
            }
        }
        let settings = dir.join("decoding.json");
        let decoding = if settings.is_file() {
            let text = read_text(&settings)?;
            serde_json::from_str(&text).map_err(|e| {
                Error::data(
                    settings.display().to_string(),
                    Some(e.line()),
                    e.to_string(),
                )
            })?
        } else {
            Decoding::default()
        };
        let problems = decoding.problems();
        if !problems.is_empty() {
            return Err(Error::data(
                settings.display().to_string(),
                None,
                problems.join("; "),
            ));
        }
        Ok(ModelDir {
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            decoding,
        })
    }
}

/// Writes a model folder: `model.onnx` from `model`, a copy of `tokenizer`, and `d` as
/// `decoding.json` (the folder is made when missing).
pub fn write_model_dir(dir: &Path, model: &[u8], tokenizer: &Path, d: &Decoding) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let write = |name: &str, data: &[u8]| {
        std::fs::write(dir.join(name), data)
            .map_err(|e| Error::io(format!("cannot write {}", dir.join(name).display()), e))
    };
    write("model.onnx", model)?;
    write(
        "tokenizer.json",
        &std::fs::read(tokenizer)
            .map_err(|e| Error::io(format!("cannot read {}", tokenizer.display()), e))?,
    )?;
    write(
        "decoding.json",
        serde_json::to_string_pretty(d)
            .map_err(Error::internal)?
            .as_bytes(),
    )
}

/// What the model reads for an item: (question, context). MNLI's premise and hypothesis are
/// joined by a space. A classification question that lacks one of the task's label words
/// (CLUES's MNLI asks "entailment, contraction, or neutral?") is replaced by the label words,
/// so every label can be extracted, as a worker can pick every label.
pub fn model_inputs(spec: &TaskSpec, ex: &Example) -> (String, String) {
    let context = match ex.context.second() {
        Some(h) => format!("{} {h}", ex.context.primary()),
        None => ex.context.primary().to_string(),
    };
    let labels = spec.label_names();
    let question = if spec.family == Family::Classification
        && labels.iter().any(|l| !ex.question.contains(l.as_str()))
    {
        match labels.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{}, or {last}?", rest.join(", ")),
            _ => ex.question.clone(),
        }
    } else {
        ex.question.clone()
    };
    (question, context)
}

/// May spans come from the question? Only for classification (the label words are there);
/// the head learns over those positions.
pub fn question_spans(spec: &TaskSpec) -> bool {
    spec.family == Family::Classification
}

/// The first occurrence of `word` in `text` that stands as a word of its own (not inside a
/// longer run of letters and digits), as a code point range.
fn word_in(text: &str, word: &str) -> Option<(usize, usize)> {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(word).find_map(|(b, _)| {
        let before = text[..b].chars().next_back();
        let after = text[b + word.len()..].chars().next();
        (!alnum(before) && !alnum(after)).then(|| {
            let s = text[..b].chars().count();
            (s, s + word.chars().count())
        })
    })
}

/// What each item's answer may be (`inputs` from `model_inputs`): a classification item one of
/// the label words in its question; an item that lists its candidate entities (ReCoRD) one of
/// them; any other item spans of its context, or none.
pub fn choices(spec: &TaskSpec, examples: &[Example], inputs: &[(String, String)]) -> Vec<Choice> {
    examples
        .iter()
        .zip(inputs)
        .map(|(ex, (question, _))| {
            if spec.family == Family::Classification {
                let labels: Vec<(Segment, usize, usize)> = spec
                    .label_names()
                    .iter()
                    .filter_map(|l| word_in(question, l))
                    .map(|(s, e)| (Segment::Question, s, e))
                    .collect();
                if !labels.is_empty() {
                    return Choice::OneOf(labels);
                }
            }
            let entities: Vec<(Segment, usize, usize)> = ex
                .entity_spans()
                .into_iter()
                .map(|(s, e)| (Segment::Context, s, e))
                .collect();
            if entities.is_empty() {
                Choice::Spans
            } else {
                Choice::OneOf(entities)
            }
        })
        .collect()
}

/// The features of every item, in item order.
pub fn featurize(
    tok: &Tokenizer,
    inputs: &[(String, String)],
    d: &Decoding,
) -> Result<Vec<Feature>> {
    let mut out = Vec::new();
    for (i, (q, c)) in inputs.iter().enumerate() {
        out.extend(features(
            i,
            &tok.tokens(q)?,
            &tok.tokens(c)?,
            &tok.frame,
            d.window(),
        ));
    }
    Ok(out)
}

/// Feature indices in batch order: by length, then position (fewer padded positions).
pub fn batch_order(fs: &[Feature]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..fs.len()).collect();
    order.sort_by_key(|&i| (fs[i].len(), i));
    order
}

/// Runs `model` over all features; `each` gets every batch's outputs with the feature indices.
pub fn run_batches(
    model: &mut Model,
    fs: &[Feature],
    batch_size: usize,
    mut each: impl FnMut(&[usize], Batch) -> Result<()>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<()> {
    let order = batch_order(fs);
    let mut done = 0;
    progress(0, fs.len());
    for chunk in order.chunks(batch_size.max(1)) {
        let batch: Vec<&Feature> = chunk.iter().map(|&i| &fs[i]).collect();
        each(chunk, model.run(&batch)?)?;
        done += chunk.len();
        progress(done, fs.len());
    }
    Ok(())
}

/// Decodes every item from per-feature logits (`logits[i]` belongs to `fs[i]`).
pub fn decode_items(
    fs: &[Feature],
    logits: &[(Vec<f32>, Vec<f32>)],
    inputs: &[(String, String)],
    choices: &[Choice],
    d: &Decoding,
) -> Vec<Vec<PredSpan>> {
    decode_items_scored(fs, logits, inputs, choices, d)
        .into_iter()
        .map(|(spans, _)| spans)
        .collect()
}

/// The same, each item with the probability the model gives its answer (`decode_scored`).
pub fn decode_items_scored(
    fs: &[Feature],
    logits: &[(Vec<f32>, Vec<f32>)],
    inputs: &[(String, String)],
    choices: &[Choice],
    d: &Decoding,
) -> Vec<(Vec<PredSpan>, f32)> {
    let mut by_item: Vec<Vec<usize>> = vec![Vec::new(); inputs.len()];
    for (i, f) in fs.iter().enumerate() {
        by_item[f.item].push(i);
    }
    by_item
        .iter()
        .zip(inputs)
        .zip(choices)
        .map(|((idx, (q, c)), choice)| {
            let feats: Vec<&Feature> = idx.iter().map(|&i| &fs[i]).collect();
            let ls: Vec<(&[f32], &[f32])> = idx
                .iter()
                .map(|&i| (logits[i].0.as_slice(), logits[i].1.as_slice()))
                .collect();
            decode_scored(&feats, &ls, q, c, choice, d)
        })
        .collect()
}

/// A finished evaluation: the spans of every item and where the model ran.
pub struct Predicted {
    pub spans: Vec<Vec<PredSpan>>,
    /// The probability the model gives each item's answer.
    pub probabilities: Vec<f32>,
    pub provider: String,
    pub features: usize,
    /// Seconds after loading: tokenization, the model and decoding.
    pub seconds: f64,
}

/// A model folder's tokenizer and model, loaded and checked against each other.
pub struct Loaded {
    tok: Tokenizer,
    model: Model,
}

/// Loads a model folder; a model that cannot run with its tokenizer is an error here.
pub fn load(dir: &ModelDir, device: Device) -> Result<Loaded> {
    let tok = Tokenizer::open(&dir.tokenizer)?;
    let mut model = Model::open(&dir.model, Outputs::Spans, device)?;
    super::tokenizer::check_match(&mut model, &tok)?;
    Ok(Loaded { tok, model })
}

/// Loads a registered model and runs it over `examples` of `spec`.
pub fn predict(
    dir: &ModelDir,
    spec: &TaskSpec,
    examples: &[Example],
    device: Device,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Predicted> {
    predict_loaded(dir, &mut load(dir, device)?, spec, examples, progress)
}

/// Runs a loaded model over `examples` of `spec` (timed: tokenization, model inputs, the
/// model and decoding; not loading).
pub fn predict_loaded(
    dir: &ModelDir,
    loaded: &mut Loaded,
    spec: &TaskSpec,
    examples: &[Example],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Predicted> {
    let started = std::time::Instant::now();
    let Loaded { tok, model } = loaded;
    let inputs: Vec<(String, String)> = examples.iter().map(|e| model_inputs(spec, e)).collect();
    let fs = featurize(tok, &inputs, &dir.decoding)?;
    let mut logits: Vec<(Vec<f32>, Vec<f32>)> = vec![(Vec::new(), Vec::new()); fs.len()];
    run_batches(
        model,
        &fs,
        dir.decoding.batch_size,
        |idx, out| match out {
            Batch::Spans(rows) => {
                for (&i, row) in idx.iter().zip(rows) {
                    logits[i] = row;
                }
                Ok(())
            }
            Batch::Hidden(..) => Err(Error::Model("expected span logits".into())),
        },
        progress,
    )?;
    let (spans, probabilities) = decode_items_scored(
        &fs,
        &logits,
        &inputs,
        &choices(spec, examples, &inputs),
        &dir.decoding,
    )
    .into_iter()
    .unzip();
    Ok(Predicted {
        spans,
        probabilities,
        provider: model.describe_provider(),
        features: fs.len(),
        seconds: started.elapsed().as_secs_f64(),
    })
}
