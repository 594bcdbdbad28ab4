//! The crowd platforms workers arrive from, one type for all that differs between them: the
//! link a study publishes and what an arrival through it says (`arrival`), the sites that
//! frame it, how a finished or declining worker is handed back, what a worker is told to do
//! to give a place back; and running a study there: the draft a study is published as
//! (`draft`), what payments cost (`fees`), the calls and their keys (`ledger`), keeping in
//! step (`sync`), and decisions and pay (`plan`). Pure and IO-free.

pub use arrival::{CrowdInfo, LinkQuery};

use crate::crowd::{is_worker_page, url_encode, HandBack};
use crate::ids::StudyId;
use crate::named::named_enum;
use serde::{Deserialize, Serialize};

mod arrival;
pub mod draft;
pub mod fees;
pub mod ledger;
pub mod plan;
pub mod prolific;
pub mod sync;

named_enum! {
    /// A crowd platform, stored by name with an arrival (`crowd_ids.platform`, the session's
    /// crowd record, `consent_refusals.platform`).
    pub enum Platform {
        Prolific = "prolific",
        Mturk = "mturk",
    }
}

/// Prolific's completion URL; `{code}` stands for the study's completion code.
pub const PROLIFIC_COMPLETE: &str = "https://app.prolific.com/submissions/complete?cc={code}";

/// The MTurk hosts a HIT may send its workers from (`turkSubmitTo`): live and sandbox.
pub const MTURK_HOSTS: [&str; 2] = ["https://www.mturk.com", "https://workersandbox.mturk.com"];

/// The MTurk sites that show a HIT's ExternalQuestion in a frame: the live worker site
/// (`worker.mturk.com`, where live HITs are worked), the classic site (`www.mturk.com`), the
/// sandbox worker site, and the requester sites' previews (live and sandbox).
const MTURK_FRAME_ORIGINS: [&str; 5] = [
    "https://worker.mturk.com",
    "https://www.mturk.com",
    "https://workersandbox.mturk.com",
    "https://requester.mturk.com",
    "https://requestersandbox.mturk.com",
];

/// What MTurk sends while a worker only previews a HIT.
pub const MTURK_PREVIEW: &str = "ASSIGNMENT_ID_NOT_AVAILABLE";

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

/// The `Content-Security-Policy` of a page. A worker's page may be framed by the study itself
/// (`'self'`), the platforms' sites (an MTurk ExternalQuestion HIT shows the study link in a
/// frame: `Platform::frame_origins`) and the origins the operator adds (`serve --frame-ancestors`); every other
/// page may be framed by nobody.
pub fn frame_policy(path: &str, extra_ancestors: &[String]) -> String {
    if !is_worker_page(path) {
        return "frame-ancestors 'none'".into();
    }
    let mut policy = String::from("frame-ancestors 'self'");
    for origin in Platform::ALL
        .iter()
        .flat_map(|p| p.frame_origins().iter().copied())
        .chain(extra_ancestors.iter().map(String::as_str))
    {
        policy.push(' ');
        policy.push_str(origin);
    }
    policy
}

/// What a worker whose platform is not known is asked, so that the platform does not count
/// them: every platform's way (the test below keeps it to `Platform::return_button`).
pub const RETURN_ON_ANY: &str = "Please return the study on your crowd platform (Prolific: \"Return submission\"; MTurk: \"Return HIT\")";

/// What a worker who declined consent is told first, whatever their platform.
const DECLINED: &str = "You did not consent, so nothing was recorded but your refusal.";

impl Platform {
    /// The platform's name as workers and researchers know it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Prolific => "Prolific",
            Platform::Mturk => "MTurk",
        }
    }

    /// The study link as the platform wants it: Prolific's with its placeholders (it fills them
    /// in), MTurk's bare (an ExternalQuestion appends workerId, assignmentId, hitId and
    /// turkSubmitTo itself).
    pub fn worker_link(self, study: StudyId) -> String {
        match self {
            Platform::Prolific => format!("/join/{study}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"),
            Platform::Mturk => format!("/join/{study}"),
        }
    }

    /// Of a place's ids, the one the platform pays the work under: Prolific's session
    /// (submission), MTurk's assignment.
    pub fn paid_id<'a>(
        self,
        session: Option<&'a str>,
        assignment: Option<&'a str>,
    ) -> Option<&'a str> {
        match self {
            Platform::Prolific => session,
            Platform::Mturk => assignment,
        }
    }

    /// Where a researcher finds a publication on the platform's own site: Prolific's study
    /// page, MTurk's worker preview of the HIT's type.
    pub fn remote_link(self, sandbox: bool, id: &str, group: Option<&str>) -> Option<String> {
        match self {
            Platform::Prolific => Some(format!(
                "https://app.prolific.com/researcher/workspaces/studies/{id}"
            )),
            Platform::Mturk => {
                let site = if sandbox {
                    "https://workersandbox.mturk.com"
                } else {
                    "https://worker.mturk.com"
                };
                group.map(|g| format!("{site}/mturk/preview?groupId={g}"))
            }
        }
    }

    /// What a researcher reads beside the study link of the platform.
    pub fn link_words(self) -> &'static str {
        match self {
            Platform::Prolific => "(Prolific fills in the placeholders);",
            Platform::Mturk => "(the bare link, as an ExternalQuestion: MTurk adds workerId, assignmentId, hitId and turkSubmitTo).",
        }
    }

    /// The sites that show a study's pages in a frame (MTurk's ExternalQuestion); Prolific
    /// opens the link in its own tab.
    pub fn frame_origins(self) -> &'static [&'static str] {
        match self {
            Platform::Prolific => &[],
            Platform::Mturk => &MTURK_FRAME_ORIGINS,
        }
    }

    /// How a worker who finished goes back: Prolific gets `completion_url` (empty: Prolific's
    /// own) with the code; MTurk a form to `{turkSubmitTo}/mturk/externalSubmit` for a real
    /// assignment (none for a preview).
    pub fn hand_back(
        self,
        completion_url: &str,
        code: &str,
        assignment_id: Option<&str>,
        turk_submit_to: Option<&str>,
    ) -> Option<HandBack> {
        match self {
            Platform::Prolific => {
                let template = if completion_url.is_empty() {
                    PROLIFIC_COMPLETE
                } else {
                    completion_url
                };
                Some(HandBack::Link {
                    platform: self.name().into(),
                    url: template.replace("{code}", &url_encode(code)),
                })
            }
            Platform::Mturk => {
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
        }
    }

    /// How a worker gives their place back on the platform (the button's name there).
    pub fn return_text(self) -> &'static str {
        match self {
            Platform::Prolific => "return the study on Prolific (\"Return submission\")",
            Platform::Mturk => "return the HIT on MTurk (the \"Return\" button)",
        }
    }

    /// The button a worker gives their place back with on the platform.
    pub fn return_button(self) -> &'static str {
        match self {
            Platform::Prolific => "Return submission",
            Platform::Mturk => "Return HIT",
        }
    }

    /// Where a worker who declined consent is sent back to: Prolific's no-consent URL or code
    /// (`url` empty: Prolific's own completion URL; both empty: nowhere); on MTurk and for
    /// worker accounts nowhere (the page tells an MTurk worker to return the HIT).
    pub fn declined_hand_back(
        platform: Option<Platform>,
        url: &str,
        code: &str,
    ) -> Option<HandBack> {
        match platform {
            Some(p @ Platform::Prolific) if !(code.is_empty() && url.is_empty()) => {
                p.hand_back(url, code, None, None)
            }
            Some(Platform::Prolific | Platform::Mturk) | None => None,
        }
    }

    /// What a worker who declined consent is told; `back`: a link back is shown below it.
    pub fn declined_message(platform: Option<Platform>, back: bool) -> String {
        match platform {
            Some(Platform::Prolific) if back => format!(
                "{DECLINED} Please go back to Prolific with the link below so that your place is freed."
            ),
            Some(Platform::Prolific) => format!(
                "{DECLINED} Please {} so that your place is freed.",
                Platform::Prolific.return_text()
            ),
            Some(Platform::Mturk) => format!(
                "{DECLINED} Please {} so that it is offered to someone else.",
                Platform::Mturk.return_text()
            ),
            None => format!("{DECLINED} You may close this page."),
        }
    }
}

/// What became of an assignment (MTurk) or session (Prolific) id that a worker's study link
/// presented for their place: one place per worker and study, whatever ids they come with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The one the place's end page hands back: paid with this work once it is finished.
    InHand,
    /// Presented before the work was finished and replaced by a later one: never handed back.
    Replaced,
    /// Presented after the place had ended (finished, or released): the worker was told to
    /// return it, and nothing was handed back for it.
    ToldToReturn,
    /// A visit after the place had ended with no new id to return: a link without the
    /// platform's id (`id` empty), or the id in hand with another study (`study`). The worker
    /// saw their place as it was, and nothing changed for the work.
    Visited,
}

impl Outcome {
    /// The words of the pay sheet.
    pub fn describe(self) -> &'static str {
        match self {
            Outcome::InHand => "handed back with this work",
            Outcome::Replaced => {
                "replaced by a later one before the work was finished, never handed back"
            }
            Outcome::ToldToReturn => {
                "told to return it (presented after the work had ended), nothing handed back"
            }
            Outcome::Visited => "came back after the work had ended, nothing changed",
        }
    }
}

/// One id a worker's link presented, when (unix ms; unknown for places kept before ids were
/// dated), and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presented {
    /// Empty for a visit whose link had no id (`Outcome::Visited`).
    pub id: String,
    /// The study (Prolific's `STUDY_ID`, MTurk's `hitId`) the link named with the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<i64>,
    pub outcome: Outcome,
}

/// The most ids kept per place: a link opened again and again with new ids records no more.
pub const PRESENTED_MAX: usize = 20;

/// What a worker who already took part is told when their link presents a new id.
pub fn took_part_message(platform: Option<Platform>, finished: bool, id: &str) -> String {
    let why = if finished {
        "You have already taken part in this study and finished it: each person takes part once."
    } else {
        "You have already taken part in this study, and your place was released after a long pause: it cannot be taken again."
    };
    match platform {
        Some(p) => format!(
            "{why} Please {} for this one ({id}): nothing will be submitted for it, and the researcher sees that you were told to return it.",
            p.return_text()
        ),
        None => format!("{why} Nothing was recorded for this visit."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prolific_gets_its_link_with_the_code() {
        assert_eq!(
            Platform::Prolific.hand_back("", "C0DE-1", None, None),
            Some(HandBack::Link {
                platform: "Prolific".into(),
                url: "https://app.prolific.com/submissions/complete?cc=C0DE-1".into()
            })
        );
        let own =
            Platform::Prolific.hand_back("https://example.org/done?c={code}", "a b&c", None, None);
        assert_eq!(
            own,
            Some(HandBack::Link {
                platform: "Prolific".into(),
                url: "https://example.org/done?c=a%20b%26c".into()
            })
        );
    }

    #[test]
    fn mturk_posts_to_its_own_hosts_only() {
        let mturk = |host| Platform::Mturk.hand_back("", "X", Some("3AB"), Some(host));
        assert_eq!(
            mturk("https://workersandbox.mturk.com/"),
            Some(HandBack::MturkSubmit {
                action: "https://workersandbox.mturk.com/mturk/externalSubmit".into(),
                assignment_id: "3AB".into(),
                code: "X".into()
            })
        );
        // Anything else falls back to the live host; a preview has nothing to submit.
        assert!(
            matches!(mturk("https://evil.example"), Some(HandBack::MturkSubmit { action, .. }) if action == "https://www.mturk.com/mturk/externalSubmit")
        );
        assert_eq!(
            Platform::Mturk.hand_back("", "X", Some(MTURK_PREVIEW), None),
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
    }

    #[test]
    fn links_names_and_texts_per_platform() {
        assert_eq!(
            Platform::Prolific.worker_link(StudyId(7)),
            "/join/7?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        );
        assert_eq!(Platform::Mturk.worker_link(StudyId(7)), "/join/7");
        assert_eq!(
            Platform::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
            ["Prolific", "MTurk"]
        );
        assert!(Platform::Prolific.frame_origins().is_empty());
        assert!(Platform::Mturk
            .frame_origins()
            .contains(&"https://worker.mturk.com"));
        let declined = Platform::declined_message(Some(Platform::Mturk), false);
        assert!(declined.contains("the \"Return\" button"), "{declined}");
        assert!(Platform::declined_message(None, false).ends_with("You may close this page."));
        let every: Vec<String> = Platform::ALL
            .iter()
            .map(|p| format!("{}: \"{}\"", p.name(), p.return_button()))
            .collect();
        assert!(RETURN_ON_ANY.ends_with(&format!("({})", every.join("; "))));
    }
}
