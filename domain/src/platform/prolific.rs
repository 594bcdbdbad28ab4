//! The study fields only Prolific reads, and their checks: the study's completion URL (where a
//! worker who finished is sent) and the consent page's no-consent URL (where one who declined is).
//! The fields stay in the study's stored configuration and pages; what they mean is here.

/// The completion URL: empty (Prolific's own, with the code) or an `https://` address with
/// `{code}`; the error names the field.
pub fn check_completion_url(url: &str) -> Result<(), String> {
    if url.is_empty()
        || (url.starts_with("https://")
            && url.contains("{code}")
            && !url.contains(char::is_whitespace))
    {
        Ok(())
    } else {
        Err("Prolific completion URL: the completion URL must start with https:// and contain {code}".into())
    }
}

/// The no-consent URL: empty (Prolific's own, with the no-consent code) or an `https://` address.
pub fn check_no_consent_url(url: &str) -> Result<(), String> {
    if url.is_empty() || (url.starts_with("https://") && !url.contains(char::is_whitespace)) {
        Ok(())
    } else {
        Err("the no-consent URL must start with https://".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_urls() {
        assert!(check_completion_url("").is_ok());
        assert!(check_completion_url("https://x.org/?cc={code}").is_ok());
        assert!(check_completion_url("http://x.org/?cc={code}").is_err());
        assert!(check_completion_url("https://x.org/").is_err());
        assert!(check_completion_url("https://x.org/?cc={code} x").is_err());
    }

    #[test]
    fn no_consent_urls() {
        assert!(check_no_consent_url("").is_ok());
        assert!(check_no_consent_url("https://x.org/declined").is_ok());
        assert!(check_no_consent_url("http://x.org/").is_err());
        assert!(check_no_consent_url("https://x .org/").is_err());
    }
}
