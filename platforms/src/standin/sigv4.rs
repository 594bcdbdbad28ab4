//! AWS Signature Version 4 as MTurk checks it, for the MTurk stand-in: the canonical request of
//! a JSON `POST /`, the string to sign and the signing key. By hand, from AWS's published
//! algorithm ("Create a signed AWS API request", sigv4-create-signed-request): the stand-in
//! must check what the SDK signs, not sign with the SDK's own code.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    // An HMAC takes a key of any length.
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// The parts of an `Authorization: AWS4-HMAC-SHA256 ...` header.
#[derive(Debug, PartialEq, Eq)]
pub struct Auth<'a> {
    pub access_key: &'a str,
    pub date: &'a str,
    pub region: &'a str,
    pub service: &'a str,
    pub signed_headers: Vec<&'a str>,
    pub signature: &'a str,
}

/// Reads the header; `None` where it is not a SigV4 header.
pub fn parse(header: &str) -> Option<Auth<'_>> {
    let rest = header.strip_prefix("AWS4-HMAC-SHA256 ")?;
    let (mut credential, mut signed, mut signature) = (None, None, None);
    for part in rest.split(',').map(str::trim) {
        if let Some(v) = part.strip_prefix("Credential=") {
            credential = Some(v);
        } else if let Some(v) = part.strip_prefix("SignedHeaders=") {
            signed = Some(v);
        } else if let Some(v) = part.strip_prefix("Signature=") {
            signature = Some(v);
        }
    }
    let mut scope = credential?.split('/');
    let auth = Auth {
        access_key: scope.next()?,
        date: scope.next()?,
        region: scope.next()?,
        service: scope.next()?,
        signed_headers: signed?.split(';').collect(),
        signature: signature?,
    };
    (scope.next()? == "aws4_request").then_some(auth)
}

/// The signature of a request to `/` with no query: `header(name)` gives a signed header's
/// value; `amz_date` is the `x-amz-date` header.
pub fn signature(
    auth: &Auth<'_>,
    secret: &str,
    header: impl Fn(&str) -> Option<String>,
    amz_date: &str,
    body: &[u8],
) -> Option<String> {
    let mut canonical = String::from("POST\n/\n\n");
    for name in &auth.signed_headers {
        let value = header(name)?;
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        canonical.push_str(&format!("{name}:{value}\n"));
    }
    canonical.push('\n');
    canonical.push_str(&auth.signed_headers.join(";"));
    canonical.push('\n');
    canonical.push_str(&hex::encode(Sha256::digest(body)));
    let scope = format!(
        "{}/{}/{}/aws4_request",
        auth.date, auth.region, auth.service
    );
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex::encode(Sha256::digest(canonical.as_bytes()))
    );
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), auth.date);
    let k_region = hmac(&k_date, auth.region);
    let k_service = hmac(&k_region, auth.service);
    let k_signing = hmac(&k_service, "aws4_request");
    Some(hex::encode(hmac(&k_signing, &to_sign)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_reads_and_a_changed_body_changes_the_signature() {
        let h = "AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/mturk-requester/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=abc";
        let a = parse(h).unwrap();
        assert_eq!((a.access_key, a.service), ("AKID", "mturk-requester"));
        assert_eq!(a.signed_headers, ["content-type", "host", "x-amz-date"]);
        let headers = |n: &str| Some(format!("value of {n}"));
        let one = signature(&a, "secret", headers, "20261207T000000Z", b"{}").unwrap();
        let two = signature(&a, "secret", headers, "20261207T000000Z", b"{ }").unwrap();
        let three = signature(&a, "other", headers, "20261207T000000Z", b"{}").unwrap();
        assert!(one != two && one != three && one.len() == 64);
        assert!(parse("Bearer x").is_none());
    }
}
