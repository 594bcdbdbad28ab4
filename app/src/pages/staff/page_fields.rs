//! The study form's part for a study's own pages (admins): the consent text and its contact,
//! Prolific's no-consent code and URL, questionnaires and attention checks as JSON, the limit
//! on failed checks, the debriefing.

use domain::study_pages::{Consent, StudyPages};
use leptos::prelude::*;

/// The study pages' fields: consent (Markdown, contact, Prolific's no-consent code or URL),
/// the questionnaires and attention checks as JSON (the format of `questionnaire.json` and
/// `attention.json`), the failure limit, the debriefing (Markdown).
#[derive(Clone, Copy)]
pub(super) struct PageFields {
    consent: RwSignal<String>,
    contact: RwSignal<String>,
    no_consent_code: RwSignal<String>,
    no_consent_url: RwSignal<String>,
    questionnaire: RwSignal<String>,
    checks: RwSignal<String>,
    max_failures: RwSignal<String>,
    debriefing: RwSignal<String>,
}

/// Pretty JSON of a part of the pages, empty when it is empty.
fn json_field<T: serde::Serialize>(value: &T, empty: bool) -> String {
    if empty {
        String::new()
    } else {
        serde_json::to_string_pretty(value).unwrap_or_default()
    }
}

impl PageFields {
    pub(super) fn new(p: &StudyPages) -> Self {
        let consent = p.consent.clone();
        let part =
            |f: fn(&Consent) -> &String| consent.as_ref().map(f).cloned().unwrap_or_default();
        PageFields {
            consent: RwSignal::new(part(|c| &c.text)),
            contact: RwSignal::new(part(|c| &c.contact)),
            no_consent_code: RwSignal::new(part(|c| &c.no_consent_code)),
            no_consent_url: RwSignal::new(part(|c| &c.no_consent_url)),
            questionnaire: RwSignal::new(json_field(&p.questionnaire, p.questionnaire.is_empty())),
            checks: RwSignal::new(json_field(
                &p.attention_checks,
                p.attention_checks.is_empty(),
            )),
            max_failures: RwSignal::new(
                p.attention_max_failures
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
            ),
            debriefing: RwSignal::new(p.debriefing.clone()),
        }
    }

    /// The pages, or every field that does not parse, each message naming its field (the
    /// server checks the rest).
    pub(super) fn read(&self) -> Result<StudyPages, Vec<String>> {
        let text = |s: RwSignal<String>| s.get_untracked().trim().to_string();
        let mut p = Problems::default();
        let consent = (!text(self.consent).is_empty()).then(|| Consent {
            text: self.consent.get_untracked(),
            contact: text(self.contact),
            no_consent_code: text(self.no_consent_code),
            no_consent_url: text(self.no_consent_url),
        });
        let questionnaire = p.take(match text(self.questionnaire) {
            t if t.is_empty() => Ok(Default::default()),
            t => serde_json::from_str(&t).map_err(|e| format!("Questionnaires (JSON): {e}")),
        });
        let attention_checks = p.take(match text(self.checks) {
            t if t.is_empty() => Ok(Vec::new()),
            t => serde_json::from_str(&t).map_err(|e| format!("Attention checks (JSON): {e}")),
        });
        let max = text(self.max_failures);
        let max_failures = p.take(if max.is_empty() {
            Ok(None)
        } else {
            max.parse().map(Some).map_err(|_| {
                format!("Failed attention checks allowed: {max:?} is not a whole number")
            })
        });
        let (Some(questionnaire), Some(attention_checks), Some(attention_max_failures)) =
            (questionnaire, attention_checks, max_failures)
        else {
            return Err(p.0);
        };
        Ok(StudyPages {
            consent,
            questionnaire,
            attention_checks,
            attention_max_failures,
            debriefing: self.debriefing.get_untracked().trim().to_string(),
        })
    }

    /// `frozen`: workers have started, so the questions and checks are shown read-only.
    pub(super) fn view(self, frozen: bool) -> impl IntoView {
        view! {
            <details
                class="study-pages"
                open=!self.consent.get_untracked().is_empty()
                    || !self.questionnaire.get_untracked().is_empty()
            >
                <summary>"Consent, questionnaires, attention checks, debriefing"</summary>
                <p class="hint">
                    "All optional. The format of questions and checks is in the README (the same as questionnaire.json and attention.json beside a study made on the command line)."
                </p>
                <label>
                    "Consent text (Markdown; empty: no consent page)"
                    <textarea name="consent" rows="6" bind:value=self.consent></textarea>
                </label>
                <label>
                    "Researcher's contact (shown under the consent text)"
                    <input name="contact" bind:value=self.contact />
                </label>
                <label>
                    "Prolific no-consent code"
                    <input name="no_consent_code" bind:value=self.no_consent_code />
                </label>
                <label>
                    "Prolific no-consent URL ({code} = the code; empty: Prolific's)"
                    <input name="no_consent_url" bind:value=self.no_consent_url />
                </label>
                <label>
                    "Questionnaires (JSON: {\"before\": [...], \"after\": [...]})"
                    <textarea
                        name="questionnaire"
                        rows="8"
                        readonly=frozen
                        bind:value=self.questionnaire
                    ></textarea>
                </label>
                <label>
                    "Attention checks (JSON list)"
                    <textarea
                        name="attention_checks"
                        rows="6"
                        readonly=frozen
                        bind:value=self.checks
                    ></textarea>
                </label>
                <label>
                    "Failed attention checks allowed before a worker is flagged (empty: report only)"
                    <input
                        name="attention_max_failures"
                        inputmode="numeric"
                        bind:value=self.max_failures
                    />
                </label>
                <label>
                    "Debriefing (Markdown, shown on the end page)"
                    <textarea name="debriefing" rows="4" bind:value=self.debriefing></textarea>
                </label>
            </details>
        }
    }
}

/// The problems of a form's fields, gathered so that all of them are shown at once.
#[derive(Default)]
pub(super) struct Problems(pub(super) Vec<String>);

impl Problems {
    /// The value, or `None` with its problem noted.
    pub(super) fn take<T>(&mut self, r: Result<T, String>) -> Option<T> {
        r.map_err(|e| self.0.push(e)).ok()
    }
}
