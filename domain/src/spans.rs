//! Answer spans and conversions between text offset units.
//! Every offset in this platform is in Unicode code points (Python `str` indices, as in the
//! CLUES files) unless its name says `utf16` (browser DOM) or `byte` (Rust `str` slicing).

use serde::{Deserialize, Serialize};

/// One answer span.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub text: String,
    /// Start in Unicode code points of the context it belongs to; `None` where the source
    /// gives no offset (the CLUES NER files list entity strings only).
    pub offset: Option<usize>,
}

impl Span {
    pub fn new(text: impl Into<String>, offset: Option<usize>) -> Self {
        Span {
            text: text.into(),
            offset,
        }
    }
    /// Length of the span in code points.
    pub fn len_cp(&self) -> usize {
        self.text.chars().count()
    }
}

/// Why a span does not fit its context.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpanError {
    #[error("span at code point {offset} with length {len} runs past the end of the text ({text_len} code points)")]
    OutOfRange {
        offset: usize,
        len: usize,
        text_len: usize,
    },
    #[error("span text {expected:?} does not match the text {found:?} at code point {offset}")]
    Mismatch {
        offset: usize,
        expected: String,
        found: String,
    },
    #[error("span text {0:?} does not occur in the text")]
    NotFound(String),
}

/// Byte index of code point `cp` in `text` (`cp == len` gives `text.len()`).
pub fn cp_to_byte(text: &str, cp: usize) -> Option<usize> {
    if cp == 0 {
        return Some(0);
    }
    let mut count = 0;
    for (byte, _) in text.char_indices() {
        if count == cp {
            return Some(byte);
        }
        count += 1;
    }
    (count == cp).then_some(text.len())
}

/// The text from code point `offset`, `len` code points long.
pub fn slice_cp(text: &str, offset: usize, len: usize) -> Option<&str> {
    let start = cp_to_byte(text, offset)?;
    let end = start + cp_to_byte(&text[start..], len)?;
    Some(&text[start..end])
}

/// Whether code points `offset` and `offset + len` of `text` both fall between grapheme clusters
/// (user-perceived characters, UAX #29): a span must not cut half a family emoji, a letter from
/// its combining accent, or the CR from the LF of a line break. Offsets past the end are `false`.
pub fn on_grapheme_boundaries(text: &str, offset: usize, len: usize) -> bool {
    use unicode_segmentation::GraphemeCursor;
    let boundary = |cp: usize| {
        cp_to_byte(text, cp).is_some_and(|byte| {
            GraphemeCursor::new(byte, text.len(), true)
                .is_boundary(text, 0)
                .unwrap_or(false)
        })
    };
    boundary(offset) && boundary(offset + len)
}

/// Code point offset -> UTF-16 code unit offset (what the browser's DOM ranges use).
pub fn cp_to_utf16(text: &str, cp: usize) -> Option<usize> {
    let mut units = 0;
    let mut chars = text.chars();
    for _ in 0..cp {
        units += chars.next()?.len_utf16();
    }
    Some(units)
}

/// UTF-16 code unit offset -> code point offset; `None` when the offset falls inside a
/// surrogate pair or past the end.
pub fn utf16_to_cp(text: &str, utf16: usize) -> Option<usize> {
    let mut units = 0;
    for (cp, ch) in text.chars().enumerate() {
        if units == utf16 {
            return Some(cp);
        }
        units += ch.len_utf16();
        if units > utf16 {
            return None;
        }
    }
    (units == utf16).then(|| text.chars().count())
}

/// Every code point offset at which `needle` starts in `text` (overlapping matches included).
pub fn find_all_cp(text: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    text.char_indices()
        .enumerate()
        .filter(|(_, (byte, _))| text[*byte..].starts_with(needle))
        .map(|(cp, _)| cp)
        .collect()
}

/// Checks that a span fits `text`: with an offset, the text at that offset must equal the
/// span's text exactly; without one, the span's text must occur somewhere.
pub fn check_span(text: &str, span: &Span) -> Result<(), SpanError> {
    match span.offset {
        Some(offset) => {
            let len = span.len_cp();
            match slice_cp(text, offset, len) {
                None => Err(SpanError::OutOfRange {
                    offset,
                    len,
                    text_len: text.chars().count(),
                }),
                Some(found) if found == span.text => Ok(()),
                Some(found) => Err(SpanError::Mismatch {
                    offset,
                    expected: span.text.clone(),
                    found: found.to_string(),
                }),
            }
        }
        None if text.contains(&span.text) && !span.text.is_empty() => Ok(()),
        None => Err(SpanError::NotFound(span.text.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // "e" + combining acute, a thumbs-up with skin tone, a ZWJ family, CRLF.
    const TRICKY: &str = "Cafe\u{301} 👍🏽 ok\r\n👨‍👩‍👧 end";

    #[test]
    fn slices_by_code_points() {
        assert_eq!(slice_cp("naïve café", 6, 4), Some("café"));
        assert_eq!(slice_cp("abc", 1, 5), None);
        assert_eq!(slice_cp("abc", 3, 0), Some(""));
        let chars: Vec<char> = TRICKY.chars().collect();
        let end_at = chars.len() - 3;
        assert_eq!(slice_cp(TRICKY, end_at, 3), Some("end"));
    }

    #[test]
    fn utf16_round_trip_on_emoji_and_combining_marks() {
        let n = TRICKY.chars().count();
        for cp in 0..=n {
            let u = cp_to_utf16(TRICKY, cp).unwrap();
            assert_eq!(utf16_to_cp(TRICKY, u), Some(cp), "cp {cp}");
        }
        // Independent check against the encoder: the UTF-16 length of the prefix.
        let prefix: String = TRICKY.chars().take(7).collect();
        assert_eq!(cp_to_utf16(TRICKY, 7), Some(prefix.encode_utf16().count()));
        // Inside the surrogate pair of 👍 (starts at cp 6 = utf16 6) there is no code point.
        assert_eq!(utf16_to_cp(TRICKY, 7), None);
        assert_eq!(utf16_to_cp(TRICKY, 10_000), None);
    }

    #[test]
    fn check_span_accepts_exact_and_refuses_mismatch() {
        let text = "Paris is in France 🇫🇷.";
        assert!(check_span(text, &Span::new("France", Some(12))).is_ok());
        assert!(matches!(
            check_span(text, &Span::new("France", Some(11))),
            Err(SpanError::Mismatch { .. })
        ));
        assert!(matches!(
            check_span(text, &Span::new("France 🇫🇷..", Some(12))),
            Err(SpanError::OutOfRange { .. })
        ));
        assert!(check_span(text, &Span::new("Paris", None)).is_ok());
        assert!(matches!(
            check_span(text, &Span::new("paris", None)),
            Err(SpanError::NotFound(_))
        ));
        // Flags are two code points each: "." sits at 19 + 2.
        assert!(check_span(text, &Span::new(".", Some(21))).is_ok());
    }

    #[test]
    fn finds_all_occurrences_in_code_points() {
        assert_eq!(find_all_cp("é a é", "é"), vec![0, 4]);
        assert_eq!(find_all_cp("aaa", "aa"), vec![0, 1]);
        assert!(find_all_cp("abc", "").is_empty());
    }

    #[test]
    fn spans_may_not_cut_a_grapheme_cluster() {
        // A family emoji (man ZWJ woman ZWJ girl: 5 code points), "e" + combining acute, CRLF.
        let text = "a \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467} e\u{301} x\r\ny";
        assert!(on_grapheme_boundaries(text, 2, 5));
        assert!(!on_grapheme_boundaries(text, 2, 1));
        assert!(!on_grapheme_boundaries(text, 4, 3));
        assert!(on_grapheme_boundaries(text, 8, 2));
        assert!(!on_grapheme_boundaries(text, 8, 1));
        assert!(!on_grapheme_boundaries(text, 9, 1));
        assert!(on_grapheme_boundaries(text, 11, 1));
        assert!(!on_grapheme_boundaries(text, 11, 2));
        assert!(on_grapheme_boundaries(text, 12, 3));
        assert!(!on_grapheme_boundaries(text, 13, 2));
        assert!(!on_grapheme_boundaries(text, 0, 100));
    }
}
