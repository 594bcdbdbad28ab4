//! Writing ONNX files without a protobuf library: a small model built from nodes and
//! initializers (the test model), and an encoder with a trained span head appended to its graph.

/// A tensor dimension of a graph input or output.
#[derive(Clone, Debug)]
pub enum Dim {
    Fixed(i64),
    Named(&'static str),
}

pub const FLOAT: i64 = 1;
pub const INT64: i64 = 7;
pub const INT8: i64 = 3;
pub const UINT8: i64 = 2;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn int(out: &mut Vec<u8>, field: u32, v: i64) {
    tag(out, field, 0);
    varint(out, v as u64);
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    tag(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn msg(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

/// `TensorProto` of `elem_type` with its little-endian bytes.
fn tensor(name: &str, dims: &[i64], elem_type: i64, raw: &[u8]) -> Vec<u8> {
    msg(|t| {
        for d in dims {
            int(t, 1, *d);
        }
        int(t, 2, elem_type);
        bytes(t, 8, name.as_bytes());
        bytes(t, 9, raw);
    })
}

/// `TensorProto` of little-endian floats.
pub fn tensor_f32(name: &str, dims: &[i64], data: &[f32]) -> Vec<u8> {
    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    tensor(name, dims, FLOAT, &raw)
}

/// `ValueInfoProto` of a tensor.
pub fn value_info(name: &str, elem_type: i64, dims: &[Dim]) -> Vec<u8> {
    let shape = msg(|s| {
        for d in dims {
            let dim = msg(|m| match d {
                Dim::Fixed(v) => int(m, 1, *v),
                Dim::Named(n) => bytes(m, 2, n.as_bytes()),
            });
            bytes(s, 1, &dim);
        }
    });
    let tensor = msg(|t| {
        int(t, 1, elem_type);
        bytes(t, 2, &shape);
    });
    let ty = msg(|t| bytes(t, 1, &tensor));
    msg(|v| {
        bytes(v, 1, name.as_bytes());
        bytes(v, 2, &ty);
    })
}

/// `TensorProto` of little-endian 64-bit integers.
pub fn tensor_i64(name: &str, dims: &[i64], data: &[i64]) -> Vec<u8> {
    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    tensor(name, dims, INT64, &raw)
}

/// `TensorProto` of signed bytes (int8 weights).
pub fn tensor_i8(name: &str, dims: &[i64], data: &[i8]) -> Vec<u8> {
    let raw: Vec<u8> = data.iter().map(|v| *v as u8).collect();
    tensor(name, dims, INT8, &raw)
}

/// `TensorProto` of unsigned bytes.
pub fn tensor_u8(name: &str, dims: &[i64], data: &[u8]) -> Vec<u8> {
    tensor(name, dims, UINT8, data)
}

/// A node attribute's value.
#[derive(Clone, Debug)]
pub enum Attr {
    Int(i64),
    Float(f32),
    Ints(Vec<i64>),
}

/// `NodeProto` with integer attributes.
pub fn node(
    op: &str,
    inputs: &[&str],
    outputs: &[&str],
    name: &str,
    ints: &[(&str, i64)],
) -> Vec<u8> {
    let attrs: Vec<(&str, Attr)> = ints.iter().map(|(k, v)| (*k, Attr::Int(*v))).collect();
    node_with(op, inputs, outputs, name, &attrs)
}

/// `NodeProto` with attributes of any kind `Attr` has.
pub fn node_with(
    op: &str,
    inputs: &[&str],
    outputs: &[&str],
    name: &str,
    attrs: &[(&str, Attr)],
) -> Vec<u8> {
    msg(|n| {
        for i in inputs {
            bytes(n, 1, i.as_bytes());
        }
        for o in outputs {
            bytes(n, 2, o.as_bytes());
        }
        bytes(n, 3, name.as_bytes());
        bytes(n, 4, op.as_bytes());
        for (k, v) in attrs {
            let a = msg(|a| {
                bytes(a, 1, k.as_bytes());
                match v {
                    Attr::Float(f) => {
                        tag(a, 2, 5);
                        a.extend_from_slice(&f.to_le_bytes());
                        int(a, 20, 1); // AttributeType FLOAT
                    }
                    Attr::Int(i) => {
                        int(a, 3, *i);
                        int(a, 20, 2); // INT
                    }
                    Attr::Ints(list) => {
                        for i in list {
                            int(a, 8, *i);
                        }
                        int(a, 20, 7); // INTS
                    }
                }
            });
            bytes(n, 5, &a);
        }
    })
}

/// A whole `ModelProto` (IR version 8, default domain at `opset`).
pub fn model(
    name: &str,
    nodes: &[Vec<u8>],
    initializers: &[Vec<u8>],
    inputs: &[Vec<u8>],
    outputs: &[Vec<u8>],
    opset: i64,
) -> Vec<u8> {
    let graph = msg(|g| {
        for n in nodes {
            bytes(g, 1, n);
        }
        bytes(g, 2, name.as_bytes());
        for i in initializers {
            bytes(g, 5, i);
        }
        for i in inputs {
            bytes(g, 11, i);
        }
        for o in outputs {
            bytes(g, 12, o);
        }
    });
    msg(|m| {
        int(m, 1, 8);
        bytes(m, 2, b"clues-lab");
        bytes(m, 7, &graph);
        let op = msg(|o| {
            bytes(o, 1, b"");
            int(o, 2, opset);
        });
        bytes(m, 8, &op);
    })
}

/// A protobuf field: its number, wire type, whole encoding and payload.
type Field<'a> = (u32, u8, &'a [u8], &'a [u8]);

/// The top-level fields of a protobuf message: (field, wire type, whole encoded field).
fn fields(buf: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    let read = |i: &mut usize| -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *buf.get(*i).ok_or("truncated varint")?;
            *i += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    };
    while i < buf.len() {
        let begin = i;
        let key = read(&mut i)?;
        let (field, wire) = ((key >> 3) as u32, (key & 7) as u8);
        let body_start;
        match wire {
            0 => {
                body_start = i;
                read(&mut i)?;
            }
            1 => {
                body_start = i;
                i += 8;
            }
            2 => {
                let len = read(&mut i)? as usize;
                body_start = i;
                i = i.checked_add(len).ok_or("length overflow")?;
            }
            5 => {
                body_start = i;
                i += 4;
            }
            w => return Err(format!("unsupported wire type {w}")),
        }
        if i > buf.len() {
            return Err("field runs past the end of the file".into());
        }
        out.push((field, wire, &buf[begin..i], &buf[body_start..i]));
    }
    Ok(out)
}

/// The names of a graph's outputs (`ModelProto.graph.output[].name`).
pub fn output_names(model_bytes: &[u8]) -> Result<Vec<String>, String> {
    let graph = fields(model_bytes)?
        .into_iter()
        .find(|f| f.0 == 7 && f.1 == 2)
        .ok_or("no graph in the model")?
        .3;
    let mut names = Vec::new();
    for (field, _, _, body) in fields(graph)? {
        if field == 12 {
            if let Some((_, _, _, name)) = fields(body)?.into_iter().find(|f| f.0 == 1) {
                names.push(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    Ok(names)
}

/// Appends a span head to an encoder: `start_logits = hidden @ start` and `end_logits =
/// hidden @ end` over the encoder output `hidden` (`[batch, sequence, H]`), which become the
/// model's only outputs. Other fields of the model are kept byte for byte.
pub fn with_span_head(
    encoder: &[u8],
    hidden: &str,
    start: &[f32],
    end: &[f32],
) -> Result<Vec<u8>, String> {
    if !output_names(encoder)?.iter().any(|n| n == hidden) {
        return Err(format!("the encoder has no output named {hidden:?}"));
    }
    let h = start.len() as i64;
    let mut out = Vec::with_capacity(encoder.len() + 8 * start.len() + 1024);
    for (field, wire, whole, body) in fields(encoder)? {
        if field != 7 || wire != 2 {
            out.extend_from_slice(whole);
            continue;
        }
        let mut graph = Vec::with_capacity(body.len() + 8 * start.len() + 1024);
        for (gf, _, gwhole, _) in fields(body)? {
            if gf != 12 {
                graph.extend_from_slice(gwhole);
            }
        }
        bytes(
            &mut graph,
            1,
            &node(
                "MatMul",
                &[hidden, "span_head.start"],
                &["start_logits"],
                "span_head_start",
                &[],
            ),
        );
        bytes(
            &mut graph,
            1,
            &node(
                "MatMul",
                &[hidden, "span_head.end"],
                &["end_logits"],
                "span_head_end",
                &[],
            ),
        );
        bytes(&mut graph, 5, &tensor_f32("span_head.start", &[h], start));
        bytes(&mut graph, 5, &tensor_f32("span_head.end", &[h], end));
        for name in ["start_logits", "end_logits"] {
            bytes(
                &mut graph,
                12,
                &value_info(name, FLOAT, &[Dim::Named("batch"), Dim::Named("sequence")]),
            );
        }
        bytes(&mut out, 7, &graph);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_round_trip() {
        let mut b = Vec::new();
        int(&mut b, 1, 300);
        bytes(&mut b, 7, b"abc");
        assert_eq!(b, vec![0x08, 0xac, 0x02, 0x3a, 3, b'a', b'b', b'c']);
        let f = fields(&b).unwrap();
        assert_eq!((f[0].0, f[1].0, f[1].3), (1, 7, &b"abc"[..]));
        assert!(fields(&[0x3a, 9, 1]).unwrap_err().contains("past the end"));
    }

    #[test]
    fn a_head_replaces_the_outputs() {
        let enc = model(
            "enc",
            &[node("Identity", &["x"], &["h"], "id", &[])],
            &[],
            &[value_info(
                "x",
                FLOAT,
                &[Dim::Named("batch"), Dim::Named("sequence"), Dim::Fixed(2)],
            )],
            &[value_info(
                "h",
                FLOAT,
                &[Dim::Named("batch"), Dim::Named("sequence"), Dim::Fixed(2)],
            )],
            13,
        );
        assert_eq!(output_names(&enc).unwrap(), vec!["h"]);
        let with = with_span_head(&enc, "h", &[1.0, 2.0], &[3.0, 4.0]).unwrap();
        assert_eq!(
            output_names(&with).unwrap(),
            vec!["start_logits", "end_logits"]
        );
        assert!(with_span_head(&enc, "nope", &[1.0], &[1.0])
            .unwrap_err()
            .contains("\"nope\""));
    }
}
