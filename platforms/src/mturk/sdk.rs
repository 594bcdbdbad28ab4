//! MTurk's words as the SDK carries them: an SDK error by what it means for sending again,
//! amounts as dollar strings, the study link as an ExternalQuestion, an assignment's status.

use crate::Fault;
use aws_sdk_mturk::config::http::HttpResponse;
use aws_sdk_mturk::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_mturk::types::AssignmentStatus;
use domain::platform::ledger::RemoteStatus;

/// A call MTurk says it saw before (its token) counts as done.
pub(super) fn done_or_already(sent: Result<(), Fault>) -> Result<(), Fault> {
    match sent {
        Err(Fault::AlreadyDone(why)) => {
            tracing::info!("MTurk had the call already: {why}");
            Ok(())
        }
        other => other,
    }
}

pub(super) fn status(s: Option<&AssignmentStatus>) -> RemoteStatus {
    match s {
        Some(AssignmentStatus::Approved) => RemoteStatus::Approved,
        Some(AssignmentStatus::Rejected) => RemoteStatus::Rejected,
        // Submitted, and any status a later SDK adds, waits for a decision.
        _ => RemoteStatus::Submitted,
    }
}

/// Cents as MTurk's dollar string.
pub(super) fn dollars(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// The study link as an ExternalQuestion (MTurk adds the worker's ids to it).
pub(super) fn external_question(link: &str) -> String {
    let url = link
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        r#"<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"><ExternalURL>{url}</ExternalURL><FrameHeight>0</FrameHeight></ExternalQuestion>"#
    )
}

/// An SDK error by what it means for sending again.
pub(super) fn fault<E: ProvideErrorMetadata + std::error::Error + 'static>(
    e: SdkError<E, HttpResponse>,
) -> Fault {
    let said = format!("MTurk: {}", display(&e));
    match &e {
        SdkError::DispatchFailure(d) if d.is_io() || d.is_timeout() => Fault::Unknown(said),
        SdkError::DispatchFailure(_) | SdkError::ConstructionFailure(_) => Fault::Unsent(said),
        SdkError::ServiceError(se) => {
            let code = se.err().code().unwrap_or_default().to_string();
            let message = se.err().message().unwrap_or_default().to_string();
            let said = format!("MTurk: {code}: {message}");
            if code.contains("Throttl") || code.contains("RequestLimit") {
                Fault::Busy(said)
            } else if code == "ServiceFault" || se.raw().status().is_server_error() {
                Fault::Failed(said)
            } else if message.contains("already been processed")
                || message.contains("HitAlreadyExists")
                || message.contains("already exists")
            {
                Fault::AlreadyDone(said)
            } else {
                Fault::Refused(said)
            }
        }
        // A time-out or an unreadable answer: the call may have been carried out.
        _ => Fault::Unknown(said),
    }
}

/// An SDK error with its sources, in one line.
fn display(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_and_questions_are_written_as_mturk_reads_them() {
        assert_eq!(dollars(150), "1.50");
        assert_eq!(dollars(7), "0.07");
        let q = external_question("https://lab.example/join/3?a=1&b=2");
        assert!(q.contains("<ExternalURL>https://lab.example/join/3?a=1&amp;b=2</ExternalURL>"));
    }
}
