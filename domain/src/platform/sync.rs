//! Keeping a publication in step: the submissions a platform reports matched to the study's
//! places by worker, the places to release (their worker returned or timed out on the
//! platform), the places to ask the platform for again (the study reclaimed a place whose
//! submission still holds it), and what does not match, shown to the researcher. Pure.

use super::ledger::RemoteStatus;
use crate::ids::AssignmentId;
use crate::place::PlaceStatus;
use serde::{Deserialize, Serialize};

/// A place of the study as the pay sheet has it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlaceFacts {
    pub assignment: AssignmentId,
    /// The platform's worker id.
    pub worker: String,
    /// The submission or assignment id the worker's link presented last (the one in hand).
    pub presented: Option<String>,
    pub status: PlaceStatus,
    /// Paid time as the server measured it, and what it comes to at the hourly rate.
    pub seconds: f64,
    pub pay_cents: i64,
    /// More failed attention checks than the study allows (the report's exclusion).
    pub failed_attention: bool,
    /// Attention checks answered and passed.
    pub attention: (usize, usize),
}

/// A submission (Prolific) or assignment (MTurk) as last read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteFacts {
    pub remote_id: String,
    pub worker: String,
    pub status: RemoteStatus,
    /// The completion code entered (Prolific), where the platform says it.
    pub code: Option<String>,
}

/// What a line of the publication's table says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Note {
    /// A place and its submission.
    Matched,
    /// A submission with no place in the study: the worker never reached the study page, or
    /// came with another id. Nothing is decided or paid for it here.
    NoPlace,
    /// A place with no submission on the platform (MTurk lists only handed-in assignments; a
    /// worker who finished but never handed in is paid nothing by the platform).
    NoSubmission,
    /// An earlier submission of a worker whose later one is matched to their place.
    Earlier,
}

/// One line: a submission, a place, or both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub remote: Option<RemoteFacts>,
    pub place: Option<PlaceFacts>,
    pub note: Note,
}

/// The publication in step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reconciled {
    pub lines: Vec<Line>,
    /// Active places whose submission was returned or timed out on the platform: released, so
    /// that the scenario takes a new worker.
    pub release: Vec<AssignmentId>,
    /// Places to ask the platform for beyond those asked so far.
    pub more_places: u32,
}

/// The submission of `worker` that stands for their place: the one their link presented, else
/// the last handed in, else the last read.
fn pick<'a>(remotes: &[&'a RemoteFacts], presented: Option<&str>) -> Option<&'a RemoteFacts> {
    remotes
        .iter()
        .find(|r| Some(r.remote_id.as_str()) == presented)
        .or_else(|| remotes.iter().rev().find(|r| r.status.handed_in()))
        .or_else(|| remotes.last())
        .copied()
}

/// Matches `remotes` to `places` by worker; `planned`: the places the plan needs
/// (annotators x scenarios); `asked`: the places the platform was asked for so far.
pub fn reconcile(
    places: &[PlaceFacts],
    remotes: &[RemoteFacts],
    planned: u32,
    asked: u32,
) -> Reconciled {
    let mut out = Reconciled::default();
    let mut used = vec![false; remotes.len()];
    for place in places {
        let mine: Vec<&RemoteFacts> = remotes
            .iter()
            .filter(|r| r.worker == place.worker)
            .collect();
        let picked = pick(&mine, place.presented.as_deref());
        for (i, r) in remotes.iter().enumerate() {
            if r.worker == place.worker {
                used[i] = true;
                if Some(r) != picked {
                    out.lines.push(Line {
                        remote: Some(r.clone()),
                        place: None,
                        note: Note::Earlier,
                    });
                }
            }
        }
        if let Some(r) = picked {
            let gave_back = matches!(r.status, RemoteStatus::Returned | RemoteStatus::TimedOut);
            if place.status == PlaceStatus::Active && gave_back {
                out.release.push(place.assignment);
            }
        }
        out.lines.push(Line {
            remote: picked.cloned(),
            place: Some(place.clone()),
            note: if picked.is_some() {
                Note::Matched
            } else {
                Note::NoSubmission
            },
        });
    }
    for (r, _) in remotes.iter().zip(&used).filter(|(_, used)| !**used) {
        out.lines.push(Line {
            remote: Some(r.clone()),
            place: None,
            note: Note::NoPlace,
        });
    }
    let released = |p: &&PlaceFacts| out.release.contains(&p.assignment);
    let finished = places
        .iter()
        .filter(|p| p.status == PlaceStatus::Finished)
        .count() as u32;
    let active = places
        .iter()
        .filter(|p| p.status == PlaceStatus::Active)
        .filter(|p| !released(p))
        .count() as u32;
    let holding = remotes.iter().filter(|r| r.status.holds_place()).count() as u32;
    let needed = planned.saturating_sub(finished + active);
    let open = asked.saturating_sub(holding);
    out.more_places = needed.saturating_sub(open);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(id: i64, worker: &str, status: PlaceStatus) -> PlaceFacts {
        PlaceFacts {
            assignment: AssignmentId(id),
            worker: worker.into(),
            presented: Some(format!("s-{worker}")),
            status,
            seconds: 600.0,
            pay_cents: 200,
            failed_attention: false,
            attention: (0, 0),
        }
    }

    fn remote(worker: &str, status: RemoteStatus) -> RemoteFacts {
        RemoteFacts {
            remote_id: format!("s-{worker}"),
            worker: worker.into(),
            status,
            code: None,
        }
    }

    use PlaceStatus::{Abandoned, Finished};
    use RemoteStatus::{Approved, Returned, Submitted};
    const HERE: PlaceStatus = PlaceStatus::Active;
    const WORKING: RemoteStatus = RemoteStatus::Active;

    /// Places numbered from `first`, one per (worker, status).
    fn places(first: i64, of: &[(&str, PlaceStatus)]) -> Vec<PlaceFacts> {
        (first..)
            .zip(of)
            .map(|(id, &(w, s))| place(id, w, s))
            .collect()
    }

    fn remotes(of: &[(&str, RemoteStatus)]) -> Vec<RemoteFacts> {
        of.iter().map(|&(w, s)| remote(w, s)).collect()
    }

    #[test]
    fn a_returned_submission_frees_its_place_and_the_platform_offers_it_again() {
        let places = places(1, &[("a", Finished), ("b", HERE), ("c", HERE)]);
        let remotes = remotes(&[("a", Submitted), ("b", Returned), ("c", WORKING)]);
        let r = reconcile(&places, &remotes, 3, 3);
        assert_eq!(r.release, [AssignmentId(2)]);
        // Two holding of three asked: the platform offers the returned place itself.
        assert_eq!(r.more_places, 0);
        assert!(r.lines.iter().all(|l| l.note == Note::Matched));
    }

    #[test]
    fn a_place_the_study_reclaimed_while_its_submission_holds_it_is_asked_for_again() {
        // b's place was released for inactivity; b's submission still holds the platform's place.
        let places = places(1, &[("a", Finished), ("b", Abandoned), ("c", HERE)]);
        let remotes = remotes(&[("a", Approved), ("b", WORKING), ("c", WORKING)]);
        assert_eq!(reconcile(&places, &remotes, 3, 3).more_places, 1);
        // Once asked (4 places), nothing more.
        assert_eq!(reconcile(&places, &remotes, 3, 4).more_places, 0);
        // Every planned place finished: nothing more, whatever else holds places.
        let mut done = places;
        done.iter_mut().for_each(|p| p.status = Finished);
        assert_eq!(reconcile(&done, &remotes, 3, 3).more_places, 0);
    }

    #[test]
    fn submissions_without_places_and_places_without_submissions_are_shown() {
        let places = [place(1, "a", Finished), place(2, "b", Finished)];
        let mut again = remote("a", Returned);
        again.remote_id = "s-a-0".into();
        let remotes = [again, remote("a", Submitted), remote("z", Submitted)];
        let r = reconcile(&places, &remotes, 2, 2);
        let notes: Vec<(Option<&str>, Note)> = r
            .lines
            .iter()
            .map(|l| (l.remote.as_ref().map(|x| x.remote_id.as_str()), l.note))
            .collect();
        assert_eq!(
            notes,
            [
                (Some("s-a-0"), Note::Earlier),
                (Some("s-a"), Note::Matched),
                (None, Note::NoSubmission),
                (Some("s-z"), Note::NoPlace),
            ]
        );
    }
}
