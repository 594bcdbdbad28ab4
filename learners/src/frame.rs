//! A tokenizer's pair frame, read from its `tokenizer.json` post-processor: which special
//! tokens surround the question and the context, and their token types.

use super::features::Frame;

/// The pair frame of a `tokenizer.json`'s post-processor: `BertProcessing` (`[CLS] A [SEP] B
/// [SEP]`), `RobertaProcessing` (`<s> A </s></s> B </s>`), a `TemplateProcessing` pair
/// template, or one of those inside a `Sequence`. Without one: `[CLS]`/`[SEP]`, else `<s>`/`</s>`.
pub fn frame_of(
    json: &serde_json::Value,
    id: &dyn Fn(&str) -> Option<u32>,
) -> Result<Frame, String> {
    let pp = &json["post_processor"];
    let token = |v: &serde_json::Value| -> Result<u32, String> {
        v[1].as_u64()
            .map(|n| n as u32)
            .or_else(|| v[0].as_str().and_then(id))
            .ok_or_else(|| format!("unreadable special token {v}"))
    };
    match pp["type"].as_str() {
        Some("BertProcessing") => Ok(Frame::bert(token(&pp["cls"])?, token(&pp["sep"])?)),
        Some("RobertaProcessing") => Ok(Frame::roberta(token(&pp["cls"])?, token(&pp["sep"])?)),
        Some("TemplateProcessing") => template(pp),
        Some("Sequence") => pp["processors"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| {
                matches!(
                    p["type"].as_str(),
                    Some("BertProcessing" | "RobertaProcessing" | "TemplateProcessing")
                )
            })
            .map_or_else(
                || fallback(id),
                |p| frame_of(&serde_json::json!({ "post_processor": p }), id),
            ),
        _ => fallback(id),
    }
}

fn fallback(id: &dyn Fn(&str) -> Option<u32>) -> Result<Frame, String> {
    match (id("[CLS]"), id("[SEP]"), id("<s>"), id("</s>")) {
        (Some(c), Some(s), ..) => Ok(Frame::bert(c, s)),
        (_, _, Some(c), Some(s)) => Ok(Frame::roberta(c, s)),
        _ => Err("the tokenizer has no post-processor and neither [CLS]/[SEP] nor <s>/</s>".into()),
    }
}

/// A `TemplateProcessing` pair template: its special tokens around sequences A and B.
fn template(pp: &serde_json::Value) -> Result<Frame, String> {
    let pieces = pp["pair"].as_array().ok_or("the template has no pair")?;
    let mut parts: [Vec<(u32, i64)>; 3] = Default::default();
    let (mut part, mut types) = (0, [0i64; 2]);
    for p in pieces {
        if let Some(seq) = p.get("Sequence") {
            let ty = seq["type_id"].as_i64().unwrap_or(0);
            match seq["id"].as_str() {
                Some("A") if part == 0 => (part, types[0]) = (1, ty),
                Some("B") if part == 1 => (part, types[1]) = (2, ty),
                _ => return Err(format!("unexpected sequence {seq} in the pair template")),
            }
        } else if let Some(sp) = p.get("SpecialToken") {
            let name = sp["id"].as_str().ok_or("a special token without id")?;
            let ty = sp["type_id"].as_i64().unwrap_or(0);
            let ids = pp["special_tokens"][name]["ids"]
                .as_array()
                .ok_or_else(|| format!("special token {name} has no ids"))?;
            for i in ids {
                let i = i
                    .as_u64()
                    .ok_or_else(|| format!("special token {name}: bad id"))?;
                parts[part].push((i as u32, ty));
            }
        }
    }
    if part != 2 {
        return Err("the pair template does not hold both sequences".into());
    }
    let [before, between, after] = parts;
    Ok(Frame {
        before,
        between,
        after,
        question_type: types[0],
        context_type: types[1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vocab(t: &str) -> Option<u32> {
        ["[CLS]", "[SEP]", "<s>", "</s>"]
            .iter()
            .position(|v| *v == t)
            .map(|i| i as u32 + 100)
    }

    #[test]
    fn pair_frames_come_from_the_post_processor() {
        let bert = json!({"post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}});
        assert_eq!(frame_of(&bert, &vocab), Ok(Frame::bert(101, 102)));
        let roberta = json!({"post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]}});
        assert_eq!(frame_of(&roberta, &vocab), Ok(Frame::roberta(0, 2)));
        // A template, as all-MiniLM's tokenizer.json writes BERT's, inside a Sequence.
        let special = |t: &str, id: u32| json!({"id": t, "ids": [id], "tokens": [t]});
        let tp = json!({"type": "TemplateProcessing",
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {"[CLS]": special("[CLS]", 101), "[SEP]": special("[SEP]", 102)}});
        let seq = json!({"post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}, tp]}});
        assert_eq!(frame_of(&seq, &vocab), Ok(Frame::bert(101, 102)));
        // No post-processor: the tokens by name, BERT's first.
        assert_eq!(frame_of(&json!({}), &vocab), Ok(Frame::bert(100, 101)));
        let only_s = |t: &str| vocab(t).filter(|_| t.starts_with('<'));
        assert_eq!(frame_of(&json!({}), &only_s), Ok(Frame::roberta(102, 103)));
        assert!(frame_of(&json!({}), &|_| None).is_err());
        let broken = json!({"post_processor": {"type": "TemplateProcessing", "pair": [{"Sequence": {"id": "A"}}], "special_tokens": {}}});
        assert!(frame_of(&broken, &vocab)
            .unwrap_err()
            .contains("both sequences"));
    }
}
