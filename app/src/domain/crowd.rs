//! Crowd platforms, pure and IO-free: how a finished worker is handed back (Prolific's
//! completion URL with the code, MTurk's externalSubmit form) and the links a study publishes.

use crate::domain::ids::StudyId;
use serde::{Deserialize, Serialize};

/// Prolific's completion URL; `{code}` stands for the study's completion code.
pub const PROLIFIC_COMPLETE: &str = "https://app.prolific.com/submissions/complete?cc={code}";

/// The MTurk hosts a HIT may send its workers from (`turkSubmitTo`): live and sandbox.
pub const MTURK_HOSTS: [&str; 2] = ["https://www.mturk.com", "https://workersandbox.mturk.com"];

/// What MTurk sends while a worker only previews a HIT.
const MTURK_PREVIEW: &str = "ASSIGNMENT_ID_NOT_AVAILABLE";

/// How the end page returns a worker to their platform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HandBack {
    /// A link to the platform that carries the completion code (Prolific).
    Link { platform: String, url: String },
    /// MTurk: a form posted to `action` with the assignment id and the code.
    MturkSubmit {
        action: String,
        assignment_id: String,
        code: String,
    },
}

/// `s` with everything but unreserved URL characters percent-encoded (RFC 3986), for a query
/// value (the completion code here, upload parameters on the models page).
pub fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Checks a study's completion URL: empty (Prolific's) or an `https://` address with `{code}`.
pub fn validate_completion_url(url: &str) -> Result<(), String> {
    if url.is_empty()
        || (url.starts_with("https://")
            && url.contains("{code}")
            && !url.contains(char::is_whitespace))
    {
        Ok(())
    } else {
        Err("the completion URL must start with https:// and contain {code}".into())
    }
}

/// Checks MTurk's `turkSubmitTo`: one of `MTURK_HOSTS` (so the form never posts elsewhere).
pub fn validate_turk_submit_to(host: &str) -> Result<(), String> {
    if MTURK_HOSTS.contains(&host.trim_end_matches('/')) {
        Ok(())
    } else {
        Err(format!(
            "turkSubmitTo must be one of {}",
            MTURK_HOSTS.join(", ")
        ))
    }
}

/// The hand-back for a worker who came from `platform`: Prolific gets `completion_url` (empty:
/// Prolific's own) with the code; MTurk a form to `{turkSubmitTo}/mturk/externalSubmit` for
/// a real assignment; a worker with a password account (no platform) none.
pub fn hand_back(
    platform: Option<&str>,
    completion_url: &str,
    code: &str,
    assignment_id: Option<&str>,
    turk_submit_to: Option<&str>,
) -> Option<HandBack> {
    match platform? {
        "prolific" => {
            let template = if completion_url.is_empty() {
                PROLIFIC_COMPLETE
            } else {
                completion_url
            };
            Some(HandBack::Link {
                platform: "Prolific".into(),
                url: template.replace("{code}", &url_encode(code)),
            })
        }
        "mturk" => {
            let assignment_id = assignment_id.filter(|a| *a != MTURK_PREVIEW)?;
            let host = turk_submit_to
                .filter(|h| validate_turk_submit_to(h).is_ok())
                .unwrap_or(MTURK_HOSTS[0])
                .trim_end_matches('/');
            Some(HandBack::MturkSubmit {
                action: format!("{host}/mturk/externalSubmit"),
                assignment_id: assignment_id.to_string(),
                code: code.to_string(),
            })
        }
        _ => None,
    }
}

/// The worker links of a study as each platform wants them: Prolific with its placeholders
/// (it fills them in), MTurk's bare link (an ExternalQuestion appends workerId, assignmentId,
/// hitId and turkSubmitTo itself).
pub fn worker_links(study: StudyId) -> [(&'static str, String); 2] {
    [
        (
            "Prolific",
            format!("/join/{study}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"),
        ),
        ("MTurk", format!("/join/{study}")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prolific_gets_its_link_with_the_code() {
        assert_eq!(
            hand_back(Some("prolific"), "", "C0DE-1", None, None),
            Some(HandBack::Link {
                platform: "Prolific".into(),
                url: "https://app.prolific.com/submissions/complete?cc=C0DE-1".into()
            })
        );
        let own = hand_back(
            Some("prolific"),
            "https://example.org/done?c={code}",
            "a b&c",
            None,
            None,
        );
        assert_eq!(
            own,
            Some(HandBack::Link {
                platform: "Prolific".into(),
                url: "https://example.org/done?c=a%20b%26c".into()
            })
        );
        assert_eq!(hand_back(None, "", "X", None, None), None);
    }

    #[test]
    fn mturk_posts_to_its_own_hosts_only() {
        let sandbox = hand_back(
            Some("mturk"),
            "",
            "X",
            Some("3AB"),
            Some("https://workersandbox.mturk.com/"),
        );
        assert_eq!(
            sandbox,
            Some(HandBack::MturkSubmit {
                action: "https://workersandbox.mturk.com/mturk/externalSubmit".into(),
                assignment_id: "3AB".into(),
                code: "X".into()
            })
        );
        // Anything else falls back to the live host; a preview has nothing to submit.
        let other = hand_back(
            Some("mturk"),
            "",
            "X",
            Some("3AB"),
            Some("https://evil.example"),
        );
        assert!(
            matches!(other, Some(HandBack::MturkSubmit { action, .. }) if action == "https://www.mturk.com/mturk/externalSubmit")
        );
        assert_eq!(
            hand_back(Some("mturk"), "", "X", Some(MTURK_PREVIEW), None),
            None
        );
        assert!(validate_turk_submit_to("https://evil.example").is_err());
    }

    #[test]
    fn completion_urls_and_links() {
        assert!(validate_completion_url("").is_ok());
        assert!(validate_completion_url("https://x.org/?cc={code}").is_ok());
        assert!(validate_completion_url("http://x.org/?cc={code}").is_err());
        assert!(validate_completion_url("https://x.org/").is_err());
        let [(_, prolific), (_, mturk)] = worker_links(StudyId(7));
        assert_eq!(
            prolific,
            "/join/7?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        );
        assert_eq!(mturk, "/join/7");
    }
}
