//! Prolific's hooks as the server checks them: the signature over the bytes received, keyed
//! with the workspace's hook secret, and the age of the timestamp (api-reference/webhooks).

/// Prolific's hook signature: base64 of HMAC-SHA256 over the timestamp header and then the
/// body, keyed with the workspace's hook secret (api-reference/webhooks/verifying).
pub fn hook_signature(secret: &str, timestamp: &str, body: &str) -> String {
    use base64::Engine;
    use hmac::{Hmac, Mac};
    // An HMAC takes a key of any length.
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(timestamp.as_bytes());
    mac.update(body.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// How old a hook may be (its timestamp against the server's clock), so an old one replayed is
/// refused.
pub const HOOK_MAX_AGE_S: i64 = 300;

/// Checks a hook: its signature over the bytes received, and its age.
pub fn verify_hook(
    secret: &str,
    (timestamp, signature): (&str, &str),
    body: &str,
    now_s: i64,
) -> Result<(), String> {
    let sent: i64 = timestamp
        .trim()
        .split('.')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("the hook's timestamp is not a number")?;
    if (now_s - sent).abs() > HOOK_MAX_AGE_S {
        return Err(format!(
            "the hook is {} s old: refused as a replay",
            now_s - sent
        ));
    }
    let want = hook_signature(secret, timestamp, body);
    // Compared in time independent of where they differ.
    let same = want.len() == signature.len()
        && want
            .bytes()
            .zip(signature.bytes())
            .fold(0u8, |d, (a, b)| d | (a ^ b))
            == 0;
    if !same {
        return Err("the hook's signature does not match".into());
    }
    Ok(())
}
