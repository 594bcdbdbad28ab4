//! Span decoding: from start/end logits over an item's features to the answer its task asks
//! for: exactly one label or listed entity (`Choice::OneOf`), or spans of the context on word
//! boundaries with the no-answer rule and several spans per item (`Choice::Spans`).

use super::features::{Feature, Segment, Window};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A model's decoding settings (`decoding.json` beside the model; every field optional).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Decoding {
    /// Longest answer, in tokens.
    pub max_answer_tokens: usize,
    /// Most spans kept per item (NER lists several entities).
    pub max_spans: usize,
    /// A span is kept only when its start + end logit exceeds the `[CLS]` start + end logit
    /// (the lowest over the item's windows) by more than this.
    pub null_threshold: f32,
    /// Positions per model input, special tokens included.
    pub max_seq_len: usize,
    /// Context tokens between the starts of two windows of a long context.
    pub doc_stride: usize,
    pub max_question_tokens: usize,
    /// Best start and end positions per window combined into candidate spans.
    pub top_n: usize,
    /// Inputs per model call (padded to the longest of the batch).
    pub batch_size: usize,
}

impl Default for Decoding {
    fn default() -> Self {
        Decoding {
            max_answer_tokens: 30,
            max_spans: 4,
            null_threshold: 0.0,
            max_seq_len: 256,
            doc_stride: 128,
            max_question_tokens: 64,
            top_n: 20,
            batch_size: 32,
        }
    }
}

impl Decoding {
    pub fn window(&self) -> Window {
        Window {
            max_seq_len: self.max_seq_len,
            doc_stride: self.doc_stride,
            max_question_tokens: self.max_question_tokens,
        }
    }

    /// Every problem with the settings, one message each.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let positive = [
            ("max_answer_tokens", self.max_answer_tokens),
            ("max_spans", self.max_spans),
            ("doc_stride", self.doc_stride),
            ("top_n", self.top_n),
            ("batch_size", self.batch_size),
        ];
        for (name, v) in positive {
            if v == 0 {
                p.push(format!("{name} must be at least 1"));
            }
        }
        if self.max_seq_len < 8 {
            p.push("max_seq_len must be at least 8".into());
        }
        if self.max_question_tokens + 4 > self.max_seq_len {
            p.push(format!(
                "max_question_tokens ({}) leaves no room for the context in max_seq_len ({})",
                self.max_question_tokens, self.max_seq_len
            ));
        }
        if !self.null_threshold.is_finite() {
            p.push("null_threshold must be a finite number".into());
        }
        p
    }
}

/// One predicted span: where it comes from, its range in that text (code points) and its text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredSpan {
    pub source: Segment,
    pub offset: usize,
    pub length: usize,
    pub text: String,
    pub score: f32,
}

/// What an item's answer may be, by its task.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// Spans of the context that start and end on word boundaries (a token inside a word, such
    /// as "##ky" of "BSkyB", can neither start nor end one); none when nothing beats the
    /// no-answer score. NER and SQuAD v2.
    Spans,
    /// Exactly one of these (source, start, end) ranges, never nothing: a classification
    /// item's label words in the question, a ReCoRD item's listed entities in the context.
    OneOf(Vec<(Segment, usize, usize)>),
}

/// Positions of `scores` among `allowed`, best first (ties: earlier position first).
fn best_positions(scores: &[f32], allowed: &[usize], n: usize) -> Vec<usize> {
    let mut p = allowed.to_vec();
    p.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    p.truncate(n);
    p
}

/// Whether code point `p` of `chars` lies between words: at an end, or not inside a run of
/// letters and digits.
fn boundary(chars: &[char], p: usize) -> bool {
    p == 0 || p >= chars.len() || !(chars[p - 1].is_alphanumeric() && chars[p].is_alphanumeric())
}

fn text_of(question: &str, context: &str, seg: Segment, cs: usize, ce: usize) -> String {
    match seg {
        Segment::Question => question,
        Segment::Context => context,
    }
    .chars()
    .skip(cs)
    .take(ce - cs)
    .collect()
}

/// Decodes one item. `logits[i]` are the (start, end) logits of `features[i]`, one per position;
/// `question`/`context` are the texts the features' ranges refer to.
pub fn decode(
    features: &[&Feature],
    logits: &[(&[f32], &[f32])],
    question: &str,
    context: &str,
    choice: &Choice,
    d: &Decoding,
) -> Vec<PredSpan> {
    decode_scored(features, logits, question, context, choice, d).0
}

/// The softmax weight of `chosen` among `scores` (start + end logits).
fn share(chosen: f32, scores: impl Iterator<Item = f32>) -> f32 {
    let z: f64 = scores.map(|s| f64::from(s - chosen).exp()).sum();
    if z > 0.0 && z.is_finite() {
        (1.0 / z) as f32
    } else {
        0.0
    }
}

/// The same, with the probability the model gives its answer: a softmax over the item's
/// candidates by start + end logit, of the chosen one (a label or entity among the listed ones;
/// for spans, the best span, or "no answer" when none is kept, among "no answer" and every
/// candidate span).
pub fn decode_scored(
    features: &[&Feature],
    logits: &[(&[f32], &[f32])],
    question: &str,
    context: &str,
    choice: &Choice,
    d: &Decoding,
) -> (Vec<PredSpan>, f32) {
    match choice {
        Choice::Spans => decode_spans(features, logits, question, context, d),
        Choice::OneOf(ranges) => {
            let scores = one_of_scores(features, logits, ranges);
            let best = one_of(&scores, question, context, ranges);
            let p = best.as_ref().map_or(0.0, |b| {
                share(b.score, scores.iter().copied().filter(|s| *s > f32::MIN))
            });
            (best.into_iter().collect(), p)
        }
    }
}

/// Each range's score: the best start + end logit over the windows that hold it whole
/// (`f32::MIN` where none does).
fn one_of_scores(
    features: &[&Feature],
    logits: &[(&[f32], &[f32])],
    ranges: &[(Segment, usize, usize)],
) -> Vec<f32> {
    let holding = |f: &Feature, seg: Segment, at: usize| {
        (0..f.len()).find(|&i| matches!(f.map[i], Some((s, a, b)) if s == seg && a <= at && at < b))
    };
    ranges
        .iter()
        .map(|&(seg, cs, ce)| {
            let mut score = f32::MIN;
            if ce > cs {
                for (f, (start, end)) in features.iter().zip(logits) {
                    if let (Some(i), Some(j)) = (holding(f, seg, cs), holding(f, seg, ce - 1)) {
                        if i <= j {
                            score = score.max(start[i] + end[j]);
                        }
                    }
                }
            }
            score
        })
        .collect()
}

/// The best of `ranges`: the highest start logit of the token holding its first character plus
/// end logit of the token holding its last, over the item's windows. Ties and ranges no window
/// holds whole: the earlier in the list.
fn one_of(
    scores: &[f32],
    question: &str,
    context: &str,
    ranges: &[(Segment, usize, usize)],
) -> Option<PredSpan> {
    let mut best: Option<(usize, f32)> = None;
    for (n, &(_, cs, ce)) in ranges.iter().enumerate() {
        if ce <= cs {
            continue;
        }
        if best.is_none_or(|(_, b)| scores[n] > b) {
            best = Some((n, scores[n]));
        }
    }
    let (n, score) = best?;
    let (seg, cs, ce) = ranges[n];
    Some(PredSpan {
        source: seg,
        offset: cs,
        length: ce - cs,
        text: text_of(question, context, seg, cs, ce),
        score,
    })
}

/// Spans of the context on word boundaries, kept while they beat the no-answer score (the
/// lowest `[CLS]` start + end over the windows) by more than the threshold.
fn decode_spans(
    features: &[&Feature],
    logits: &[(&[f32], &[f32])],
    question: &str,
    context: &str,
    d: &Decoding,
) -> (Vec<PredSpan>, f32) {
    let chars: Vec<char> = context.chars().collect();
    let mut null = f32::INFINITY;
    let mut best: HashMap<(Segment, usize, usize), f32> = HashMap::new();
    for (f, (start, end)) in features.iter().zip(logits) {
        null = null.min(start[0] + end[0]);
        let context_at = |i: usize, pick: fn(&(Segment, usize, usize)) -> usize| match f.map[i] {
            Some(m @ (Segment::Context, _, _)) => boundary(&chars, pick(&m)),
            _ => false,
        };
        let starts_ok: Vec<usize> = (0..f.len()).filter(|&i| context_at(i, |m| m.1)).collect();
        let ends_ok: Vec<usize> = (0..f.len()).filter(|&i| context_at(i, |m| m.2)).collect();
        let starts = best_positions(start, &starts_ok, d.top_n);
        let ends = best_positions(end, &ends_ok, d.top_n);
        for &i in &starts {
            for &j in &ends {
                let (Some((si, cs, _)), Some((sj, _, ce))) = (f.map[i], f.map[j]) else {
                    continue;
                };
                if si != sj || j < i || j - i + 1 > d.max_answer_tokens {
                    continue;
                }
                let score = start[i] + end[j];
                let e = best.entry((si, cs, ce)).or_insert(f32::NEG_INFINITY);
                if score > *e {
                    *e = score;
                }
            }
        }
    }
    let all = || std::iter::once(null).chain(best.values().copied());
    let mut cands: Vec<((Segment, usize, usize), f32)> = best
        .iter()
        .map(|(k, v)| (*k, *v))
        .filter(|(_, s)| *s > null + d.null_threshold)
        .collect();
    cands.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out: Vec<PredSpan> = Vec::new();
    for ((seg, cs, ce), score) in cands {
        if out.len() == d.max_spans {
            break;
        }
        let overlaps = out
            .iter()
            .any(|p| p.source == seg && cs < p.offset + p.length && p.offset < ce);
        let text = text_of(question, context, seg, cs, ce);
        if overlaps || text.is_empty() || out.iter().any(|p| p.text == text) {
            continue;
        }
        out.push(PredSpan {
            source: seg,
            offset: cs,
            length: ce - cs,
            text,
            score,
        });
    }
    out.sort_by_key(|a| (a.source, a.offset));
    let chosen = if out.is_empty() {
        null
    } else {
        out.iter()
            .map(|p| p.score)
            .fold(f32::NEG_INFINITY, f32::max)
    };
    let p = if null.is_finite() {
        share(chosen, all())
    } else {
        0.0
    };
    (out, p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{features, Frame, Tok};

    /// Words of `text` as tokens (ids unused by decoding).
    fn words(text: &str) -> Vec<Tok> {
        let mut out = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == ' ' {
                i += 1;
                continue;
            }
            let s = i;
            while i < chars.len() && chars[i] != ' ' {
                i += 1;
            }
            out.push(Tok {
                id: 5,
                start: s,
                end: i,
            });
        }
        out
    }

    fn settings() -> Decoding {
        Decoding {
            max_spans: 3,
            max_answer_tokens: 3,
            ..Decoding::default()
        }
    }

    /// Logits that are 0 everywhere but at the given (position, start, end) values.
    fn logits(len: usize, set: &[(usize, f32, f32)]) -> (Vec<f32>, Vec<f32>) {
        let (mut s, mut e) = (vec![0.0; len], vec![0.0; len]);
        for &(p, a, b) in set {
            s[p] = a;
            e[p] = b;
        }
        (s, e)
    }

    #[test]
    fn several_spans_no_overlap_and_the_null_rule() {
        let q = "who ?";
        let c = "Ann met Bob Lee in Paris";
        let f = &one_window(q, &words(c));
        // positions: 0 CLS, 1 who, 2 ?, 3 SEP, 4 Ann, 5 met, 6 Bob, 7 Lee, 8 in, 9 Paris, 10 SEP
        let (s, e) = logits(
            f.len(),
            &[
                (0, 1.0, 1.0),
                (4, 5.0, 4.0),
                (6, 4.0, 0.5),
                (7, 0.0, 3.0),
                (9, 1.5, 0.4),
            ],
        );
        let out = decode(&[f], &[(&s, &e)], q, c, &Choice::Spans, &settings());
        // Ann (9) > Bob Lee (7) > ... "Ann met Bob" overlaps Ann; Paris 1.9 < null 2 is dropped.
        assert_eq!(texts(&out), vec!["Ann", "Bob Lee"]);
        assert_eq!((out[1].offset, out[1].length), (8, 7));
        // A higher threshold keeps only the best span; a very high one gives no answer.
        let strict = Decoding {
            null_threshold: 6.0,
            ..settings()
        };
        let one = decode(&[f], &[(&s, &e)], q, c, &Choice::Spans, &strict);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].text, "Ann");
        let none = Decoding {
            null_threshold: 8.0,
            ..settings()
        };
        assert!(decode(&[f], &[(&s, &e)], q, c, &Choice::Spans, &none).is_empty());
    }

    #[test]
    fn a_label_item_answers_exactly_one_label_whatever_else_scores() {
        let q = "positive or negative ?";
        let c = "a fine film";
        let f = &one_window(q, &words(c));
        // positions: 0 CLS, 1 positive, 2 or, 3 negative, 4 ?, 5 SEP, 6 a, 7 fine, 8 film
        let labels = Choice::OneOf(vec![(Segment::Question, 0, 8), (Segment::Question, 12, 20)]);
        // "positive or negative" would be a longer span with a higher score; the no-answer
        // score is the highest of all; a context span scores higher still.
        let (s, e) = logits(
            f.len(),
            &[
                (0, 20.0, 20.0),
                (1, 3.0, 0.0),
                (3, 1.0, 6.0),
                (6, 30.0, 0.0),
                (8, 0.0, 30.0),
            ],
        );
        let out = decode(&[f], &[(&s, &e)], q, c, &labels, &settings());
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].text.as_str(), out[0].source),
            ("negative", Segment::Question)
        );
        // Context spans: the longest one within the limit, ties in text order.
        let (s, e) = logits(f.len(), &[(3, 6.0, 6.0), (6, 2.0, 0.0), (8, 0.0, 2.0)]);
        let ctx = decode(&[f], &[(&s, &e)], q, c, &Choice::Spans, &settings());
        assert_eq!(texts(&ctx), vec!["a fine film"]);
        let short = Decoding {
            max_answer_tokens: 2,
            ..settings()
        };
        let out = decode(&[f], &[(&s, &e)], q, c, &Choice::Spans, &short);
        assert_eq!(texts(&out), vec!["a", "fine film"]);
    }

    #[test]
    fn the_probability_is_the_chosen_answers_share_of_its_candidates() {
        let q = "positive or negative ?";
        let c = "a fine film";
        let f = &one_window(q, &words(c));
        let labels = Choice::OneOf(vec![(Segment::Question, 0, 8), (Segment::Question, 12, 20)]);
        // "negative" scores 2 + 0, "positive" 0 + 0: p = 1 / (1 + e^-2).
        let (s, e) = logits(f.len(), &[(3, 2.0, 0.0)]);
        let (out, p) = decode_scored(&[f], &[(&s, &e)], q, c, &labels, &settings());
        assert_eq!(out[0].text, "negative");
        assert!((p - 1.0 / (1.0 + (-2.0f32).exp())).abs() < 1e-6, "{p}");
        // Spans: "no answer" (CLS 3 + 3 = 6) beats every span; its share among them all.
        let (s, e) = logits(f.len(), &[(0, 3.0, 3.0)]);
        let (out, p) = decode_scored(&[f], &[(&s, &e)], q, c, &Choice::Spans, &settings());
        assert!(out.is_empty());
        assert!(p > 0.5 && p < 1.0, "{p}");
        // A span far above the rest is nearly certain.
        let (s, e) = logits(f.len(), &[(7, 20.0, 20.0)]);
        let (out, p) = decode_scored(&[f], &[(&s, &e)], q, c, &Choice::Spans, &settings());
        assert_eq!(texts(&out), vec!["fine"]);
        assert!(p > 0.999, "{p}");
    }

    /// The only feature of a short item: `q`'s words, then `context`.
    fn one_window(q: &str, context: &[Tok]) -> Feature {
        features(
            0,
            &words(q),
            context,
            &Frame::bert(1, 2),
            settings().window(),
        )
        .remove(0)
    }

    /// The texts of decoded spans, in their order.
    fn texts(out: &[PredSpan]) -> Vec<&str> {
        out.iter().map(|p| p.text.as_str()).collect()
    }

    /// Tokens of a word cut into pieces, as a WordPiece tokenizer cuts "BSkyB".
    fn pieces(spans: &[(usize, usize)]) -> Vec<Tok> {
        spans
            .iter()
            .map(|&(start, end)| Tok { id: 5, start, end })
            .collect()
    }

    #[test]
    fn spans_start_and_end_on_word_boundaries() {
        let q = "who ?";
        let c = "BSkyB won, Elsewhere";
        // BS | ky | B | won | , | Else | where
        let toks = pieces(&[(0, 2), (2, 4), (4, 5), (6, 9), (9, 10), (11, 15), (15, 20)]);
        let f = &one_window(q, &toks);
        // positions: 0 CLS, 1 who, 2 ?, 3 SEP, 4 BS, 5 ky, 6 B, 7 won, 8 ",", 9 Else, 10 where
        // The best end is "ky" (inside BSkyB) and the best start "where" (inside Elsewhere).
        let (s, e) = logits(
            f.len(),
            &[
                (4, 5.0, 0.0),
                (5, 0.0, 9.0),
                (6, 0.0, 4.0),
                (9, 1.0, 0.0),
                (10, 8.0, 3.0),
            ],
        );
        let out = decode(&[f], &[(&s, &e)], q, c, &Choice::Spans, &settings());
        assert_eq!(texts(&out), vec!["BSkyB", "Elsewhere"]);
        assert!(boundary(&c.chars().collect::<Vec<_>>(), 10) && !boundary(&['a', 'b'], 1));
    }

    #[test]
    fn a_cloze_item_answers_one_listed_entity_never_none() {
        let q = "@placeholder won";
        let c = "Ann met Bob in Paris";
        let f = &one_window(q, &words(c));
        // positions: 0 CLS, 1 @placeholder, 2 won, 3 SEP, 4 Ann, 5 met, 6 Bob, 7 in, 8 Paris
        let entities = Choice::OneOf(vec![
            (Segment::Context, 0, 3),
            (Segment::Context, 8, 11),
            (Segment::Context, 15, 20),
        ]);
        // "met" scores best of all and the no-answer score is higher still: an entity anyway.
        let (s, e) = logits(
            f.len(),
            &[(0, 9.0, 9.0), (5, 7.0, 7.0), (6, 2.0, 2.0), (8, 1.0, 1.0)],
        );
        let out = decode(&[f], &[(&s, &e)], q, c, &entities, &settings());
        assert_eq!(texts(&out), vec!["Bob"]);
        // All equal: the first listed.
        let (s, e) = logits(f.len(), &[]);
        let out = decode(&[f], &[(&s, &e)], q, c, &entities, &settings());
        assert_eq!(out[0].text, "Ann");
    }

    #[test]
    fn windows_share_the_null_score_and_keep_the_best_copy() {
        let q = "q";
        let c = "a b c d e f g h";
        let w = Decoding {
            max_seq_len: 8,
            doc_stride: 2,
            max_question_tokens: 1,
            ..settings()
        };
        let fs = features(0, &words(q), &words(c), &Frame::bert(1, 2), w.window());
        assert!(fs.len() > 2);
        let mut ls: Vec<(Vec<f32>, Vec<f32>)> = fs
            .iter()
            .map(|f| logits(f.len(), &[(0, 3.0, 3.0)]))
            .collect();
        // "c" (context token 2) is in windows 0 and 1; the second copy scores higher.
        ls[0].0[5] = 4.0;
        ls[0].1[5] = 2.5;
        ls[1].0[3] = 4.0;
        ls[1].1[3] = 3.0;
        // The last window has a low null score: the item's null is the lowest one.
        let last = ls.len() - 1;
        ls[last].0[0] = 0.0;
        let refs: Vec<&Feature> = fs.iter().collect();
        let lr: Vec<(&[f32], &[f32])> = ls
            .iter()
            .map(|(s, e)| (s.as_slice(), e.as_slice()))
            .collect();
        let out = decode(&refs, &lr, q, c, &Choice::Spans, &w);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].text, "c");
        assert_eq!(out[0].score, 7.0);
    }

    #[test]
    fn bad_settings_are_named() {
        let d = Decoding {
            max_spans: 0,
            max_seq_len: 32,
            max_question_tokens: 30,
            ..Decoding::default()
        };
        let p = d.problems();
        assert!(p.iter().any(|m| m.contains("max_spans")));
        assert!(p.iter().any(|m| m.contains("max_question_tokens (30)")));
        assert!(Decoding::default().problems().is_empty());
    }
}
