//! The page around every view: head (stylesheet, icon, no outside request), the navigation,
//! the embedded script; and the small helpers views write with: escaped text, redacted text,
//! URL components.

use std::borrow::Cow;
use std::fmt::Write as _;

use axum::response::Html;
use trail_render::{HtmlSink, RedactionCounts, Redactor, Sink};

/// The views in the navigation: (path, label).
const NAV: &[(&str, &str)] = &[
    ("/", "Sessions"),
    ("/search", "Search"),
    ("/usage", "Usage"),
    ("/standup", "Standup"),
    ("/tips", "Tips"),
    ("/improve", "Improve"),
    ("/why", "File history"),
];

/// A page being written.
pub(crate) struct Page {
    out: String,
}

impl Page {
    /// Starts a page titled `title`; `current` is the navigation entry to mark.
    pub fn new(title: &str, current: &str) -> Page {
        let mut page = Page {
            out: String::with_capacity(16 << 10),
        };
        page.out.push_str(&head(title, current));
        page
    }

    /// Writes markup as it is.
    pub fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// Writes text escaped.
    pub fn text(&mut self, s: &str) {
        push_escaped(&mut self.out, s);
    }

    /// Writes transcript-derived text redacted and escaped.
    pub fn red(&mut self, redactor: &Redactor, s: &str) {
        let r = redact(redactor, s);
        push_escaped(&mut self.out, &r);
    }

    /// Writes formatted markup (the arguments must be escaped already, or numbers).
    pub fn fmt(&mut self, args: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }

    /// Writes a document (a report, trail_report::render) as HTML: every piece of text
    /// redacted and escaped, sessions linked to their pages.
    pub fn doc(&mut self, redactor: &Redactor, write: impl FnOnce(&mut dyn Sink)) {
        let mut sink = HtmlSink::new()
            .redacted(redactor)
            .session_links(Box::new(turn_href));
        write(&mut sink);
        self.out.push_str(&sink.finish());
    }

    /// Writes a unified diff, escaped, its lines coloured (trail-render decides how).
    pub fn diff(&mut self, body: &str) {
        let mut buf = Vec::with_capacity(body.len() + 64);
        // Writing to a Vec cannot fail.
        let _ = trail_render::write_diff_html(body, &mut buf);
        self.out.push_str(&String::from_utf8_lossy(&buf));
    }

    /// Ends the page.
    pub fn finish(mut self) -> Html<String> {
        self.out.push_str(&foot());
        Html(self.out)
    }
}

/// The page's start, up to and including `<main>`.
pub(crate) fn head(title: &str, current: &str) -> String {
    let mut s = String::with_capacity(2048);
    s.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"referrer\" content=\"no-referrer\">\n\
<link rel=\"stylesheet\" href=\"/assets/style.css\">\n\
<link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\">\n<title>",
    );
    push_escaped(&mut s, title);
    s.push_str(
        " · trail</title>\n</head>\n<body>\n<header><nav><a class=\"brand\" href=\"/\">trail</a>",
    );
    for (path, label) in NAV {
        let here = if *path == current {
            " class=\"here\""
        } else {
            ""
        };
        let _ = write!(s, "<a href=\"{path}\"{here}>{label}</a>");
    }
    s.push_str(
        "<form action=\"/search\" method=\"get\" role=\"search\"><input type=\"search\" name=\"q\" \
placeholder=\"Search every session\" aria-label=\"Search every session\"></form></nav></header>\n\
<main class=\"wide\">\n",
    );
    s
}

/// The page's end: the embedded script and the closing tags.
pub(crate) fn foot() -> String {
    format!(
        "</main>\n<script>{}</script>\n</body>\n</html>\n",
        crate::assets::SCRIPT
    )
}

/// Appends `s` escaped for HTML text and quoted attributes.
pub(crate) use trail_render::doc::push_escaped;

/// Returns `s` escaped.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_escaped(&mut out, s);
    out
}

/// Returns `s` with secrets replaced (when redaction is on).
pub(crate) fn redact<'a>(redactor: &Redactor, s: &'a str) -> Cow<'a, str> {
    let mut counts = RedactionCounts::default();
    redactor.redact(s, &mut counts)
}

/// Percent-encodes a URL component (a path segment or a query value).
pub(crate) fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A session's page.
pub(crate) fn session_href(id: &str) -> String {
    format!("/sessions/{}", enc(id))
}

/// A session's page at a turn.
pub(crate) fn turn_href(id: &str, turn: Option<i64>) -> String {
    let mut href = session_href(id);
    if let Some(t) = turn {
        href.push_str(&format!("#turn-{t}"));
    }
    href
}

/// A query string from the pairs whose value is not empty.
pub(crate) fn query_string(pairs: &[(&str, Option<&str>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| {
            v.filter(|v| !v.is_empty())
                .map(|v| format!("{k}={}", enc(v)))
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// Text on one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `n` characters, with an ellipsis when cut.
pub(crate) fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_encoded_and_text_escaped() {
        assert_eq!(enc("a b/c:d&é"), "a%20b%2Fc%3Ad%26%C3%A9");
        assert_eq!(esc("<a href='x'>&"), "&lt;a href=&#39;x&#39;&gt;&amp;");
        assert_eq!(
            query_string(&[("q", Some("x y")), ("source", None), ("repo", Some(""))]),
            "?q=x%20y"
        );
    }
}
