//! From a browser selection to a span in code points of the stored context, and keyboard
//! caret moves by word. The page shows the context with line breaks normalised (HTML turns
//! CRLF and lone CR into LF), so DOM offsets are UTF-16 units of that *displayed* text.

/// The context as the page displays it: CRLF and lone CR become LF, as the HTML parser does.
pub fn display_text(original: &str) -> String {
    let mut out = String::with_capacity(original.len());
    let mut chars = original.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    out
}

/// UTF-16 units each code point of `original` takes in the displayed text (the CR of a CRLF
/// takes none).
fn display_units(original: &str) -> impl Iterator<Item = usize> + '_ {
    let mut chars = original.chars().peekable();
    std::iter::from_fn(move || {
        let c = chars.next()?;
        Some(if c == '\r' && chars.peek() == Some(&'\n') {
            0
        } else {
            c.len_utf16()
        })
    })
}

/// A DOM offset (UTF-16 units of the displayed text) -> code point offset in `original`.
/// A DOM offset at a line break maps to before its CR, so a CRLF is taken whole or not at
/// all. An offset in the middle of a surrogate pair is rounded outwards: down for a span
/// start, up for a span end (`is_end`).
pub fn dom_to_cp(original: &str, dom: usize, is_end: bool) -> usize {
    let mut units = 0;
    for (cp, w) in display_units(original).enumerate() {
        if units == dom {
            return cp;
        }
        if units + w > dom {
            return if is_end { cp + 1 } else { cp };
        }
        units += w;
    }
    original.chars().count()
}

/// Code point offset in `original` -> DOM offset in the displayed text.
pub fn cp_to_dom(original: &str, cp: usize) -> usize {
    display_units(original).take(cp).sum()
}

/// Word characters for caret moves: letters, digits, marks (combining accents), and the
/// joiners and modifiers inside emoji sequences.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c, '\'' | '’' | '-' | '_' | '\u{200D}' | '\u{FE0F}')
        || ('\u{0300}'..='\u{036F}').contains(&c)
        || ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
        || (c as u32) >= 0x1F000
}

/// The end of the next word at or after `cp` (code points): skips non-word characters, then
/// the word. At the end of the text, the text's length.
pub fn next_word_end(text: &str, cp: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut i = cp.min(chars.len());
    while i < chars.len() && !is_word_char(chars[i]) {
        i += 1;
    }
    while i < chars.len() && is_word_char(chars[i]) {
        i += 1;
    }
    i
}

/// The start of the word before `cp`: skips non-word characters backwards, then the word.
pub fn prev_word_start(text: &str, cp: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut i = cp.min(chars.len());
    while i > 0 && !is_word_char(chars[i - 1]) {
        i -= 1;
    }
    while i > 0 && is_word_char(chars[i - 1]) {
        i -= 1;
    }
    i
}

/// The start of the next word after `cp` (where a caret lands that moves to the next word).
pub fn next_word_start(text: &str, cp: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut i = cp.min(chars.len());
    while i < chars.len() && is_word_char(chars[i]) {
        i += 1;
    }
    while i < chars.len() && !is_word_char(chars[i]) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::spans::slice_cp;

    /// All the hard cases at once: emoji with variation selector, a ZWJ family, a skin tone,
    /// a combining accent, CRLF and a lone CR.
    const T: &str = "Go 🏔️ now\r\nJosé 👩‍👩‍👧 met 👍🏽\rend";

    fn utf16_index_of(display: &str, needle: &str) -> usize {
        let byte = display.find(needle).unwrap();
        display[..byte].encode_utf16().count()
    }

    #[test]
    fn display_normalises_line_breaks_like_html() {
        assert_eq!(display_text("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(display_text(T).chars().filter(|&c| c == '\r').count(), 0);
    }

    #[test]
    fn dom_offsets_map_back_to_the_stored_text() {
        let d = display_text(T);
        for needle in ["José", "👩‍👩‍👧", "👍🏽", "end", "now", "🏔️"] {
            let s = utf16_index_of(&d, needle);
            let e = s + needle.encode_utf16().count();
            let (cs, ce) = (dom_to_cp(T, s, false), dom_to_cp(T, e, true));
            assert_eq!(slice_cp(T, cs, ce - cs), Some(needle), "{needle}");
            assert_eq!(cp_to_dom(T, cs), s);
            assert_eq!(cp_to_dom(T, ce), e);
        }
        // A selection over the CRLF keeps both characters.
        let s = utf16_index_of(&d, "now");
        let e = utf16_index_of(&d, "José") + 4;
        let (cs, ce) = (dom_to_cp(T, s, false), dom_to_cp(T, e, true));
        assert_eq!(slice_cp(T, cs, ce - cs), Some("now\r\nJosé"));
        // A selection ending right at the line break ends before the CR.
        let e = utf16_index_of(&d, "now") + 3;
        assert_eq!(slice_cp(T, cs, dom_to_cp(T, e, true) - cs), Some("now"));
    }

    #[test]
    fn offsets_inside_a_surrogate_pair_round_outwards() {
        let t = "a👍b";
        assert_eq!(dom_to_cp(t, 2, false), 1);
        assert_eq!(dom_to_cp(t, 2, true), 2);
        assert_eq!(dom_to_cp(t, 99, true), 3);
    }

    #[test]
    fn caret_moves_by_word_keep_emoji_sequences_and_accents_whole() {
        let t = "José 👩‍👩‍👧 e\u{301}te, ok";
        let e1 = next_word_end(t, 0);
        assert_eq!(slice_cp(t, 0, e1), Some("José"));
        let s2 = next_word_start(t, 0);
        let e2 = next_word_end(t, s2);
        assert_eq!(slice_cp(t, s2, e2 - s2), Some("👩‍👩‍👧"));
        let s3 = next_word_start(t, s2);
        let e3 = next_word_end(t, s3);
        assert_eq!(slice_cp(t, s3, e3 - s3), Some("e\u{301}te"));
        assert_eq!(prev_word_start(t, e3), s3);
        assert_eq!(prev_word_start(t, 0), 0);
        let n = t.chars().count();
        assert_eq!(next_word_end(t, n), n);
    }
}
