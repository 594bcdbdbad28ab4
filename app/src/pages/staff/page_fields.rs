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
                    "All optional. The format of questions and checks is in docs/src/study-pages.md (the same as questionnaire.json and attention.json beside a study made on the command line)."
                </p>
                {text_area(
                    "Consent text (Markdown; empty: no consent page)",
                    "consent",
                    6,
                    self.consent,
                    false,
                )}
                {text_field(
                    "Researcher's contact (shown under the consent text)",
                    "contact",
                    self.contact,
                    false,
                )}
                {text_field(
                    "Prolific no-consent code",
                    "no_consent_code",
                    self.no_consent_code,
                    false,
                )}
                {text_field(
                    "Prolific no-consent URL ({code} = the code; empty: Prolific's)",
                    "no_consent_url",
                    self.no_consent_url,
                    false,
                )}
                {text_area(
                    "Questionnaires (JSON: {\"before\": [...], \"after\": [...]})",
                    "questionnaire",
                    8,
                    self.questionnaire,
                    frozen,
                )}
                {text_area(
                    "Attention checks (JSON list)",
                    "attention_checks",
                    6,
                    self.checks,
                    frozen,
                )}
                <label>
                    "Failed attention checks allowed before a worker is flagged (empty: report only)"
                    <input
                        name="attention_max_failures"
                        inputmode="numeric"
                        bind:value=self.max_failures
                    />
                </label>
                {text_area(
                    "Debriefing (Markdown, shown on the end page)",
                    "debriefing",
                    4,
                    self.debriefing,
                    false,
                )}
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

/// A labelled one-line text field bound to `value`; `readonly` once workers have started where
/// the field is frozen.
pub(super) fn text_field(
    label: &'static str,
    name: &'static str,
    value: RwSignal<String>,
    readonly: bool,
) -> impl IntoView {
    view! { <label>{label} <input name=name bind:value=value readonly=readonly /></label> }
}

/// A labelled checkbox bound to `value`; `disabled` where the setting is frozen.
pub(super) fn check_field(
    label: &'static str,
    name: &'static str,
    value: RwSignal<bool>,
    disabled: bool,
) -> impl IntoView {
    view! {
        <label class="check">
            <input name=name type="checkbox" disabled=disabled bind:checked=value />
            {label}
        </label>
    }
}

/// A labelled text area of `rows` rows bound to `value`; `readonly` where it is frozen.
fn text_area(
    label: &'static str,
    name: &'static str,
    rows: u32,
    value: RwSignal<String>,
    readonly: bool,
) -> impl IntoView {
    view! {
        <label>
            {label} <textarea name=name rows=rows readonly=readonly bind:value=value></textarea>
        </label>
    }
}

/// A labelled choice of names (tasks) that sets `value`; the first is chosen at first.
pub(super) fn name_select(
    label: &'static str,
    name: &'static str,
    names: Vec<String>,
    value: RwSignal<String>,
) -> impl IntoView {
    view! {
        <label>
            {label} " " <select name=name on:change=move |ev| value.set(event_target_value(&ev))>
                {names
                    .into_iter()
                    .map(|t| view! { <option value=t.clone()>{t.clone()}</option> })
                    .collect_view()}
            </select>
        </label>
    }
}
