//! The report drawn: tables (the paper's layouts), Markdown, CSV and SVG charts. Reads a
//! computed `Report` and never changes it; nothing in `report` outside this module draws.

pub mod authenticity;
pub mod calibration;
pub mod chart;
pub mod inference_tables;
pub mod layout;
pub mod pages;
pub mod plan_tables;
pub mod scores_csv;
pub mod table;
pub mod text;
pub mod versus;
