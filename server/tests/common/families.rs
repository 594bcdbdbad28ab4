//! One small encoder of each family fine-tuning takes (BERT, RoBERTa, DeBERTa-v3's and
//! DeBERTa-v2's shapes), and a few framed inputs with span targets to train them on.

use learners::features::{features, Feature, Frame, Tok, Window};
use learners::tune::encoder::Config;
use learners::tune::train::Sample;

/// One small encoder of each family, with the frame its tokenizer gives a pair.
pub fn families() -> Vec<(Config, Frame)> {
    let roberta = Config {
        model_type: "roberta".into(),
        pad_token_id: 1,
        max_position_embeddings: 34,
        type_vocab_size: 1,
        ..Config::default()
    };
    // DeBERTa-v3's shape: no absolute positions or token types, log buckets past 4 positions.
    let v3 = Config {
        model_type: "deberta-v2".into(),
        relative_attention: true,
        position_buckets: 8,
        pos_att_type: vec!["p2c".into(), "c2p".into()],
        share_att_key: true,
        position_biased_input: false,
        norm_rel_ebd: "layer_norm".into(),
        type_vocab_size: 0,
        layer_norm_eps: 1e-7,
        ..Config::default()
    };
    // DeBERTa-v2's other options: absolute positions and token types as well, no buckets,
    // distances clamped at 6, content-to-position only.
    let v2 = Config {
        model_type: "deberta-v2".into(),
        relative_attention: true,
        max_relative_positions: 6,
        pos_att_type: vec!["c2p".into()],
        share_att_key: true,
        ..Config::default()
    };
    vec![
        (Config::default(), Frame::bert(2, 3)),
        (roberta, Frame::roberta(0, 2)),
        (v3, Frame::bert(2, 3)),
        (v2, Frame::bert(2, 3)),
    ]
}

pub fn toks(ids: &[u32]) -> Vec<Tok> {
    ids.iter()
        .enumerate()
        .map(|(i, &id)| Tok {
            id,
            start: 2 * i,
            end: 2 * i + 1,
        })
        .collect()
}

/// Features of a few (question, context) pairs, the second cut into two windows.
pub fn some_features(frame: &Frame) -> Vec<Feature> {
    let w = Window {
        max_seq_len: 12,
        doc_stride: 3,
        max_question_tokens: 4,
    };
    let mut out = features(0, &toks(&[4, 5]), &toks(&[6, 7, 8, 9]), frame, w);
    out.extend(features(
        1,
        &toks(&[10]),
        &toks(&(11..22).collect::<Vec<_>>()),
        frame,
        w,
    ));
    out.extend(features(2, &toks(&[12, 13, 14]), &toks(&[15]), frame, w));
    out
}

pub fn samples(fs: &[Feature]) -> Vec<Sample> {
    fs.iter()
        .enumerate()
        .map(|(i, f)| {
            let positions: Vec<usize> = std::iter::once(0)
                .chain((0..f.len()).filter(|&p| f.map[p].is_some()))
                .collect();
            // Alternate: a two-token answer in the context, then no answer.
            let (starts, ends) = if i % 2 == 0 {
                let p = f.len() - 3;
                (vec![p], vec![p + 1])
            } else {
                (vec![], vec![])
            };
            Sample {
                feature: f.clone(),
                positions,
                starts,
                ends,
            }
        })
        .collect()
}
