//! The ONNX graph under construction (nodes, initializers written once by name) and the
//! layouts linear weights are written in: transposed floats, or int8 with a scale per row.

use crate::onnx::{node_with, tensor_f32, tensor_i64, Attr};
use std::collections::HashSet;

/// Nodes and initializers under construction; every value gets a fresh name, an initializer
/// asked for twice by name is written once.
#[derive(Default)]
pub(super) struct Graph {
    pub(super) nodes: Vec<Vec<u8>>,
    pub(super) inits: Vec<Vec<u8>>,
    names: HashSet<String>,
    n: usize,
}

impl Graph {
    pub(super) fn op(&mut self, op: &str, inputs: &[&str], attrs: &[(&str, Attr)]) -> String {
        self.n += 1;
        let out = format!("{}_{}", op.to_lowercase(), self.n);
        self.nodes.push(node_with(
            op,
            inputs,
            &[&out],
            &format!("n{}", self.n),
            attrs,
        ));
        out
    }

    pub(super) fn to(&mut self, op: &str, inputs: &[&str], out: &str, attrs: &[(&str, Attr)]) {
        self.n += 1;
        self.nodes.push(node_with(
            op,
            inputs,
            &[out],
            &format!("n{}", self.n),
            attrs,
        ));
    }

    pub(super) fn float(&mut self, name: &str, dims: &[i64], data: &[f32]) -> String {
        if self.names.insert(name.to_string()) {
            self.inits.push(tensor_f32(name, dims, data));
        }
        name.to_string()
    }

    pub(super) fn ints(&mut self, name: &str, dims: &[i64], data: &[i64]) -> String {
        if self.names.insert(name.to_string()) {
            self.inits.push(tensor_i64(name, dims, data));
        }
        name.to_string()
    }
}

/// `[rows, cols]` row-major to `[cols, rows]`.
pub(super) fn transposed(v: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; v.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = v[r * cols + c];
        }
    }
    out
}

/// How the encoder's linear layers compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    F32,
    /// Dynamic int8: weights stored as int8 with one scale per output column (symmetric),
    /// activations quantised per call and per token (symmetric, one scale per row), integer
    /// products (`MatMulInteger`) rescaled to float. Per-token scales halve the answers that
    /// differ from float against `DynamicQuantizeLinear`'s one scale per call (measured in
    /// docs/src/machines.md). The embeddings, attention products and the span head stay in float.
    Int8,
}

/// The largest stored weight: 7 bits and a sign (ONNX Runtime's `reduce_range`). x86 CPUs
/// without VNNI (AVX2, AVX-512 before VNNI) multiply uint8 activations by int8 weights with
/// `vpmaddubsw`, which adds two products into a saturating int16: 255 x 127 x 2 overflows it
/// and the layer's output is wrong by tens of percent on those machines (measured: 30% of the
/// logits' range on an AVX2 EPYC), while 255 x 63 x 2 = 32,130 fits. With 7-bit weights the
/// integer products are exact on every kernel, so a model gives the same answers on every CPU.
const W_MAX: f32 = 63.0;

/// Per output row of `w` (`[out, in]`): the int8 weights transposed to `[in, out]` and the
/// scales (max |w| / [`W_MAX`]).
pub(super) fn quantised(v: &[f32], out: usize, inp: usize) -> (Vec<i8>, Vec<f32>) {
    let scales: Vec<f32> = (0..out)
        .map(|r| {
            let m = v[r * inp..(r + 1) * inp]
                .iter()
                .fold(0f32, |a, x| a.max(x.abs()));
            if m > 0.0 {
                m / W_MAX
            } else {
                1.0
            }
        })
        .collect();
    let mut q = vec![0i8; v.len()];
    for r in 0..out {
        for c in 0..inp {
            q[c * out + r] = (v[r * inp + c] / scales[r]).round().clamp(-W_MAX, W_MAX) as i8;
        }
    }
    (q, scales)
}
