//! What a worker's arrival says of them: the study link's crowd parameters as each platform
//! sends them (Prolific's `PROLIFIC_PID`, `STUDY_ID`, `SESSION_ID`; MTurk's `workerId`,
//! `assignmentId`, `hitId`, `turkSubmitTo`, or its preview), read into the record kept with
//! the place, and every id a worker's links presented for it.

use super::{validate_turk_submit_to, Outcome, Platform, Presented, MTURK_PREVIEW, PRESENTED_MAX};
use crate::people::validate_crowd_id;
use serde::{Deserialize, Serialize};

/// The crowd parameters of a study link: Prolific's, or MTurk's (absent or empty: none).
#[derive(Default, Deserialize)]
pub struct LinkQuery {
    #[serde(rename = "PROLIFIC_PID")]
    prolific_pid: Option<String>,
    #[serde(rename = "STUDY_ID")]
    study_id: Option<String>,
    #[serde(rename = "SESSION_ID")]
    session_id: Option<String>,
    #[serde(rename = "workerId")]
    worker_id: Option<String>,
    #[serde(rename = "assignmentId")]
    assignment_id: Option<String>,
    #[serde(rename = "hitId")]
    hit_id: Option<String>,
    #[serde(rename = "turkSubmitTo")]
    turk_submit_to: Option<String>,
}

/// A crowd id of the link, checked (see `validate_crowd_id`): ids end up in exports, where
/// nothing but an id belongs.
fn crowd_id(name: &str, v: &Option<String>) -> Result<Option<String>, String> {
    match v.as_deref().filter(|v| !v.is_empty()) {
        Some(v) => validate_crowd_id(name, v).map(|()| Some(v.to_string())),
        None => Ok(None),
    }
}

impl LinkQuery {
    /// The crowd worker the link names. Every id given must be a valid crowd id.
    pub fn crowd_info(&self) -> Result<Option<CrowdInfo>, String> {
        if let Some(pid) = crowd_id("PROLIFIC_PID", &self.prolific_pid)? {
            return Ok(Some(CrowdInfo {
                platform: Some(Platform::Prolific),
                worker: Some(pid),
                study: crowd_id("STUDY_ID", &self.study_id)?,
                session: crowd_id("SESSION_ID", &self.session_id)?,
                assignment: None,
                submit_to: None,
                earlier_assignments: Vec::new(),
                presented: Vec::new(),
            }));
        }
        // MTurk previews a HIT with assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE and no workerId.
        let Some(w) = crowd_id("workerId", &self.worker_id)? else {
            return Ok(None);
        };
        let submit_to = match self.turk_submit_to.as_deref().filter(|v| !v.is_empty()) {
            Some(host) => Some(
                validate_turk_submit_to(host).map(|()| host.trim_end_matches('/').to_string())?,
            ),
            None => None,
        };
        Ok(Some(CrowdInfo {
            platform: Some(Platform::Mturk),
            worker: Some(w),
            study: crowd_id("hitId", &self.hit_id)?,
            session: None,
            assignment: crowd_id("assignmentId", &self.assignment_id)?,
            submit_to,
            earlier_assignments: Vec::new(),
            presented: Vec::new(),
        }))
    }

    /// Whether MTurk shows the HIT as a preview: it sends
    /// `assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE` until the worker accepts the HIT. A preview
    /// shows the task and takes nothing.
    pub fn is_preview(&self) -> bool {
        self.assignment_id.as_deref() == Some(MTURK_PREVIEW)
    }
}

/// What a crowd link said about the arrival, kept with the assignment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CrowdInfo {
    pub platform: Option<Platform>,
    pub worker: Option<String>,
    pub study: Option<String>,
    pub session: Option<String>,
    pub assignment: Option<String>,
    /// MTurk's `turkSubmitTo` (one of `crowd::MTURK_HOSTS`), where the end page posts the HIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_to: Option<String>,
    /// Places kept before ids were dated: the MTurk assignments the worker came with before
    /// the one in hand, oldest first (read, never written: `presented` says it now).
    #[serde(default, skip_serializing)]
    pub earlier_assignments: Vec<String>,
    /// Every assignment (MTurk) or session (Prolific) id the worker's links presented for this
    /// place, oldest first, with what became of it (at most `PRESENTED_MAX`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub presented: Vec<Presented>,
}

impl CrowdInfo {
    /// The id a link presents for the place: MTurk's assignment, Prolific's session.
    pub fn presented_id(&self) -> Option<&str> {
        self.platform?
            .paid_id(self.session.as_deref(), self.assignment.as_deref())
    }

    /// Every id presented for the place with what became of it; for places kept before ids were
    /// dated, the ones the record holds (the earlier assignments replaced, the last in hand).
    pub fn presentations(&self) -> Vec<Presented> {
        if !self.presented.is_empty() {
            return self.presented.clone();
        }
        let undated = |id: &String, outcome| Presented {
            id: id.clone(),
            study: None,
            at: None,
            outcome,
        };
        self.earlier_assignments
            .iter()
            .map(|id| undated(id, Outcome::Replaced))
            .chain(
                self.presented_id()
                    .map(|id| undated(&id.to_string(), Outcome::InHand)),
            )
            .collect()
    }

    /// Records `id` (empty for a link without one), presented at `at` with the link's study,
    /// as `outcome`; the one in hand before it is replaced when the new one is in hand.
    /// Returns false when the record is full.
    pub fn present(&mut self, id: &str, study: Option<&str>, at: i64, outcome: Outcome) -> bool {
        let mut all = self.presentations();
        // An id presented again is listed once, as it stands now; a visit, once per id and
        // study, beside the id's own record.
        let replaces = |p: &Presented| match outcome {
            Outcome::Visited => {
                p.outcome == Outcome::Visited && p.id == id && p.study.as_deref() == study
            }
            Outcome::InHand | Outcome::Replaced | Outcome::ToldToReturn => {
                p.outcome != Outcome::Visited && p.id == id
            }
        };
        all.retain(|p| !replaces(p));
        if all.len() >= PRESENTED_MAX {
            return false;
        }
        if outcome == Outcome::InHand {
            for p in all.iter_mut().filter(|p| p.outcome == Outcome::InHand) {
                p.outcome = Outcome::Replaced;
            }
        }
        all.push(Presented {
            id: id.to_string(),
            study: study.map(str::to_string),
            at: Some(at),
            outcome,
        });
        self.presented = all;
        self.earlier_assignments.clear();
        true
    }

    /// The platform and worker id of a crowd arrival (every crowd link sets both).
    pub fn identity(&self) -> Result<(Platform, &str), String> {
        match (self.platform, self.worker.as_deref()) {
            (Some(p), Some(w)) => Ok((p, w)),
            _ => Err("a crowd arrival names its platform and worker id".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visit_is_listed_beside_the_id_in_hand_once_per_link() {
        let mut c = CrowdInfo {
            platform: Some(Platform::Prolific),
            worker: Some("w".into()),
            ..Default::default()
        };
        assert!(c.present("se", Some("s1"), 1, Outcome::InHand));
        assert!(c.present("se", Some("s2"), 2, Outcome::Visited));
        assert!(c.present("", None, 3, Outcome::Visited));
        assert!(c.present("se", Some("s2"), 4, Outcome::Visited));
        let all = c.presentations();
        let listed: Vec<_> = all
            .iter()
            .map(|p| (p.id.as_str(), p.study.as_deref(), p.outcome, p.at))
            .collect();
        assert_eq!(
            listed,
            [
                ("se", Some("s1"), Outcome::InHand, Some(1)),
                ("", None, Outcome::Visited, Some(3)),
                ("se", Some("s2"), Outcome::Visited, Some(4)),
            ]
        );
        // A new id in hand replaces the one before it; the visits stay as they were.
        assert!(c.present("se2", Some("s1"), 5, Outcome::InHand));
        let outcomes: Vec<_> = c.presentations().iter().map(|p| p.outcome).collect();
        assert_eq!(
            outcomes,
            [
                Outcome::Replaced,
                Outcome::Visited,
                Outcome::Visited,
                Outcome::InHand
            ]
        );
    }
}
