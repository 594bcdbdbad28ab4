//! `import crossfit`, `import crossfit-source` and the `crossfit` commands: tasks, metrics,
//! runs, reference methods, partitions, study tasks and average relative gain.

use super::args::CrossfitCommand;
use domain::crossfit::baseline::Baseline;
use domain::crossfit::partition::Partition;
use store::crossfit as xf;
use store::error::{read_text, Error, Result};

pub(super) async fn report_stored(
    pool: &sqlx::AnyPool,
    tasks: Vec<store::crossfit::NewTask>,
) -> Result<()> {
    let outcomes = xf::store_tasks(pool, &tasks).await?;
    for (t, o) in tasks.iter().zip(outcomes) {
        let seeds: std::collections::BTreeSet<u32> = t.files.iter().map(|f| f.seed).collect();
        println!(
            "{}: {} ({} files, seeds {:?}, metric {}{})",
            t.name,
            match o {
                xf::Outcome::Imported => "imported",
                xf::Outcome::Unchanged => "unchanged",
            },
            t.files.len(),
            seeds,
            t.metric.name(),
            if t.ontology.is_empty() {
                ", no ontology path: set one with `crossfit set`"
            } else {
                ""
            }
        );
    }
    Ok(())
}

pub(super) async fn crossfit_command(pool: &sqlx::AnyPool, c: CrossfitCommand) -> Result<()> {
    match c {
        CrossfitCommand::Tasks => {
            for t in xf::list_tasks(pool).await? {
                println!(
                    "{}\t{}\t{}\tseeds {:?}\tk {:?}\t{} test lines",
                    t.name,
                    t.ontology,
                    t.metric.name(),
                    t.seeds,
                    t.ks,
                    t.test_items
                );
            }
        }
        CrossfitCommand::Set {
            task,
            ontology,
            metric,
        } => set_task(pool, &task, ontology, metric).await?,
        CrossfitCommand::Run {
            method,
            task,
            seed,
            predictions,
        } => {
            let text = read_text(&predictions)?;
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let score =
                xf::store_run(pool, &method, &task, seed, "predictions", &lines, None).await?;
            println!(
                "{method} on {task} (seed {seed}): {} = {}",
                score.metric.name(),
                fmt_value(score.value)
            );
        }
        CrossfitCommand::Baseline { method, task } => baseline(pool, &method, task).await?,
        CrossfitCommand::PartitionImport { name, file } => {
            let text = read_text(&file)?;
            let p = Partition::from_json(&text)
                .map_err(|e| Error::data(file.display().to_string(), None, e))?;
            xf::save_partition(pool, &name, &p).await?;
            println!(
                "stored partition {name}: {} train, {} dev, {} test tasks",
                p.train.len(),
                p.dev.len(),
                p.test.len()
            );
        }
        CrossfitCommand::StudyTask { task, seed } => {
            let (name, k) = xf::make_study_task(pool, &task, seed).await?;
            println!("created the study task {name} (scenarios 0 and {k}): study create --task {name} --scenarios 0,{k} …");
        }
        CrossfitCommand::PartitionExport { name } => {
            print!("{}", xf::partition(pool, &name).await?.to_json())
        }
        #[cfg(feature = "models")]
        CrossfitCommand::Learn(a) => learners::crossfit::learn(pool, a).await?,
        #[cfg(feature = "models")]
        CrossfitCommand::Upstream(a) => learners::crossfit::upstream::upstream(pool, a).await?,
        CrossfitCommand::Table {
            partition,
            methods,
            baseline,
        } => table(pool, &partition, &methods, &baseline).await?,
        CrossfitCommand::Arg {
            partition,
            method,
            baseline,
        } => arg(pool, &partition, &method, &baseline).await?,
    }
    Ok(())
}

/// `crossfit set`: a task's ontology path and metric (each kept where not given).
async fn set_task(
    pool: &sqlx::AnyPool,
    task: &str,
    ontology: Option<String>,
    metric: Option<String>,
) -> Result<()> {
    let current = xf::list_tasks(pool)
        .await?
        .into_iter()
        .find(|t| t.name == task)
        .ok_or_else(|| Error::Invalid(format!("no CrossFit task named {task:?}")))?;
    xf::set_task_meta(
        pool,
        task,
        &ontology.unwrap_or(current.ontology),
        &metric.unwrap_or_else(|| current.metric.name().to_string()),
    )
    .await?;
    println!("updated {task}");
    Ok(())
}

/// `crossfit baseline`: a reference method's runs on one task or every task.
async fn baseline(pool: &sqlx::AnyPool, method: &str, task: Option<String>) -> Result<()> {
    let b = Baseline::parse(method).ok_or_else(|| {
        Error::Invalid(format!(
            "{method:?}: the reference methods are majority-output and nearest-input"
        ))
    })?;
    let tasks = match task {
        Some(t) => vec![t],
        None => xf::list_tasks(pool)
            .await?
            .into_iter()
            .map(|t| t.name)
            .collect(),
    };
    for t in tasks {
        let runs = crate::crossfit::run_baseline_missing(pool, b, &t).await?;
        if !runs.kept.is_empty() {
            eprintln!(
                "{t}: seeds {:?} already have a run of {}, kept",
                runs.kept,
                b.name()
            );
        }
        for (seed, score) in runs.made {
            println!(
                "{} on {t} (seed {seed}): {} = {}",
                b.name(),
                score.metric.name(),
                fmt_value(score.value)
            );
        }
    }
    Ok(())
}

/// `crossfit arg`: the average relative gain of `method` over `baseline` per seed and overall.
async fn arg(pool: &sqlx::AnyPool, partition: &str, method: &str, baseline: &str) -> Result<()> {
    let r = xf::arg_report(pool, partition, method, baseline).await?;
    for (seed, arg) in &r.seeds {
        for g in &arg.gains {
            println!(
                "seed {seed}\t{}\t{:.4} vs {:.4}\t{}",
                g.task,
                g.score,
                g.baseline,
                g.gain.map_or("undefined (baseline 0)".into(), |x| format!(
                    "{:+.2}%",
                    100.0 * x
                ))
            );
        }
        if !arg.missing.is_empty() {
            println!("seed {seed}\tno runs for: {}", arg.missing.join(", "));
        }
        println!(
            "seed {seed}\tARG {}",
            arg.arg
                .map_or("undefined".into(), |x| format!("{:+.2}%", 100.0 * x))
        );
    }
    match r.spread {
        Some(s) => println!(
            "ARG over {} seeds: {:+.2}% ± {:.2}% (population std)",
            s.n,
            100.0 * s.mean,
            100.0 * s.std_pop
        ),
        None => println!("ARG: undefined (no seed with both runs)"),
    }
    Ok(())
}

/// `crossfit table`: a Markdown row per method with its mean relative gain on each test task
/// (over the seeds where it is defined) and its ARG, mean ± standard deviation over seeds.
async fn table(
    pool: &sqlx::AnyPool,
    partition: &str,
    methods: &[String],
    baseline: &str,
) -> Result<()> {
    let pct = |v: Option<f64>| v.map_or("n/a".to_string(), |x| format!("{:+.2}%", 100.0 * x));
    let mut header = false;
    for method in methods {
        let r = xf::arg_report(pool, partition, method, baseline).await?;
        if !header {
            println!(
                "| method | {} | ARG (mean ± population std over seeds) |",
                r.tasks.join(" | ")
            );
            println!("|{}", " --- |".repeat(r.tasks.len() + 2));
            header = true;
        }
        let per_task: Vec<String> = r
            .tasks
            .iter()
            .map(|t| {
                let gains: Vec<f64> = r
                    .seeds
                    .iter()
                    .flat_map(|(_, a)| {
                        a.gains
                            .iter()
                            .filter(|g| &g.task == t)
                            .filter_map(|g| g.gain)
                    })
                    .collect();
                pct((!gains.is_empty()).then(|| gains.iter().sum::<f64>() / gains.len() as f64))
            })
            .collect();
        let arg = r.spread.map_or("n/a".into(), |s| {
            format!(
                "{:+.2}% ± {:.2}% ({} seeds)",
                100.0 * s.mean,
                100.0 * s.std_pop,
                s.n
            )
        });
        println!("| {method} | {} | {arg} |", per_task.join(" | "));
    }
    Ok(())
}

fn fmt_value(v: Option<f64>) -> String {
    v.map_or("undefined".into(), |x| format!("{x:.6}"))
}
