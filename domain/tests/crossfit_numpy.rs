//! The CrossFit sampler against vectors produced by numpy itself (fixtures/crossfit, made by
//! the script beside them): raw MT19937 output, shuffles, and whole train/dev files, all seeds.
// A test crate: a failed unwrap or expect is the test failing, with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use domain::crossfit::mt19937::Mt19937;
use domain::crossfit::sampler::{sample, to_tsv, SampleKind, TsvLine, CROSSFIT_SEEDS};
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("fixtures/crossfit/numpy_vectors.json")).unwrap()
}

#[test]
fn raw_output_and_shuffles_equal_numpy_for_every_seed() {
    let v = vectors();
    for seed in CROSSFIT_SEEDS {
        let mut rng = Mt19937::new(seed);
        let raw: Vec<u64> = (0..8).map(|_| u64::from(rng.next_u32())).collect();
        let expected: Vec<u64> = v["raw"][seed.to_string()]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(raw, expected, "seed {seed}");
        for (n, want) in v["shuffles"][seed.to_string()].as_object().unwrap() {
            let n: usize = n.parse().unwrap();
            let mut items: Vec<u64> = (0..n as u64).collect();
            Mt19937::new(seed).shuffle(&mut items);
            let want: Vec<u64> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert_eq!(items, want, "seed {seed}, n {n}");
        }
    }
}

fn source(v: &Value, kind: &str) -> Vec<TsvLine> {
    v["sources"][kind]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| TsvLine {
            input: l[0].as_str().unwrap().to_string(),
            output: l[1].as_str().unwrap().to_string(),
        })
        .collect()
}

#[test]
fn train_and_dev_files_are_byte_identical_to_the_reference() {
    let v = vectors();
    for (kind, sample_kind, k) in [
        ("classification", SampleKind::Classification, 16),
        ("text_to_text", SampleKind::TextToText, 32),
    ] {
        let lines = source(&v, kind);
        for seed in CROSSFIT_SEEDS {
            let (train, dev) = sample(&lines, sample_kind, k, seed);
            let want = &v["samples"][seed.to_string()][kind];
            assert_eq!(
                to_tsv(&train),
                want[0].as_str().unwrap(),
                "{kind} seed {seed} train"
            );
            assert_eq!(
                to_tsv(&dev),
                want[1].as_str().unwrap(),
                "{kind} seed {seed} dev"
            );
        }
    }
}
