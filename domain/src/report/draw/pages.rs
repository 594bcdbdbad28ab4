//! The report's tables of a study's own pages: attention checks per worker (with the
//! filter's second criterion) and the questionnaires summed up per scenario.

use super::table::Table;
use crate::report::Report;
use crate::study_pages::questionnaire::{Kind, QuestionSummary};

/// Per worker who answered attention checks: how many passed. `None` when nobody did.
pub fn attention_table(r: &Report) -> Option<Table> {
    let rows: Vec<Vec<String>> = r
        .annotators
        .iter()
        .filter(|a| a.attention_answered > 0)
        .map(|a| {
            vec![
                a.worker.clone(),
                a.study.to_string(),
                a.task.clone(),
                a.k.to_string(),
                format!("{}/{}", a.attention_passed, a.attention_answered),
                if a.failed_attention { "yes" } else { "" }.to_string(),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| {
        Table::plain(
            "attention",
            "Attention checks",
            "Checks state their own answer; they are not test items and never enter S1. A study with a limit on failed checks flags a finished worker who failed more than it (the filter's second criterion, beside the training filter).",
            &["Worker", "Study", "Task", "Shots", "Passed", "Over the limit"],
            rows,
        )
    })
}

/// What a question's summary says in one cell.
fn summary_text(q: &QuestionSummary) -> String {
    match q.kind {
        Kind::SingleChoice | Kind::MultipleChoice => q
            .counts
            .iter()
            .map(|(o, n)| format!("{o}: {n}"))
            .collect::<Vec<_>>()
            .join("; "),
        Kind::Likert | Kind::Number => q
            .spread
            .map(|s| format!("{:.2} ± {:.2} (n={})", s.mean, s.std_pop, s.n))
            .unwrap_or_default(),
        Kind::ShortText => "texts in questionnaires.csv".into(),
    }
}

/// Per study, scenario and question: how many answered and what. `None` without questionnaires.
pub fn questionnaire_table(r: &Report) -> Option<Table> {
    let rows: Vec<Vec<String>> = r
        .questionnaires
        .iter()
        .flat_map(|s| {
            s.questions.iter().map(move |q| {
                vec![
                    s.study.to_string(),
                    s.task.clone(),
                    s.k.to_string(),
                    q.stage.as_str().to_string(),
                    q.id.clone(),
                    format!("{}/{}", q.answered, s.workers),
                    summary_text(q),
                ]
            })
        })
        .collect();
    (!rows.is_empty()).then(|| {
        Table::plain(
            "questionnaires",
            "Questionnaires",
            "Per scenario, over the workers who answered a questionnaire: choices counted, scales and numbers as mean ± standard deviation (n). Every answer is in questionnaires.csv.",
            &["Study", "Task", "Shots", "When", "Question", "Answered", "Answers"],
            rows,
        )
    })
}
