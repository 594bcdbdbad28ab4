//! A study's places as its publication sees them: each worker of the publication's platform
//! with the id the platform pays under, the server's paid time and the report's exclusions
//! (from the pay sheet's rows, `store::pay`), and what a draft is derived from.

use crate::error::{Error, Result};
use crate::report::{Built, Scope};
use crate::study::Study;
use domain::ids::StudyId;
use domain::place::PlaceStatus;
use domain::platform::draft::StudyFacts;
use domain::platform::sync::PlaceFacts;
use domain::platform::Platform;
use sqlx::AnyPool;

/// A study with what its places say: the rows a plan reads, and what a draft needs.
pub struct StudyPlaces {
    pub study: Study,
    pub test_items: u32,
    pub places: Vec<PlaceFacts>,
    /// The paid seconds of every worker who finished (whatever their platform): the pilot.
    pub finished_seconds: Vec<f64>,
}

impl StudyPlaces {
    /// What a draft on any platform is derived from, with the site's `origin`.
    pub fn facts<'a>(&'a self, origin: &'a str) -> StudyFacts<'a> {
        let c = &self.study.config;
        StudyFacts {
            study: self.study.id,
            name: &self.study.name,
            task: &self.study.spec.name,
            form: self.study.spec.family.answer_form(),
            scenarios: &c.scenarios,
            annotators: c.annotators,
            test_items: self.test_items,
            hourly_rate_cents: c.hourly_rate_cents,
            completion_code: &c.completion_code,
            origin,
            finished_seconds: &self.finished_seconds,
        }
    }
}

/// The study's places of workers who came from `platform` (the report built off the async
/// workers, as every report is).
pub async fn of_study(pool: &AnyPool, study: StudyId, platform: Platform) -> Result<StudyPlaces> {
    let scope = Scope {
        studies: vec![study],
        synthetic: false,
    };
    let built = Built::of(pool, &scope).await?;
    let s = built
        .loaded
        .study(study)
        .cloned()
        .ok_or_else(|| Error::NotFound(format!("there is no study {study}")))?;
    let test_items = built
        .loaded
        .test_items
        .get(&s.spec.name)
        .map_or(0, |t| t.len() as u32);
    let rows = crate::pay::pay_rows(&built.loaded, &built.report);
    let finished_seconds = rows
        .iter()
        .filter(|r| r.status == PlaceStatus::Finished)
        .map(|r| r.seconds)
        .collect();
    let places = rows
        .into_iter()
        .filter(|r| r.crowd.platform == Some(platform))
        .filter_map(|r| {
            let worker = r.crowd.crowd_worker_id.clone()?;
            let presented = platform
                .paid_id(
                    r.crowd.crowd_session_id.as_deref(),
                    r.crowd.crowd_assignment_id.as_deref(),
                )
                .map(str::to_string);
            Some(PlaceFacts {
                assignment: r.assignment,
                worker,
                presented,
                status: r.status,
                seconds: r.seconds,
                pay_cents: r.pay_cents,
                failed_attention: r.failed_attention,
                attention: r.attention,
            })
        })
        .collect();
    Ok(StudyPlaces {
        study: s,
        test_items,
        places,
        finished_seconds,
    })
}
