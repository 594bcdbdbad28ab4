//! A plain table of strings with its Markdown rendering, and CSV records (RFC 4180 quoting);
//! the dashboard renders the same tables as HTML, so every format shows the same cells.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// A stable identifier, e.g. `table5-all-official`.
    pub id: String,
    pub title: String,
    pub note: String,
    /// Header groups above the header: (label, columns spanned); empty for none.
    pub groups: Vec<(String, usize)>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A cell a spreadsheet would run as a formula (OWASP "CSV injection"): it starts with `=`,
/// `+`, `-`, `@`, a tab or a carriage return and is not simply a number (`-0.5` stays a number).
fn formula_like(s: &str) -> bool {
    s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err()
}

/// One CSV field: a formula-like cell gets a leading `'` (OWASP's advice, so spreadsheets show
/// it as text); quoted when it holds a comma, a quote, a line break or edge whitespace.
pub fn csv_field(s: &str) -> String {
    let s = if formula_like(s) {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    let needs = s.contains([',', '"', '\n', '\r']) || s.trim() != s;
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

/// One CSV record, ended by a newline.
pub fn csv_line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = fields
        .iter()
        .map(|f| csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

impl Table {
    /// A table without header groups.
    pub fn plain(
        id: &str,
        title: &str,
        note: &str,
        header: &[&str],
        rows: Vec<Vec<String>>,
    ) -> Table {
        Table {
            id: id.into(),
            title: title.into(),
            note: note.into(),
            groups: Vec::new(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }

    pub fn to_markdown(&self) -> String {
        let mut out = format!("### {}\n\n", self.title);
        if !self.note.is_empty() {
            out.push_str(&format!("{}\n\n", self.note));
        }
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|c| md_cell(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        if !self.groups.is_empty() {
            // Markdown has no spanning cells: the groups are named in the header itself.
            let mut named = Vec::new();
            let mut at = 0;
            for (label, span) in &self.groups {
                for h in self.header.iter().skip(at).take(*span) {
                    named.push(if label.is_empty() {
                        h.clone()
                    } else {
                        format!("{h} ({label})")
                    });
                }
                at += span;
            }
            named.extend(self.header.iter().skip(at).cloned());
            out.push_str(&line(&named));
        } else {
            out.push_str(&line(&self.header));
        }
        out.push_str(&line(&vec!["---".to_string(); self.header.len()]));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out.push('\n');
        out
    }

    /// The rows as the HTML of a table body (`<tr><td>…</td></tr>`, cell text escaped as
    /// Leptos escapes text: `&`, `<` and `>`). The dashboard sets it as its tables' bodies, so
    /// that hydration does not walk a node per cell: the per-annotator tables have thousands.
    pub fn rows_html(&self) -> String {
        let mut out = String::new();
        for row in &self.rows {
            out.push_str("<tr>");
            for cell in row {
                out.push_str("<td>");
                html_escape::encode_text_to_string(cell, &mut out);
                out.push_str("</td>");
            }
            out.push_str("</tr>");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_as_html_escape_their_text() {
        let t = Table {
            id: "t".into(),
            title: String::new(),
            note: String::new(),
            groups: Vec::new(),
            header: vec!["a".into(), "b".into()],
            rows: vec![
                vec!["<b>x</b> & y".into(), "it's \"z\"".into()],
                vec!["1".into(), String::new()],
            ],
        };
        assert_eq!(
            t.rows_html(),
            "<tr><td>&lt;b&gt;x&lt;/b&gt; &amp; y</td><td>it's \"z\"</td></tr><tr><td>1</td><td></td></tr>"
        );
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field(" edge"), "\" edge\"");
        assert_eq!(csv_line(&["a", "", "c,d"]), "a,,\"c,d\"\n");
    }

    #[test]
    fn formula_like_cells_are_neutralised_and_numbers_kept() {
        assert_eq!(
            csv_field("=HYPERLINK(\"http://x\")"),
            "\"'=HYPERLINK(\"\"http://x\"\")\""
        );
        assert_eq!(csv_field("+1+1"), "'+1+1");
        assert_eq!(csv_field("-2-3"), "'-2-3");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("\tx"), "'\tx");
        assert_eq!(csv_field("\rx"), "\"'\rx\"");
        assert_eq!(csv_field("-0.5"), "-0.5");
        assert_eq!(csv_field("+3"), "+3");
        assert_eq!(csv_field("a=b"), "a=b");
    }

    #[test]
    fn markdown_escapes_pipes_and_names_groups() {
        let t = Table {
            id: "t".into(),
            title: "T".into(),
            note: String::new(),
            groups: vec![(String::new(), 1), ("NER".into(), 1)],
            header: vec!["Shots".into(), "CoNLL".into()],
            rows: vec![vec!["0".into(), "a|b".into()]],
        };
        let md = t.to_markdown();
        assert!(
            md.contains("| Shots | CoNLL (NER) |\n| --- | --- |\n| 0 | a\\|b |\n"),
            "{md}"
        );
    }
}
