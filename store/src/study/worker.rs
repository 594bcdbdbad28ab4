//! The worker's next step: the current item (recording when it was first shown) or the end
//! with the completion code and the way back to the crowd platform.

use super::items::{
    current_position, item_row, own_assignment, reveal, stamp, touch, Place, Stamp,
};
use super::pages;
use super::refusals::no_place;
use super::{load, CrowdInfo, Study};
use crate::catalog::corrupt;
use crate::error::Error;
use crate::writer::Writer;
use domain::ids::{AssignmentId, StudyId, UserId};
use domain::place::{Phase, PlaceStatus};
use domain::study_pages::{attention, Stage};
use domain::wire::study::{Completion, WorkerItem, WorkerStep, WorkerStudy};
use sqlx::AnyConnection;

/// The worker's view of a study where they hold a place: a place is taken only by the study
/// link's Start (`enter`), so a session never takes one in a study it was not sent to. Showing
/// an item records the first time it was shown (at `now`, the server's clock); showing it again
/// (a reload) writes nothing.
pub async fn worker_state(
    writer: &Writer,
    study_id: StudyId,
    worker: UserId,
    now: i64,
) -> Result<WorkerStudy, Error> {
    let pool = writer.pool();
    let study = load(pool, study_id).await?;
    let place = own_assignment(pool, study_id, worker)
        .await?
        .ok_or_else(no_place)?;
    // A place past its time-out is released only when a new worker arrives (`enter`);
    // until then its worker may go on.
    let (step, counts) = step_now(writer, &study, &place, now).await?;
    Ok(WorkerStudy {
        study_id,
        place: place.id,
        study_name: study.name.clone(),
        description: study.spec.description.clone(),
        family: study.spec.family,
        labels: study.spec.labels.clone(),
        k: place.k as u32,
        screening_items: counts.screening,
        training_items: counts.training,
        test_items: counts.test,
        step,
    })
}

/// The worker's step as it stands, read on a connection of its own; what showing it records
/// (a first showing, the end of the place) is written in one transaction (on SQLite the
/// answers' group commit), and only then.
pub(super) async fn step_now(
    writer: &Writer,
    study: &Study,
    place: &Place,
    now: i64,
) -> Result<(WorkerStep, Counts), Error> {
    let next = {
        let mut conn = writer.pool().acquire().await?;
        next_step(&mut conn, study, place).await?
    };
    if next.records.is_empty() {
        return Ok((next.step, next.counts));
    }
    let (id, records) = (place.id, next.records);
    writer
        .write(&[], move |conn| {
            Box::pin(async move { record(conn, id, &records, now, false).await })
        })
        .await?;
    Ok((next.step, next.counts))
}

/// What showing a step records.
#[derive(Default)]
pub(super) struct Records {
    /// The item shown for the first time.
    shown: Option<i64>,
    /// The place has just ended (no item left).
    finished: bool,
    /// The questionnaire or the attention check shown for the first time.
    questionnaire: Option<Stage>,
    check: Option<u32>,
}

impl Records {
    fn is_empty(&self) -> bool {
        self.shown.is_none()
            && !self.finished
            && self.questionnaire.is_none()
            && self.check.is_none()
    }
}

pub(super) struct Next {
    pub(super) step: WorkerStep,
    pub(super) counts: Counts,
    pub(super) records: Records,
}

/// The items of a place by phase; the test count includes the attention checks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Counts {
    pub(super) screening: i64,
    pub(super) training: i64,
    pub(super) test: i64,
}

/// The step after everything answered so far, with what showing it would record; reads only.
/// `conn` may be inside the transaction that just stored an answer. The order: consent, the
/// questionnaire before, the training items, the test items with the attention checks at
/// their places, the questionnaire after, the end.
pub(super) async fn next_step(
    conn: &mut AnyConnection,
    study: &Study,
    place: &Place,
) -> Result<Next, Error> {
    let tally = tally(&mut *conn, study, place.id).await?;
    let counts = tally.counts;
    let mut records = Records::default();
    if place.status == PlaceStatus::Abandoned {
        return Ok(Next {
            step: WorkerStep::Abandoned,
            counts,
            records,
        });
    }
    if let (Some(consent), None) = (&study.config.pages.consent, place.consented_at) {
        return Ok(Next {
            step: pages::consent_step(consent),
            counts,
            records,
        });
    }
    let seen = pages::seen(&mut *conn, study, place.id).await?;
    let questionnaire = |stage, records: &mut Records| {
        pages::questionnaire_step(study, &seen, stage).map(|(step, first)| {
            if first {
                records.questionnaire = Some(stage);
            }
            step
        })
    };
    if let Some(step) = questionnaire(Stage::Before, &mut records) {
        return Ok(Next {
            step,
            counts,
            records,
        });
    }
    let position = current_position(&mut *conn, place.id).await?;
    let answered = seen.answered_checks.len() as i64;
    let tests_done = position.map_or(tally.test_items, |p| (p - tally.before_test()).max(0));
    let in_test = position.is_none_or(|p| p >= tally.before_test());
    let due = in_test
        .then(|| {
            attention::due(
                &study.config.pages.attention_checks,
                tests_done as u32,
                &seen.answered_checks,
            )
        })
        .flatten();
    let step = match (due, position) {
        (Some(i), _) => {
            if !seen.shown_checks.contains(&i) {
                records.check = Some(i);
            }
            let index = tests_done + answered + 1;
            let items = tally.before_test() + tally.test_items;
            WorkerStep::Item(pages::check_item(study, items, i, index, counts.test))
        }
        (None, Some(position)) => {
            let at = ItemAt {
                position,
                answered_checks: answered,
            };
            item_step(&mut *conn, study, place.id, at, &tally, &mut records).await?
        }
        (None, None) => {
            // The test set is done: the place is finished, the questionnaire after may follow.
            records.finished = place.status == PlaceStatus::Active;
            match questionnaire(Stage::After, &mut records) {
                Some(step) => step,
                None => {
                    WorkerStep::Done(completion(conn, study, place.id, place.started_at).await?)
                }
            }
        }
    };
    Ok(Next {
        step,
        counts,
        records,
    })
}

/// A place's items per phase: `counts` with the attention checks counted in the test,
/// `test_items` without them.
struct Tally {
    counts: Counts,
    test_items: i64,
}

impl Tally {
    /// How many items come before the test (screening and training).
    fn before_test(&self) -> i64 {
        self.counts.screening + self.counts.training
    }
}

async fn tally(
    conn: &mut AnyConnection,
    study: &Study,
    place: AssignmentId,
) -> Result<Tally, Error> {
    let (screening, training, test): (i64, i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(CASE WHEN phase = 'screening' THEN 1 ELSE 0 END), 0),
            COALESCE(SUM(CASE WHEN phase = 'training' THEN 1 ELSE 0 END), 0),
            COALESCE(SUM(CASE WHEN phase = 'test' THEN 1 ELSE 0 END), 0)
         FROM assignment_items WHERE assignment_id = $1",
    )
    .bind(place)
    .fetch_one(&mut *conn)
    .await?;
    let checks = study.config.pages.attention_checks.len() as i64;
    Ok(Tally {
        counts: Counts {
            screening,
            training,
            test: test + checks,
        },
        test_items: test,
    })
}

/// The place's current item, and how many attention checks were answered before it.
struct ItemAt {
    position: i64,
    answered_checks: i64,
}

/// The worker's current item as shown (its gold revealed after a training submission),
/// noting its first showing in `records`.
async fn item_step(
    conn: &mut AnyConnection,
    study: &Study,
    place: AssignmentId,
    at: ItemAt,
    tally: &Tally,
    records: &mut Records,
) -> Result<WorkerStep, Error> {
    let position = at.position;
    let item = item_row(&mut *conn, study.spec.family, place, position)
        .await?
        .ok_or_else(|| Error::internal("current item missing"))?;
    if !item.shown {
        records.shown = Some(position);
    }
    let c = tally.counts;
    let (index, of) = match item.phase {
        Phase::Screening => (position + 1, c.screening),
        Phase::Training => (position - c.screening + 1, c.training),
        Phase::Test => (
            position - tally.before_test() + at.answered_checks + 1,
            c.test,
        ),
    };
    Ok(WorkerStep::Item(WorkerItem {
        position,
        phase: item.phase,
        index,
        of,
        reveal: if item.submitted {
            reveal(&study.spec, &item)
        } else {
            None
        },
        context: item.context,
        question: item.question,
    }))
}

/// Writes `records` (on a connection in a write transaction). Each is set once: a first
/// showing that another request recorded first is left as it is. `touched`: the worker's
/// activity is already recorded at `now` in this transaction.
pub(super) async fn record(
    conn: &mut AnyConnection,
    assignment: AssignmentId,
    records: &Records,
    now: i64,
    touched: bool,
) -> Result<(), Error> {
    if let Some(position) = records.shown {
        let set = stamp(&mut *conn, assignment, position, Stamp::Shown, now).await?;
        if set && !touched {
            touch(&mut *conn, assignment, now).await?;
        }
    }
    pages::record_shown(
        &mut *conn,
        assignment,
        records.questionnaire,
        records.check,
        now,
    )
    .await?;
    if records.finished {
        sqlx::query(
            "UPDATE assignments SET status = 'finished', finished_at = $1 WHERE id = $2 AND status = 'active'",
        )
        .bind(now)
        .bind(assignment)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// What the end of an assignment reports, as one query sums it.
#[derive(sqlx::FromRow)]
struct Totals {
    train_s1: Option<f64>,
    n_train: i64,
    n_test: i64,
    skipped: i64,
    on_items: i64,
    last: i64,
    /// The last answer to a questionnaire or an attention check, if later.
    pages_last: Option<i64>,
    crowd: String,
}

async fn completion(
    conn: &mut AnyConnection,
    study: &Study,
    assignment: AssignmentId,
    started_at: i64,
) -> Result<Completion, Error> {
    let r: Totals = sqlx::query_as(
        "SELECT
            (SELECT AVG(s1) FROM assignment_items WHERE assignment_id = $1 AND phase = 'training') AS train_s1,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = $1 AND phase = 'training') AS n_train,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = $1 AND phase = 'test') AS n_test,
            (SELECT COUNT(*) FROM assignment_items WHERE assignment_id = $1 AND skipped = 1) AS skipped,
            (SELECT CAST(COALESCE(SUM(submitted_at - shown_at), 0) AS BIGINT) FROM assignment_items WHERE assignment_id = $1) AS on_items,
            (SELECT COALESCE(MAX(submitted_at), $2) FROM assignment_items WHERE assignment_id = $1) AS last,
            (SELECT MAX(t) FROM (SELECT submitted_at AS t FROM questionnaire_answers WHERE assignment_id = $1
                UNION ALL SELECT submitted_at FROM attention_answers WHERE assignment_id = $1) p) AS pages_last,
            (SELECT crowd_json FROM assignments WHERE id = $1) AS crowd",
    )
    .bind(assignment)
    .bind(started_at)
    .fetch_one(conn)
    .await?;
    let crowd: CrowdInfo = serde_json::from_str(&r.crowd).map_err(|e| corrupt("crowd ids", e))?;
    Ok(Completion {
        hand_back: crowd.platform.and_then(|p| {
            p.hand_back(
                &study.config.completion_url,
                &study.config.completion_code,
                crowd.assignment.as_deref(),
                crowd.submit_to.as_deref(),
            )
        }),
        code: study.config.completion_code.clone(),
        training_s1: r.train_s1,
        training_items: r.n_train,
        test_items: r.n_test + study.config.pages.attention_checks.len() as i64,
        skipped: r.skipped,
        seconds_on_items: r.on_items as f64 / 1000.0,
        seconds_elapsed: (r.last.max(r.pages_last.unwrap_or(0)) - started_at) as f64 / 1000.0,
        debriefing_html: pages::debriefing_html(study),
    })
}
