//! `report`: the score tables of a scope of studies as Markdown, CSV, JSON, or the whole
//! bundle (a tar with its content hash), to a file or stdout; `references`: the trivial answers.

use super::{ReferencesArgs, ReportArgs, ReportFormat};
use store::db::cli as db;
use store::error::{Error, Result};

pub(super) async fn report(database: &str, a: &ReportArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let scope = store::report::Scope {
        studies: store::report::parse_scope(Some(&a.studies))?,
        synthetic: a.synthetic,
    };
    let bundle_out = match (&a.format, &a.out) {
        (ReportFormat::Bundle, None) => {
            return Err(Error::Invalid("--format bundle needs --out <file>".into()))
        }
        (_, out) => out.clone(),
    };
    let built = std::sync::Arc::new(store::report::Built::of(&pool, &scope).await?);
    let r = &built.report;
    let bytes: Vec<u8> = match a.format {
        ReportFormat::Markdown => domain::report::draw::layout::markdown(r).into(),
        ReportFormat::Csv => domain::report::draw::scores_csv::scores_csv(r).into(),
        ReportFormat::Json => store::export::scores_json(r)?.into(),
        ReportFormat::Bundle => {
            let path = bundle_out
                .as_ref()
                .ok_or_else(|| Error::internal("no --out"))?;
            let io = |e| Error::io(format!("cannot write {}", path.display()), e);
            let file = std::fs::File::create(path).map_err(io)?;
            let ready = std::future::ready(Ok(built.clone()));
            let out = std::io::BufWriter::new(file);
            let (hash, _) = store::bundle::write(&pool, &scope, ready, out).await?;
            eprintln!("content hash (SHA-256 of SHA256SUMS): {hash}");
            return Ok(());
        }
    };
    match &a.out {
        Some(path) => std::fs::write(path, bytes)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?,
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(&bytes)
                .map_err(|e| Error::io("cannot write the report", e))?
        }
    }
    Ok(())
}

/// `references`: each task's reference answers (`domain::report::reference`) on its test set,
/// mean ± std over the training splits, as a Markdown table.
pub(super) async fn references(database: &str, a: &ReferencesArgs) -> Result<()> {
    use domain::report::reference;
    let pool = db::connect_existing(database).await?;
    let names: Vec<String> = if a.task.is_empty() {
        store::catalog::task_summaries(&pool)
            .await?
            .into_iter()
            .map(|t| t.name)
            .collect()
    } else {
        a.task.clone()
    };
    let runs = store::report::reference_runs(&pool, names.iter().map(String::as_str)).await?;
    if runs.is_empty() {
        return Err(Error::Invalid(
            "no task with reference answers: import a task with a test set first (text-to-text tasks have none)".into(),
        ));
    }
    let r = reference::alone(&runs);
    print!(
        "{}",
        domain::report::draw::versus::reference_table(&r, a.any_of).to_markdown()
    );
    Ok(())
}
