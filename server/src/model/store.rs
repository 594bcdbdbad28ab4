//! Running the model track against the database: evaluations of registered models, the
//! baseline's shot groups, imported predictions; progress, predictions and S1 are stored.

use super::baseline::{self, Shots};
use super::decode::PredSpan;
use super::eval::{predict_loaded, ModelDir};
use super::head::Training;
use super::runtime::{Device, Model, Outputs, Tokenizer};
use crate::error::{Result, ServerError};
use crate::score::Prediction;
use app::domain::s1::{mean, Scoring};
use app::domain::task::{Example, TaskSpec};
use app::ssr::auth::now_ms;
use app::ssr::catalog::{examples_of, load_spec};
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

/// The kind of a machine system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Onnx,
    Baseline,
    Imported,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Onnx => "onnx",
            Kind::Baseline => "baseline",
            Kind::Imported => "imported",
        }
    }
}

/// What an evaluation is stored as: system, task and the shot group (0/0 for none).
#[derive(Clone, Debug)]
pub struct Target {
    pub system: String,
    pub kind: Kind,
    pub task: String,
    pub k: u32,
    pub split: u32,
    /// Replace a finished evaluation of the same system, task and shot group.
    pub replace: bool,
}

/// A finished evaluation, as the CLI prints it.
#[derive(Clone, Debug)]
pub struct Summary {
    pub run: i64,
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
            "{} on {} (k={}, split={}): S1 {:.4} (official), {:.4} (any-of) over {} test items; {}; {:.1} s; run {}",
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

async fn system_id(pool: &SqlitePool, name: &str, kind: Kind) -> Result<i64> {
    if let Some((id, k)) =
        sqlx::query_as::<_, (i64, String)>("SELECT id, kind FROM machine_systems WHERE name = ?")
            .bind(name)
            .fetch_optional(pool)
            .await?
    {
        if k != kind.as_str() {
            return Err(ServerError::Conflict(format!(
                "system {name:?} is of kind {k}, not {}; choose another name",
                kind.as_str()
            )));
        }
        return Ok(id);
    }
    Ok(
        sqlx::query_scalar("INSERT INTO machine_systems (name, kind) VALUES (?, ?) RETURNING id")
            .bind(name)
            .bind(kind.as_str())
            .fetch_one(pool)
            .await?,
    )
}

/// Refuses a target that already has a finished evaluation, unless it replaces it.
async fn refuse_if_done(pool: &SqlitePool, task_id: i64, t: &Target) -> Result<()> {
    let existing: Option<i64> = sqlx::query_scalar(
        "SELECT r.id FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id
         WHERE s.name = ? AND r.task_id = ? AND r.k = ? AND r.split = ? AND r.status = 'done'",
    )
    .bind(&t.system)
    .bind(task_id)
    .bind(t.k)
    .bind(t.split)
    .fetch_optional(pool)
    .await?;
    match (existing, t.replace) {
        (Some(run), false) => Err(ServerError::Conflict(format!(
            "{} already has a finished evaluation of {} for k={} split={} (run {run}); replace it with --replace on the command line or replace=true in an upload",
            t.system, t.task, t.k, t.split
        ))),
        _ => Ok(()),
    }
}

/// Refuses a target that already has a finished evaluation (unless it replaces it) and
/// opens a running one.
async fn start(
    pool: &SqlitePool,
    task_id: i64,
    t: &Target,
    source: &str,
    settings: &str,
    provider: &str,
) -> Result<i64> {
    refuse_if_done(pool, task_id, t).await?;
    let system = system_id(pool, &t.system, t.kind).await?;
    Ok(sqlx::query_scalar(
        "INSERT INTO machine_runs (system_id, task_id, k, split, status, source, settings_json, provider, started_at)
         VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?) RETURNING id",
    )
    .bind(system)
    .bind(task_id)
    .bind(t.k)
    .bind(t.split)
    .bind(source)
    .bind(settings)
    .bind(provider)
    .bind(now_ms())
    .fetch_one(pool)
    .await?)
}

async fn fail(pool: &SqlitePool, runs: &[i64], error: &str) {
    for run in runs {
        let r = sqlx::query(
            "UPDATE machine_runs SET status = 'failed', error = ?, finished_at = ? WHERE id = ?",
        )
        .bind(error)
        .bind(now_ms())
        .bind(run)
        .execute(pool)
        .await;
        if let Err(e) = r {
            tracing::error!("cannot mark run {run} failed: {e}");
        }
    }
}

/// One item's answer: official encoding, the spans it came from, S1 both ways.
struct Scored {
    example: i64,
    official: Vec<String>,
    spans: Vec<PredSpan>,
    s1: f64,
    s1_any_of: f64,
}

fn score_items(
    spec: &TaskSpec,
    test: &[(i64, Example)],
    answers: Vec<(Vec<String>, Vec<PredSpan>)>,
) -> Vec<Scored> {
    test.iter()
        .zip(answers)
        .map(|((id, ex), (official, spans))| Scored {
            example: *id,
            s1: spec.score(&ex.gold, &official, Scoring::Official),
            s1_any_of: spec.score(&ex.gold, &official, Scoring::AnyOf),
            official,
            spans,
        })
        .collect()
}

/// Stores the predictions and marks the run done (replacing an older one if asked), at once.
async fn finish(
    pool: &SqlitePool,
    run: i64,
    t: &Target,
    provider: &str,
    items: &[Scored],
) -> Result<(f64, f64)> {
    let s1 = mean(&items.iter().map(|i| i.s1).collect::<Vec<_>>()).unwrap_or(0.0);
    let any = mean(&items.iter().map(|i| i.s1_any_of).collect::<Vec<_>>()).unwrap_or(0.0);
    let mut tx = pool.begin().await?;
    if t.replace {
        sqlx::query(
            "UPDATE machine_runs SET status = 'replaced' WHERE status = 'done' AND id != ?
             AND (system_id, task_id, k, split) = (SELECT system_id, task_id, k, split FROM machine_runs WHERE id = ?)",
        )
        .bind(run)
        .bind(run)
        .execute(&mut *tx)
        .await?;
    }
    for i in items {
        sqlx::query("INSERT INTO machine_predictions (run_id, example_id, answer_json, spans_json, s1, s1_any_of) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(run)
            .bind(i.example)
            .bind(serde_json::to_string(&i.official).expect("strings serialise"))
            .bind(serde_json::to_string(&i.spans).expect("spans serialise"))
            .bind(i.s1)
            .bind(i.s1_any_of)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "UPDATE machine_runs SET status = 'done', provider = ?, s1 = ?, s1_any_of = ?, finished_at = ?, done = total WHERE id = ?",
    )
    .bind(provider)
    .bind(s1)
    .bind(any)
    .bind(now_ms())
    .bind(run)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok((s1, any))
}

/// Progress of a long run: a bar on stderr (when asked) and `done`/`total` in the runs' rows
/// (at most twice a second), read by the models page.
pub struct Progress {
    pool: SqlitePool,
    runs: Vec<i64>,
    handle: tokio::runtime::Handle,
    label: String,
    bar: bool,
    last: Option<Instant>,
}

impl Progress {
    fn new(pool: &SqlitePool, runs: Vec<i64>, label: String, bar: bool) -> Progress {
        Progress {
            pool: pool.clone(),
            runs,
            handle: tokio::runtime::Handle::current(),
            label,
            bar,
            last: None,
        }
    }

    /// Called from the blocking thread that runs the model.
    fn update(&mut self, done: usize, total: usize) {
        let finished = done >= total;
        if !finished && self.last.is_some_and(|t| t.elapsed().as_millis() < 500) {
            return;
        }
        self.last = Some(Instant::now());
        for run in &self.runs {
            let r = self.handle.block_on(
                sqlx::query("UPDATE machine_runs SET done = ?, total = ? WHERE id = ?")
                    .bind(done as i64)
                    .bind(total as i64)
                    .bind(run)
                    .execute(&self.pool),
            );
            if let Err(e) = r {
                tracing::warn!("cannot record progress of run {run}: {e}");
            }
        }
        if self.bar {
            let width = 30;
            let filled = if total == 0 {
                width
            } else {
                done * width / total
            };
            let mut err = std::io::stderr();
            let _ = write!(
                err,
                "\r{} [{}{}] {done}/{total} inputs",
                self.label,
                "#".repeat(filled),
                ".".repeat(width - filled)
            );
            if finished {
                let _ = writeln!(err);
            }
            let _ = err.flush();
        }
    }
}

async fn task_test(pool: &SqlitePool, task: &str) -> Result<(i64, TaskSpec, Vec<(i64, Example)>)> {
    let (id, spec, _) = load_spec(pool, task).await?;
    let test = examples_of(pool, id, None).await?;
    if test.is_empty() {
        return Err(ServerError::Usage(format!("task {task} has no test set")));
    }
    Ok((id, spec, test))
}

fn official_of(spec: &TaskSpec, spans: &[PredSpan]) -> Vec<String> {
    spec.to_official(&spans.iter().map(|s| s.text.clone()).collect::<Vec<_>>())
}

/// Evaluates a registered model on a task's test set and stores it under `t`.
pub async fn evaluate(
    pool: &SqlitePool,
    dir: &ModelDir,
    t: Target,
    device: Device,
    bar: bool,
) -> Result<Summary> {
    let (task_id, spec, test) = task_test(pool, &t.task).await?;
    // A model that cannot run is refused before anything is stored; it is loaded once.
    let d = dir.clone();
    let mut loaded = tokio::task::spawn_blocking(move || super::eval::load(&d, device))
        .await
        .map_err(|e| ServerError::Model(format!("loading the model stopped: {e}")))??;
    let settings = serde_json::to_string(&dir.decoding).expect("settings serialise");
    let run = start(
        pool,
        task_id,
        &t,
        &dir.dir.display().to_string(),
        &settings,
        "starting",
    )
    .await?;
    let mut progress = Progress::new(pool, vec![run], format!("{} on {}", t.system, t.task), bar);
    let (d, s, examples) = (
        dir.clone(),
        spec.clone(),
        test.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>(),
    );
    let result = tokio::task::spawn_blocking(move || {
        predict_loaded(&d, &mut loaded, &s, &examples, &mut |a, b| {
            progress.update(a, b)
        })
    })
    .await
    .map_err(|e| ServerError::Model(format!("the evaluation stopped: {e}")))
    .and_then(|r| r);
    let p = match result {
        Ok(p) => p,
        Err(e) => {
            fail(pool, &[run], &e.to_string()).await;
            return Err(e);
        }
    };
    let answers = p
        .spans
        .into_iter()
        .map(|s| (official_of(&spec, &s), s))
        .collect();
    let items = score_items(&spec, &test, answers);
    let (s1, s1_any_of) = finish(pool, run, &t, &p.provider, &items).await?;
    Ok(Summary {
        run,
        items: items.len(),
        s1,
        s1_any_of,
        provider: p.provider,
        seconds: p.seconds,
        target: t,
    })
}

/// The baseline on a task: a head per shot group (`groups`, or every group of the task),
/// each stored as a run of the baseline system; optionally each head exported as a model.
pub async fn run_baseline(
    pool: &SqlitePool,
    task: &str,
    groups: Option<Vec<(u32, u32)>>,
    replace: bool,
    export: Option<std::path::PathBuf>,
    bar: bool,
) -> Result<Vec<Summary>> {
    let (task_id, spec, test) = task_test(pool, task).await?;
    let all = app::ssr::study::shot_groups(pool, task_id).await?;
    let groups = match groups {
        None => all,
        Some(g) => {
            if let Some((k, s)) = g.iter().find(|x| !all.contains(x)) {
                return Err(ServerError::Usage(format!(
                    "task {task} has no shot group k={k} split={s}"
                )));
            }
            g
        }
    };
    if groups.is_empty() {
        return Err(ServerError::Usage(format!(
            "task {task} has no training files to train a head on"
        )));
    }
    let (encoder_path, tok_path) = baseline::encoder_files()?;
    let d = baseline::decoding(&spec);
    let training = Training::default();
    let settings = serde_json::json!({
        "decoding": d, "epochs": training.epochs, "learning_rate": training.learning_rate,
        "weight_decay": training.weight_decay, "seed": "k << 32 | split",
        "encoder": encoder_path.display().to_string(), "tokenizer": tok_path.display().to_string(),
    })
    .to_string();
    let target = |k, split| Target {
        system: baseline::SYSTEM.into(),
        kind: Kind::Baseline,
        task: task.into(),
        k,
        split,
        replace,
    };
    // Every shot group is checked before any run is opened: a refusal stores nothing.
    for &(k, split) in &groups {
        refuse_if_done(pool, task_id, &target(k, split)).await?;
    }
    let mut shots = Vec::new();
    let mut runs = Vec::new();
    let mut targets = Vec::new();
    for &(k, split) in &groups {
        let t = target(k, split);
        let examples = examples_of(pool, task_id, Some((k, split)))
            .await?
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        match start(
            pool,
            task_id,
            &t,
            "built-in baseline",
            &settings,
            "starting",
        )
        .await
        {
            Ok(run) => runs.push(run),
            Err(e) => {
                fail(
                    pool,
                    &runs,
                    "another shot group of this baseline run was refused",
                )
                .await;
                return Err(e);
            }
        }
        shots.push(Shots { k, split, examples });
        targets.push(t);
    }
    let started = Instant::now();
    let mut progress = Progress::new(pool, runs.clone(), format!("baseline on {task}"), bar);
    let (s, examples) = (
        spec.clone(),
        test.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>(),
    );
    let (ep, tp) = (encoder_path.clone(), tok_path.clone());
    let result = tokio::task::spawn_blocking(move || -> Result<_> {
        let tok = Tokenizer::open(&tp)?;
        let mut model = Model::open(&ep, Outputs::Hidden, Device::Auto)?;
        let provider = model.describe_provider();
        let trained = baseline::run(
            &mut model,
            &tok,
            &s,
            &examples,
            &shots,
            &d,
            &training,
            &mut |a, b| progress.update(a, b),
        )?;
        Ok((provider, trained))
    })
    .await
    .map_err(|e| ServerError::Model(format!("the baseline stopped: {e}")))
    .and_then(|r| r);
    let (provider, trained) = match result {
        Ok(x) => x,
        Err(e) => {
            fail(pool, &runs, &e.to_string()).await;
            return Err(e);
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut out = Vec::new();
    for ((tr, run), t) in trained.into_iter().zip(runs).zip(targets) {
        if let Some(dir) = &export {
            let sub = dir.join(format!("{task}-k{}-s{}", tr.k, tr.split));
            baseline::export(&sub, &encoder_path, &tok_path, &tr.head, &d)?;
        }
        let answers = tr
            .spans
            .into_iter()
            .map(|s| (official_of(&spec, &s), s))
            .collect();
        let items = score_items(&spec, &test, answers);
        let (s1, s1_any_of) = finish(pool, run, &t, &provider, &items).await?;
        out.push(Summary {
            run,
            items: items.len(),
            s1,
            s1_any_of,
            provider: provider.clone(),
            seconds,
            target: t,
        });
    }
    Ok(out)
}

/// Reads predictions from another system: the official CLUES format (`{"id", "answer"}` per
/// line), JSON lines of `{"<id>": [spans]}`, or one JSON object mapping ids to span lists (a
/// span is a string or `{"text": ...}`; a bare string is one span). The last two give span
/// sets, written in the task's official encoding.
pub fn read_imported(label: &str, text: &str) -> Result<(Vec<Prediction>, bool)> {
    let label = label.to_string();
    let spans_of = |v: &serde_json::Value, line: Option<usize>| -> Result<Vec<String>> {
        let list = match v {
            serde_json::Value::Array(a) => a.clone(),
            s @ serde_json::Value::String(_) => vec![s.clone()],
            _ => {
                return Err(ServerError::data(
                    &label,
                    line,
                    "a prediction must be a list of spans",
                ))
            }
        };
        list.iter()
            .map(|s| match s {
                serde_json::Value::String(t) => Ok(t.clone()),
                serde_json::Value::Object(o) => o
                    .get("text")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| {
                        ServerError::data(&label, line, "a span object needs a \"text\" string")
                    }),
                _ => Err(ServerError::data(
                    &label,
                    line,
                    "a span must be a string or {\"text\": ...}",
                )),
            })
            .collect()
    };
    // One object mapping ids to spans (the whole file; also a one-line file of the second form).
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) {
        if !map.contains_key("id") {
            let out = map
                .iter()
                .map(|(id, v)| {
                    Ok(Prediction {
                        id: id.clone(),
                        answer: spans_of(v, None)?,
                        line: 1,
                        skipped: false,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok((out, false));
        }
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let official = serde_json::from_str::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("id")))
        .unwrap_or(true);
    if official {
        return Ok((crate::score::parse_predictions(&label, text)?, true));
    }
    let mut out = Vec::new();
    let mut seen = HashMap::new();
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line = Some(i + 1);
        let v: serde_json::Value = serde_json::from_str(l)
            .map_err(|e| ServerError::data(&label, line, format!("malformed JSON: {e}")))?;
        let obj = v.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
            ServerError::data(
                &label,
                line,
                "expected {\"id\": ..., \"answer\": [...]} or one {\"<id>\": [spans]} per line",
            )
        })?;
        let (id, v) = obj.iter().next().expect("one key");
        if let Some(prev) = seen.insert(id.clone(), i + 1) {
            return Err(ServerError::data(
                &label,
                line,
                format!("id {id:?} is predicted twice (also on line {prev})"),
            ));
        }
        out.push(Prediction {
            id: id.clone(),
            answer: spans_of(v, line)?,
            line: i + 1,
            skipped: false,
        });
    }
    Ok((out, false))
}

/// Scores and stores imported predictions under `t`; every test item needs exactly one.
pub async fn import(pool: &SqlitePool, label: &str, text: &str, t: Target) -> Result<Summary> {
    let started = Instant::now();
    let (task_id, spec, test) = task_test(pool, &t.task).await?;
    let (preds, official) = read_imported(label, text)?;
    let by_id = crate::score::match_ids(test.iter().map(|(_, e)| e.id.as_str()), &preds, label)?;
    let answers = test
        .iter()
        .map(|(_, e)| {
            let a = &by_id[e.id.as_str()].answer;
            (
                if official {
                    a.clone()
                } else {
                    spec.to_official(a)
                },
                Vec::new(),
            )
        })
        .collect();
    let items = score_items(&spec, &test, answers);
    let run = start(pool, task_id, &t, label, "{}", "imported").await?;
    let (s1, s1_any_of) = finish(pool, run, &t, "imported", &items).await?;
    Ok(Summary {
        run,
        items: items.len(),
        s1,
        s1_any_of,
        provider: "imported".into(),
        seconds: started.elapsed().as_secs_f64(),
        target: t,
    })
}
