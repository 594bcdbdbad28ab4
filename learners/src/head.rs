//! The built-in baseline's span head: two linear maps (start, end) over frozen encoder token
//! states, trained on the k shots with full-batch Adam for a fixed number of epochs, seeded.

use super::features::{Feature, Segment};
use domain::rng::SplitMix64;

/// Training settings (no validation set: a fixed number of epochs, as CLUES prescribes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Training {
    pub epochs: usize,
    pub learning_rate: f64,
    pub weight_decay: f64,
    pub seed: u64,
}

impl Default for Training {
    fn default() -> Self {
        Training {
            epochs: 60,
            learning_rate: 0.01,
            weight_decay: 0.01,
            seed: 0,
        }
    }
}

/// One training input: the encoder's states of a feature (`len x hidden`, row-major), the
/// positions the head chooses among (`[CLS]` first), and the gold start and end positions
/// (empty: the answer is "no answer", i.e. `[CLS]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub states: Vec<f32>,
    pub positions: Vec<usize>,
    pub starts: Vec<usize>,
    pub ends: Vec<usize>,
}

/// The trained head: one weight vector for start logits, one for end logits.
#[derive(Clone, Debug, PartialEq)]
pub struct Head {
    pub start: Vec<f32>,
    pub end: Vec<f32>,
}

/// Positions a head may choose in `f`: `[CLS]` (no answer), the context, and the question
/// when `question_spans` is set.
pub fn positions(f: &Feature, question_spans: bool) -> Vec<usize> {
    std::iter::once(0)
        .chain((0..f.len()).filter(|&i| match f.map[i] {
            Some((Segment::Context, _, _)) => true,
            Some((Segment::Question, _, _)) => question_spans,
            None => false,
        }))
        .collect()
}

/// Gold start and end positions in `f` of the gold ranges `(segment, start, end)` (code
/// points, end exclusive) that lie wholly inside the feature. Both lists are empty when no
/// gold span is inside (the target is then `[CLS]`).
pub fn targets(f: &Feature, gold: &[(Segment, usize, usize)]) -> (Vec<usize>, Vec<usize>) {
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    for &(seg, gs, ge) in gold {
        let at = |pred: &dyn Fn(usize, usize) -> bool| {
            (0..f.len()).find(|&i| matches!(f.map[i], Some((s, a, b)) if s == seg && pred(a, b)))
        };
        let i = at(&|a, b| a <= gs && gs < b);
        let j = at(&|a, b| a < ge && ge <= b);
        if let (Some(i), Some(j)) = (i, j) {
            if i <= j {
                starts.push(i);
                ends.push(j);
            }
        }
    }
    starts.sort_unstable();
    starts.dedup();
    ends.sort_unstable();
    ends.dedup();
    (starts, ends)
}

fn dot(w: &[f64], h: &[f32]) -> f64 {
    w.iter().zip(h).map(|(a, b)| a * f64::from(*b)).sum()
}

/// Adds the gradient of -log(sum over `gold` of softmax(w . h) over `positions`) to `grad`;
/// returns the loss.
fn accumulate(w: &[f64], s: &Sample, gold: &[usize], hidden: usize, grad: &mut [f64]) -> f64 {
    let gold: &[usize] = if gold.is_empty() { &[0] } else { gold };
    let z: Vec<f64> = s
        .positions
        .iter()
        .map(|&p| dot(w, &s.states[p * hidden..(p + 1) * hidden]))
        .collect();
    let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let total: f64 = e.iter().sum();
    let in_gold: f64 = s
        .positions
        .iter()
        .zip(&e)
        .filter(|(p, _)| gold.contains(p))
        .map(|(_, v)| v)
        .sum();
    for (k, &p) in s.positions.iter().enumerate() {
        let prob = e[k] / total;
        let target = if gold.contains(&p) {
            e[k] / in_gold
        } else {
            0.0
        };
        let g = prob - target;
        if g != 0.0 {
            for (gw, h) in grad.iter_mut().zip(&s.states[p * hidden..(p + 1) * hidden]) {
                *gw += g * f64::from(*h);
            }
        }
    }
    -(in_gold / total).ln()
}

/// Trains a head; returns it and the loss of each epoch (mean over samples, both heads).
pub fn train(samples: &[Sample], hidden: usize, t: &Training) -> (Head, Vec<f64>) {
    let mut rng = SplitMix64(t.seed);
    let mut weights: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..hidden).map(|_| 0.02 * rng.normal()).collect())
        .collect();
    let (b1, b2, eps) = (0.9, 0.999, 1e-8);
    let mut moments = vec![(vec![0.0; hidden], vec![0.0; hidden]); 2];
    let mut losses = Vec::with_capacity(t.epochs);
    let n = samples.len().max(1) as f64;
    for epoch in 1..=t.epochs {
        let mut loss = 0.0;
        for (which, w) in weights.iter_mut().enumerate() {
            let mut grad = vec![0.0; hidden];
            for s in samples {
                let gold = if which == 0 { &s.starts } else { &s.ends };
                loss += accumulate(w, s, gold, hidden, &mut grad);
            }
            let (m, v) = &mut moments[which];
            for i in 0..hidden {
                let g = grad[i] / n + t.weight_decay * w[i];
                m[i] = b1 * m[i] + (1.0 - b1) * g;
                v[i] = b2 * v[i] + (1.0 - b2) * g * g;
                let mh = m[i] / (1.0 - b1.powi(epoch as i32));
                let vh = v[i] / (1.0 - b2.powi(epoch as i32));
                w[i] -= t.learning_rate * mh / (vh.sqrt() + eps);
            }
        }
        losses.push(loss / n);
    }
    let to32 = |w: &[f64]| w.iter().map(|v| *v as f32).collect::<Vec<f32>>();
    (
        Head {
            start: to32(&weights[0]),
            end: to32(&weights[1]),
        },
        losses,
    )
}

impl Head {
    pub fn hidden(&self) -> usize {
        self.start.len()
    }

    /// Start and end logits of every position of `states` (`len x hidden`, row-major).
    pub fn logits(&self, states: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let h = self.hidden();
        let row = |w: &[f32]| -> Vec<f32> {
            states
                .chunks_exact(h)
                .map(|x| x.iter().zip(w).map(|(a, b)| a * b).sum())
                .collect()
        };
        (row(&self.start), row(&self.end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{features, Frame, Tok, Window};

    #[test]
    fn targets_cover_whole_gold_spans_inside_the_window() {
        let q = [Tok {
            id: 9,
            start: 0,
            end: 3,
        }];
        // "New York is big": New(0..3) York(4..8) is(9..11) big(12..15)
        let c = [
            Tok {
                id: 5,
                start: 0,
                end: 3,
            },
            Tok {
                id: 6,
                start: 4,
                end: 8,
            },
            Tok {
                id: 7,
                start: 9,
                end: 11,
            },
            Tok {
                id: 8,
                start: 12,
                end: 15,
            },
        ];
        let w = Window {
            max_seq_len: 6,
            doc_stride: 1,
            max_question_tokens: 4,
        };
        let fs = features(0, &q, &c, &Frame::bert(1, 2), w);
        // room 2: windows [New York] [York is] [is big]
        assert_eq!(fs.len(), 3);
        let gold = [(Segment::Context, 0, 8), (Segment::Question, 0, 3)];
        assert_eq!(targets(&fs[0], &gold), (vec![1, 3], vec![1, 4]));
        // "New York" is cut by the second window: only the question span remains.
        assert_eq!(targets(&fs[1], &gold), (vec![1], vec![1]));
        assert_eq!(
            targets(&fs[2], &[(Segment::Context, 12, 15)]),
            (vec![4], vec![4])
        );
        assert_eq!(positions(&fs[0], false), vec![0, 3, 4]);
        assert_eq!(positions(&fs[0], true), vec![0, 1, 3, 4]);
    }

    /// Two-dimensional states where dimension 0 marks answer starts and 1 answer ends: the
    /// head learns to pick them, and the same seed gives the same head.
    #[test]
    fn learns_a_separable_toy_and_is_reproducible() {
        let state = |a: f32, b: f32| vec![a, b, 0.3];
        let mut samples = Vec::new();
        for k in 0..6usize {
            let mut states = state(0.5, 0.5); // [CLS]
            let answer = 1 + k % 3;
            for p in 1..5 {
                states.extend(state(
                    if p == answer { 1.0 } else { -1.0 },
                    if p == answer + 1 { 1.0 } else { -1.0 },
                ));
            }
            samples.push(Sample {
                states,
                positions: vec![0, 1, 2, 3, 4],
                starts: vec![answer],
                ends: vec![answer + 1],
            });
        }
        let t = Training {
            epochs: 200,
            seed: 7,
            learning_rate: 0.05,
            ..Training::default()
        };
        let (head, losses) = train(&samples, 3, &t);
        assert!(losses.last().unwrap() < &(losses[0] / 5.0), "{losses:?}");
        for s in &samples {
            let (st, en) = head.logits(&s.states);
            let argmax = |v: &[f32]| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
            assert_eq!(argmax(&st), s.starts[0]);
            assert_eq!(argmax(&en), s.ends[0]);
        }
        assert_eq!(train(&samples, 3, &t).0, head);
        assert_ne!(train(&samples, 3, &Training { seed: 8, ..t }).0, head);
    }
}
