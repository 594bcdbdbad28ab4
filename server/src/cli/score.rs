//! `score`: a predictions file scored with S1 against an official test file or an imported
//! task, as text or JSON.

use super::ScoreArgs;
use store::catalog;
use store::db::cli as db;
use store::error::{Error, Result};
use store::score;

pub(super) async fn score(database: &str, args: &ScoreArgs) -> Result<()> {
    let render = |r: score::ScoreReport, what: &str| {
        if args.json {
            r.to_json(what)
        } else {
            r.render(what)
        }
    };
    let report = match (&args.gold, &args.task) {
        (Some(gold), _) => {
            let (golds, family) = score::read_gold_file(gold)?;
            let preds = score::read_predictions(&args.predictions)?;
            let report = score::score(
                &golds,
                family,
                &preds,
                &args.predictions.display().to_string(),
            )?;
            render(report, &gold.display().to_string())
        }
        (None, Some(task)) => {
            let pool = db::connect_existing(database).await?;
            let (task_id, spec, _) = catalog::load_spec(&pool, task).await?;
            let golds: Vec<score::GoldItem> = catalog::test_examples(&pool, task_id)
                .await?
                .into_iter()
                .map(|e| score::GoldItem {
                    id: e.id,
                    gold: e.gold,
                })
                .collect();
            let preds = score::read_predictions(&args.predictions)?;
            let report = score::score(
                &golds,
                spec.family,
                &preds,
                &args.predictions.display().to_string(),
            )?;
            render(report, &format!("task {task}"))
        }
        (None, None) => {
            return Err(Error::Invalid(
                "score needs --gold <file> or --task <name>".into(),
            ))
        }
    };
    print!("{report}");
    Ok(())
}
