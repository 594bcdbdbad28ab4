//! A researcher's Markdown (consent and debriefing texts) as HTML for the worker's page, on the
//! server: raw HTML and images are shown as text, and links only go to http(s) and mailto.

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
                ok.then_some(Event::Start(Tag::Link {
                    link_type: pulldown_cmark::LinkType::Inline,
                    dest_url,
                    title: "".into(),
                    id: "".into(),
                }))
            }
            Event::End(TagEnd::Link) => {
                (!skip_link.pop().unwrap_or(false)).then_some(Event::End(TagEnd::Link))
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
            links.contains(r#"<a href="mailto:a@b.org">mail</a>"#),
            "{links}"
        );
        assert!(!links.contains("href=\"javascript"), "{links}");
        assert!(links.contains("js") && !links.contains("<img"), "{links}");
    }
}
