//! A study's own pages from a folder beside a study made on the command line: `consent.md`,
//! `questionnaire.json`, `attention.json` and `debriefing.md`, each optional.

use super::args::StudyCreateArgs;
use domain::study_pages::{Consent, StudyPages};
use std::path::Path;
use store::error::Error;

/// The file's text, `None` when it is not there.
fn optional(dir: &Path, name: &str) -> Result<Option<String>, Error> {
    let path = dir.join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

fn json<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>, Error> {
    optional(dir, name)?
        .map(|text| {
            serde_json::from_str(&text).map_err(|e| Error::Data {
                file: dir.join(name).display().to_string(),
                line: Some(e.line()),
                message: e.to_string(),
            })
        })
        .transpose()
}

/// The pages `--pages` and its flags describe (none without `--pages`); the study's creation
/// checks them against the task.
pub fn read(a: &StudyCreateArgs) -> Result<StudyPages, Error> {
    let Some(dir) = &a.pages else {
        return Ok(StudyPages::default());
    };
    if !dir.is_dir() {
        return Err(Error::Invalid(format!(
            "--pages: {} is not a folder",
            dir.display()
        )));
    }
    let consent = optional(dir, "consent.md")?.map(|text| Consent {
        text,
        contact: a.contact.trim().to_string(),
        no_consent_code: a.no_consent_code.trim().to_string(),
        no_consent_url: a.no_consent_url.trim().to_string(),
    });
    let pages = StudyPages {
        consent,
        questionnaire: json(dir, "questionnaire.json")?.unwrap_or_default(),
        attention_checks: json(dir, "attention.json")?.unwrap_or_default(),
        attention_max_failures: a.attention_max_failures,
        debriefing: optional(dir, "debriefing.md")?
            .unwrap_or_default()
            .trim()
            .to_string(),
    };
    if pages.is_empty() {
        return Err(Error::Invalid(format!(
            "--pages: {} holds none of consent.md, questionnaire.json, attention.json, debriefing.md",
            dir.display()
        )));
    }
    Ok(pages)
}
