//! What the worker's pages share across crowd platforms, pure and IO-free: which pages may be
//! framed and by whom, the scripts they may run, the hand-back's shape, what is recorded.

use crate::ids::StudyId;
use crate::task::Family;
use serde::{Deserialize, Serialize};

/// Whether a request path is one of the crowd worker's pages (the start page, the study page,
/// which is also the end page): the only pages a crowd platform may show in its frame.
pub fn is_worker_page(path: &str) -> bool {
    path.starts_with("/join/") || path.starts_with("/study/")
}

/// The study of a study page's path (`/study/{id}`, a trailing slash allowed); `None` for any
/// other path or an id that is not a number.
pub fn study_page_id(path: &str) -> Option<StudyId> {
    path.strip_prefix("/study/")
        .and_then(|id| id.trim_end_matches('/').parse::<i64>().ok())
        .map(StudyId)
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
pub const RECORDED: &str = "Besides your answers and the times our server shows each item and receives each answer, this page records for each item only counts and times: how often and how long the page was hidden, in the background or without the focus (another window in front of it or beside it), how many times you copied or pasted and how many characters (and whether copied text comes from the item), how long you were away after a copy, how soon you answered after coming back, when you first used the keyboard, mouse or screen, and how long you worked on it. It never records what you copy or paste, nor anything of other tabs, windows or apps, and it never stops you from copying, pasting or switching. These records alone never reject your work or reduce your pay.";

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
        Family::SequenceLabelling | Family::ReadingComprehension => {
            "Select the answer in the text with the mouse and add it with the \"Add as answer\" \
             button or the A key. On a phone or tablet: \
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
/// value (the completion code here, upload parameters on the machines page).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn study_pages_name_their_study() {
        assert_eq!(study_page_id("/study/12"), Some(StudyId(12)));
        assert_eq!(study_page_id("/study/12/"), Some(StudyId(12)));
        assert_eq!(study_page_id("/study/x"), None);
        assert_eq!(study_page_id("/study/"), None);
        assert_eq!(study_page_id("/join/12"), None);
    }

    #[test]
    fn frame_ancestors_given_by_the_operator_are_origins() {
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
}
