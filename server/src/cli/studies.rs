//! `study create` (a study from the command line, with its pages' files) and `study list`.

use super::{pages, StudyCreateArgs};
use store::db::cli as db;
use store::error::{Error, Result};
use store::study;

pub(super) async fn create(database: &str, a: StudyCreateArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let shot_group = match &a.shot_group {
        Some(text) => domain::shots::parse_files(text)
            .map_err(|e| Error::Invalid(format!("--shot-group: {e}")))?,
        None => Vec::new(),
    };
    let pages = pages::read(&a)?;
    let config = domain::study::StudyConfig {
        scenarios: a.scenarios,
        annotators: a.annotators,
        training_split: shot_group.first().map_or(a.split, |f| f.1),
        shot_group,
        allow_unnested: a.allow_unnested,
        shuffle_training: a.shuffle_training,
        screening: domain::shots::parse_one(a.screening.as_deref().unwrap_or(""))
            .map_err(|e| Error::Invalid(format!("--screening: {e}")))?,
        hourly_rate_cents: a.rate_cents,
        filter_margin: a.margin,
        item_timeout_secs: (!a.no_timeout).then_some(a.timeout),
        open: a.open,
        completion_code: a.code,
        completion_url: a.completion_url,
        pages,
        analysis: domain::analysis_plan::AnalysisChoices {
            alpha: a.alpha,
            primary: a.primary,
        },
    };
    let id = study::create(&pool, None, &a.task, &a.name, config).await?;
    let made = study::summary_of(&pool, id).await?;
    println!("created study {id}: workers join at /join/{id}");
    println!("training sets: {}", made.shot_group);
    Ok(())
}

pub(super) async fn list(database: &str) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    for s in study::list(&pool).await? {
        println!(
            "{}\t{}\t{}\t{}\t{}\t/join/{}\t{} workers, {} finished",
            s.id,
            s.name,
            s.task,
            s.shot_group,
            if s.config.open { "open" } else { "closed" },
            s.id,
            s.workers,
            s.finished
        );
    }
    Ok(())
}
