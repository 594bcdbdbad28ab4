//! The study bundle: every file of a scope in one tar archive with a content hash. Members are
//! spooled, deflated, one after the other into a temporary file, as a tar states each file's
//! size first; each is written to the archive as soon as it is spooled, so the archive streams.

mod system_scores;

use super::export::{
    attention_csv, consent_csv, curve_svg, majority_predictions, predictions_of,
    questionnaires_csv, questionnaires_jsonl,
};
use super::pay::pay_csv;
use super::report::{Built, Loaded, Scope};
use super::stream::{write_rows, Out, RowFile, Spool, SpoolFile, SpoolTask, Spooled};
use crate::error::Error;
use crate::heavy::Kind;
use crate::study::Study;
use domain::export_file::ExportFile;
use domain::ids::{ConfigId, StudyId};
use domain::place::PlaceStatus;
use domain::report::draw::layout;
use domain::report::Report;
use domain::shots;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::future::Future;
use std::io::Write;
use std::sync::Arc;

/// Study configurations: the one in force and every saved version.
#[derive(Serialize)]
struct ConfigExport {
    study_id: StudyId,
    name: String,
    task: String,
    config_id: ConfigId,
    config: domain::study::StudyConfig,
    /// The scenarios' training files, e.g. `10_1 ⊂ 20_5 ⊂ 30_5`, and whether they nest.
    training_sets: String,
    nested: bool,
    /// SHA-256 of the consent text in force (what `consent.csv` records per worker).
    #[serde(skip_serializing_if = "Option::is_none")]
    consent_sha256: Option<String>,
    versions: Vec<Value>,
}

/// What the archive's writer is handed, in the archive's order: a member once spooled (read
/// back from the spool), or a text made at the end (`SHA256SUMS`, `manifest.json`).
enum Entry {
    Spooled {
        name: String,
        offset: u64,
        stored: u64,
        len: u64,
    },
    Text {
        name: String,
        text: String,
    },
    /// Every file is in: the archive may be ended. Without it (a file failed) the archive is
    /// left unfinished, so no client takes a cut bundle for a whole one.
    End,
}

/// The content hash of a set of files given as (name, hex SHA-256): SHA-256 of the
/// `sha256sum`-style listing (`<hex>  <name>\n` per file, sorted by name), so it is
/// independent of archive details. Returns the hash and the listing.
pub fn content_hash(files: &[(String, String)]) -> (String, String) {
    let mut listing = files.to_vec();
    listing.sort();
    let text: String = listing.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
    (hex::encode(Sha256::digest(text.as_bytes())), text)
}

/// The members spooled so far, with their hashes; each is handed to the archive's writer as
/// soon as it is spooled.
struct Members {
    spool: SpoolFile,
    hashes: Vec<(String, String)>,
    sizes: Vec<(String, u64)>,
    end: u64,
    /// To the archive's writer (unbounded: an entry is a name and three numbers).
    tar: std::sync::mpsc::Sender<Entry>,
}

impl Members {
    fn add(&mut self, name: String, done: Spooled) -> Result<(), Error> {
        self.hashes.push((name.clone(), done.sha256));
        self.sizes.push((name.clone(), done.len));
        let entry = Entry::Spooled {
            name,
            offset: self.end,
            stored: done.stored,
            len: done.len,
        };
        self.end += done.stored;
        self.hand_on(entry)
    }

    fn hand_on(&self, entry: Entry) -> Result<(), Error> {
        // The writer stops only on an error of its own (a client gone), returned at its end.
        self.tar
            .send(entry)
            .map_err(|_| Error::Request("the archive's writer stopped".into()))
    }

    /// A member written by `write` (text, JSON) straight into the spool.
    fn write(
        &mut self,
        name: String,
        write: impl FnOnce(&mut Spool<'_>) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        let mut member = self.spool.member();
        write(&mut member).map_err(Error::internal)?;
        let done = member.finish()?;
        self.add(name, done)
    }

    fn text(&mut self, name: String, text: &str) -> Result<(), Error> {
        self.write(name, |w| w.write_all(text.as_bytes()))
    }
}

/// Writes the bundle of `scope` as a tar archive to `out` (on a heavy thread of its own, as
/// each member is spooled): configurations and the platforms' ledger, then assignments and
/// annotations (streamed from the database), then, from `built` (the scope's report, polled
/// once the rows are in), scores, pay, predictions and charts, then `SHA256SUMS` and
/// `manifest.json`. The first bytes leave in seconds, however long the report takes to build.
/// Fixed times and modes, so the same data gives the same bytes. Returns the content hash and
/// `out`. The build is shared (with the dashboard and the other exports of its scope), never
/// copied.
pub async fn write<W: Write + Send + 'static>(
    pool: &sqlx::AnyPool,
    scope: &Scope,
    built: impl Future<Output = Result<Arc<Built>, Error>> + Send,
    out: W,
) -> Result<(String, W), Error> {
    let spool = SpoolFile::new()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = spool.file.try_clone().map_err(Error::internal)?;
    let writer = crate::heavy::spawn(Kind::Bundle, move || write_tar(&reader, rx, out));
    let members = Members {
        spool,
        hashes: Vec::new(),
        sizes: Vec::new(),
        end: 0,
        tar: tx,
    };
    let spooled = spool_all(pool, scope, built, members).await;
    // The sender is gone with the members: the writer has ended the archive (on `End`), or
    // left it unfinished, or failed on its own (a client gone).
    let written = writer.await?;
    let hash = spooled?;
    let out = written.map_err(|e| Error::Request(format!("the archive was not written: {e}")))?;
    Ok((hash, out))
}

/// Spools every member, handing each on; returns the content hash. The rows stream from the
/// database first (a minute or more on a large scope); then the report is taken (the kept
/// build, or a new one: `built` is polled only then) and the files made from it are spooled,
/// after which the build is let go.
async fn spool_all(
    pool: &sqlx::AnyPool,
    scope: &Scope,
    built: impl Future<Output = Result<Arc<Built>, Error>> + Send,
    mut m: Members,
) -> Result<String, Error> {
    let rows_version = crate::report::version(pool, &scope.studies).await?;
    let studies = crate::report::studies_in(pool, &scope.studies).await?;
    m.text("config.json".into(), &configs(pool, &studies).await?)?;
    // The crowd platforms' calls, where a study of the scope was published on one.
    let ids: Vec<_> = studies.iter().map(|s| s.id).collect();
    let (ledger, calls) = crate::platform::ledger::csv_of(pool, &ids).await?;
    if calls > 0 {
        m.text(ExportFile::LedgerCsv.as_str().into(), &ledger)?;
    }
    let rows = async {
        for (name, file) in [
            ("assignments.jsonl", RowFile::Assignments),
            (
                ExportFile::AnnotationsJsonl.as_str(),
                RowFile::AnnotationsJsonl,
            ),
            (ExportFile::AnnotationsCsv.as_str(), RowFile::AnnotationsCsv),
        ] {
            let mut out = Out::new(SpoolTask::start(m.spool));
            // On an error the spooling thread, its channel closed, ends by itself.
            write_rows(
                pool,
                &studies,
                scope.synthetic,
                file,
                Kind::Bundle,
                &mut out,
            )
            .await?;
            let (spool, done) = out.finish().await?.finish().await?;
            m.spool = spool;
            m.add(name.into(), done)?;
        }
        Ok::<_, Error>(m)
    };
    // The report only once the rows are in: it is held (~120 MB on 300k rows) only while its
    // files are spooled, so a new build of the scope (a watched dashboard's) is never held
    // beside it for as long as the rows take.
    let mut m = rows.await?;
    let built = built.await?;
    let versions = Versions {
        rows: rows_version,
        report: built.version,
    };
    // Serialisation and compression of what is in memory (seconds on a big scope): on a heavy
    // thread, not on the async workers that answer the crowd meanwhile.
    let m = crate::heavy::spawn(Kind::Bundle, move || {
        spool_from_build(&mut m, &built.loaded, &built.report).map(|()| m)
    })
    .await??;
    end(&m, &studies, versions)
}

/// The data versions the bundle's files were read at: its rows' and its report's. They differ
/// where the scope's data changed while the bundle was made (a study still answered).
#[derive(Clone, Copy, Serialize)]
struct Versions {
    rows: i64,
    report: i64,
}

/// Writes the archive from the entries handed on, reading spooled members back from `spool`
/// (at their offsets, without moving the spooling side's position).
fn write_tar<W: Write>(
    spool: &std::fs::File,
    entries: std::sync::mpsc::Receiver<Entry>,
    out: W,
) -> std::io::Result<W> {
    let mut tar = tar::Builder::new(Cut { out, cut: false });
    let add =
        |tar: &mut tar::Builder<Cut<W>>, name: &str, len: u64, data: &mut dyn std::io::Read| {
            let mut h = tar::Header::new_ustar();
            h.set_size(len);
            h.set_mode(0o644);
            h.set_mtime(0);
            h.set_cksum();
            tar.append_data(&mut h, format!("clues-lab-bundle/{name}"), data)?;
            // Each file leaves as soon as it is in: the first ones (the configuration, the
            // assignments) while the annotations are spooled.
            tar.get_mut().flush()
        };
    for e in entries {
        match e {
            Entry::Spooled {
                name,
                offset,
                stored,
                len,
            } => add(
                &mut tar,
                &name,
                len,
                &mut SpoolFile::read_at(spool, offset, stored),
            )?,
            Entry::Text { name, text } => {
                add(&mut tar, &name, text.len() as u64, &mut text.as_bytes())?
            }
            Entry::End => {
                let mut out = tar.into_inner()?.out;
                out.flush()?;
                return Ok(out);
            }
        }
    }
    // A file failed: nothing more reaches the client, not even the end of archive that the
    // tar builder writes when dropped.
    tar.get_mut().cut = true;
    Err(std::io::Error::other(
        "a file of the bundle failed: the archive is left unfinished",
    ))
}

/// A writer that can be cut off: once `cut`, what is written goes nowhere.
struct Cut<W> {
    out: W,
    cut: bool,
}

impl<W: Write> Write for Cut<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.cut {
            return Ok(data.len());
        }
        self.out.write(data)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.cut {
            return Ok(());
        }
        self.out.flush()
    }
}

/// Spools the files made from the report and the scope in memory.
fn spool_from_build(m: &mut Members, l: &Loaded, r: &Report) -> Result<(), Error> {
    // Written as it is serialised: on many annotators the text is tens of megabytes.
    m.write(ExportFile::ScoresJson.as_str().into(), |w| {
        let mut w = std::io::BufWriter::new(w);
        serde_json::to_writer_pretty(&mut w, r)?;
        w.write_all(b"\n")?;
        w.flush()
    })?;
    m.text(
        ExportFile::ScoresCsv.as_str().into(),
        &domain::report::draw::scores_csv::scores_csv(r),
    )?;
    m.text(ExportFile::ScoresMd.as_str().into(), &layout::markdown(r))?;
    m.text(ExportFile::PayCsv.as_str().into(), &pay_csv(l, r)?)?;
    m.text("analysis_plans.json".into(), &analysis_plans(r)?)?;
    // The systems' item scores, for the rerun of the humans against each system.
    m.text(
        system_scores::NAME.into(),
        &system_scores::system_scores_csv(l, r),
    )?;
    // A reviewer's rerun of the inferential cells in R, from the CSVs beside it.
    for (name, text) in ANALYSIS_R {
        m.text(name.into(), text)?;
    }
    // The study pages' files, where a study of the scope has pages (a bundle of studies
    // without them is as before).
    if l.studies.iter().any(|s| !s.config.pages.is_empty()) {
        use ExportFile::*;
        for (file, text) in [
            (QuestionnairesCsv, questionnaires_csv(l)?),
            (QuestionnairesJsonl, questionnaires_jsonl(l)?),
            (AttentionCsv, attention_csv(l)?),
            (ConsentCsv, consent_csv(l)?),
        ] {
            m.text(file.as_str().into(), &text)?;
        }
    }
    for a in l
        .annotators
        .iter()
        .filter(|a| a.status == PlaceStatus::Finished)
    {
        let (name, t) = predictions_of(l, a)?;
        m.text(format!("predictions/{name}"), &t)?;
    }
    for cell in &r.all.main {
        let (name, t) = majority_predictions(l, &cell.task, cell.k, false)?;
        m.text(format!("predictions/{name}"), &t)?;
    }
    for t in &r.tasks {
        m.text(
            format!("charts/{}.svg", t.name),
            &curve_svg(r, &t.name, false)?,
        )?;
    }
    Ok(())
}

/// Ends the bundle of `studies`: `SHA256SUMS` and `manifest.json`. Returns the content hash.
fn end(m: &Members, studies: &[Study], versions: Versions) -> Result<String, Error> {
    let (hash, listing) = content_hash(&m.hashes);
    let same = versions.rows == versions.report;
    let manifest = serde_json::json!({
        "format": "clues-lab study bundle, version 1",
        "studies": studies.iter().map(|s| s.id).collect::<Vec<_>>(),
        "data_versions": versions,
        "rows_match_report": same,
        "data_note": if same {
            "the row files and the files made from the report were read from the same data"
        } else {
            "the scope's data changed while the bundle was made (a study still answered): the row files (assignments, annotations) may hold answers the report's files (scores, pay, predictions) do not, or the other way round; download it again once the study is quiet for files that agree"
        },
        "content_sha256": hash,
        "content_hash_rule": "SHA-256 of SHA256SUMS (sha256sum format, sorted by file name)",
        "files": m.sizes.iter().map(|(name, len)| serde_json::json!({"name": name, "bytes": len})).collect::<Vec<_>>(),
    });
    m.hand_on(Entry::Text {
        name: "SHA256SUMS".into(),
        text: listing,
    })?;
    m.hand_on(Entry::Text {
        name: "manifest.json".into(),
        text: serde_json::to_string_pretty(&manifest).map_err(Error::internal)? + "\n",
    })?;
    m.hand_on(Entry::End)?;
    Ok(hash)
}

/// `analysis.R`: reruns the bundle's inferential cells with lme4 and lmerTest from its own
/// CSVs and prints each beside `scores.csv`'s value (see its header). It reads the other parts
/// from beside itself: the permutation test of annotator labels and its interval
/// (`analysis_relabel.R`), lmer and glmer run to their optimum and the logistic cells
/// (`analysis_fits.R`), the report's seeded draws remade (`analysis_draws.R`), and the humans
/// against each system from `system_scores.csv` (`analysis_systems.R`), and the training order
/// (`analysis_order.R`).
const ANALYSIS_R: [(&str, &str); 6] = [
    ("analysis.R", include_str!("analysis.R")),
    ("analysis_relabel.R", include_str!("analysis_relabel.R")),
    ("analysis_fits.R", include_str!("analysis_fits.R")),
    ("analysis_draws.R", include_str!("analysis_draws.R")),
    ("analysis_systems.R", include_str!("analysis_systems.R")),
    ("analysis_order.R", include_str!("analysis_order.R")),
];

async fn configs(pool: &sqlx::AnyPool, studies: &[Study]) -> Result<String, Error> {
    let mut configs = Vec::new();
    for s in studies {
        let versions: Vec<(i64, String, String)> = sqlx::query_as(
            "SELECT id, config_json, created_at FROM study_configs WHERE study_id = $1 ORDER BY id",
        )
        .bind(s.id)
        .fetch_all(pool)
        .await?;
        let shot_sets = crate::catalog::shot_sets(pool, s.task_id).await?;
        let nested = shots::not_nested(&shot_sets, &s.config.scenario_files()).is_empty();
        configs.push(ConfigExport {
            study_id: s.id,
            name: s.name.clone(),
            task: s.spec.name.clone(),
            config_id: s.config_id,
            config: s.config.clone(),
            training_sets: s.config.shot_group_text(nested),
            nested,
            consent_sha256: s.config.pages.consent.as_ref().map(|c| c.hash()),
            versions: versions
                .into_iter()
                .map(|(id, json, at)| {
                    let parsed: Option<domain::study::StudyConfig> =
                        serde_json::from_str(&json).ok();
                    let consent = parsed.and_then(|c| c.pages.consent).map(|c| c.hash());
                    let config: Value = serde_json::from_str(&json).unwrap_or(Value::String(json));
                    let mut v =
                        serde_json::json!({"config_id": id, "created_at": at, "config": config});
                    if let Some(h) = consent {
                        v["consent_sha256"] = Value::String(h);
                    }
                    v
                })
                .collect(),
        });
    }
    Ok(serde_json::to_string_pretty(&configs).map_err(Error::internal)? + "\n")
}

/// Each study's frozen analysis plan with its hash: `plan_json` is the exact text the SHA-256
/// was taken of, so `sha256(plan_json) == sha256` checks it. Public for the simulated bundles of
/// `clues-lab simulate --bundles`, which write the same file.
pub fn analysis_plans(r: &Report) -> Result<String, Error> {
    let plans: Vec<serde_json::Value> = r
        .plans
        .iter()
        .map(|p| match &p.frozen {
            Some(f) => serde_json::json!({
                "study": p.study,
                "task": p.task,
                "frozen_at": f.frozen_at,
                "sha256": f.sha256,
                "plan_json": f.json,
                "departures": f.deviations,
            }),
            None => serde_json::json!({
                "study": p.study,
                "task": p.task,
                "frozen_at": null,
                "note": "no plan was frozen before the study's data began: its comparisons are exploratory",
            }),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&plans).map_err(Error::internal)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The archive of two texts, ended or not.
    fn archive(end: bool) -> (std::io::Result<Vec<u8>>, usize) {
        let spool = tempfile::tempfile().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        for name in ["a.txt", "b.txt"] {
            let text = format!("{name}\n");
            tx.send(Entry::Text {
                name: name.into(),
                text,
            })
            .unwrap();
        }
        if end {
            tx.send(Entry::End).unwrap();
        }
        drop(tx);
        let mut seen = Vec::new();
        let out = write_tar(&spool, rx, Seen(&mut seen)).map(|_| ());
        let n = seen.len();
        (out.map(|()| seen), n)
    }

    /// A writer that keeps what it is given, behind a borrow.
    struct Seen<'a>(&'a mut Vec<u8>);

    impl Write for Seen<'_> {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_archive_is_ended_only_when_every_file_is_in() {
        let (whole, n) = archive(true);
        let whole = whole.unwrap();
        // Two members (a header and a block each), then the end: two zero blocks.
        assert_eq!(n, 4 * 512 + 1024);
        assert!(whole[n - 1024..].iter().all(|b| *b == 0));
        let names: Vec<String> = tar::Archive::new(&whole[..])
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["clues-lab-bundle/a.txt", "clues-lab-bundle/b.txt"]);
        // A file failed (no `End`): what was sent stays, and no end of archive follows.
        let (cut, n) = archive(false);
        assert!(cut.is_err());
        assert_eq!(n, 4 * 512);
    }

    #[test]
    fn content_hash_ignores_order() {
        let a = vec![
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "1".to_string()),
        ];
        let mut b = a.clone();
        b.reverse();
        assert_eq!(content_hash(&a).0, content_hash(&b).0);
        assert_eq!(content_hash(&a).1, "1  a\n2  b\n");
    }
}
