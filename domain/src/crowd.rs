//! Crowd platforms, pure and IO-free: how a finished worker is handed back (Prolific's
//! completion URL with the code, MTurk's externalSubmit form) and the links a study publishes.

use crate::ids::StudyId;
use crate::task::Family;
use serde::{Deserialize, Serialize};

/// Prolific's completion URL; `{code}` stands for the study's completion code.
pub const PROLIFIC_COMPLETE: &str = "https://app.prolific.com/submissions/complete?cc={code}";

/// The MTurk hosts a HIT may send its workers from (`turkSubmitTo`): live and sandbox.
pub const MTURK_HOSTS: [&str; 2] = ["https://www.mturk.com", "https://workersandbox.mturk.com"];

/// The MTurk sites that show a HIT's ExternalQuestion in a frame: the live worker site
/// (`worker.mturk.com`, where live HITs are worked), the classic site (`www.mturk.com`), the
/// sandbox worker site, and the requester sites' previews (live and sandbox).
pub const MTURK_FRAME_ORIGINS: [&str; 5] = [
    "https://worker.mturk.com",
    "https://www.mturk.com",
    "https://workersandbox.mturk.com",
    "https://requester.mturk.com",
    "https://requestersandbox.mturk.com",
];

/// What MTurk sends while a worker only previews a HIT.
pub const MTURK_PREVIEW: &str = "ASSIGNMENT_ID_NOT_AVAILABLE";

/// Whether a request path is one of the crowd worker's pages (the start page, the study page,
/// which is also the end page): the only pages a crowd platform may show in its frame.
pub fn is_worker_page(path: &str) -> bool {
    path.starts_with("/join/") || path.starts_with("/study/")
}

/// The `Content-Security-Policy` of a page. A worker's page may be framed by the study itself
/// (`'self'`), MTurk's sites (an ExternalQuestion HIT shows the study link in a frame there:
/// `MTURK_FRAME_ORIGINS`) and the origins the operator adds (`serve --frame-ancestors`); every other
/// page may be framed by nobody.
pub fn frame_policy(path: &str, extra_ancestors: &[String]) -> String {
    if !is_worker_page(path) {
        return "frame-ancestors 'none'".into();
    }
    let mut policy = String::from("frame-ancestors 'self'");
    for origin in MTURK_FRAME_ORIGINS
        .iter()
        .copied()
        .chain(extra_ancestors.iter().map(String::as_str))
    {
        policy.push(' ');
        policy.push_str(origin);
    }
    policy
}

/// The scripts a page may run: its own files (`/pkg/`), the inline scripts that carry this
/// response's `nonce`, and WebAssembly; no plugins, no `<base>`. An injected script has no
/// nonce and does not run. `None`: the page runs no script at all.
pub fn script_policy(nonce: Option<&str>) -> String {
    match nonce {
        Some(n) => format!(
            "script-src 'self' 'nonce-{n}' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'"
        ),
        None => "script-src 'none'; object-src 'none'; base-uri 'none'".into(),
    }
}

/// Checks an origin given to `serve --frame-ancestors`: `https://host[:port]` (or `http://`
/// for a local test page), no path, no wildcard but a leading `*.` in the host, nothing a
/// policy would read as a separator.
pub fn validate_frame_ancestor(origin: &str) -> Result<(), String> {
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    let ok = rest.is_some_and(|host| {
        let host = host.strip_prefix("*.").unwrap_or(host);
        !host.is_empty()
            && host.bytes().all(|b| {
                b.is_ascii_alphanumeric()
                    || b == b'.'
                    || b == b'-'
                    || b == b':'
                    || b == b'['
                    || b == b']'
            })
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "frame ancestor {origin:?}: an origin such as https://platform.example (scheme and host, optional port, no path)"
        ))
    }
}

/// What the worker's page records besides the answers, said on the consent page and beside
/// every item (`authenticity::ItemSignals`).
pub const RECORDED: &str = "Besides your answers, this page records for each item only counts and times: how often and how long the page was hidden or in the background, how many times you copied or pasted and how many characters (and whether copied text comes from the item), when you first used the keyboard, mouse or screen, and how long you worked on it. It never records what you copy or paste, nor anything of other tabs or apps, and it never stops you from copying, pasting or switching tabs. These records alone never reject your work or reduce your pay.";

/// What the worker's page says about answering items of a task family (also shown in an MTurk
/// preview).
pub fn how_to_answer(family: Family) -> &'static str {
    match family {
        Family::TextToText => {
            "Read the text and write the answer in the box, then press Submit. If you cannot \
             answer, press Skip."
        }
        Family::Classification => {
            "Read the text and choose the answer to the question. Each option has a Help with a \
             definition and an example. Then say how confident you are, and press Submit. If you \
             cannot decide, press Skip."
        }
        _ => {
            "Select the answer in the text with the mouse and add it with the \"Add as answer\" \
             button, the right-click menu item \"Answer\", or the A key. On a phone or tablet: \
             press and hold a word, drag the handles to cover the answer, then tap \"Add as \
             answer\". Add as many answers as the question asks for; if the text has none, press \
             \"No answer in this text\"."
        }
    }
}

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
    fn only_worker_pages_may_be_framed_and_only_by_the_platforms() {
        assert_eq!(frame_policy("/", &[]), "frame-ancestors 'none'");
        assert_eq!(frame_policy("/studies/1", &[]), "frame-ancestors 'none'");
        assert_eq!(frame_policy("/api/login", &[]), "frame-ancestors 'none'");
        assert_eq!(
            frame_policy("/export/scores.csv", &[]),
            "frame-ancestors 'none'"
        );
        let extra = vec!["https://lab.example".to_string()];
        for path in ["/join/3", "/study/3"] {
            assert_eq!(
                frame_policy(path, &extra),
                "frame-ancestors 'self' https://worker.mturk.com https://www.mturk.com \
                 https://workersandbox.mturk.com https://requester.mturk.com \
                 https://requestersandbox.mturk.com https://lab.example"
            );
        }
        assert!(validate_frame_ancestor("https://lab.example").is_ok());
        assert!(validate_frame_ancestor("http://127.0.0.1:8080").is_ok());
        assert!(validate_frame_ancestor("https://*.prolific.com").is_ok());
        for bad in [
            "lab.example",
            "https://",
            "https://a.example/x",
            "https://a b",
            "*",
            "https://a;script-src *",
        ] {
            assert!(validate_frame_ancestor(bad).is_err(), "{bad}");
        }
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
