//! A fine-tuned encoder (BERT, RoBERTa, DeBERTa-v2) written as one ONNX graph (opset 17) with
//! `start_logits` and `end_logits` outputs, so the same `eval` path (ONNX Runtime) runs it.

mod graph;
mod relative;

use super::config::Family;
use super::encoder::{Config, NamedValues};
use crate::onnx::{model, tensor_i8, value_info, Attr, Dim, FLOAT, INT64};
pub use graph::Precision;
use graph::{quantised, transposed, Graph};
use std::collections::HashMap;

/// What the graph gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `start_logits` and `end_logits` `[batch, sequence]` from the span head.
    Spans,
    /// The encoder's `last_hidden_state` `[batch, sequence, hidden]` (the frozen baseline's
    /// input; the span head's weights are not needed).
    Hidden,
}

/// The ONNX model of a BERT encoder with a span head, from its weights by name
/// (`Weights::values`, Hugging Face names; linear weights `[out, in]`).
pub fn span_model(c: &Config, weights: &[NamedValues], precision: Precision) -> Vec<u8> {
    graph(c, weights, precision, Output::Spans)
}

/// The ONNX model of a BERT encoder whose output is its last hidden state.
pub fn encoder_model(c: &Config, weights: &[NamedValues], precision: Precision) -> Vec<u8> {
    graph(c, weights, precision, Output::Hidden)
}

/// What the graph is written from: the weights by name and how linear layers are stored.
struct Weights<'a> {
    w: HashMap<&'a str, (&'a [usize], &'a [f32])>,
    precision: Precision,
    eps: f32,
}

fn dims(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&d| d as i64).collect()
}

impl Weights<'_> {
    fn param(&self, g: &mut Graph, name: &str) -> String {
        let (s, v) = self.w[name];
        g.float(name, &dims(s), v)
    }

    /// An int8 linear layer of the encoder: quantised input times int8 weights, rescaled.
    fn linear8(&self, g: &mut Graph, x: &str, p: &str) -> String {
        let (s, v) = self.w[format!("{p}.weight").as_str()];
        let (q, scales) = quantised(v, s[0], s[1]);
        g.inits.push(tensor_i8(
            &format!("{p}.weight_q"),
            &[s[1] as i64, s[0] as i64],
            &q,
        ));
        let ws = g.float(&format!("{p}.weight_scale"), &[s[0] as i64], &scales);
        let (bs, bv) = self.w[format!("{p}.bias").as_str()];
        let b = g.float(&format!("{p}.bias"), &dims(bs), bv);
        // Per token: each row of x quantised symmetrically with its own scale, as uint8 around
        // 128 (ONNX Runtime's MatMulInteger takes one zero point for the whole input).
        let rows = g.ints(&format!("{p}.rows"), &[2], &[-1, s[1] as i64]);
        let x2 = g.op("Reshape", &[x, &rows], &[]);
        let axes = [("axes", Attr::Ints(vec![1])), ("keepdims", Attr::Int(1))];
        let ab = g.op("Abs", &[&x2], &[]);
        let mx = g.op("ReduceMax", &[&ab], &axes);
        let sc = g.op("Div", &[&mx, "i8_max"], &[]);
        let sc = g.op("Max", &[&sc, "tiny"], &[]);
        let xs = g.op("Div", &[&x2, &sc], &[]);
        let xs = g.op("Round", &[&xs], &[]);
        let xs = g.op("Add", &[&xs, "u8_mid"], &[]);
        let xs = g.op("Clip", &[&xs, "zero_f", "u8_max"], &[]);
        let xq = g.op("Cast", &[&xs], &[("to", Attr::Int(2))]);
        let zpq = "u8_zero_point".to_string();
        let m = g.op(
            "MatMulInteger",
            &[&xq, &format!("{p}.weight_q"), &zpq, "int8_zero"],
            &[],
        );
        let m = g.op("Cast", &[&m], &[("to", Attr::Int(FLOAT))]);
        let m = g.op("Mul", &[&m, &sc], &[]);
        let m = g.op("Mul", &[&m, &ws], &[]);
        let m = g.op("Add", &[&m, &b], &[]);
        let lead = g.op(
            "Shape",
            &[x],
            &[("start", Attr::Int(0)), ("end", Attr::Int(2))],
        );
        let n = g.ints(&format!("{p}.n"), &[1], &[s[0] as i64]);
        let shape = g.op("Concat", &[&lead, &n], &[("axis", Attr::Int(0))]);
        g.op("Reshape", &[&m, &shape], &[])
    }

    /// A linear layer: MatMul by the transposed weight, then Add the bias.
    fn linear32(&self, g: &mut Graph, x: &str, p: &str) -> String {
        let (s, v) = self.w[format!("{p}.weight").as_str()];
        let wt = g.float(
            &format!("{p}.weight_t"),
            &[s[1] as i64, s[0] as i64],
            &transposed(v, s[0], s[1]),
        );
        let (bs, bv) = self.w[format!("{p}.bias").as_str()];
        let b = g.float(&format!("{p}.bias"), &dims(bs), bv);
        let m = g.op("MatMul", &[x, &wt], &[]);
        g.op("Add", &[&m, &b], &[])
    }

    fn linear(&self, g: &mut Graph, x: &str, p: &str) -> String {
        match self.precision {
            Precision::F32 => self.linear32(g, x, p),
            Precision::Int8 => self.linear8(g, x, p),
        }
    }

    fn norm(&self, g: &mut Graph, x: &str, p: &str) -> String {
        let ws = self.param(g, &format!("{p}.weight"));
        let bs = self.param(g, &format!("{p}.bias"));
        g.op(
            "LayerNormalization",
            &[x, &ws, &bs],
            &[("axis", Attr::Int(-1)), ("epsilon", Attr::Float(self.eps))],
        )
    }
}

/// The constants every graph uses (quantisation bounds, GELU's and attention's numbers).
fn constants(g: &mut Graph) {
    g.inits.push(tensor_i8("int8_zero", &[], &[0]));
    g.float("zero_f", &[], &[0.0]);
    g.float("u8_max", &[], &[255.0]);
    g.float("tiny", &[], &[1e-8]);
    g.float("i8_max", &[], &[127.0]);
    g.float("u8_mid", &[], &[128.0]);
    g.inits
        .push(crate::onnx::tensor_u8("u8_zero_point", &[], &[128]));
}

/// Embeddings: words (+ token types) (+ positions from the family's first one), normalised;
/// DeBERTa zeroes the padding. `len` is the sequence length (`[1]`), `mask` the float mask.
fn embeddings(g: &mut Graph, w: &Weights, c: &Config, len: &str, mask: &str) -> String {
    let word = w.param(g, "embeddings.word_embeddings.weight");
    let mut e = g.op("Gather", &[&word, "input_ids"], &[]);
    if c.type_vocab_size > 0 {
        let types = w.param(g, "embeddings.token_type_embeddings.weight");
        let te = g.op("Gather", &[&types, "token_type_ids"], &[]);
        e = g.op("Add", &[&e, &te], &[]);
    }
    if c.absolute_positions() {
        let pos = w.param(g, "embeddings.position_embeddings.weight");
        let first = g.ints("first_position", &[1], &[c.position_offset() as i64]);
        let end = g.op("Add", &[len, &first], &[]);
        let pe = g.op("Slice", &[&pos, &first, &end, "zero1"], &[]);
        e = g.op("Add", &[&e, &pe], &[]);
    }
    let e = w.norm(g, &e, "embeddings.LayerNorm");
    if c.kind() != Family::DebertaV2 {
        return e;
    }
    let last = g.ints("last_axis", &[1], &[-1]);
    let m = g.op("Unsqueeze", &[mask, &last], &[]);
    g.op("Mul", &[&e, &m], &[])
}

/// The names of the shared tensors one encoder layer reads.
struct LayerInputs {
    family: Family,
    one: String,
    half: String,
    sqrt2: String,
    scale: String,
    to_heads: String,
    to_hidden: String,
    mask: String,
    /// DeBERTa's relative embeddings and gather indexes.
    relative: Option<relative::Shared>,
}

/// Encoder layer `l` over `x`: self-attention and the feed-forward block, each with its
/// residual and layer norm.
fn layer(g: &mut Graph, w: &Weights, k: &LayerInputs, l: usize, x: String) -> String {
    let p = format!("encoder.layer.{l}");
    let [qn, kn, vn] = k.family.attention();
    // [b, s, hidden] to [b, heads, s, head size].
    let heads = |g: &mut Graph, t: &str| {
        let r = g.op("Reshape", &[t, &k.to_heads], &[]);
        g.op(
            "Transpose",
            &[&r],
            &[("perm", Attr::Ints(vec![0, 2, 1, 3]))],
        )
    };
    let q = w.linear(g, &x, &format!("{p}.attention.self.{qn}"));
    let q = heads(g, &q);
    let kk = w.linear(g, &x, &format!("{p}.attention.self.{kn}"));
    let kk = heads(g, &kk);
    let v = w.linear(g, &x, &format!("{p}.attention.self.{vn}"));
    let v = heads(g, &v);
    let kt = g.op(
        "Transpose",
        &[&kk],
        &[("perm", Attr::Ints(vec![0, 1, 3, 2]))],
    );
    let mut s = g.op("MatMul", &[&q, &kt], &[]);
    if let Some(r) = &k.relative {
        let b = relative::bias(g, w, r, &p, &q, &kk);
        s = g.op("Add", &[&s, &b], &[]);
    }
    let s = g.op("Mul", &[&s, &k.scale], &[]);
    let s = g.op("Add", &[&s, &k.mask], &[]);
    let pr = g.op("Softmax", &[&s], &[("axis", Attr::Int(-1))]);
    let ctx = g.op("MatMul", &[&pr, &v], &[]);
    let ctx = g.op(
        "Transpose",
        &[&ctx],
        &[("perm", Attr::Ints(vec![0, 2, 1, 3]))],
    );
    let ctx = g.op("Reshape", &[&ctx, &k.to_hidden], &[]);
    let a = w.linear(g, &ctx, &format!("{p}.attention.output.dense"));
    let a = g.op("Add", &[&a, &x], &[]);
    let x = w.norm(g, &a, &format!("{p}.attention.output.LayerNorm"));
    // GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)).
    let f = w.linear(g, &x, &format!("{p}.intermediate.dense"));
    let d = g.op("Div", &[&f, &k.sqrt2], &[]);
    let d = g.op("Erf", &[&d], &[]);
    let d = g.op("Add", &[&d, &k.one], &[]);
    let d = g.op("Mul", &[&f, &d], &[]);
    let f = g.op("Mul", &[&d, &k.half], &[]);
    let o = w.linear(g, &f, &format!("{p}.output.dense"));
    let o = g.op("Add", &[&o, &x], &[]);
    w.norm(g, &o, &format!("{p}.output.LayerNorm"))
}

/// The graph's outputs from the last hidden state `x`: itself, or the span logits.
fn outputs(g: &mut Graph, w: &Weights, x: &str, h: i64, output: Output) -> Vec<Vec<u8>> {
    let bs = [Dim::Named("batch"), Dim::Named("sequence")];
    match output {
        Output::Hidden => {
            g.to("Identity", &[x], "last_hidden_state", &[]);
            vec![value_info(
                "last_hidden_state",
                FLOAT,
                &[bs[0].clone(), bs[1].clone(), Dim::Fixed(h)],
            )]
        }
        Output::Spans => {
            let logits = w.linear32(g, x, "qa_outputs");
            for (i, name) in ["start_logits", "end_logits"].iter().enumerate() {
                let index = g.ints(&format!("index{i}"), &[], &[i as i64]);
                g.to(
                    "Gather",
                    &[&logits, &index],
                    name,
                    &[("axis", Attr::Int(2))],
                );
            }
            ["start_logits", "end_logits"]
                .iter()
                .map(|n| value_info(n, FLOAT, &bs))
                .collect()
        }
    }
}

fn graph(c: &Config, weights: &[NamedValues], precision: Precision, output: Output) -> Vec<u8> {
    let w = Weights {
        w: weights
            .iter()
            .map(|(n, s, v)| (n.as_str(), (s.as_slice(), v.as_slice())))
            .collect(),
        precision,
        eps: c.layer_norm_eps as f32,
    };
    let mut g = Graph::default();
    constants(&mut g);
    let (h, nh, hd) = (
        c.hidden_size as i64,
        c.num_attention_heads as i64,
        c.head_dim() as i64,
    );
    let one = g.float("one", &[], &[1.0]);
    let half = g.float("half", &[], &[0.5]);
    let sqrt2 = g.float("sqrt2", &[], &[std::f32::consts::SQRT_2]);
    let neg = g.float("minus_10000", &[], &[-10000.0]);
    let scale = g.float("scale", &[], &[c.attention_scale() as f32]);
    g.ints("zero1", &[1], &[0]);
    let to_heads = g.ints("to_heads", &[4], &[0, 0, nh, hd]);
    let to_hidden = g.ints("to_hidden", &[3], &[0, 0, h]);
    let mask_axes = g.ints("mask_axes", &[2], &[1, 2]);
    let len = g.op(
        "Shape",
        &["input_ids"],
        &[("start", Attr::Int(1)), ("end", Attr::Int(2))],
    );
    let mf = g.op("Cast", &["attention_mask"], &[("to", Attr::Int(FLOAT))]);
    let mut x = embeddings(&mut g, &w, c, &len, &mf);
    // Padding: -10000 added to the attention scores of masked positions.
    let inv = g.op("Sub", &[&one, &mf], &[]);
    let mb = g.op("Mul", &[&inv, &neg], &[]);
    let mask = g.op("Unsqueeze", &[&mb, &mask_axes], &[]);
    let relative = (c.kind() == Family::DebertaV2 && (c.c2p() || c.p2c()))
        .then(|| relative::shared(&mut g, &w, c, &len));
    let k = LayerInputs {
        family: c.kind(),
        one,
        half,
        sqrt2,
        scale,
        to_heads,
        to_hidden,
        mask,
        relative,
    };
    for l in 0..c.num_hidden_layers {
        x = layer(&mut g, &w, &k, l, x);
    }
    let outputs = outputs(&mut g, &w, &x, h, output);
    let bs = [Dim::Named("batch"), Dim::Named("sequence")];
    // DeBERTa-v3 has no token types: its graph takes no token_type_ids.
    let names: &[&str] = if c.type_vocab_size > 0 {
        &["input_ids", "attention_mask", "token_type_ids"]
    } else {
        &["input_ids", "attention_mask"]
    };
    let inputs: Vec<Vec<u8>> = names.iter().map(|n| value_info(n, INT64, &bs)).collect();
    let name = format!("clues-lab {}", c.kind().prefix());
    model(&name, &g.nodes, &g.inits, &inputs, &outputs, 17)
}
