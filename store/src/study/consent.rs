//! Informed consent on the database: accepting keeps the text's hash with the place;
//! declining frees the place, removes the crowd account, and keeps only the refusal.

use super::items::Place;
use super::pages::place_of;
use super::places::remove_unconsented;
use super::refusals::no_place;
use super::worker::{next_step, record};
use super::{CrowdInfo, Study};
use crate::catalog::corrupt;
use crate::error::Error;
use crate::tx::Lock;
use crate::writer::Writer;
use domain::ids::{StudyId, UserId};
use domain::platform::Platform;
use domain::study_pages::consent::declined_hand_back;
use domain::study_pages::Consent;
use domain::wire::study::{Declined, WorkerStep};
use sqlx::AnyConnection;

/// The worker accepts or declines the study's consent. Accepting keeps the text's hash with
/// the place and answers the next step (accepting again changes nothing). Declining frees the
/// place and removes everything of it, and the crowd worker's account when it has no other
/// place; only the refusal is kept. A worker who already accepted cannot decline here.
pub async fn consent(
    writer: &Writer,
    study_id: StudyId,
    worker: UserId,
    accept: bool,
    now: i64,
) -> Result<WorkerStep, Error> {
    let (study, mut place) = place_of(writer.pool(), study_id, worker).await?;
    let Some(consent) = study.config.pages.consent.clone() else {
        return Err(Error::Invalid("this study has no consent page".into()));
    };
    if !accept && place.consented_at.is_some() {
        return Err(Error::Refused(format!(
            "You already consented and your answers are being kept. To withdraw, contact {}.",
            consent.contact.trim()
        )));
    }
    // On SQLite in the answers' group commit: a worker's first step waits for a commit, not
    // for the write lock.
    writer
        .write(&[Lock::Worker(worker)], move |conn| {
            Box::pin(async move {
                if !accept {
                    return decline(conn, &study, &consent, &place, worker, now).await;
                }
                sqlx::query(
                    "UPDATE assignments SET consent_hash = $1, consented_at = $2, last_activity = $2
                     WHERE id = $3 AND consented_at IS NULL",
                )
                .bind(consent.hash())
                .bind(now)
                .bind(place.id)
                .execute(&mut *conn)
                .await?;
                // Accepted now or by a send a moment ago; gone if a decline got there first.
                let at: Option<Option<i64>> =
                    sqlx::query_scalar("SELECT consented_at FROM assignments WHERE id = $1")
                        .bind(place.id)
                        .fetch_optional(&mut *conn)
                        .await?;
                place.consented_at = Some(at.flatten().ok_or_else(no_place)?);
                let next = next_step(conn, &study, &place).await?;
                record(conn, place.id, &next.records, now, true).await?;
                Ok(next.step)
            })
        })
        .await
}

async fn decline(
    conn: &mut AnyConnection,
    study: &Study,
    consent: &Consent,
    place: &Place,
    worker: UserId,
    now: i64,
) -> Result<WorkerStep, Error> {
    let row: Option<(i64, String, Option<i64>)> =
        sqlx::query_as("SELECT config_id, crowd_json, consented_at FROM assignments WHERE id = $1")
            .bind(place.id)
            .fetch_optional(&mut *conn)
            .await?;
    // A decline sent twice at once: the first freed the place already.
    let Some((config_id, crowd, None)) = row else {
        return Err(match row {
            Some(_) => {
                Error::Refused("You already consented and your answers are being kept.".into())
            }
            None => no_place(),
        });
    };
    let crowd: CrowdInfo = serde_json::from_str(&crowd).map_err(|e| corrupt("crowd ids", e))?;
    sqlx::query(
        "INSERT INTO consent_refusals (study_id, config_id, consent_hash, platform, refused_at)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(study.id)
    .bind(config_id)
    .bind(consent.hash())
    .bind(crowd.platform)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    remove_unconsented(conn, place.id, worker).await?;
    let hand_back = declined_hand_back(crowd.platform, consent);
    Ok(WorkerStep::Declined(Declined {
        message: Platform::declined_message(crowd.platform, hand_back.is_some()),
        hand_back,
    }))
}
