//! The study configuration form's fields: read as typed, checked with the server's rules (every
//! problem at once), checked again as they are edited, and drawn (frozen parts read-only).

use super::page_fields::{check_field, text_field, PageFields, Problems};
use domain::analysis_plan::{self, AnalysisChoices};
use domain::settings;
use domain::shots::{self, ShotFile};
use domain::study::StudyConfig;
use leptos::prelude::*;

/// The problems the form's fields have, all of them, as one alert.
pub(super) fn problem_alert(problems: RwSignal<Vec<String>>) -> impl IntoView {
    move || {
        let list = problems.get();
        (!list.is_empty()).then(|| {
            view! {
                <div class="error" role="alert">
                    <p>{if list.len() == 1 { "Fix this field:" } else { "Fix these fields:" }}</p>
                    <ul class="problems">
                        {list.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
                    </ul>
                </div>
            }
        })
    }
}

/// Every problem of a study's form at once: its name, its task where the form chooses one
/// (`task`), and its configuration's fields; or the name (trimmed) and the configuration.
pub(super) fn read_study(
    name: RwSignal<String>,
    task: Option<RwSignal<String>>,
    fields: ConfigFields,
) -> Result<(String, StudyConfig), Vec<String>> {
    let mut p = Problems::default();
    let name = p.take(domain::study::check_name(&name.get_untracked()));
    if task.is_some_and(|t| t.get_untracked().is_empty()) {
        p.0.push("Task: choose the study's task".into());
    }
    let config = fields.read().map_err(|e| p.0.extend(e)).ok();
    match (name, config) {
        (Some(name), Some(config)) if p.0.is_empty() => Ok((name, config)),
        _ => Err(p.0),
    }
}

/// A study form's reading: every problem at once when it is sent (`problem_alert` shows them),
/// checked again as its fields are edited once a send found some, so that a fixed field's
/// problem goes.
#[derive(Clone, Copy)]
pub(super) struct StudyForm<R: Fn() -> Result<(String, StudyConfig), Vec<String>> + Copy + 'static>
{
    read: R,
    pub(super) problems: RwSignal<Vec<String>>,
}

impl<R: Fn() -> Result<(String, StudyConfig), Vec<String>> + Copy + 'static> StudyForm<R> {
    pub(super) fn new(read: R) -> Self {
        StudyForm {
            read,
            problems: RwSignal::new(Vec::new()),
        }
    }

    /// The form's `input` and `change` events: its problems again, once it has some.
    pub(super) fn recheck(self) {
        if !self.problems.get_untracked().is_empty() {
            self.problems.set((self.read)().err().unwrap_or_default());
        }
    }

    /// The form's submit: `send` with the name and configuration, or every problem.
    pub(super) fn on_submit(
        self,
        send: impl Fn(String, StudyConfig) + Copy + 'static,
    ) -> impl Fn(leptos::ev::SubmitEvent) + Copy + 'static {
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            match (self.read)() {
                Ok((name, config)) => {
                    self.problems.set(Vec::new());
                    send(name, config);
                }
                Err(e) => self.problems.set(e),
            }
        }
    }
}

/// The editable fields of a configuration, as text while being typed.
#[derive(Clone, Copy)]
pub(super) struct ConfigFields {
    scenarios: RwSignal<String>,
    annotators: RwSignal<String>,
    /// The training files, `10_1,20_5,30_5` (a value of `shots::group_options`).
    pub(super) group: RwSignal<String>,
    allow_unnested: RwSignal<bool>,
    shuffle_training: RwSignal<bool>,
    screening: RwSignal<String>,
    rate: RwSignal<String>,
    margin: RwSignal<String>,
    timeout: RwSignal<String>,
    open: RwSignal<bool>,
    code: RwSignal<String>,
    completion_url: RwSignal<String>,
    /// The analysis plan's level and primary comparison (`30 vs 0`; empty: the default).
    alpha: RwSignal<String>,
    primary: RwSignal<String>,
    pages: PageFields,
}

/// The value of a configuration's shot group among `task_files`: its chain, or (made before
/// shot groups) the files of its training split.
fn group_value(c: &StudyConfig, task_files: &[ShotFile]) -> String {
    if c.shot_group.is_empty() {
        let same: Vec<ShotFile> = task_files
            .iter()
            .copied()
            .filter(|f| f.1 == c.training_split)
            .collect();
        shots::files_value(&same)
    } else {
        shots::files_value(&c.shot_group)
    }
}

impl ConfigFields {
    pub(super) fn new(c: &StudyConfig, task_files: &[ShotFile]) -> Self {
        let list: Vec<String> = c.scenarios.iter().map(u32::to_string).collect();
        ConfigFields {
            scenarios: RwSignal::new(list.join(", ")),
            annotators: RwSignal::new(c.annotators.to_string()),
            group: RwSignal::new(group_value(c, task_files)),
            allow_unnested: RwSignal::new(c.allow_unnested),
            shuffle_training: RwSignal::new(c.shuffle_training),
            screening: RwSignal::new(c.screening.map(shots::file_name).unwrap_or_default()),
            rate: RwSignal::new(format!("{:.2}", f64::from(c.hourly_rate_cents) / 100.0)),
            margin: RwSignal::new(c.filter_margin.to_string()),
            timeout: RwSignal::new(
                c.item_timeout_secs
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            ),
            open: RwSignal::new(c.open),
            code: RwSignal::new(c.completion_code.clone()),
            completion_url: RwSignal::new(c.completion_url.clone()),
            alpha: RwSignal::new(c.analysis.alpha.to_string()),
            primary: RwSignal::new(analysis_plan::primary_text(c.analysis.primary)),
            pages: PageFields::new(&c.pages),
        }
    }

    /// The configuration, or every field that does not parse or is out of its range, each
    /// message naming its field (the server checks every field again, with the same messages).
    pub(super) fn read(&self) -> Result<StudyConfig, Vec<String>> {
        let mut p = Problems::default();
        let scenarios = p.take(
            self.scenarios
                .get_untracked()
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| settings::SHOTS.parse_whole(s))
                .collect::<Result<Vec<_>, _>>(),
        );
        let annotators = p.take(settings::ANNOTATORS.parse_whole(&self.annotators.get_untracked()));
        let shot_group = p.take(
            shots::parse_files(&self.group.get_untracked())
                .map_err(|e| format!("Training sets: {e}")),
        );
        let screening = p.take(
            shots::parse_one(&self.screening.get_untracked())
                .map_err(|e| format!("Screening items: {e}")),
        );
        let rate = p.take(settings::HOURLY_RATE.parse(&self.rate.get_untracked()));
        let margin = p.take(settings::FILTER_MARGIN.parse(&self.margin.get_untracked()));
        let timeout = self.timeout.get_untracked();
        let timeout = p.take(if timeout.trim().is_empty() {
            Ok(None)
        } else {
            settings::TIME_OUT.parse_whole(&timeout).map(Some)
        });
        let pages = self.pages.read().map_err(|e| p.0.extend(e)).ok();
        let alpha = p.take(settings::ALPHA.parse(&self.alpha.get_untracked()));
        let primary = p.take(analysis_plan::parse_primary(&self.primary.get_untracked()));
        // The completion code and URL with the server's own checks and words.
        let code = self.code.get_untracked().trim().to_string();
        let url = self.completion_url.get_untracked().trim().to_string();
        p.take(settings::check_completion_code(&code));
        p.take(domain::platform::prolific::check_completion_url(&url));
        let (
            Some(scenarios),
            Some(annotators),
            Some(shot_group),
            Some(screening),
            Some(rate),
            Some(filter_margin),
            Some(item_timeout_secs),
            Some(pages),
            Some(alpha),
            Some(primary),
        ) = (
            scenarios, annotators, shot_group, screening, rate, margin, timeout, pages, alpha,
            primary,
        )
        else {
            return Err(p.0);
        };
        if !p.0.is_empty() {
            return Err(p.0);
        }
        Ok(StudyConfig {
            scenarios,
            annotators,
            training_split: shot_group.first().map_or(1, |f| f.1),
            shot_group,
            allow_unnested: self.allow_unnested.get_untracked(),
            shuffle_training: self.shuffle_training.get_untracked(),
            screening,
            hourly_rate_cents: (rate * 100.0).round() as u32,
            filter_margin,
            item_timeout_secs,
            open: self.open.get_untracked(),
            completion_code: code,
            completion_url: url,
            pages,
            analysis: AnalysisChoices { alpha, primary },
        })
    }

    /// The form's fields; `options` are the task's shot groups (`shots::group_options`), and
    /// `frozen` (workers have started) shows the scenarios and training sets read-only, as the
    /// server would refuse to change them.
    pub(super) fn view(
        self,
        options: Signal<Vec<(String, String)>>,
        frozen: bool,
    ) -> impl IntoView {
        let group = self.group;
        view! {
            {text_field("Scenarios (shots, 0 = zero-shot)", "scenarios", self.scenarios, frozen)}
            <label>
                "Annotators per scenario"
                <input name="annotators" inputmode="numeric" bind:value=self.annotators />
            </label>
            <label>
                "Training sets (shot group)"
                <select
                    name="shot_group"
                    disabled=frozen
                    prop:value=move || group.get()
                    on:change=move |ev| group.set(event_target_value(&ev))
                >
                    {move || {
                        let opts = options.get();
                        let current = group.get();
                        let listed = current.is_empty() || opts.iter().any(|o| o.0 == current);
                        let extra = (!listed)
                            .then(|| (current.clone(), current.replace(',', ", ")));
                        opts.into_iter()
                            .chain(extra)
                            .map(|(value, label)| {
                                view! {
                                    <option selected=value == current value=value>
                                        {label}
                                    </option>
                                }
                            })
                            .collect_view()
                    }}
                </select>
            </label>
            {check_field(
                " Allow training sets that are not nested",
                "allow_unnested",
                self.allow_unnested,
                frozen,
            )}
            {check_field(
                " Each worker sees the training examples in an order of their own (seeded and recorded)",
                "shuffle_training",
                self.shuffle_training,
                frozen,
            )}
            {text_field(
                "Screening items: a training file every worker answers first, without feedback (e.g. 10_5; empty: none)",
                "screening",
                self.screening,
                frozen,
            )}
            {frozen
                .then(|| {
                    view! {
                        <p class="hint frozen-note">
                            "Workers have started: the scenarios and training sets are fixed, and so is their order (changing them would alter what workers saw). The number of annotators can only grow."
                        </p>
                    }
                })}
            {text_field("Hourly rate (USD)", "rate", self.rate, false)}
            {text_field(
                "Training filter margin (S1 below the others' mean)",
                "margin",
                self.margin,
                false,
            )}
            {text_field(
                "Release an idle place after (seconds; empty: never)",
                "timeout",
                self.timeout,
                false,
            )}
            {text_field("Completion code (empty: generated)", "code", self.code, false)}
            {text_field(
                "Prolific completion URL ({code} = the code; empty: Prolific's)",
                "completion_url",
                self.completion_url,
                false,
            )}
            {text_field("Analysis plan: level of its tests (alpha)", "alpha", self.alpha, frozen)}
            {text_field(
                "Analysis plan: primary comparison (e.g. 30 vs 0; empty: the largest k against zero-shot)",
                "primary",
                self.primary,
                frozen,
            )}
            <p class="hint">
                "The plan (each scenario against the next, the largest k against zero-shot, the trend over k; Holm within them) is frozen with its SHA-256 when the first worker arrives."
            </p>
            {check_field(" Open to workers", "open", self.open, false)}
            {self.pages.view(frozen)}
        }
    }
}
