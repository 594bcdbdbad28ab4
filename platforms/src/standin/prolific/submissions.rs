//! The stand-in's submissions: listed, decided (approved, or rejected with the message and
//! category the reference asks for), and paid bonuses in two steps, the second paying again on
//! every call as the reference warns.

use super::api::{answer, enter, read, refuse, sub_json, Reply, HEX, S};
use super::Bulk;
use crate::prolific::wire::*;
use crate::standin::{fresh_id, Paid};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize)]
pub(super) struct Page {
    limit: Option<usize>,
    offset: Option<usize>,
}

pub(super) async fn submissions(
    State(w): S,
    h: HeaderMap,
    Path(id): Path<String>,
    Query(p): Query<Page>,
) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "submissions")?;
    let all: Vec<Value> = w
        .submissions
        .iter()
        .filter(|s| s.study == id)
        .map(sub_json)
        .collect();
    let count = all.len();
    let page: Vec<Value> = all
        .into_iter()
        .skip(p.offset.unwrap_or(0))
        .take(p.limit.unwrap_or(20))
        .collect();
    answer(
        f,
        StatusCode::OK,
        json!({ "results": page, "meta": { "count": count } }),
    )
}

pub(super) async fn submission(State(w): S, h: HeaderMap, Path(id): Path<String>) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "submission")?;
    match w.submissions.iter().find(|s| s.id == id) {
        Some(s) => answer(f, StatusCode::OK, sub_json(s)),
        None => refuse(StatusCode::NOT_FOUND, "No such submission."),
    }
}

const CATEGORIES: [&str; 12] = [
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
];

pub(super) async fn decide(
    State(w): S,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply {
    let mut guard = w.lock();
    let w = &mut *guard;
    let op = if body.windows(6).any(|b| b == b"REJECT") {
        "reject"
    } else {
        "approve"
    };
    let f = enter(w, &h, op)?;
    let t: SubmissionTransition = read(&body)?;
    let reward = |study: &str| {
        w.studies
            .iter()
            .find(|s| s.id == study)
            .map_or(0, |s| s.made.reward)
    };
    let Some(s) = w.submissions.iter_mut().find(|s| s.id == id) else {
        return refuse(StatusCode::NOT_FOUND, "No such submission.");
    };
    let next = match (s.status, t.action.as_str()) {
        // The reference: "this endpoint is idempotent".
        (SubmissionStatus::Approved, "APPROVE") | (SubmissionStatus::Rejected, "REJECT") => {
            s.status
        }
        (SubmissionStatus::AwaitingReview, "APPROVE") => SubmissionStatus::Approved,
        (SubmissionStatus::AwaitingReview, "REJECT") => {
            if t.message.as_deref().map_or(0, |m| m.chars().count()) < 100 {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    json!({ "message": ["must be at least 100 chars long"] }),
                );
            }
            if !t
                .rejection_category
                .as_deref()
                .is_some_and(|c| CATEGORIES.contains(&c))
            {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    json!({ "rejection_category": ["is not a valid choice"] }),
                );
            }
            SubmissionStatus::Rejected
        }
        (from, action) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("A submission cannot {action} from {from:?}."),
            )
        }
    };
    let paid = next == SubmissionStatus::Approved && s.status != SubmissionStatus::Approved;
    s.status = next;
    let out = json!({ "id": s.id, "status": s.status, "participant": s.participant, "study_id": s.study });
    if paid {
        let (worker, submission, cents) = (
            s.participant.clone(),
            s.id.clone(),
            reward(&s.study.clone()),
        );
        w.ledger.paid.push(Paid {
            kind: "reward".into(),
            worker,
            submission,
            cents,
        });
    }
    answer(f, StatusCode::OK, out)
}

/// Major units ("4.25") as minor units.
fn minor(amount: &str) -> Option<i64> {
    let (whole, frac) = amount.split_once('.').unwrap_or((amount, ""));
    if frac.len() > 2 || whole.is_empty() {
        return None;
    }
    Some(whole.parse::<i64>().ok()? * 100 + format!("{frac:0<2}").parse::<i64>().ok()?)
}

pub(super) async fn make_bonus(State(w): S, h: HeaderMap, body: Bytes) -> Reply {
    let mut w = w.lock();
    let f = enter(&mut w, &h, "bonus")?;
    let b: BonusRequest = read(&body)?;
    let mut lines = Vec::new();
    for line in b.csv_bonuses.lines().filter(|l| !l.trim().is_empty()) {
        let Some((who, amount)) = line.split_once(',') else {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("csv_bonuses: {line:?} is not id,amount"),
            );
        };
        let took_part = w
            .submissions
            .iter()
            .any(|s| s.study == b.study_id && (s.id == who || s.participant == who));
        match (took_part, minor(amount.trim())) {
            (true, Some(cents)) if cents > 0 => lines.push((who.to_string(), cents)),
            (false, _) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    format!("csv_bonuses: {who} did not take part in the study"),
                )
            }
            (true, _) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    format!("csv_bonuses: {amount:?} is not an amount"),
                )
            }
        }
    }
    let id = fresh_id(HEX, 24);
    let total: i64 = lines.iter().map(|(_, c)| c).sum();
    w.bulks.push(Bulk {
        id: id.clone(),
        study: b.study_id.clone(),
        lines,
    });
    answer(
        f,
        StatusCode::CREATED,
        json!({ "id": id, "study": b.study_id, "amount": total as f64, "total_amount": total as f64 }),
    )
}

/// Pays a bulk bonus: again on every call, as the reference warns.
pub(super) async fn pay_bonus(State(w): S, h: HeaderMap, Path(id): Path<String>) -> Reply {
    let mut guard = w.lock();
    let w = &mut *guard;
    let f = enter(w, &h, "pay")?;
    let Some(Bulk { study, lines, .. }) = w.bulks.iter().find(|b| b.id == id).cloned() else {
        return refuse(StatusCode::NOT_FOUND, "No such bulk bonus payment.");
    };
    for (who, cents) in lines {
        if let Some(s) = w
            .submissions
            .iter_mut()
            .find(|s| s.study == study && (s.id == who || s.participant == who))
        {
            s.bonuses.push(cents);
            let p = Paid {
                kind: "bonus".into(),
                worker: s.participant.clone(),
                submission: s.id.clone(),
                cents,
            };
            w.ledger.paid.push(p);
        }
    }
    answer(
        f,
        StatusCode::ACCEPTED,
        json!("Bonus payment is being processed"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_in_major_units() {
        assert_eq!(minor("4.25"), Some(425));
        assert_eq!(minor("30"), Some(3000));
        assert_eq!(minor("1.5"), Some(150));
        assert_eq!(minor("1.505"), None);
    }
}
