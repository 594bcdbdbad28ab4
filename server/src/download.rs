//! Researcher downloads over HTTP: `GET /export/{file}?studies=1,2&…` (no `studies`: every
//! study). Researchers and admins only; each answer is an attachment named after its scope,
//! made as its `Source` says. Annotations and the bundle are streamed, so memory does not grow
//! with the number of rows. (`store::export` writes the files; this module serves them.)

use app::error::AppError;
use app::ssr::request::{flag, number, Ctx, Params, Staff};
use app::ssr::state::AppState;
use axum::body::Body;
use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use domain::export_file::{ExportFile, ReportFile, RowFormat, Source};
use domain::ids::{joined, AssignmentId};
use serde::Deserialize;
use store::heavy::Kind;
use store::stream::{write_rows, Channel, ChannelWriter, Out, RowFile};
use store::{bundle, export, report};
use tokio::sync::mpsc;

/// The query of an export: the scope, and what the one-scenario files need.
#[derive(Clone, Deserialize)]
pub struct ExportQuery {
    /// Comma-separated study ids; absent or empty: every study.
    studies: Option<String>,
    /// An annotator's predictions (`predictions.jsonl`).
    #[serde(default, deserialize_with = "number")]
    assignment: Option<i64>,
    /// A scenario's majority predictions (`predictions.jsonl`, with `task`).
    #[serde(default, deserialize_with = "number")]
    k: Option<u32>,
    task: Option<String>,
    /// Without the annotators the training filter flags.
    #[serde(default, deserialize_with = "flag")]
    filtered: bool,
    /// With the synthetic workers `load fill` made (left out unless asked for).
    #[serde(default, deserialize_with = "flag")]
    synthetic: bool,
    /// The partition of `partition.json`.
    name: Option<String>,
}

impl ExportQuery {
    fn task(&self) -> Result<&str, AppError> {
        self.task
            .as_deref()
            .ok_or_else(|| AppError::Invalid("name the task: ?task=…".into()))
    }
}

pub async fn export(
    c: Ctx<Staff>,
    Path(file): Path<String>,
    Params(q): Params<ExportQuery>,
) -> Result<Response, AppError> {
    build(&c.state, &file, &q).await
}

/// Letters, digits, `.`, `-` and `_` only, for a download's file name.
fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Pieces of a streamed download waiting for the client (each up to `stream::CHUNK` bytes).
const PIECES_IN_FLIGHT: usize = 8;

/// A body fed through a bounded channel (it may be polled again after its end, as the
/// compression layer does: the receiver then keeps answering "no more").
fn body_of(mut rx: mpsc::Receiver<Result<Vec<u8>, std::io::Error>>) -> Body {
    Body::from_stream(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}

/// A body written by `produce` on its own task; an error cuts the download short (the client
/// sees an incomplete transfer, never a complete-looking file).
fn streamed<F, Fut>(produce: F) -> Body
where
    F: FnOnce(mpsc::Sender<Result<Vec<u8>, std::io::Error>>) -> Fut,
    Fut: std::future::Future<Output = Result<(), store::Error>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(PIECES_IN_FLIGHT);
    let fail = tx.clone();
    let work = produce(tx);
    tokio::spawn(async move {
        if let Err(e) = work.await {
            let _ = fail.send(Err(std::io::Error::other(e.to_string()))).await;
        }
    });
    body_of(rx)
}

/// The files built from the report (a few kilobytes to megabytes: one line per annotator,
/// scenario or test item).
fn report_file(
    loaded: &report::Loaded,
    r: &domain::report::Report,
    file: ReportFile,
    q: &ExportQuery,
    name: &mut String,
) -> Result<String, AppError> {
    Ok(match file {
        ReportFile::ScoresJson => export::scores_json(r)?,
        ReportFile::ScoresCsv => domain::report::draw::scores_csv::scores_csv(r),
        ReportFile::ScoresMd => domain::report::draw::layout::markdown(r),
        ReportFile::PayCsv => store::pay::pay_csv(loaded, r)?,
        ReportFile::QuestionnairesCsv => export::questionnaires_csv(loaded)?,
        ReportFile::QuestionnairesJsonl => export::questionnaires_jsonl(loaded)?,
        ReportFile::AttentionCsv => export::attention_csv(loaded)?,
        ReportFile::ConsentCsv => export::consent_csv(loaded)?,
        ReportFile::PredictionsJsonl => {
            let (n, text) = match q.assignment {
                Some(a) => export::annotator_predictions(loaded, AssignmentId(a))?,
                None => {
                    let k = q.k.ok_or_else(|| {
                        AppError::Invalid(
                            "name an annotator (?assignment=…) or a scenario (?task=…&k=…)".into(),
                        )
                    })?;
                    export::majority_predictions(loaded, q.task()?, k, q.filtered)?
                }
            };
            *name = format!("clues-lab-{n}");
            text
        }
        ReportFile::CurveSvg => {
            let task = q.task()?;
            *name = format!("clues-lab-{task}-learning-curve.svg");
            export::curve_svg(r, task, q.filtered)?
        }
    })
}

/// A CrossFit partition as its JSON file.
async fn partition_json(state: &AppState, q: &ExportQuery) -> Result<Response, AppError> {
    let name = q
        .name
        .as_deref()
        .ok_or_else(|| AppError::Invalid("name the partition: ?name=…".into()))?;
    let p = store::crossfit::partition(&state.pool, name).await?;
    let disposition = format!(
        "attachment; filename=\"{}\"",
        safe_name(&format!("crossfit-partition-{name}.json"))
    );
    Ok((
        [
            (
                header::CONTENT_TYPE,
                ExportFile::PartitionJson.content_type().to_string(),
            ),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        p.to_json(),
    )
        .into_response())
}

/// The annotations of a scope, streamed from the database row by row (nothing else is
/// loaded), as CSV or JSONL; `turn` is held until the download is written.
async fn annotations(
    state: &AppState,
    scope: &report::Scope,
    format: RowFormat,
    turn: tokio::sync::OwnedSemaphorePermit,
) -> Result<Body, AppError> {
    let studies = report::studies_in(&state.pool, &scope.studies).await?;
    let synthetic = scope.synthetic;
    let rows = match format {
        RowFormat::Csv => RowFile::AnnotationsCsv,
        RowFormat::Jsonl => RowFile::AnnotationsJsonl,
    };
    let pool = state.pool.clone();
    let body = streamed(move |tx| async move {
        let _turn = turn;
        let mut out = Out::new(Channel(tx));
        write_rows(&pool, &studies, synthetic, rows, Kind::Rows, &mut out).await?;
        out.finish().await.map(drop)
    });
    Ok(body)
}

async fn build(state: &AppState, file: &str, q: &ExportQuery) -> Result<Response, AppError> {
    let file = ExportFile::named(file).map_err(AppError::NotFound)?;
    let scope = report::Scope {
        studies: report::parse_scope(q.studies.as_deref())?,
        synthetic: q.synthetic,
    };
    let scope_name = if scope.studies.is_empty() {
        "all-studies".to_string()
    } else {
        format!("studies-{}", joined(&scope.studies, "-"))
    };
    let mut name = format!("clues-lab-{scope_name}-{}", file.as_str());
    // A heavy download's turn is held until it is written (moved into the task that streams it).
    let body = match file.source() {
        Source::Partition => return partition_json(state, q).await,
        Source::Ledger => {
            let (text, _) = store::platform::ledger::csv_of(&state.pool, &scope.studies).await?;
            Body::from(text)
        }
        Source::Rows(format) => {
            let turn = state.limiter.heavy_turn(Kind::Rows).await?;
            annotations(state, &scope, format, turn).await?
        }
        Source::Bundle => {
            let turn = state.limiter.heavy_turn(Kind::Bundle).await?;
            // An unknown study is a 404 before anything is sent.
            report::studies_in(&state.pool, &scope.studies).await?;
            // The report is taken (the kept build, or a new one) once the rows, which leave
            // first, are in.
            let (reports, needs, s) = (state.reports.clone(), state.report_needs(), scope.clone());
            let built = async move {
                reports
                    .current(&needs, &s)
                    .await
                    .map_err(|e| store::error::Error::Request(e.to_string()))
            };
            // Streamed as it is spooled: its content hash is known only at the end, so it is
            // in the archive (`SHA256SUMS`, `manifest.json`), not in a header or the name.
            name = format!("clues-lab-{scope_name}-bundle.tar");
            let (tx, rx) = mpsc::channel(PIECES_IN_FLIGHT);
            let (pool, scope) = (state.pool.clone(), scope.clone());
            tokio::spawn(async move {
                let _turn = turn;
                let out = ChannelWriter::new(tx.clone());
                if let Err(e) = bundle::write(&pool, &scope, built, out).await {
                    tracing::warn!("bundle download stopped: {e}");
                    let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                }
            });
            body_of(rx)
        }
        Source::Report(made) => {
            // The scope's kept build when the data has not changed since (no turn to wait
            // for), else the one build that every request for the scope shares.
            let built = state.reports.current(&state.report_needs(), &scope).await?;
            let q = q.clone();
            let (file_name, text) = report::off_runtime(move || {
                let mut name = name;
                let text = report_file(&built.loaded, &built.report, made, &q, &mut name);
                text.map(|t| (name, t))
            })
            .await??;
            name = file_name;
            Body::from(text)
        }
    };
    let disposition = format!("attachment; filename=\"{}\"", safe_name(&name));
    let res = (
        [
            (header::CONTENT_TYPE, file.content_type().to_string()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response();
    Ok(res)
}
