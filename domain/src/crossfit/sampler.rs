//! CrossFit's few-shot sampler: seed numpy, shuffle the source training lines, then take k per
//! label (classification) or k lines (text-to-text) as train and the next k as dev.

use super::mt19937::Mt19937;

/// The five seeds of CrossFit's few-shot splits.
pub const CROSSFIT_SEEDS: [u32; 5] = [100, 13, 21, 42, 87];
/// Default k: per label for classification, lines for other tasks.
pub const K_CLASSIFICATION: usize = 16;
pub const K_TEXT_TO_TEXT: usize = 32;

/// One `input<TAB>output` line; `output` is everything after the first tab (several gold
/// outputs stay tab-separated in it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TsvLine {
    pub input: String,
    pub output: String,
}

impl TsvLine {
    /// The gold outputs of the line as CrossFit reads them: it strips the whole line (Python's
    /// `line.strip()`) before splitting at tabs, so the last output loses its trailing
    /// whitespace (a gold `"positive "` is `"positive"`); the others are kept as written.
    pub fn outputs(&self) -> Vec<&str> {
        self.output
            .trim_end_matches(super::metrics::py_space)
            .split('\t')
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Balanced: k per output label, labels in order of first appearance after the shuffle.
    Classification,
    /// The first k lines.
    TextToText,
}

/// (train, dev) for one seed, exactly as CrossFit's `generate_k_shot_data` makes them.
pub fn sample(
    lines: &[TsvLine],
    kind: SampleKind,
    k: usize,
    seed: u32,
) -> (Vec<TsvLine>, Vec<TsvLine>) {
    let mut shuffled = lines.to_vec();
    Mt19937::new(seed).shuffle(&mut shuffled);
    match kind {
        SampleKind::TextToText => {
            let train = shuffled.iter().take(k).cloned().collect();
            let dev = shuffled.iter().skip(k).take(k).cloned().collect();
            (train, dev)
        }
        SampleKind::Classification => {
            let mut groups: Vec<(&str, Vec<&TsvLine>)> = Vec::new();
            for line in &shuffled {
                match groups.iter_mut().find(|(l, _)| *l == line.output) {
                    Some((_, g)) => g.push(line),
                    None => groups.push((&line.output, vec![line])),
                }
            }
            let take = |from: usize| {
                groups
                    .iter()
                    .flat_map(|(_, g)| g.iter().skip(from).take(k).map(|l| (*l).clone()))
                    .collect()
            };
            (take(0), take(k))
        }
    }
}

/// Lines written as CrossFit writes them: `input<TAB>output<LF>` each.
pub fn to_tsv(lines: &[TsvLine]) -> String {
    lines
        .iter()
        .map(|l| format!("{}\t{}\n", l.input, l.output))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize, labels: &[&str]) -> Vec<TsvLine> {
        (0..n)
            .map(|i| TsvLine {
                input: format!("x{i}"),
                output: labels[i % labels.len()].to_string(),
            })
            .collect()
    }

    #[test]
    fn classification_takes_k_per_label_for_train_then_dev() {
        let src = lines(60, &["a", "b", "c"]);
        let (train, dev) = sample(&src, SampleKind::Classification, 4, 42);
        assert_eq!(train.len(), 12);
        assert_eq!(dev.len(), 12);
        for label in ["a", "b", "c"] {
            assert_eq!(train.iter().filter(|l| l.output == label).count(), 4);
        }
        assert!(train.iter().all(|t| !dev.contains(t)));
        // Labels appear grouped, in order of first appearance.
        let order: Vec<&str> = train.iter().map(|l| l.output.as_str()).collect();
        let mut firsts: Vec<&str> = order.clone();
        firsts.dedup();
        assert_eq!(firsts.len(), 3);
    }

    #[test]
    fn text_to_text_takes_the_first_lines_and_short_sources_give_short_sets() {
        let src = lines(5, &["o"]);
        let (train, dev) = sample(&src, SampleKind::TextToText, 3, 100);
        assert_eq!((train.len(), dev.len()), (3, 2));
        assert_eq!(to_tsv(&train).lines().count(), 3);
    }
}
