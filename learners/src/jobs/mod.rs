//! Running the model track against the database: evaluations of registered models, the
//! baseline's shot groups, imported predictions; progress, predictions and S1 are stored.
//! This file holds the runs themselves: systems, one finished run per target, scoring, storing.

pub mod grid;
mod imported;
mod progress;
mod prompted;
mod runs;
mod tuned;

pub use grid::GridRun;
pub use imported::{import, read_imported};
pub use progress::Progress;
pub(crate) use prompted::prompt_held;
pub use prompted::{check as check_prompt, prompt_tune, system_name as prompt_system, PromptArgs};
pub(crate) use runs::{absolute, baseline_held, evaluate_held, task_test};
pub use runs::{evaluate, evaluate_plan, run_baseline, run_baseline_grid, PlannedEval};
pub(crate) use tuned::tune_held;
pub use tuned::{plan as plan_finetune, queue as queue_finetune, run_finetune, Job};

use super::decode::PredSpan;
use domain::ids::{ExampleId, RunId};
pub use domain::run::SystemKind;
use domain::task::{Example, TaskSpec};
use sqlx::AnyPool;
use store::error::{Error, Result};
use store::machine::write::{
    done_run, fail, finish, finish_all, refuse_if_done, start, store_whole, Finished,
};
pub use store::machine::write::{Scored, Target};

/// A finished evaluation, as the CLI prints it.
#[derive(Clone, Debug)]
pub struct Summary {
    pub run: RunId,
    pub target: Target,
    pub items: usize,
    pub s1: f64,
    pub s1_any_of: f64,
    pub provider: String,
    pub seconds: f64,
}

impl Summary {
    pub fn render(&self) -> String {
        format!(
            "{} on {} (k={}, split={}): S1 {:.4} (official), {:.4} (any-of) over {} test items; {}; {:.3} s; run {}",
            self.target.system,
            self.target.task,
            self.target.k,
            self.target.split,
            self.s1,
            self.s1_any_of,
            self.items,
            self.provider,
            self.seconds,
            self.run
        )
    }
}

/// The value of a finished blocking step, or its error after marking `runs` failed.
/// Stores a finished run's scored items (the run is marked failed when that fails) and gives
/// its summary.
pub(crate) async fn store_finished(
    pool: &AnyPool,
    run: RunId,
    target: Target,
    provider: String,
    items: &[Scored],
    held: Option<&grid::Held>,
    seconds: f64,
) -> Result<Summary> {
    let stored = finish(pool, run, &target, &provider, items, held).await;
    let (s1, s1_any_of) = or_fail(pool, &[run], stored).await?;
    Ok(Summary {
        run,
        items: items.len(),
        s1,
        s1_any_of,
        provider,
        seconds,
        target,
    })
}

pub(crate) async fn or_fail<T>(pool: &AnyPool, runs: &[RunId], result: Result<T>) -> Result<T> {
    if let Err(e) = &result {
        fail(pool, runs, &e.to_string()).await;
    }
    result
}

/// An answer before scoring: official encoding, spans, probability.
type Answer = (Vec<String>, Vec<PredSpan>, Option<f64>);

/// A model's answers (spans and probabilities per item) ready for scoring.
fn model_answers(
    spec: &TaskSpec,
    spans: Vec<Vec<PredSpan>>,
    probabilities: Vec<f32>,
) -> Vec<Answer> {
    spans
        .into_iter()
        .zip(probabilities)
        .map(|(s, p)| {
            let texts: Vec<String> = s.iter().map(|x| x.text.clone()).collect();
            (spec.to_official(&texts), s, Some(f64::from(p)))
        })
        .collect()
}

fn score_items(
    spec: &TaskSpec,
    test: &[(ExampleId, Example)],
    answers: Vec<Answer>,
) -> Result<Vec<Scored>> {
    test.iter()
        .zip(answers)
        .map(|((id, ex), (official, spans, probability))| {
            let spans_json = serde_json::to_string(&spans).map_err(Error::internal)?;
            Ok(Scored::of(
                spec,
                *id,
                &ex.gold,
                official,
                spans_json,
                probability,
            ))
        })
        .collect()
}
