//! `report`: the score tables of a scope of studies as Markdown, CSV, JSON, or the whole
//! bundle (a tar with its content hash), to a file or stdout.

use super::{ReportArgs, ReportFormat};
use app::error::{AppError, Result};
use app::ssr::db::cli as db;

pub(super) async fn report(database: &str, a: &ReportArgs) -> Result<()> {
    let pool = db::connect_existing(database).await?;
    let scope = app::ssr::report::parse_scope(Some(&a.studies))?;
    if matches!(a.format, ReportFormat::Bundle) && a.out.is_none() {
        return Err(AppError::Invalid(
            "--format bundle needs --out <file>".into(),
        ));
    }
    let (loaded, r) = app::ssr::report::load(&pool, &scope)
        .await?
        .into_report()
        .await?;
    let bytes: Vec<u8> = match a.format {
        ReportFormat::Markdown => domain::report::draw::layout::markdown(&r).into(),
        ReportFormat::Csv => domain::report::draw::scores_csv::scores_csv(&r).into(),
        ReportFormat::Json => app::ssr::export::scores_json(&r)?.into(),
        ReportFormat::Bundle => {
            let bundle = app::ssr::bundle::build(&pool, &loaded, &r).await?;
            let hash = bundle.hash.clone();
            let path = a.out.as_ref().expect("checked above");
            let io = |e| AppError::io(format!("cannot write {}", path.display()), e);
            let file = std::fs::File::create(path).map_err(io)?;
            bundle
                .write_tar(std::io::BufWriter::new(file))
                .and_then(|mut w| {
                    use std::io::Write;
                    w.flush()
                })
                .map_err(io)?;
            eprintln!("content hash (SHA-256 of SHA256SUMS): {hash}");
            return Ok(());
        }
    };
    match &a.out {
        Some(path) => std::fs::write(path, bytes)
            .map_err(|e| AppError::io(format!("cannot write {}", path.display()), e))?,
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(&bytes)
                .map_err(|e| AppError::io("cannot write the report", e))?
        }
    }
    Ok(())
}
