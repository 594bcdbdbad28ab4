//! Informed consent: the text a worker must accept before their place is used, the hash that
//! records which text they accepted, and where a worker who declines is sent back to.

use crate::crowd::HandBack;
use crate::platform::Platform;
use serde::{Deserialize, Serialize};

/// A study's consent page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consent {
    /// The consent text (Markdown).
    pub text: String,
    /// Who to ask about the study (name and e-mail), shown under the text.
    pub contact: String,
    /// Prolific's code for "no consent" (the study's no-consent completion code).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub no_consent_code: String,
    /// Where a Prolific worker who declines is sent (`{code}`: the no-consent code); empty:
    /// Prolific's completion URL with the no-consent code, if there is one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub no_consent_url: String,
}

const TEXT_MAX: usize = 20_000;
const CONTACT_MAX: usize = 300;

impl Consent {
    /// What the worker reads and agrees to: the text, then the contact.
    pub fn agreed_text(&self) -> String {
        format!(
            "{}\n\nContact: {}\n",
            self.text.trim_end(),
            self.contact.trim()
        )
    }

    /// SHA-256 (hex) of `agreed_text`: kept with each worker who accepts, so a changed text is
    /// visible in the exports.
    #[cfg(feature = "server")]
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(self.agreed_text().as_bytes()))
    }

    /// Every problem of the definition.
    pub fn problems(&self) -> Vec<String> {
        let mut errs = Vec::new();
        let n = self.text.trim().chars().count();
        if n == 0 || n > TEXT_MAX {
            errs.push(format!(
                "the consent text must be 1 to {TEXT_MAX} characters"
            ));
        }
        let c = self.contact.trim().chars().count();
        if c == 0 || c > CONTACT_MAX {
            errs.push(format!(
                "the consent page needs the researcher's contact (1 to {CONTACT_MAX} characters)"
            ));
        }
        if let Err(e) = crate::settings::check_completion_code(&self.no_consent_code) {
            errs.push(e.replace("Completion code", "No-consent code"));
        }
        if let Err(e) = crate::platform::prolific::check_no_consent_url(&self.no_consent_url) {
            errs.push(e);
        }
        errs
    }
}

/// Where a worker who declined goes: Prolific's no-consent URL or code; on MTurk and for
/// worker accounts nothing (the page tells an MTurk worker to return the HIT).
pub fn declined_hand_back(platform: Option<Platform>, consent: &Consent) -> Option<HandBack> {
    Platform::declined_hand_back(platform, &consent.no_consent_url, &consent.no_consent_code)
}
