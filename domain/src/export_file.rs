//! The files a researcher downloads (`/export/{file}`, the dashboard's links, the bundle's
//! members): one type with each file's name, content type, the dashboard's label and how it is
//! made (`Source`), so that adding a file has one home and every `match` on them is checked
//! whole: a new file says where it comes from, and the server's download of each source
//! handles every file of it.

use crate::named::named_enum;

named_enum! {
    /// An export file, named as `/export/{file}` and the bundle name it; in the order the
    /// dashboard lists them.
    pub enum ExportFile {
        AnnotationsJsonl = "annotations.jsonl",
        AnnotationsCsv = "annotations.csv",
        ScoresCsv = "scores.csv",
        ScoresJson = "scores.json",
        ScoresMd = "scores.md",
        PayCsv = "pay.csv",
        BundleTar = "bundle.tar",
        QuestionnairesCsv = "questionnaires.csv",
        QuestionnairesJsonl = "questionnaires.jsonl",
        AttentionCsv = "attention.csv",
        ConsentCsv = "consent.csv",
        PredictionsJsonl = "predictions.jsonl",
        CurveSvg = "curve.svg",
        PartitionJson = "partition.json",
        LedgerCsv = "ledger.csv",
    }
}

/// How an export file is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Streamed from the annotation rows, one row at a time.
    Rows(RowFormat),
    /// Built from the scope's report (a line per annotator, scenario or test item).
    Report(ReportFile),
    /// The study bundle: every file, spooled, with its content hash.
    Bundle,
    /// A CrossFit partition, read by name.
    Partition,
    /// The crowd platforms' ledger of the scope's studies, read from its table.
    Ledger,
}

/// The annotation rows' two formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFormat {
    Jsonl,
    Csv,
}

/// The files built from the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFile {
    ScoresCsv,
    ScoresJson,
    ScoresMd,
    PayCsv,
    QuestionnairesCsv,
    QuestionnairesJsonl,
    AttentionCsv,
    ConsentCsv,
    PredictionsJsonl,
    CurveSvg,
}

impl ExportFile {
    /// How the file is made.
    pub fn source(self) -> Source {
        use ExportFile::*;
        match self {
            AnnotationsJsonl => Source::Rows(RowFormat::Jsonl),
            AnnotationsCsv => Source::Rows(RowFormat::Csv),
            ScoresCsv => Source::Report(ReportFile::ScoresCsv),
            ScoresJson => Source::Report(ReportFile::ScoresJson),
            ScoresMd => Source::Report(ReportFile::ScoresMd),
            PayCsv => Source::Report(ReportFile::PayCsv),
            BundleTar => Source::Bundle,
            QuestionnairesCsv => Source::Report(ReportFile::QuestionnairesCsv),
            QuestionnairesJsonl => Source::Report(ReportFile::QuestionnairesJsonl),
            AttentionCsv => Source::Report(ReportFile::AttentionCsv),
            ConsentCsv => Source::Report(ReportFile::ConsentCsv),
            PredictionsJsonl => Source::Report(ReportFile::PredictionsJsonl),
            CurveSvg => Source::Report(ReportFile::CurveSvg),
            PartitionJson => Source::Partition,
            LedgerCsv => Source::Ledger,
        }
    }

    /// The `Content-Type` it is served with.
    pub fn content_type(self) -> &'static str {
        use ExportFile::*;
        match self {
            AnnotationsCsv | QuestionnairesCsv | AttentionCsv | ConsentCsv | ScoresCsv | PayCsv
            | LedgerCsv => "text/csv; charset=utf-8",
            AnnotationsJsonl | QuestionnairesJsonl | PredictionsJsonl => "application/x-ndjson",
            ScoresJson | PartitionJson => "application/json",
            ScoresMd => "text/markdown; charset=utf-8",
            CurveSvg => "image/svg+xml",
            BundleTar => "application/x-tar",
        }
    }

    /// The dashboard's link text, for the files it links once per scope (the others need an
    /// annotator, a scenario, a task or a partition).
    pub fn label(self) -> Option<&'static str> {
        use ExportFile::*;
        Some(match self {
            AnnotationsJsonl => "Annotations (JSONL)",
            AnnotationsCsv => "Annotations (CSV)",
            ScoresCsv => "Scores (CSV)",
            ScoresJson => "Scores (JSON)",
            ScoresMd => "Scores (Markdown)",
            PayCsv => "Pay (CSV)",
            BundleTar => "Study bundle (tar, with content hash)",
            QuestionnairesCsv => "Questionnaires (CSV, one answer a line)",
            QuestionnairesJsonl => "Questionnaires (JSONL)",
            AttentionCsv => "Attention checks (CSV)",
            ConsentCsv => "Consent decisions (CSV)",
            // The ledger is linked from a study's platform page, where it has calls.
            PredictionsJsonl | CurveSvg | PartitionJson | LedgerCsv => return None,
        })
    }

    /// The files of a study's own pages (consent, questionnaires, attention checks): linked
    /// and bundled only where a study of the scope has pages.
    pub fn of_pages(self) -> bool {
        use ExportFile::*;
        matches!(
            self,
            QuestionnairesCsv | QuestionnairesJsonl | AttentionCsv | ConsentCsv
        )
    }

    /// The export named `name`, or an error that lists them all.
    pub fn named(name: &str) -> Result<ExportFile, String> {
        ExportFile::parse(name).ok_or_else(|| {
            let all: Vec<&str> = ExportFile::ALL.iter().map(|f| f.as_str()).collect();
            format!("there is no export {name:?}; there are {}", all.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ExportFile;

    #[test]
    fn every_file_has_a_type_and_the_per_scope_ones_a_label() {
        for f in ExportFile::ALL {
            let ext = f.as_str().rsplit('.').next().unwrap();
            let kind = f.content_type();
            let fits = match ext {
                "csv" => kind.starts_with("text/csv"),
                "jsonl" => kind == "application/x-ndjson",
                "json" => kind == "application/json",
                "md" => kind.starts_with("text/markdown"),
                "svg" => kind == "image/svg+xml",
                "tar" => kind == "application/x-tar",
                _ => false,
            };
            assert!(fits, "{f:?}: {kind}");
        }
        let labelled = ExportFile::ALL.iter().filter(|f| f.label().is_some());
        assert_eq!(labelled.count(), 11);
        assert_eq!(ExportFile::named("pay.csv"), Ok(ExportFile::PayCsv));
        let e = ExportFile::named("secrets.txt").unwrap_err();
        assert!(e.contains("there is no export \"secrets.txt\"") && e.contains("bundle.tar"));
    }

    #[test]
    fn every_file_says_how_it_is_made_and_the_streamed_ones_are_the_big_ones() {
        use super::{RowFormat, Source};
        let of = |s: fn(&Source) -> bool| ExportFile::ALL.iter().filter(|f| s(&f.source())).count();
        assert_eq!(of(|s| matches!(s, Source::Rows(_))), 2);
        assert_eq!(of(|s| matches!(s, Source::Report(_))), 10);
        assert_eq!(
            ExportFile::AnnotationsCsv.source(),
            Source::Rows(RowFormat::Csv)
        );
        assert_eq!(ExportFile::BundleTar.source(), Source::Bundle);
        assert_eq!(ExportFile::PartitionJson.source(), Source::Partition);
    }
}
