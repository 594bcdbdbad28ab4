//! Where a training example's gold answer lies in the model's input (question or context, in
//! code points): the targets the frozen span head and fine-tuning both learn from.

use super::features::Segment;
use domain::task::Example;

/// Code point index of byte index `b` in `s`.
fn cp(s: &str, b: usize) -> usize {
    s[..b].chars().count()
}

/// Every occurrence of `needle` in `hay` as code point ranges.
fn occurrences(hay: &str, needle: &str) -> Vec<(usize, usize)> {
    let n = needle.chars().count();
    hay.match_indices(needle)
        .map(|(b, _)| (cp(hay, b), cp(hay, b) + n))
        .collect()
}

/// The gold ranges of a training example in the model's inputs: spans with offsets where the
/// file gives them, else every occurrence in the context, else the first in the question (the
/// label words of classification).
pub fn gold_ranges(ex: &Example, question: &str, context: &str) -> Vec<(Segment, usize, usize)> {
    let mut out = Vec::new();
    for g in ex.gold.official.iter().filter(|g| !g.is_empty()) {
        let with_offset: Vec<(Segment, usize, usize)> = ex
            .gold
            .spans
            .iter()
            .filter(|s| &s.text == g)
            .filter_map(|s| {
                s.offset
                    .map(|o| (Segment::Context, o, o + s.text.chars().count()))
            })
            .collect();
        if !with_offset.is_empty() {
            out.extend(with_offset);
            continue;
        }
        let in_context = occurrences(context, g);
        if !in_context.is_empty() {
            out.extend(
                in_context
                    .into_iter()
                    .map(|(a, b)| (Segment::Context, a, b)),
            );
        } else if let Some(&(a, b)) = occurrences(question, g).first() {
            out.push((Segment::Question, a, b));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use domain::spans::Span;
    use domain::task::{Context, Gold};

    /// A one-context example with these golds (shared by the baseline's tests).
    pub(crate) fn ex(context: &str, official: &[&str], spans: Vec<Span>) -> Example {
        Example {
            id: "1".into(),
            context: Context::Single {
                text: context.into(),
            },
            question: "q".into(),
            question_type: None,
            gold: Gold {
                official: official.iter().map(|s| s.to_string()).collect(),
                spans,
            },
            extra: serde_json::Value::Null,
        }
    }

    #[test]
    fn gold_ranges_use_offsets_then_every_occurrence_then_the_question() {
        let e = ex("Köln and Köln", &["Köln"], vec![]);
        assert_eq!(
            gold_ranges(&e, "q", "Köln and Köln"),
            vec![(Segment::Context, 0, 4), (Segment::Context, 9, 13)]
        );
        let e = ex("Köln and Köln", &["Köln"], vec![Span::new("Köln", Some(9))]);
        assert_eq!(
            gold_ranges(&e, "q", "Köln and Köln"),
            vec![(Segment::Context, 9, 13)]
        );
        let e = ex("a good film", &["positive"], vec![]);
        assert_eq!(
            gold_ranges(&e, "positive or negative?", "a good film"),
            vec![(Segment::Question, 0, 8)]
        );
        let e = ex("nothing", &[""], vec![]);
        assert!(gold_ranges(&e, "q", "nothing").is_empty());
    }
}
