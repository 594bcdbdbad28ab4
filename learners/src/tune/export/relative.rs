//! DeBERTa-v2's disentangled attention in the ONNX graph: the relative embeddings, the gather
//! indexes (constant tables cut to the input's length) and each layer's position terms.

use super::{Graph, Weights};
use crate::onnx::Attr;
use crate::tune::config::Config;
use crate::tune::relative::relative_indexes;

/// What every layer reads: the relative embeddings `[2 span, hidden]` (normalised), the
/// reshape to `[2 span, heads, head size]` and the gather indexes `[b, heads, s, s]`.
pub(super) struct Shared {
    embeddings: String,
    to_rows: String,
    c2p: Option<String>,
    p2c: Option<String>,
}

/// The shared values for inputs of `len` positions (`[1]`); the index tables cover
/// `max_position_embeddings` positions.
pub(super) fn shared(g: &mut Graph, w: &Weights, c: &Config, len: &str) -> Shared {
    let mut embeddings = w.param(g, "encoder.rel_embeddings.weight");
    if c.norm_relative() {
        embeddings = w.norm(g, &embeddings, "encoder.LayerNorm");
    }
    let n = c.max_position_embeddings;
    let (c2p, p2c) = relative_indexes(c, n);
    let nh = c.num_attention_heads as i64;
    let to_rows = g.ints(
        "relative_rows",
        &[3],
        &[2 * c.att_span() as i64, nh, c.head_dim() as i64],
    );
    let starts = g.ints("relative_starts", &[2], &[0, 0]);
    let axes = g.ints("relative_axes", &[2], &[0, 1]);
    let ends = g.op("Concat", &[len, len], &[("axis", Attr::Int(0))]);
    let batch = g.op(
        "Shape",
        &["input_ids"],
        &[("start", Attr::Int(0)), ("end", Attr::Int(1))],
    );
    let heads = g.ints("relative_heads", &[1], &[nh]);
    let shape = g.op(
        "Concat",
        &[&batch, &heads, len, len],
        &[("axis", Attr::Int(0))],
    );
    let mut cut = |name: &str, table: &[i64]| {
        let t = g.ints(name, &[n as i64, n as i64], table);
        let s = g.op("Slice", &[&t, &starts, &ends, &axes], &[]);
        g.op("Expand", &[&s, &shape], &[])
    };
    Shared {
        c2p: c.c2p().then(|| cut("relative_c2p", &c2p)),
        p2c: c.p2c().then(|| cut("relative_p2c", &p2c)),
        embeddings,
        to_rows,
    }
}

/// Layer `p`'s position terms `[b, heads, s, s]` (before scaling) from its query and key heads
/// `[b, heads, s, head size]`: content-to-position (queries against the key projection of
/// the relative embeddings) plus position-to-content (keys against their query projection,
/// transposed). The projections of the relative embeddings stay in float at int8.
pub(super) fn bias(g: &mut Graph, w: &Weights, r: &Shared, p: &str, q: &str, k: &str) -> String {
    let project = |g: &mut Graph, proj: &str| {
        let t = w.linear32(g, &r.embeddings, &format!("{p}.attention.self.{proj}"));
        let t = g.op("Reshape", &[&t, &r.to_rows], &[]);
        g.op("Transpose", &[&t], &[("perm", Attr::Ints(vec![1, 2, 0]))])
    };
    let mut terms = Vec::new();
    if let Some(index) = &r.c2p {
        let pk = project(g, "key_proj");
        let a = g.op("MatMul", &[q, &pk], &[]);
        terms.push(g.op("GatherElements", &[&a, index], &[("axis", Attr::Int(3))]));
    }
    if let Some(index) = &r.p2c {
        let pq = project(g, "query_proj");
        let a = g.op("MatMul", &[k, &pq], &[]);
        let a = g.op("GatherElements", &[&a, index], &[("axis", Attr::Int(3))]);
        terms.push(g.op(
            "Transpose",
            &[&a],
            &[("perm", Attr::Ints(vec![0, 1, 3, 2]))],
        ));
    }
    match terms.as_slice() {
        [one] => one.clone(),
        [a, b] => g.op("Add", &[a, b], &[]),
        _ => unreachable!("shared() is only built with a position term"),
    }
}
