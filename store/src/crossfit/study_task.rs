//! A CrossFit task for people: one seed's training and test files copied into the task tables
//! the crowd protocol reads, answered in a free-text box and scored with the task's metric.

use super::{split_lines, task_id};
use crate::error::Error;
use crate::task_write;
use crate::tx::Lock;
use domain::crossfit::sampler::to_tsv;
use domain::task::{Context, Example, Family, Gold, NoAnswer, QuestionType, TaskSpec};
use sqlx::AnyPool;

/// Copies a CrossFit task (the training and test files of one seed) into the task tables the
/// crowd protocol uses, as `xf-<task>-s<seed>`: context = input, gold = the outputs, the
/// training file as the k-shot set of split 1 (k = its lines). Workers then answer in a
/// free-text box, scored with the task's metric. Returns (name, k); refused if it exists.
pub async fn make_study_task(
    pool: &AnyPool,
    task: &str,
    seed: u32,
) -> Result<(String, u32), Error> {
    use sha2::{Digest, Sha256};
    let (_, metric) = task_id(pool, task).await?;
    let ontology: String =
        sqlx::query_scalar("SELECT ontology FROM crossfit_tasks WHERE name = $1")
            .bind(task)
            .fetch_one(pool)
            .await?;
    let train = split_lines(pool, task, seed, "train").await?;
    let test = split_lines(pool, task, seed, "test").await?;
    if train.is_empty() || test.is_empty() {
        return Err(Error::Invalid(format!(
            "{task} (seed {seed}) needs training and test lines for a human study"
        )));
    }
    let name = format!("xf-{task}-s{seed}");
    let k = train.len() as u32;
    let description = format!(
        "Read each text and write its output, as in the examples you will see. This is the \
         CrossFit task {task}{}; answers are scored with {}.",
        if ontology.is_empty() {
            String::new()
        } else {
            format!(" ({ontology})")
        },
        metric.name()
    );
    let mut tx = crate::tx::begin_write(pool, &[Lock::Task(&name)]).await?;
    let result = async {
        let exists: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE name = $1")
            .bind(&name)
            .fetch_one(&mut *tx)
            .await?;
        if exists > 0 {
            return Err(Error::Refused(format!(
                "the study task {name} exists already"
            )));
        }
        let spec = TaskSpec {
            name: name.clone(),
            family: Family::TextToText,
            description: description.clone(),
            labels: Vec::new(),
            question_types: vec![QuestionType {
                key: "text".into(),
                question: String::new(),
            }],
            no_answer: NoAnswer::EmptyList,
            metric: Some(metric),
        };
        let task_id = task_write::insert_task(&mut tx, &spec, "crossfit").await?;
        for (lines, train) in [(&train, Some((k, 1))), (&test, None)] {
            let kind = if train.is_some() { "train" } else { "test" };
            let file = task_write::FileRow {
                name: &format!("{task}_{k}_{seed}_{kind}.tsv"),
                train,
                sha256: &hex::encode(Sha256::digest(to_tsv(lines).as_bytes())),
                n_rows: lines.len(),
            };
            let file_id = task_write::insert_file(&mut tx, task_id, &file).await?;
            for (i, l) in lines.iter().enumerate() {
                let ex = Example {
                    id: (i + 1).to_string(),
                    context: Context::Single {
                        text: l.input.clone(),
                    },
                    question: "What is the output for this text?".into(),
                    question_type: Some("text".into()),
                    gold: Gold {
                        official: l.outputs().into_iter().map(str::to_string).collect(),
                        spans: Vec::new(),
                    },
                    extra: serde_json::json!({}),
                };
                let key = task_write::content_key(&ex.context, &ex.question, &ex.gold.official);
                task_write::insert_example(&mut tx, file_id, i + 1, &ex, &key).await?;
            }
        }
        Ok((name.clone(), k))
    }
    .await;
    crate::tx::finish(tx, result).await
}
