//! The researcher dashboard's data: studies with their progress, the score tables, the
//! learning curves, the export and prediction links of a scope of studies.

use crate::error::AppError;
use crate::ssr::reports::{Drawn, Freshness};
use crate::ssr::state::AppState;
use crate::wire::report::{Chart, DashboardData, Download, StudyProgress};
use domain::export_file::ExportFile;
use domain::ids::joined;
use domain::place::PlaceStatus;
use domain::report::draw::chart::task_curve;
use domain::report::draw::layout::all_tables;
use domain::report::draw::table::Table;
use domain::report::Which;
use store::{report, study};

/// The dashboard of the studies in `scope` (comma-separated ids, empty for every study), with
/// the synthetic workers of `load fill` where `synthetic` asks for them. The caller has checked
/// the role.
pub async fn dashboard(
    state: &AppState,
    studies: &str,
    synthetic: bool,
) -> Result<DashboardData, AppError> {
    let pool = &state.pool;
    let scope = report::Scope {
        studies: report::parse_scope(Some(studies))?,
        synthetic,
    };
    // The kept page of the scope (drawn anew in the background when the data has moved on):
    // it answers at once however large the study.
    let (drawn, freshness) = state
        .reports
        .page(&state.report_needs(), &scope, draw)
        .await?;
    let mut progress = Vec::with_capacity(drawn.studies.len());
    for s in &drawn.studies {
        let o = study::admin_view_of(pool, s).await?;
        progress.push(StudyProgress {
            summary: o.summary,
            progress: o.progress,
        });
    }
    let mut d = drawn.data.clone();
    d.studies = progress;
    if let Freshness::Behind { made_ms } = freshness {
        d.notes.insert(0, behind_note(made_ms, state.now_ms()));
    }
    Ok(d)
}

/// The page of a build, its studies' progress left out.
fn draw(built: &report::Built, scope: &report::Scope) -> Drawn {
    Drawn {
        data: build(built, scope),
        studies: built.loaded.studies.clone(),
    }
}

/// What the page says when it shows a build older than the data.
fn behind_note(made_ms: i64, now_ms: i64) -> String {
    let secs = (now_ms - made_ms).max(0) / 1000;
    format!(
        "The tables and charts are the report as built {secs} s ago; answers have come in since, and a new build is under way: reload in a moment to see them. The study progress above and every export are as of now."
    )
}

/// The rows of a table, and the annotators' prediction links, that the page shows. A scope of
/// hundreds of annotators (a load test's thousands) would otherwise send megabytes of rows that
/// a phone lays out for seconds (1,500 annotators: 2 MB of HTML, 55,000 elements, Lighthouse's
/// blocking time 2.1 s); the exports hold every row.
const PAGE_ROWS: usize = 100;

/// A table as the page shows it: its first `PAGE_ROWS` rows, the note saying so when it has more.
fn page_sized(mut t: Table) -> Table {
    let n = t.rows.len();
    if n > PAGE_ROWS {
        t.rows.truncate(PAGE_ROWS);
        t.note = format!(
            "{} Shown here: the first {PAGE_ROWS} of {n} rows; the report's exports (Markdown, JSON) hold every row.",
            t.note
        );
    }
    t
}

/// A list of names as the page shows it: its first `PAGE_ROWS`, then how many more.
fn page_sized_list(mut names: Vec<String>) -> Vec<String> {
    let n = names.len();
    if n > PAGE_ROWS {
        names.truncate(PAGE_ROWS);
        names.push(format!(
            "… and {} more (in the annotators table of the exports)",
            n - PAGE_ROWS
        ));
    }
    names
}

fn build(built: &report::Built, scope: &report::Scope) -> DashboardData {
    let (loaded, r) = (&built.loaded, &built.report);
    let links = Links::of(scope);
    let with_pages = loaded.studies.iter().any(|s| !s.config.pages.is_empty());
    // Each file linked once per scope; the study pages' files where a study has pages.
    let exports = ExportFile::ALL
        .iter()
        .filter(|f| with_pages || !f.of_pages())
        .filter_map(|f| {
            Some(Download {
                label: f.label()?.into(),
                href: links.to(f.as_str(), ""),
            })
        })
        .collect();
    DashboardData {
        scope: loaded.studies.iter().map(|s| s.id).collect(),
        all_studies: scope.studies.is_empty(),
        studies: Vec::new(),
        tables: all_tables(r).into_iter().map(page_sized).collect(),
        notes: r.notes.clone(),
        charts: charts(r, &links),
        flagged: page_sized_list(
            r.annotators
                .iter()
                .filter(|a| a.flagged)
                .map(|a| format!("{} ({} k={})", a.worker, a.task, a.k))
                .collect(),
        ),
        exports,
        predictions: predictions(r, &links),
    }
}

/// The export links of a scope: `/export/{file}?` with the scope's query and a file's own.
struct Links {
    query: String,
}

impl Links {
    fn of(scope: &report::Scope) -> Links {
        let query: Vec<String> = [
            (!scope.studies.is_empty()).then(|| format!("studies={}", joined(&scope.studies, ","))),
            scope.synthetic.then(|| "synthetic=1".to_string()),
        ]
        .into_iter()
        .flatten()
        .collect();
        Links {
            query: query.join("&"),
        }
    }

    fn to(&self, file: &str, extra: &str) -> String {
        let q: Vec<&str> = [self.query.as_str(), extra]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        if q.is_empty() {
            format!("/export/{file}")
        } else {
            format!("/export/{file}?{}", q.join("&"))
        }
    }
}

/// The predictions files: each scenario's majority vote, then each finished annotator's (the
/// first `PAGE_ROWS`; the bundle has every one).
fn predictions(r: &domain::report::Report, links: &Links) -> Vec<Download> {
    let file = ExportFile::PredictionsJsonl.as_str();
    let mut out: Vec<Download> = r
        .all
        .main
        .iter()
        .map(|c| Download {
            label: format!("{} k={}: majority vote", c.task, c.k),
            href: links.to(file, &format!("task={}&k={}", c.task, c.k)),
        })
        .collect();
    let finished: Vec<_> = r
        .annotators
        .iter()
        .filter(|a| a.status == PlaceStatus::Finished)
        .collect();
    out.extend(finished.iter().take(PAGE_ROWS).map(|a| Download {
        label: format!("{} k={}: {}", a.task, a.k, a.worker),
        href: links.to(file, &format!("assignment={}", a.assignment)),
    }));
    if finished.len() > PAGE_ROWS {
        out.push(Download {
            label: format!(
                "… {} more annotators: every annotator's file is in the study bundle",
                finished.len() - PAGE_ROWS
            ),
            href: links.to(ExportFile::BundleTar.as_str(), ""),
        });
    }
    out
}

/// Each task's learning curve (all annotators and the filtered view) and, where its systems
/// gave probabilities, its reliability diagram.
fn charts(r: &domain::report::Report, links: &Links) -> Vec<Chart> {
    r.tasks
        .iter()
        .map(|t| {
            let bins: Vec<_> = r
                .calibration
                .iter()
                .filter(|b| b.task == t.name)
                .cloned()
                .collect();
            Chart {
                task: t.name.clone(),
                svg: task_curve(r, &t.name, Which::All),
                svg_filtered: task_curve(r, &t.name, Which::Filtered),
                href: links.to(ExportFile::CurveSvg.as_str(), &format!("task={}", t.name)),
                calibration: (!bins.is_empty()).then(|| {
                    domain::report::draw::calibration::diagram(&t.name, &bins, &r.all.confidence)
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_table_shows_its_first_rows_and_says_so() {
        let table = |rows: usize| Table {
            id: "annotators".into(),
            title: "Annotators".into(),
            note: "One row per annotator.".into(),
            groups: Vec::new(),
            header: vec!["Worker".into()],
            rows: (0..rows).map(|i| vec![format!("w{i}")]).collect(),
        };
        assert_eq!(page_sized(table(PAGE_ROWS)), table(PAGE_ROWS));
        let long = page_sized(table(PAGE_ROWS + 1));
        assert_eq!(long.rows, table(PAGE_ROWS).rows);
        let names: Vec<String> = (0..PAGE_ROWS + 2).map(|i| format!("w{i}")).collect();
        let shown = page_sized_list(names.clone());
        assert_eq!(shown[..PAGE_ROWS], names[..PAGE_ROWS]);
        assert_eq!(
            shown[PAGE_ROWS],
            "… and 2 more (in the annotators table of the exports)"
        );
        assert_eq!(shown.len(), PAGE_ROWS + 1);
        assert_eq!(
            long.note,
            "One row per annotator. Shown here: the first 100 of 101 rows; the report's exports (Markdown, JSON) hold every row."
        );
    }
}
