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

/// The next grapheme-cluster boundary after `cp` (one user-perceived character to the right:
/// an emoji sequence, a letter with its accent and a CRLF are each one step).
pub fn next_char(text: &str, cp: usize) -> usize {
    step_char(text, cp, true)
}

/// The grapheme-cluster boundary before `cp` (one character to the left).
pub fn prev_char(text: &str, cp: usize) -> usize {
    step_char(text, cp, false)
}

fn step_char(text: &str, cp: usize, forward: bool) -> usize {
    use unicode_segmentation::GraphemeCursor;
    let bytes: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    let byte = bytes.get(cp).copied().unwrap_or(text.len());
    let mut cursor = GraphemeCursor::new(byte, text.len(), true);
    let next = if forward {
        cursor.next_boundary(text, 0)
    } else {
        cursor.prev_boundary(text, 0)
    };
    match next.ok().flatten() {
        Some(b) => bytes.partition_point(|&x| x < b),
        None if forward => bytes.len(),
        None => 0,
    }
}

/// Whether a sentence starts at code point `i` of `chars`: after a line break, or after
/// `.`, `!` or `?` (closing quotes or brackets may follow) and white space.
fn sentence_starts(chars: &[char], i: usize) -> bool {
    if i == 0 || i >= chars.len() || chars[i].is_whitespace() {
        return i == 0;
    }
    let mut j = i;
    if !chars[j - 1].is_whitespace() {
        return false;
    }
    while j > 0 && chars[j - 1].is_whitespace() {
        if chars[j - 1] == '\n' || chars[j - 1] == '\r' {
            return true;
        }
        j -= 1;
    }
    while j > 0 && matches!(chars[j - 1], '"' | '\'' | '”' | '’' | ')' | ']' | '»') {
        j -= 1;
    }
    j > 0 && matches!(chars[j - 1], '.' | '!' | '?' | '。' | '！' | '？')
}

/// The start of the next sentence after `cp` (the text's end when there is none).
pub fn next_sentence_start(text: &str, cp: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    (cp + 1..chars.len())
        .find(|&i| sentence_starts(&chars, i))
        .unwrap_or(chars.len())
}

/// The start of the sentence before `cp` (the start of the sentence holding `cp` when `cp` is
/// inside it; 0 at the first).
pub fn prev_sentence_start(text: &str, cp: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    (0..cp.min(chars.len()))
        .rev()
        .find(|&i| sentence_starts(&chars, i))
        .unwrap_or(0)
}

/// The next occurrence of `needle` in `text` starting after code point `from`, wrapping round
/// to the start; letters compare without case. Returns (offset, length) in code points.
pub fn find_next(text: &str, needle: &str, from: usize) -> Option<(usize, usize)> {
    find_next_by(text, needle, from, |c| c.to_lowercase().collect::<String>())
}

/// [`find_next`] with each character compared by `fold`'s form of it (its lower case): the
/// page passes the browser's lower case, so that its bundle leaves out Rust's case tables
/// (5.4 KB of the span study's wasm with brotli).
pub fn find_next_by<K: PartialEq>(
    text: &str,
    needle: &str,
    from: usize,
    fold: impl Fn(char) -> K,
) -> Option<(usize, usize)> {
    let pat: Vec<K> = needle.chars().map(&fold).collect();
    let hay: Vec<K> = text.chars().map(&fold).collect();
    if pat.is_empty() || pat.len() > hay.len() {
        return None;
    }
    let at = |i: usize| (0..pat.len()).all(|k| hay[i + k] == pat[k]);
    let last = hay.len() - pat.len();
    (from.min(last + 1)..=last)
        .chain(0..from.min(last + 1))
        .find(|&i| at(i))
        .map(|i| (i, pat.len()))
}

/// The displayed text in pieces, each marked when it lies inside one of `spans` ((offset,
/// length) in code points; overlapping spans merge): the page highlights answers in the text.
pub fn marked_segments(
    text: &str,
    spans: impl IntoIterator<Item = (usize, usize)>,
) -> Vec<(String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    let mut ranges: Vec<(usize, usize)> = spans
        .into_iter()
        .map(|(o, l)| (o.min(chars.len()), (o + l).min(chars.len())))
        .filter(|(s, e)| s < e)
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let piece = |a: usize, b: usize| display_text(&chars[a..b].iter().collect::<String>());
    let mut out = Vec::new();
    let mut at = 0;
    for (s, e) in merged {
        if at < s {
            out.push((piece(at, s), false));
        }
        out.push((piece(s, e), true));
        at = e;
    }
    if at < chars.len() || out.is_empty() {
        out.push((piece(at, chars.len()), false));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::slice_cp;

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

    #[test]
    fn character_steps_keep_user_perceived_characters_whole() {
        let t = "a👩‍👩‍👧e\u{301}\r\nb";
        let n = t.chars().count();
        let mut stops = vec![0];
        while *stops.last().unwrap() < n {
            stops.push(next_char(t, *stops.last().unwrap()));
        }
        // a | family (5 code points) | e + accent | CRLF | b
        assert_eq!(stops, vec![0, 1, 6, 8, 10, 11]);
        let mut back = vec![n];
        while *back.last().unwrap() > 0 {
            back.push(prev_char(t, *back.last().unwrap()));
        }
        back.reverse();
        assert_eq!(back, stops);
        assert_eq!(next_char(t, n), n);
        assert_eq!(prev_char(t, 0), 0);
    }

    #[test]
    fn sentence_moves_and_search() {
        let t = "He said \"Go.\" Then left! Why?\nNew line. e.g. no";
        let s1 = next_sentence_start(t, 0);
        assert_eq!(slice_cp(t, s1, 4), Some("Then"));
        let s2 = next_sentence_start(t, s1);
        assert_eq!(slice_cp(t, s2, 3), Some("Why"));
        let s3 = next_sentence_start(t, s2);
        assert_eq!(slice_cp(t, s3, 3), Some("New"));
        assert_eq!(prev_sentence_start(t, s3), s2);
        assert_eq!(prev_sentence_start(t, s2 + 2), s2);
        assert_eq!(prev_sentence_start(t, 3), 0);
        let n = t.chars().count();
        assert_eq!(next_sentence_start(t, n), n);
        // Search: case-insensitive, from a position, wrapping round.
        assert_eq!(find_next(t, "then", 0), Some((s1, 4)));
        assert_eq!(find_next(t, "e", s1 + 1), Some((s1 + 2, 1)));
        assert_eq!(find_next(t, "he said", 5), Some((0, 7)));
        assert_eq!(find_next(t, "zzz", 0), None);
        assert_eq!(find_next(t, "", 0), None);
        assert_eq!(find_next("José", "JOSÉ", 0), Some((0, 4)));
        // The page's own lower case (the browser's) gives the same matches.
        let ascii = |c: char| c.to_ascii_lowercase();
        assert_eq!(find_next_by(t, "THEN", 0, ascii), Some((s1, 4)));
        assert_eq!(find_next_by(t, "E", s1 + 1, ascii), Some((s1 + 2, 1)));
    }

    #[test]
    fn answers_are_marked_in_the_displayed_text() {
        let t = "ab\r\ncd ef gh";
        assert_eq!(marked_segments(t, []), vec![(display_text(t), false)]);
        let m = marked_segments(t, [(4, 2), (5, 2), (10, 2), (11, 9)]);
        let pieces: Vec<(&str, bool)> = m.iter().map(|(s, b)| (s.as_str(), *b)).collect();
        assert_eq!(
            pieces,
            vec![("ab\n", false), ("cd ", true), ("ef ", false), ("gh", true)]
        );
        let joined: String = m.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(joined, display_text(t));
        assert_eq!(marked_segments("", []), vec![(String::new(), false)]);
    }
}
