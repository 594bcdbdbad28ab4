//! `clues-lab load authenticity`: every strategy of `domain::authenticity::simulate` as work
//! sessions over the API, against this binary's own router on a loopback socket whose clock is
//! simulated (each session's reading and time away pass on it without anyone sleeping; the
//! serving binary has no such clock), then each worker's level read back from the study's pay
//! sheet as the researcher sees it: per strategy, the share rated low.

use super::client::Client;
use super::crowd::{json_of, send_answer};
use app::ssr::limits::{Limiter, Limits};
use app::ssr::state::AppState;
use domain::authenticity::simulate::{AnswerModel, ItemShape, Session, Strategy, TaskAnswers};
use domain::ids::StudyId;
use domain::rng::SplitMix64;
use domain::task::{Context, Family};
use serde_json::json;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use store::clock::Clock;

/// What to run: each strategy's sessions, in this order, on `study`, an open zero-shot study of
/// a label task, the pay sheet read as researcher `user`.
pub struct Options {
    pub study: StudyId,
    pub strategies: Vec<(Strategy, usize)>,
    pub user: String,
    pub password: String,
}

/// One strategy's sessions and the levels the pay sheet gave them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub strategy: Strategy,
    pub sessions: usize,
    pub low: usize,
    pub mixed: usize,
}

impl Row {
    pub fn low_share(&self) -> f64 {
        self.low as f64 / self.sessions.max(1) as f64
    }
}

/// What a run found: a row per strategy, the sessions that failed, and why the machine
/// strategies were left out where they were (a build without the model track).
#[derive(Debug, Default)]
pub struct Rates {
    /// The study's test items.
    pub items: usize,
    pub rows: Vec<Row>,
    pub errors: Vec<String>,
    pub no_machine: Option<String>,
}

/// The strategies of `--strategies` (every one where none is named), each a `Strategy::name`
/// with `sessions` sessions, or `name=N` with N; a strategy named twice is refused.
pub fn strategies_named(
    names: &[String],
    sessions: usize,
) -> Result<Vec<(Strategy, usize)>, String> {
    if names.is_empty() {
        return Ok(Strategy::ALL.iter().map(|s| (*s, sessions)).collect());
    }
    let mut found: Vec<(Strategy, usize)> = Vec::new();
    for given in names {
        let (name, count) = match given.split_once('=') {
            Some((name, n)) => (
                name.trim(),
                n.trim().parse().map_err(|_| {
                    format!("{given:?}: the sessions after = must be a whole number")
                })?,
            ),
            None => (given.trim(), sessions),
        };
        let strategy = Strategy::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let all: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
                format!("no strategy {name:?}; there are {}", all.join(", "))
            })?;
        if found.iter().any(|(s, _)| *s == strategy) {
            return Err(format!("{name:?} is named twice"));
        }
        found.push((strategy, count));
    }
    Ok(found)
}

/// The study's test items as sessions meet them: each one's texts (to know it when the server
/// shows it), shape, and gold label.
struct Items {
    task_name: String,
    index: HashMap<String, usize>,
    shapes: Vec<ItemShape>,
    labels: Vec<String>,
    ids: Vec<String>,
    task: TaskAnswers,
    /// The one source a farm's sessions answer from (`Strategy::answers_from_source`).
    source: Vec<usize>,
}

fn texts_of(context: &Context, question: &str) -> String {
    match context {
        Context::Single { text } => format!("{text}\n{question}"),
        Context::Pair {
            premise,
            hypothesis,
        } => format!("{premise}\n{hypothesis}\n{question}"),
    }
}

async fn items(pool: &AnyPool, study: StudyId, model: &AnswerModel) -> Result<Items, String> {
    let s = store::study::load(pool, study)
        .await
        .map_err(|e| e.to_string())?;
    if s.spec.family != Family::Classification {
        return Err(format!(
            "study {study} is not of a label task: the sessions answer labels"
        ));
    }
    let labels = s.spec.label_names();
    let examples = store::catalog::test_examples(pool, s.task_id)
        .await
        .map_err(|e| e.to_string())?;
    let mut index = HashMap::new();
    let (mut shapes, mut gold, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for (i, e) in examples.iter().enumerate() {
        let texts = texts_of(&e.context, &e.question);
        shapes.push(ItemShape {
            words: texts.split_whitespace().count() as u32,
            chars: texts.chars().count() as u32,
            free_text: false,
        });
        let g = e.gold.official.first().cloned().unwrap_or_default();
        gold.push(labels.iter().position(|l| *l == g).unwrap_or(0));
        ids.push(e.id.clone());
        index.insert(texts, i);
    }
    let task = model.system_for(gold, &mut SplitMix64(study.0 as u64 ^ 0x5157));
    let source = model
        .system_for(task.gold.clone(), &mut SplitMix64(study.0 as u64 ^ 0xFA57))
        .system;
    Ok(Items {
        task_name: s.spec.name.clone(),
        index,
        shapes,
        labels,
        ids,
        task,
        source,
    })
}

/// Runs the sessions against a router of its own on `pool`'s database, on a simulated clock.
pub async fn run(pool: AnyPool, opts: Options) -> Result<Rates, String> {
    let model = AnswerModel::default();
    let items = items(&pool, opts.study, &model).await?;
    let clock = Clock::manual(store::auth::now_ms());
    let limits = Limits {
        joins_per_client: (1_000_000, Limits::default().joins_per_client.1),
        ..Limits::default()
    };
    let state = AppState {
        clock: clock.clone(),
        limiter: Arc::new(Limiter::new(limits)),
        ..AppState::new(
            pool,
            leptos::config::LeptosOptions::builder()
                .output_name(app::ssr::assets::OUTPUT_NAME)
                .build(),
        )
    };
    let app = crate::router::app(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let base = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, service)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    let found = tokio::task::spawn_blocking(move || drive(&base, &opts, &model, &items, &clock))
        .await
        .map_err(|e| e.to_string())?;
    let _ = stop.send(());
    let _ = server.await;
    found
}

fn is_machine(s: Strategy) -> bool {
    use domain::authenticity::simulate::Assisted;
    matches!(
        s,
        Strategy::Assisted(Assisted::MachineCopying | Assisted::MachineCopyingSome)
    )
}

/// The system the machine strategies copy, stored as an imported run (the researcher's upload)
/// so that the report reads it as any system; the reason where it cannot be.
fn upload_system(c: &Client, cookie: &str, task: &str, items: &Items) -> Result<(), String> {
    let lines: String = items
        .ids
        .iter()
        .zip(&items.task.system)
        .map(|(id, &l)| json!({"id": id, "answer": [items.labels[l]]}).to_string() + "\n")
        .collect();
    let r = c.post(
        &format!("/import/predictions?task={task}&system=simulated-system&replace=1"),
        "application/x-ndjson",
        &lines,
        &[("cookie", cookie)],
    )?;
    match r.status {
        200 => Ok(()),
        s => Err(format!("the system could not be stored ({s}): {}", r.body)),
    }
}

fn drive(
    base: &str,
    opts: &Options,
    model: &AnswerModel,
    items: &Items,
    clock: &Clock,
) -> Result<Rates, String> {
    let c = Client::new(base);
    let cookie = c.login(&opts.user, &opts.password)?;
    let mut rates = Rates {
        items: items.shapes.len(),
        ..Rates::default()
    };
    let wants_machine = opts.strategies.iter().any(|(s, _)| is_machine(*s));
    if wants_machine {
        rates.no_machine = upload_system(&c, &cookie, &items.task_name, items).err();
    }
    let tag = format!("a{}-", std::process::id());
    let mut rng = SplitMix64(opts.study.0 as u64);
    let mut jobs = Vec::new();
    for (k, (strategy, sessions)) in opts.strategies.iter().enumerate() {
        if is_machine(*strategy) && rates.no_machine.is_some() {
            continue;
        }
        for n in 0..*sessions {
            let pid = format!("{tag}{}-{n}", strategy.name());
            let seed = (k as u64 + 1) * 1_000_003 + n as u64;
            let s = Sim {
                c: &c,
                clock,
                study: opts.study,
                model,
                items,
            };
            if let Err(e) = s.session(&pid, *strategy, seed, &mut rng) {
                rates.errors.push(format!("{pid}: {e}"));
            }
            jobs.push((pid, *strategy));
        }
    }
    let levels = levels(&c, opts.study.0, &cookie)?;
    for (strategy, _) in &opts.strategies {
        let mut row = Row {
            strategy: *strategy,
            sessions: 0,
            low: 0,
            mixed: 0,
        };
        for (pid, _) in jobs.iter().filter(|(_, s)| s == strategy) {
            let Some(level) = levels.get(pid) else {
                continue;
            };
            row.sessions += 1;
            row.low += usize::from(level == "low");
            row.mixed += usize::from(level == "mixed");
        }
        if row.sessions > 0 {
            rates.rows.push(row);
        }
    }
    Ok(rates)
}

/// What one session needs: the client, the simulated clock, the study and its items.
struct Sim<'a> {
    c: &'a Client,
    clock: &'a Clock,
    study: StudyId,
    model: &'a AnswerModel,
    items: &'a Items,
}

impl Sim<'_> {
    /// Joins as `pid` and answers every item as `strategy` would: the server shows the item,
    /// the simulated clock moves on by the time the server would wait for the answer, and the
    /// answer comes with the page's record (or none, or a forged one).
    fn session(
        &self,
        pid: &str,
        strategy: Strategy,
        seed: u64,
        rng: &mut SplitMix64,
    ) -> Result<(), String> {
        let (c, study) = (self.c, self.study.0);
        let cookie = c.join(study, pid)?;
        let st = c.study_state(study, &cookie)?;
        let mut session = Session::new(seed, strategy, self.items.shapes.len());
        let mut step = st["step"].clone();
        loop {
            let item = &step["Item"];
            let Some(position) = item["position"].as_i64() else {
                return Ok(());
            };
            if !item["reveal"].is_null() {
                let body = format!("study_id={study}&position={position}");
                step = json_of(c.form("continue_study", &body, &cookie)?, "continue")?;
                continue;
            }
            let context: Context = serde_json::from_value(item["context"].clone())
                .map_err(|e| format!("the item's context: {e}"))?;
            let question = item["question"].as_str().unwrap_or_default();
            let i = *self
                .items
                .index
                .get(&texts_of(&context, question))
                .ok_or("an item the study's task does not have")?;
            let sim = session.item(&self.items.shapes[i]);
            self.clock.advance(Duration::from_millis(sim.server_ms));
            let label = match (sim.from_system, strategy.answers_from_source()) {
                (true, _) => self.items.task.system[i],
                (false, true) => self.items.source[i],
                (false, false) => self.model.human(&self.items.task, i, rng),
            };
            let answer =
                json!({"kind": "label", "label": self.items.labels[label], "confidence": 4});
            let body = json!({"study_id": study, "position": position, "client_id": format!("{pid}-{position}"),
                "answer": answer, "signals": sim.signals});
            step = send_answer(c, &cookie, position, &body)?;
        }
    }
}

/// Each crowd worker id's authenticity level, from the study's pay sheet.
fn levels(c: &Client, study: i64, cookie: &str) -> Result<HashMap<String, String>, String> {
    let r = c.get(&format!("/export/pay.csv?studies={study}"), cookie)?;
    if r.status != 200 {
        return Err(format!("pay.csv: {} {}", r.status, r.body));
    }
    let mut lines = r.body.lines();
    let header = cells(lines.next().unwrap_or_default());
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("pay.csv has no {name} column"))
    };
    let (id, level) = (col("crowd_worker_id")?, col("authenticity")?);
    Ok(lines
        .filter_map(|l| {
            let cells = cells(l);
            Some((cells.get(id)?.clone(), cells.get(level)?.clone()))
        })
        .collect())
}

/// The cells of one CSV line (quoted cells with doubled quotes; no line breaks in a cell).
pub fn cells(line: &str) -> Vec<String> {
    let (mut out, mut cell) = (Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cell)),
            (c, _) => cell.push(c),
        }
    }
    out.push(cell);
    out
}

/// The aim a strategy's row is read against, in words.
fn aim(s: Strategy, items: usize) -> String {
    if is_machine(s) && s.undetectable().is_none() {
        return "aim: at least 95% low where the system got about 30 test items wrong".into();
    }
    match (s.is_honest(), s.undetectable()) {
        (true, _) => "aim: at most 1% low".into(),
        (false, None) => match s.below_goal(items) {
            Some((why, least)) => {
                format!(
                    "aim: at least {:.0}% low on {items} items ({why})",
                    100.0 * least
                )
            }
            None => "aim: at least 95% low".into(),
        },
        (false, Some(why)) => format!("undetectable by design: {why}"),
    }
}

/// Prints the rates of a run as the benchmark reports them.
pub fn print(r: &Rates) {
    println!("| strategy | sessions | low | mixed | |");
    println!("| --- | --- | --- | --- | --- |");
    let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    for row in &r.rows {
        println!(
            "| {} | {} | {} ({:.1}%) | {} ({:.1}%) | {} |",
            row.strategy.name(),
            row.sessions,
            row.low,
            pct(row.low, row.sessions),
            row.mixed,
            pct(row.mixed, row.sessions),
            aim(row.strategy, r.items)
        );
    }
    let honest = r.rows.iter().filter(|row| row.strategy.is_honest());
    let (low, of) = honest.fold((0, 0), |(l, n), row| (l + row.low, n + row.sessions));
    println!(
        "{} items: honest sessions low {low} of {of} ({:.2}%)",
        r.items,
        pct(low, of)
    );
    if let Some(why) = &r.no_machine {
        println!("machine strategies left out: {why}");
    }
    if !r.errors.is_empty() {
        println!(
            "{} sessions failed, the first: {}",
            r.errors.len(),
            r.errors[0]
        );
    }
}
