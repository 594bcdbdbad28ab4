//! The tokenizer at run time (a `tokenizer.json`, read by the tokenizers library) and the check
//! that it matches the model it feeds.

use super::features::{Feature, Frame, Tok};
use super::runtime::Model;
use std::path::Path;
use store::error::{read_text, Error, Result};

/// A `tokenizer.json` with its own truncation and padding switched off.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// How the tokenizer frames a pair (from its post-processor).
    pub frame: Frame,
    pub vocab_size: usize,
}

impl Tokenizer {
    pub fn open(path: &Path) -> Result<Tokenizer> {
        let bad = |m: String| Error::Model(format!("{}: {m}", path.display()));
        let (inner, text) = read(path)?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let frame = super::frame::frame_of(&json, &|t| inner.token_to_id(t)).map_err(bad)?;
        if frame.before.is_empty() {
            return Err(bad(
                "the pair template puts no token before the question (the no-answer position)"
                    .into(),
            ));
        }
        let vocab_size = inner.get_vocab_size(true);
        Ok(Tokenizer {
            inner,
            frame,
            vocab_size,
        })
    }

    /// The id of the mask token (`[MASK]` in BERT's and DeBERTa's vocabularies, `<mask>` in
    /// RoBERTa's and XLM-R's), if the tokenizer has one.
    pub fn mask_id(&self) -> Option<u32> {
        ["[MASK]", "<mask>"]
            .iter()
            .find_map(|t| self.inner.token_to_id(t))
    }

    /// The id of the unknown-word token (`[UNK]` or `<unk>`), if the tokenizer has one.
    pub fn unknown_id(&self) -> Option<u32> {
        ["[UNK]", "<unk>"]
            .iter()
            .find_map(|t| self.inner.token_to_id(t))
    }

    /// The tokens of `text` (no special tokens), with ranges in code points.
    pub fn tokens(&self, text: &str) -> Result<Vec<Tok>> {
        let enc = self
            .inner
            .encode_char_offsets(text, false)
            .map_err(|e| Error::Model(format!("the tokenizer failed on {text:?}: {e}")))?;
        Ok(enc
            .get_ids()
            .iter()
            .zip(enc.get_offsets())
            .map(|(&id, &(start, end))| Tok { id, start, end })
            .collect())
    }
}

/// A `tokenizer.json` as the tokenizers library reads it, with its own truncation and padding
/// switched off; and its text.
pub fn read(path: &Path) -> Result<(tokenizers::Tokenizer, String)> {
    let bad = |m: String| Error::Model(format!("{}: {m}", path.display()));
    let text = read_text(path)?;
    let mut inner = tokenizers::Tokenizer::from_bytes(text.as_bytes()).map_err(|e| {
        bad(format!(
            "not a tokenizer.json the tokenizers library can read: {e}"
        ))
    })?;
    inner
        .with_truncation(None)
        .map_err(|e| bad(e.to_string()))?;
    inner.with_padding(None);
    Ok((inner, text))
}

/// Checks that the model accepts every id of the tokenizer: one input holding the highest id.
pub fn check_match(model: &mut Model, tok: &Tokenizer) -> Result<()> {
    let top = tok.vocab_size.saturating_sub(1) as i64;
    let f = &tok.frame;
    let (ids, type_ids): (Vec<i64>, Vec<i64>) = f
        .before
        .iter()
        .map(|&(id, ty)| (i64::from(id), ty))
        .chain([(top, f.question_type)])
        .chain(
            f.between
                .iter()
                .chain(&f.after)
                .map(|&(id, ty)| (i64::from(id), ty)),
        )
        .unzip();
    let probe = Feature {
        item: 0,
        map: vec![None; ids.len()],
        ids,
        type_ids,
    };
    model.run(&[&probe]).map(|_| ()).map_err(|e| {
        let text = e.to_string();
        // Only an index the model cannot look up says the tokenizer is wrong; anything else
        // (a GPU library, an operator the runtime lacks) is the model's own failure.
        if ["bounds", "out of range", "index"].iter().any(|w| text.contains(w)) {
            Error::Model(format!(
                "the tokenizer does not match the model: the tokenizer has {} tokens but the model fails on token id {top} ({text})",
                tok.vocab_size
            ))
        } else {
            Error::Model(format!("the model fails on a first short input: {text}"))
        }
    })
}
