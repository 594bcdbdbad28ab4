//! A text-to-text model's tokenizer (`tokenizer.json`): texts to ids with the model's special
//! tokens, cut to a length (keeping the end token), and ids back to text without them.

use std::path::Path;
use store::error::{Error, Result};

pub struct Text {
    inner: tokenizers::Tokenizer,
}

impl Text {
    pub fn open(path: &Path) -> Result<Text> {
        Ok(Text {
            inner: crate::tokenizer::read(path)?.0,
        })
    }

    /// The ids of `text` with the special tokens the tokenizer adds (BART: `<s> … </s>`), at
    /// most `max`: a longer text keeps its first `max - 1` ids and its last one (the end token).
    pub fn ids(&self, text: &str, max: usize) -> Result<Vec<u32>> {
        let enc = self
            .inner
            .encode(text, true)
            .map_err(|e| Error::Model(format!("the tokenizer failed on {text:?}: {e}")))?;
        let mut ids = enc.get_ids().to_vec();
        if ids.len() > max && max > 0 {
            let last = ids[ids.len() - 1];
            ids.truncate(max - 1);
            ids.push(last);
        }
        Ok(ids)
    }

    /// The text of generated ids, special tokens left out, trimmed.
    pub fn text(&self, ids: &[u32]) -> Result<String> {
        self.inner
            .decode(ids, true)
            .map(|t| t.trim().to_string())
            .map_err(|e| Error::Model(format!("the tokenizer cannot decode {ids:?}: {e}")))
    }
}
