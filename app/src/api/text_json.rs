//! The answers of server functions as JSON read from text (`serde_json::from_str`), the way
//! Leptos reads a resource's data when a page hydrates.
//!
//! Server functions' own JSON output reads from bytes (`serde_json::from_slice`), and serde
//! compiles each type's reading once per kind of reader: every type that arrives both ways (the
//! worker's `WorkerStep` in the page's data and in `continue_study`'s answer, with its answers,
//! contexts and options) was in the browser's bundles twice. Same bytes on the wire.

use leptos::server_fn::codec::Post;
use leptos::server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// JSON, read as UTF-8 text.
pub struct TextJsonEncoding;

/// Answers as JSON (`output = crate::api::TextJson` on every server function).
pub type TextJson = Post<TextJsonEncoding>;

impl ContentType for TextJsonEncoding {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for TextJsonEncoding {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for TextJsonEncoding {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for TextJsonEncoding {
    type Error = serde_json::Error;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        let text = std::str::from_utf8(&bytes).map_err(serde::de::Error::custom)?;
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes_and_refuses_what_is_not_text() {
        let value = vec![Some("é".to_string()), None];
        let bytes = TextJsonEncoding::encode(&value).unwrap();
        assert_eq!(&bytes[..], "[\"é\",null]".as_bytes());
        let back: Vec<Option<String>> = TextJsonEncoding::decode(bytes).unwrap();
        assert_eq!(back, value);
        let bad =
            <TextJsonEncoding as Decodes<Vec<String>>>::decode(Bytes::from_static(b"[\"\xff\"]"));
        assert!(bad.is_err());
    }
}
