//! The crowd worker's study page and what it is made of: the annotation forms (labels, spans,
//! free text), the sender that saves each answer once, drafts, the study's own pages
//! (consent, questionnaires) and the hand-back to the crowd platform. The worker's bundle
//! hydrates this tree alone.

pub(super) mod annotate;
mod browser;
mod draft;
mod hand_back;
mod sender;
mod signals;
mod span_form;
pub(super) mod study;
mod study_pages;
