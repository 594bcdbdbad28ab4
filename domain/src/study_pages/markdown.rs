//! A researcher's Markdown (consent and debriefing texts) as HTML for the worker's page, on the
//! server: raw HTML and images are shown as text, and links only go to http(s) and mailto, in a
//! new tab (the page is inside a crowd platform's frame, which a link must not take over).

use pulldown_cmark::{html, Event, Options, Parser, Tag, TagEnd};

/// The HTML of `text`. Nothing in it can run a script, load anything or link to another
/// scheme: the texts are the researcher's, but they are shown inside a crowd platform's frame.
pub fn to_html(text: &str) -> String {
    let mut skip_link = Vec::new();
    let events = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH)
        .filter_map(|e| match e {
            Event::Html(h) | Event::InlineHtml(h) => Some(Event::Text(h)),
            Event::Start(Tag::Link { dest_url, .. }) => {
                let ok = ["https://", "http://", "mailto:"]
                    .iter()
                    .any(|p| dest_url.starts_with(p));
                skip_link.push(!ok);
                ok.then(|| {
                    let mut a = String::from("<a href=\"");
                    // Writing into a String cannot fail.
                    let _ = pulldown_cmark_escape::escape_href(&mut a, &dest_url);
                    a.push_str("\" target=\"_blank\" rel=\"noopener noreferrer\">");
                    Event::InlineHtml(a.into())
                })
            }
            Event::End(TagEnd::Link) => {
                (!skip_link.pop().unwrap_or(false)).then(|| Event::InlineHtml("</a>".into()))
            }
            // An image becomes its alternative text.
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
            other => Some(other),
        });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn markdown_is_rendered_and_nothing_else_gets_through() {
        assert_eq!(
            to_html("# Consent\n\nYou **agree**."),
            "<h1>Consent</h1>\n<p>You <strong>agree</strong>.</p>\n"
        );
        let hostile = to_html("<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)>");
        assert!(
            !hostile.contains("<script") && !hostile.contains("<img"),
            "{hostile}"
        );
        assert!(hostile.contains("&lt;script&gt;"), "{hostile}");
        let links =
            to_html("[mail](mailto:a@b.org) [js](javascript:alert(1)) ![pic](http://x/y.png)");
        assert!(
            links.contains(
                r#"<a href="mailto:a@b.org" target="_blank" rel="noopener noreferrer">mail</a>"#
            ),
            "{links}"
        );
        let quoted = to_html("[x](https://a.example/?q=\"><script>&b=1)");
        assert!(
            quoted.contains(r#"href="https://a.example/?q=%22%3E%3Cscript%3E&amp;b=1""#),
            "{quoted}"
        );
        assert!(!links.contains("href=\"javascript"), "{links}");
        assert!(links.contains("js") && !links.contains("<img"), "{links}");
    }
}
