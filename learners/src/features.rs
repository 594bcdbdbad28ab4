//! Model inputs for span extraction: the question and a window of the context framed by the
//! tokenizer's special tokens (`[CLS] q [SEP] c [SEP]`, `<s> q </s></s> c </s>`), the context
//! cut into windows that overlap, and for every position the text range it stands for.

use serde::{Deserialize, Serialize};

/// One token of a text: its vocabulary id and its range in the text, in code points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tok {
    pub id: u32,
    pub start: usize,
    pub end: usize,
}

/// Which text a position of a feature comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Segment {
    Question,
    Context,
}

/// How inputs are built; part of a model's decoding settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Positions per feature, special tokens included (the model's window).
    pub max_seq_len: usize,
    /// Context tokens between the starts of two windows of a long context.
    pub doc_stride: usize,
    /// The question is cut to this many tokens.
    pub max_question_tokens: usize,
}

/// How a tokenizer frames a (question, context) pair: the special tokens before the question,
/// between the two and after the context, each with its token type, and the types of the
/// question's and the context's tokens. The first token before the question is the no-answer
/// position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frame {
    pub before: Vec<(u32, i64)>,
    pub between: Vec<(u32, i64)>,
    pub after: Vec<(u32, i64)>,
    pub question_type: i64,
    pub context_type: i64,
}

impl Frame {
    /// BERT's `[CLS] q [SEP] c [SEP]`, the context and the last separator of type 1.
    pub fn bert(cls: u32, sep: u32) -> Frame {
        Frame {
            before: vec![(cls, 0)],
            between: vec![(sep, 0)],
            after: vec![(sep, 1)],
            question_type: 0,
            context_type: 1,
        }
    }

    /// RoBERTa's `<s> q </s></s> c </s>`, every token of type 0.
    pub fn roberta(cls: u32, sep: u32) -> Frame {
        Frame {
            before: vec![(cls, 0)],
            between: vec![(sep, 0), (sep, 0)],
            after: vec![(sep, 0)],
            question_type: 0,
            context_type: 0,
        }
    }

    /// Special tokens in one input.
    pub fn specials(&self) -> usize {
        self.before.len() + self.between.len() + self.after.len()
    }
}

/// One model input: ids, token types and, per position, the text range it stands for
/// (`None` for `[CLS]` and `[SEP]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    /// Index of the item (in the list the caller passed) this feature belongs to.
    pub item: usize,
    pub ids: Vec<i64>,
    pub type_ids: Vec<i64>,
    pub map: Vec<Option<(Segment, usize, usize)>>,
}

impl Feature {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The features of one item: one per window of the context (at least one, even for an empty
/// context). Windows start every `min(doc_stride, room)` context tokens, where `room` is what
/// the window leaves after the question and the frame's special tokens; the last window reaches
/// the end of the context.
pub fn features(
    item: usize,
    question: &[Tok],
    context: &[Tok],
    frame: &Frame,
    w: Window,
) -> Vec<Feature> {
    let question = &question[..question.len().min(w.max_question_tokens)];
    let room = w
        .max_seq_len
        .saturating_sub(question.len() + frame.specials())
        .max(1);
    let step = w.doc_stride.clamp(1, room);
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + room).min(context.len());
        let mut f = Feature {
            item,
            ids: Vec::new(),
            type_ids: Vec::new(),
            map: Vec::new(),
        };
        let special = |f: &mut Feature, tokens: &[(u32, i64)]| {
            for &(id, ty) in tokens {
                f.ids.push(i64::from(id));
                f.type_ids.push(ty);
                f.map.push(None);
            }
        };
        special(&mut f, &frame.before);
        for t in question {
            f.ids.push(i64::from(t.id));
            f.type_ids.push(frame.question_type);
            f.map.push(Some((Segment::Question, t.start, t.end)));
        }
        special(&mut f, &frame.between);
        for t in &context[start..end] {
            f.ids.push(i64::from(t.id));
            f.type_ids.push(frame.context_type);
            f.map.push(Some((Segment::Context, t.start, t.end)));
        }
        special(&mut f, &frame.after);
        out.push(f);
        if end >= context.len() {
            return out;
        }
        start += step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(n: usize, first_id: u32) -> Vec<Tok> {
        (0..n)
            .map(|i| Tok {
                id: first_id + i as u32,
                start: 2 * i,
                end: 2 * i + 1,
            })
            .collect()
    }

    #[test]
    fn short_context_is_one_feature() {
        let f = features(
            3,
            &toks(2, 10),
            &toks(3, 20),
            &Frame::bert(1, 2),
            Window {
                max_seq_len: 16,
                doc_stride: 4,
                max_question_tokens: 8,
            },
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].item, 3);
        assert_eq!(f[0].ids, vec![1, 10, 11, 2, 20, 21, 22, 2]);
        assert_eq!(f[0].type_ids, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(f[0].map[1], Some((Segment::Question, 0, 1)));
        assert_eq!(f[0].map[6], Some((Segment::Context, 4, 5)));
        assert_eq!(f[0].map[3], None);
    }

    #[test]
    fn long_context_windows_overlap_and_reach_the_end() {
        // room = 10 - (1 + 3) = 6 context tokens per window, a new window every 4.
        let w = Window {
            max_seq_len: 10,
            doc_stride: 4,
            max_question_tokens: 8,
        };
        let f = features(0, &toks(1, 10), &toks(13, 100), &Frame::bert(1, 2), w);
        let ctx: Vec<Vec<i64>> = f.iter().map(|f| f.ids[3..f.len() - 1].to_vec()).collect();
        assert_eq!(ctx[0], (100..106).collect::<Vec<_>>());
        assert_eq!(ctx[1], (104..110).collect::<Vec<_>>());
        assert_eq!(ctx[2], (108..113).collect::<Vec<_>>());
        assert_eq!(f.len(), 3);
        assert!(f.iter().all(|f| f.len() <= 10));
    }

    #[test]
    fn long_questions_are_cut_and_empty_contexts_still_give_a_feature() {
        let w = Window {
            max_seq_len: 8,
            doc_stride: 100,
            max_question_tokens: 3,
        };
        let f = features(0, &toks(9, 10), &[], &Frame::bert(1, 2), w);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].ids, vec![1, 10, 11, 12, 2, 2]);
    }

    #[test]
    fn a_roberta_frame_doubles_the_separator_and_has_one_token_type() {
        let w = Window {
            max_seq_len: 9,
            doc_stride: 100,
            max_question_tokens: 8,
        };
        let f = features(0, &toks(2, 10), &toks(3, 20), &Frame::roberta(0, 2), w);
        assert_eq!(f[0].ids, vec![0, 10, 11, 2, 2, 20, 21, 22, 2]);
        assert!(f[0].type_ids.iter().all(|&t| t == 0));
        assert_eq!(f[0].map[5], Some((Segment::Context, 0, 1)));
        // room = 9 - (2 + 4) = 3: a fourth context token starts a second window.
        let f = features(0, &toks(2, 10), &toks(4, 20), &Frame::roberta(0, 2), w);
        assert_eq!(f.len(), 2);
    }
}
