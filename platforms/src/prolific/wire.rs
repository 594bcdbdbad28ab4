//! Prolific's requests and answers as its API reference documents them (the OpenAPI document
//! published at docs.prolific.com/openapi.yaml, `info.version` 1.0.0, as archived 2026-08-01
//! and compared with the live one 2026-10-04; field names as Prolific's own CLI reads them
//! where the document says less). Only the fields this platform sends or reads; the stand-in
//! (`standin::prolific`) reads requests through the same types with unknown fields refused.

use domain::platform::draft::Device;
use domain::platform::ledger::RemoteStatus;
use serde::{Deserialize, Serialize};

/// `POST /api/v1/studies/`: a draft study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateStudy {
    pub name: String,
    pub internal_name: String,
    pub description: String,
    pub external_study_url: String,
    /// Always `url_parameters`: the link carries the ids.
    pub prolific_id_option: String,
    pub completion_codes: Vec<CompletionCode>,
    pub total_available_places: u32,
    /// Minutes.
    pub estimated_completion_time: u32,
    pub maximum_allowed_time: u32,
    /// In the account currency's minor unit (pence, cents).
    pub reward: i64,
    pub device_compatibility: Vec<Device>,
    pub peripheral_requirements: Vec<String>,
    pub filters: Vec<Filter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    pub submissions_config: SubmissionsConfig,
    /// This platform's idempotency key of the call that made it (read back after a lost answer).
    pub metadata: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionCode {
    pub code: String,
    pub code_type: String,
    pub actor: String,
    pub actions: Vec<CodeAction>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeAction {
    /// `MANUALLY_REVIEW`: the researcher approves (this platform, from stored decisions).
    pub action: String,
}

/// An audience filter: `participant_group_blocklist` with the task's group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    pub filter_id: String,
    pub selected_values: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmissionsConfig {
    pub max_submissions_per_participant: i64,
}

/// A study as Prolific answers it (create, get, transition, patch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Study {
    pub id: String,
    pub status: String,
    #[serde(default)]
    pub internal_name: Option<String>,
    #[serde(default)]
    pub total_available_places: Option<f64>,
    #[serde(default)]
    pub metadata: Option<String>,
}

/// `GET /api/v1/studies/`: the account's studies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Studies {
    pub results: Vec<Study>,
}

/// `POST /api/v1/studies/{id}/transition/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyTransition {
    pub action: String,
}

/// `PATCH /api/v1/studies/{id}/`: only more places, once published.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MorePlaces {
    pub total_available_places: u32,
}

/// A submission's status as Prolific writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubmissionStatus {
    #[serde(rename = "RESERVED")]
    Reserved,
    #[serde(rename = "ACTIVE")]
    Active,
    #[serde(rename = "TIMED-OUT")]
    TimedOut,
    #[serde(rename = "AWAITING REVIEW")]
    AwaitingReview,
    #[serde(rename = "APPROVED")]
    Approved,
    #[serde(rename = "PARTIALLY APPROVED")]
    PartiallyApproved,
    #[serde(rename = "RETURNED")]
    Returned,
    #[serde(rename = "REJECTED")]
    Rejected,
    #[serde(rename = "SCREENED OUT")]
    ScreenedOut,
    #[serde(rename = "UNKNOWN")]
    Unknown,
}

impl SubmissionStatus {
    /// The status as the ledger keeps it.
    pub fn remote(self) -> RemoteStatus {
        match self {
            SubmissionStatus::Reserved | SubmissionStatus::Active | SubmissionStatus::Unknown => {
                RemoteStatus::Active
            }
            SubmissionStatus::AwaitingReview => RemoteStatus::Submitted,
            SubmissionStatus::Approved | SubmissionStatus::PartiallyApproved => {
                RemoteStatus::Approved
            }
            SubmissionStatus::Rejected => RemoteStatus::Rejected,
            SubmissionStatus::Returned | SubmissionStatus::ScreenedOut => RemoteStatus::Returned,
            SubmissionStatus::TimedOut => RemoteStatus::TimedOut,
        }
    }
}

/// A submission in a study's list (`GET /api/v1/studies/{id}/submissions/`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubmissionShort {
    pub id: String,
    pub participant_id: String,
    pub status: SubmissionStatus,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub completed_at: Option<String>,
    #[serde(default)]
    pub study_code: Option<String>,
}

/// A page of a study's submissions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submissions {
    pub results: Vec<SubmissionShort>,
    #[serde(default)]
    pub meta: Option<Meta>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub count: u64,
}

/// One submission (`GET /api/v1/submissions/{id}/`): its status and the bonuses paid on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub id: String,
    pub status: SubmissionStatus,
    #[serde(default)]
    pub participant: Option<String>,
    /// In minor units.
    #[serde(default)]
    pub bonus_payments: Vec<f64>,
}

/// `POST /api/v1/submissions/{id}/transition/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmissionTransition {
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection_category: Option<String>,
}

/// `POST /api/v1/submissions/bonus-payments/`: amounts in major units (`1.50` for 1.50).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BonusRequest {
    pub study_id: String,
    pub csv_bonuses: String,
}

/// A bulk bonus, made and not yet paid (amounts in minor units).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BulkBonus {
    pub id: String,
    pub total_amount: f64,
    #[serde(default)]
    pub amount: Option<f64>,
}

/// `POST /api/v1/participant-groups/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateGroup {
    pub name: String,
    pub workspace_id: String,
    pub description: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub id: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Groups {
    pub results: Vec<Group>,
}

/// `POST /api/v1/participant-groups/{id}/participants/`: members already in are left as they are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddParticipants {
    pub participant_ids: Vec<String>,
}

/// `GET /api/v1/workspaces/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workspaces {
    pub results: Vec<Workspace>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workspace {
    pub id: String,
    #[serde(default)]
    pub title: Option<String>,
}

/// `GET /api/v1/users/me/`: the cheap authenticated call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Me {
    pub id: String,
    #[serde(default)]
    pub currency_code: Option<String>,
    #[serde(default)]
    pub available_balance: Option<i64>,
}

/// `POST /api/v1/study-cost-calculator/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostRequest {
    pub reward: i64,
    pub total_available_places: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostAnswer {
    /// Minor units, Prolific's fees and VAT included.
    pub total_cost: f64,
}

/// Prolific's error body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub status: u16,
    pub error_code: i64,
    pub title: String,
    /// A text, a list of texts, or texts by field.
    pub detail: serde_json::Value,
}

/// Unix ms of an RFC 3339 time (`2026-12-07T10:20:30.123Z`, `...+01:00`); `None` for anything
/// else. By hand: the one format Prolific writes, not worth a date crate.
pub fn unix_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 19 || b.get(4) != Some(&b'-') || b.get(10).map(|c| *c | 0x20) != Some(b't') {
        return None;
    }
    let (y, m, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hh, mm, ss) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut i = 19;
    let mut ms = 0;
    if b.get(i) == Some(&b'.') {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let frac = &s[i + 1..i + 1 + digits];
        ms = format!("{:0<3}", &frac[..frac.len().min(3)]).parse().ok()?;
        i += 1 + digits;
    }
    let offset = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() => {
            let o = num(i + 1, 2)? * 60 + num(i + 4, 2)?;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    // Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + hh * 3600 + mm * 60 + ss - offset * 60) * 1000) + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_unix_ms() {
        assert_eq!(unix_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_ms("2026-12-07T10:20:30.5Z"), Some(1_796_638_830_500));
        assert_eq!(
            unix_ms("2026-12-07T11:20:30.500+01:00"),
            Some(1_796_638_830_500)
        );
        assert_eq!(
            unix_ms("2000-02-29T00:00:00.123456Z"),
            Some(951_782_400_123)
        );
        assert_eq!(unix_ms("yesterday"), None);
        assert_eq!(unix_ms("2026-12-07 10:20:30"), None);
    }

    #[test]
    fn hooks_are_checked_by_signature_and_age() {
        use crate::prolific::{hook_signature, verify_hook};
        let body = r#"{"resource_id": "s1", "status": "RETURNED"}"#;
        let sig = hook_signature("secret", "1000", body);
        assert_eq!(verify_hook("secret", ("1000", &sig), body, 1010), Ok(()));
        assert!(verify_hook("other", ("1000", &sig), body, 1010).is_err());
        assert!(verify_hook("secret", ("1000", &sig), "{}", 1010).is_err());
        assert!(verify_hook("secret", ("1000", &sig), body, 2000)
            .unwrap_err()
            .contains("replay"));
    }

    #[test]
    fn statuses_read_as_prolific_writes_them() {
        let s: SubmissionStatus = serde_json::from_str("\"AWAITING REVIEW\"").unwrap();
        assert_eq!(s.remote(), RemoteStatus::Submitted);
        let t: SubmissionStatus = serde_json::from_str("\"TIMED-OUT\"").unwrap();
        assert_eq!(t.remote(), RemoteStatus::TimedOut);
        assert!(serde_json::from_str::<SubmissionStatus>("\"AWAITING_REVIEW\"").is_err());
    }
}
